"""Review of walk44 and break44 on crafted hostile inputs: a .json file that hides from the lint only when it is
JSON with comments (a syntax error), never behind a limit kvlint refuses at; the values files beside a chart told by
their keys read within a budget, and never through a link out of the chart."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint import render
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Diagnostic

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")


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


def _chart(d: Path, values: str = "model: m\nreplicas: 1\n") -> Path:
    (d / "templates").mkdir(parents=True)
    (d / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (d / "values.yaml").write_text(values)
    return d


@needs_helm
def test_a_link_out_of_the_chart_is_not_read_to_tell_a_values_file(tmp_path: Path) -> None:
    """walk44 read every YAML file beside Chart.yaml to compare its keys with values.yaml, following links: a link
    to a file outside the repository (a runner's file) was read, and named as a values file when its keys matched.
    A link inside the chart still counts; a file named values-*.yaml is named without being read."""
    outside = tmp_path / "outside.yaml"
    outside.write_text("model: secret\n")
    chart = _chart(tmp_path / "repo" / "chart")
    (chart / "prod.yaml").write_text("model: p\n")
    (chart / "leak.yaml").symlink_to(outside)
    (chart / "inside.yaml").symlink_to(chart / "prod.yaml")
    (chart / "values-dev.yaml").write_text("other: 1\n")
    walked, _ = render.plan_walk(str(tmp_path / "repo"))
    (c,) = walked
    assert [Path(v).name for v in c.values] == ["inside.yaml", "prod.yaml", "values-dev.yaml"]


@needs_helm
def test_the_values_files_told_by_keys_are_read_within_a_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """walk44 parsed every YAML file beside each chart's Chart.yaml (up to 1 MiB each, no count): a chart holding
    hundreds of them took minutes to plan before any render. At most _VALUES_SCAN_FILES files a chart are read by
    keys, within one byte budget for the walk, shared by its charts in walk order."""
    repo = tmp_path / "repo"
    many = _chart(repo / "a-many")
    for i in range(render._VALUES_SCAN_FILES + 5):
        (many / f"env{i:03}.yaml").write_text("model: m\n")
    walked, _ = render.plan_walk(str(repo))
    assert len(walked[0].values) == render._VALUES_SCAN_FILES
    # the walk's budget: the first chart's values.yaml and its one file fit, the second chart's do not
    repo2 = tmp_path / "repo2"
    for name in ("a", "b"):
        (_chart(repo2 / name) / "prod.yaml").write_text("model: p\n")
    first = len("model: m\nreplicas: 1\n") + len("model: p\n")
    monkeypatch.setattr(render, "_VALUES_SCAN_WALK_BYTES", first)
    walked, _ = render.plan_walk(str(repo2))
    assert [[Path(v).name for v in w.values] for w in walked] == [["prod.yaml"], []]
