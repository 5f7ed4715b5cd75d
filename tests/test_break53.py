"""break53: hostile input to this session's new paths (OpenShift Template parameters, ...).

The characters an OpenShift Template's parameter substitution may add (kvlint.template_params.MAX_ADDED_CHARS,
4 MiB) were counted per Template: a file of many small Templates, each referencing a 4,000-character
parameter 64 x 16 times, added 4 MiB per Template (160 Templates in a 1.4 MB file: 690 MB held by
``kvlint check``). The budget is now the loaded text's, shared by all its Templates (a ``kind: List`` of them
too).
"""

from __future__ import annotations

import json
from typing import Any

from kvlint.load import load_text
from kvlint.template_params import MAX_ADDED_CHARS, MAX_SUBSTITUTED_CHARS


def _template(t: int, refs: int) -> dict[str, Any]:
    """A Template whose ConfigMap holds ``refs`` strings, each 16 references to a 4,000-character parameter
    (64,000 characters once substituted, under MAX_SUBSTITUTED_CHARS)."""
    data = {f"k{i}": "${A}" * 16 for i in range(refs)}
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{t}"}, "data": data}
    return {
        "apiVersion": "template.openshift.io/v1",
        "kind": "Template",
        "metadata": {"name": f"t{t}"},
        "parameters": [{"name": "A", "value": "a" * 4000}],
        "objects": [obj],
    }


def _chars(node: Any) -> int:
    if isinstance(node, dict):
        return sum(_chars(v) for v in node.values())
    if isinstance(node, list):
        return sum(_chars(v) for v in node)
    return len(node) if isinstance(node, str) else 0


def _substituted(docs: list[Any]) -> int:
    """Strings of the Templates' objects substituted (no ``${A}`` left in them)."""
    return sum(
        1
        for d in docs
        for o in d.data.get("objects", [])
        for v in o["data"].values()
        if isinstance(v, str) and "${A}" not in v
    )


def _per_template_refs() -> int:
    """Strings per Template: enough that each Template alone adds ~3/4 of MAX_ADDED_CHARS."""
    assert 16 * 4000 <= MAX_SUBSTITUTED_CHARS
    return (MAX_ADDED_CHARS * 3 // 4) // (16 * 4000 - 64)


def test_the_templates_of_one_file_share_the_added_characters() -> None:
    refs = _per_template_refs()
    text = "\n---\n".join(json.dumps(_template(t, refs)) for t in range(4))
    res = load_text(text, "templates.yaml")
    assert len(res.documents) == 4 and not res.findings
    total = sum(_chars(d.data) for d in res.documents)
    assert total <= len(text) + MAX_ADDED_CHARS, total  # was ~4 x 3 MiB
    # the first Template is substituted whole, and the budget left does not cover a second one whole
    assert _substituted(res.documents[:1]) == refs
    assert _substituted(res.documents) < 2 * refs


def test_a_list_of_templates_shares_them_too() -> None:
    refs = _per_template_refs()
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [_template(t, refs) for t in range(4)]})
    res = load_text(text, "list.json")
    assert len(res.documents) == 4
    assert sum(_chars(d.data) for d in res.documents) <= len(text) + MAX_ADDED_CHARS


def test_each_file_has_its_own() -> None:
    refs = _per_template_refs()
    for name in ("a.yaml", "b.yaml"):
        res = load_text(json.dumps(_template(0, refs)), name)
        assert _substituted(res.documents) == refs
