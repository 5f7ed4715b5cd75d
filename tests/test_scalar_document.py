"""A document that is a scalar, a list of objects or a list of values is a KV001: kubectl refuses anything but a
mapping."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.types import CheckResult

DEPLOYMENT = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"


def _kv001(path: Path) -> list[tuple[int, str]]:
    res: CheckResult = run_check([str(path)], Options(allow_hub=False))
    return [(d.loc.line if d.loc else 0, d.message) for d in res.diagnostics if d.rule == "KV001"]


def test_a_string_document_is_refused_at_its_line(tmp_path: Path) -> None:
    f = tmp_path / "notes.yaml"
    f.write_text(DEPLOYMENT + "---\n# a note\nremember to bump the image\n")
    ((line, msg),) = _kv001(f)
    assert line == 7  # the scalar's line, after the ConfigMap and the comment
    assert "a string, not an object" in msg and "cannot unmarshal string" in msg


def test_numbers_and_lists_of_objects_are_refused(tmp_path: Path) -> None:
    num = tmp_path / "n.yaml"
    num.write_text("42\n")
    assert [m for _, m in _kv001(num)] and "number" in _kv001(num)[0][1]
    objs = tmp_path / "objs.yaml"
    objs.write_text("- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n")
    ((line, msg),) = _kv001(objs)
    assert line == 1 and "a list of objects" in msg and "cannot unmarshal array" in msg


def test_empty_documents_tool_files_and_other_lists_stay_silent(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("---\n# only a comment\n---\nnull\n---\n")
    assert _kv001(empty) == []
    playbook = tmp_path / "playbook.yaml"
    playbook.write_text("- hosts: gpu\n  tasks: []\n- just a string item\n")
    assert _kv001(playbook) == []
    for name in ("values.yaml", "values-gpu.yml", "Chart.yaml", "kustomization.yaml", ".kvlint.yaml"):
        d = tmp_path / name.replace(".", "_")
        d.mkdir()
        (d / name).write_text("a plain string\n")
        assert _kv001(d / name) == [], name
