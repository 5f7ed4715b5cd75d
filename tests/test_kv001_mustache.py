"""KV001 on a Mustache-templated manifest ({{NAME}} / {{{NAME}}} placeholders a script replaces before kubectl
apply) names the placeholder and gives the remedies that fit a template (render first, or quote it) instead of
'fix the file so it parses'. Found on aws-samples/sample-genai-on-eks-starter-kit's *.template.yaml (copied to
fixtures/collected)."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parent.parent / "fixtures" / "collected"
TGI = (
    COLLECTED
    / "aws-samples__sample-genai-on-eks-starter-kit__components__llm-model__tgi__model-qwen3-8b-fp8.template.yaml"
)


def _kv001(path: Path):  # noqa: ANN202 - Diagnostic
    (d,) = [d for d in run_check([str(path)], Options(allow_hub=False)).diagnostics if d.rule == "KV001"]
    return d


def test_unquoted_placeholder_is_named_with_template_remedies() -> None:
    d = _kv001(TGI)
    assert "{{{KARPENTER_PREFIX}}}" in d.message and "placeholder" in d.message, d.message
    assert "render the template first" in d.fix and '"{{{KARPENTER_PREFIX}}}' in d.fix, d.fix
    assert d.loc is not None and d.loc.line == 21  # where the parser stopped, as before


def test_quoted_placeholder_or_other_errors_keep_the_plain_text(tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    # the placeholder is quoted (valid YAML); the error is the unclosed flow sequence after it
    p.write_text('apiVersion: v1\nkind: Pod\nmetadata:\n  name: "{{NAME}}"\n  labels: [a\nspec: {}\n')
    d = _kv001(p)
    assert "placeholder" not in d.message and "fix the file so it parses" in d.fix, (d.message, d.fix)
