"""Real public manifests kvlint had not seen (new-user pass 46, fixtures/collected: Tencent TKE's AI playbook
charts, StackHPC's Azimuth LLM chart, homelab and proof-of-concept vLLM Deployments). What a first run on them
showed to be wrong, each checked on the file itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint.engines.shell import commands
from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
TKE = COLLECTED / "trees" / "tke-ai-playbook" / "helm-charts"

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")


def _run(*paths: Path, **kw: object):  # type: ignore[no-untyped-def]
    return run_check([str(p) for p in paths], Options(allow_hub=False, **kw))  # type: ignore[arg-type]


def _deployment(script: str) -> str:
    """A one-GPU Deployment whose container runs ``script`` with ``bash -c`` (a literal block scalar from line 12),
    probed on port 30000."""
    body = "".join(f"          {line}\n" for line in script.splitlines())
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: inference\n        image: vllm/vllm-openai:v0.8.5\n"
        "        command:\n        - /bin/bash\n        - -c\n        - |\n"
        + body
        + "        readinessProbe:\n"
        "          httpGet: {path: /health, port: 30000}\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


SCRIPT = (
    "set -e\n"
    "vllm serve /data/deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B{stray} \\\n"
    "  --served-model-name deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B \\\n"
    "  --max-num-seqs 1024 \\\n"
    "  --port 30000\n"
)


def test_an_unclosed_quote_in_the_engine_command_means_the_container_never_starts(tmp_path: Path) -> None:
    """TKE's llm-inference chart runs ``vllm serve /data/deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B" \\`` in a
    ``bash -c`` script: the stray ``"`` is never closed, so bash stops with "unexpected EOF while looking for
    matching" (exit 2) and vLLM never starts. kvlint's tolerant lexer ran the quote to the end of the script
    and read the model as the whole rest of it ('/data/...-1.5B --trust-remote-code --served-model-name ...
    --port 30000'), warned that this "model" had no config.json, and reported a false KV408 error (the probe's
    port 30000 "but vllm listens on 8000"), the --port 30000 being inside the quoted word. Now: a KV503 error at
    the quote, and nothing read from the broken command."""
    broken = tmp_path / "broken.yaml"
    broken.write_text(_deployment(SCRIPT.format(stray='"')))
    res = _run(broken)
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert d.severity == "error"
    assert d.loc is not None and d.loc.line == 15  # the script's second line, where the quote is
    assert 'the " at line 2 of the shell script is never closed' in d.message
    assert "unexpected EOF while looking for matching" in d.message and "status 2" in d.message
    assert not [d for d in res.diagnostics if d.rule in ("KV408", "KV502")]

    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(_deployment(SCRIPT.format(stray="")))
    res = _run(fixed)
    assert not [d for d in res.diagnostics if d.rule in ("KV503", "KV408")]
    (w,) = [c for c in res.containers if c.serving is not None]
    assert (
        w.serving.model is not None
        and w.serving.model.value == "/data/deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"
    )


def test_the_lexer_marks_only_a_quote_the_script_never_closes() -> None:
    """The word an unclosed single or double quote runs to the end of the script carries the quote's offset; a
    closed quote, a quote inside the other kind, an escaped one and one in a comment do not."""

    def unclosed(script: str) -> list[int]:
        return [w.unclosed for cmd in commands(script, {}) for w in cmd if w.unclosed >= 0]

    assert unclosed('vllm serve "/m" --port 1') == []
    assert unclosed('echo "it\'s" \'say "hi"\' \\" # don\'t\nvllm serve m') == []
    assert unclosed('vllm serve /m" --port 1') == [13]
    assert unclosed("vllm serve 'm --port 1\nexit 0") == [11]
    assert unclosed('echo ok\nvllm serve m "') == [21]


@needs_helm
def test_tke_llm_inference_chart_is_an_error_not_a_wrong_model() -> None:
    """The chart itself, rendered as ``kvlint check CHART`` does."""
    res = _run(TKE / "llm-inference")
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert d.severity == "error" and "never closed" in d.message
    assert not [d for d in res.diagnostics if d.rule in ("KV408", "KV502")]
