"""The sizing line's "not read: N ..." names what was not read: each serving object's file:line (and
kind/namespace/name for an operator object), the first :data:`kvlint.sizing.UNREAD_SHOWN` in the text report then
"and N more", every one in the JSON report's ``summary.sizing.not_read_items``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kvlint.cli import main
from kvlint.sizing import UNREAD_SHOWN

ROOT = Path(__file__).resolve().parents[1]
#: GKE's model-composition RayService (fixtures/collected/INDEX.csv): its engine settings are Python in
#: serveConfigV2, which kvlint does not read (KV503 info, "operator settings not read")
RAY = (
    ROOT
    / "fixtures"
    / "collected"
    / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__model-composition__ray-service.yaml"
)

#: a Helm template of a vLLM Deployment that does not parse unrendered (KV002 at its first placeholder, line 4)
TEMPLATE = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
    "{{- with .Values.pod }}\n  template:\n    spec:\n      containers:\n      - name: vllm\n"
    '        image: "vllm/vllm-openai:{{ .Values.tag }}"\n{{- end }}\n'
)


def _check(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--fail-on", "never", *args])
    return r.exit_code, r.stdout, r.stderr


def test_the_text_report_names_each_object_not_read(tmp_path: Path) -> None:
    template = tmp_path / "deploy.yaml"
    template.write_text(TEMPLATE)
    code, out, _ = _check(str(template), str(RAY))
    assert code == 0
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if "; not read: 2 " in ln)
    ray_line = next(
        i + 1 for i, ln in enumerate(RAY.read_text().splitlines()) if ln.strip() == "kind: RayService"
    )
    listed = lines[at + 1 : at + 3]
    assert f"  not read: {template}:4: template not rendered" in listed
    (ray,) = [ln for ln in listed if str(RAY) in ln]
    # the operator object by kind and name, at its finding's line (the KV503 note kvlint reports there)
    assert (
        ray.startswith(f"  not read: {RAY}:")
        and "RayService/" in ray
        and ray.endswith(": operator settings not read")
    )
    assert int(ray.split(f"{RAY}:", 1)[1].split(":", 1)[0]) >= ray_line
    # the counts line stays the last one (the GitHub Action reads it from there)
    assert lines[at + 3].startswith("0 errors") or lines[at + 3][0].isdigit()
    assert lines[-1] == lines[at + 3]


def test_a_large_run_names_the_first_ones_and_counts_the_rest_and_json_lists_all(tmp_path: Path) -> None:
    n = UNREAD_SHOWN + 3
    for i in range(n):
        (tmp_path / f"t{i:02d}.yaml").write_text(TEMPLATE)
    code, out, _ = _check(str(tmp_path))
    listed = [ln for ln in out.splitlines() if ln.startswith("  not read: ")]
    assert listed == [
        f"  not read: {tmp_path / f't{i:02d}.yaml'}:4: template not rendered" for i in range(UNREAD_SHOWN)
    ]
    assert (
        "  and 3 more not read (--format json lists all: summary.sizing.not_read_items)" in out.splitlines()
    )
    code, out, _ = _check("--format", "json", str(tmp_path))
    sizing = json.loads(out)["summary"]["sizing"]
    assert sizing["not_read"] == n
    assert sizing["not_read_items"] == [
        {
            "file": str(tmp_path / f"t{i:02d}.yaml"),
            "line": 4,
            "column": 9,
            "object": "",
            "rule": "KV002",
            "reason": "template not rendered",
        }
        for i in range(n)
    ]


def test_quiet_prints_no_listing(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(TEMPLATE)
    code, out, _ = _check("--quiet", str(tmp_path))
    assert "not read" not in out


def test_the_markdown_summary_lists_them_folded(tmp_path: Path) -> None:
    """The Action's job summary (the Markdown report) lists them as the text report does, in a <details>."""
    n = UNREAD_SHOWN + 1
    for i in range(n):
        (tmp_path / f"t{i:02d}.yaml").write_text(TEMPLATE)
    (tmp_path / "ray.yaml").write_text(RAY.read_text(encoding="utf-8"))
    code, out, _ = _check("--format", "markdown", str(tmp_path))
    lines = out.splitlines()
    at = lines.index(f"<details><summary>Not read: {n + 1}</summary>")
    items = lines[at + 2 : at + 2 + UNREAD_SHOWN + 1]
    ray = next(ln for ln in items if "ray.yaml" in ln)
    assert ray.startswith(f"- `{tmp_path / 'ray.yaml'}:") and "`: RayService/" in ray, ray
    assert ray.endswith(": operator settings not read")
    assert f"- `{tmp_path / 't00.yaml'}:4`: template not rendered" in items
    assert items[-1] == "- and 2 more (the JSON report lists all: `summary.sizing.not_read_items`)"
    assert lines[at + 2 + UNREAD_SHOWN + 2] == "</details>"


def test_the_github_format_names_them_in_its_sizing_annotation(tmp_path: Path, monkeypatch: Any) -> None:
    """``--format github`` (kvlint check in a workflow) prints the sizing line as an annotation: the objects not
    read are named in it as the text report names them, each file placed as the annotations place theirs
    (``./deploy.yaml`` as ``deploy.yaml``), the message one workflow command (line breaks escaped)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deploy.yaml").write_text(TEMPLATE)
    code, out, _ = _check("--format", "github", "./deploy.yaml")
    (sizing,) = [ln for ln in out.splitlines() if ln.startswith("::") and "title=kvlint sizing::" in ln]
    message = sizing.split("title=kvlint sizing::", 1)[1]
    assert "; not read: 1 " in message
    assert message.endswith("%0Anot read: deploy.yaml:4: template not rendered"), message
    # the KV002 annotation that counts it is at the same place
    assert any(ln.startswith("::warning file=deploy.yaml,line=4,") for ln in out.splitlines())


def test_text_markdown_and_github_list_the_same_ones_under_one_bound(monkeypatch: Any) -> None:
    """The Markdown report repeated the text report's listing (its own slice of the first UNREAD_SHOWN, its own
    count of the rest); the text report's bound was fixed when the module loaded. Now one listing
    (:meth:`kvlint.sizing.SizingSummary.unread_listing`): under any bound, the three formats name the same objects
    and count the same rest."""
    import re

    import kvlint.sizing
    from kvlint.report import render
    from kvlint.types import CheckResult, Diagnostic, Loc

    items = tuple(
        (
            Diagnostic(
                "KV002", "warning", "m", Loc(f"t{i}.yaml", i + 1, 1), object=f"Deployment/ns/d{i}" * (i % 2)
            ),
            "template not rendered",
        )
        for i in range(5)
    )
    sizing = kvlint.sizing.SizingSummary(0, 0, 0, not_read=len(items), unread_items=items)
    monkeypatch.setattr(kvlint.sizing, "UNREAD_SHOWN", 3)
    result = CheckResult()
    text = [ln.strip() for ln in render("text", result, sizing=sizing).splitlines() if ln.startswith("  ")]
    markdown = [
        ln[2:] for ln in render("markdown", result, sizing=sizing).splitlines() if ln.startswith("- ")
    ]
    github = render("github", result, sizing=sizing).splitlines()[0].split("%0A")[1:]
    expected = [
        f"t{i}.yaml:{i + 1}: " + (f"Deployment/ns/d{i}: " if i % 2 else "") + "template not rendered"
        for i in range(3)
    ]
    assert [ln.removeprefix("not read: ") for ln in text[:3]] == expected
    assert [ln.removeprefix("not read: ") for ln in github[:3]] == expected
    assert [re.sub(r"`([^`]*)`", r"\1", ln) for ln in markdown[:3]] == expected
    assert text[3].startswith("and 2 more not read") and github[3].startswith("and 2 more not read")
    assert markdown[3].startswith("and 2 more") and len(markdown) == len(text) == len(github) == 4
