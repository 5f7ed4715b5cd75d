"""Review of walk44 and break44 on crafted hostile inputs: a .json file that hides from the lint only when it is
JSON with comments (a syntax error), never behind a limit kvlint refuses at; the values files beside a chart told by
their keys read within a budget, and never through a link out of the chart."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Diagnostic


def _diags(paths: list[str]) -> list[Diagnostic]:
    return run_check(paths, Options(allow_hub=False)).diagnostics


#: A Deployment in YAML (kubectl reads a .json file that does not start with "{" as YAML), with a // line in a block
#: scalar and a value nested deeper than kvlint reads (a limit, not a syntax error)
_DEEP_YAML_DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\n  annotations:\n    script: |\n"
    "      // init\n      run()\n"
    "spec:\n  deep: " + "[" * 210 + "]" * 210 + "\n  replicas: 1\n"
)


def test_a_json_file_refused_at_a_limit_is_reported_though_it_has_comment_lines(tmp_path: Path) -> None:
    """walk44 left a .json file unreported when it did not parse, had // lines and no '"apiVersion":': a YAML
    Deployment named .json (unquoted apiVersion, // in a block scalar) nested past kvlint's depth limit vanished
    from the lint (0 findings, exit 0), while the same text named .yaml was a KV001. A limit is no syntax error."""
    (tmp_path / "deploy.json").write_text(_DEEP_YAML_DEPLOYMENT)
    (tmp_path / "deploy.yaml").write_text(_DEEP_YAML_DEPLOYMENT)
    diags = _diags([str(tmp_path)])
    assert sorted((d.rule, Path(d.loc.file).name) for d in diags if d.loc) == [
        ("KV001", "deploy.json"),
        ("KV001", "deploy.yaml"),
    ]


def test_a_yaml_manifest_named_json_with_a_syntax_error_is_reported(tmp_path: Path) -> None:
    """A YAML manifest named .json names its apiVersion unquoted: with a // line in a block scalar and a syntax
    error, it is a broken manifest (kubectl says so too), not an editor's JSONC configuration. The tsconfig.json
    of kserve/website (JSON with comments, no apiVersion) stays unreported."""
    (tmp_path / "cm.json").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\ndata:\n  app.js: |\n    // entry\n    main()\n"
    )
    (tmp_path / "tsconfig.json").write_text('{\n  // editor settings\n  "extends": "base",\n}\n')
    diags = _diags([str(tmp_path)])
    assert [(d.rule, Path(d.loc.file).name) for d in diags if d.loc] == [("KV001", "cm.json")]
