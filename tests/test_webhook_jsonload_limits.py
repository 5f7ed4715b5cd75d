"""The webhook's direct JSON-to-document builder against the loader at MAX_NODES (found by an adversarial probe).

``kvlint.load`` counts every key of a mapping as a value towards :data:`kvlint.load.MAX_NODES` (a mapping of
``K`` scalar entries is ``1 + 2K`` values there), while ``kvlint.webhook.jsonload.load_object`` counted only
the mapping and its values (``1 + K``) until it counted keys too. A mapping of 1,000,000 keys was therefore
rejected by the loader (KV001 "document expands to more than 2000000 values") but built by the fast path, so
the review of that object differed from ``load_text(dump_text(obj))``, which the fast path promises to
reproduce (or give way).
"""

from __future__ import annotations

import pytest

from kvlint import load
from kvlint.load import load_text
from kvlint.webhook import jsonload
from kvlint.webhook.jsonload import dump_text, load_object

LABEL = "<admission ConfigMap/default/x>.json"
#: the limit lowered for the test (the real one, 2,000,000 values, takes ~15 s of CPU to reach)
LIMIT = 2000


@pytest.mark.parametrize(
    "obj",
    [
        {f"k{i}": 0 for i in range(LIMIT // 2)},  # 1 + 2 * 1000 values: just past the limit
        {"a": {f"k{i}": "v" for i in range(LIMIT // 2 - 1)}},  # one level down: 1 + 2 + 2 * 999
        {"a": [0] * (LIMIT - 2)},  # 1 + 2 + 1998
    ],
    ids=["wide-mapping", "nested-mapping", "list"],
)
def test_past_the_node_limit_the_fast_path_matches_the_loader(
    obj: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(load, "MAX_NODES", LIMIT)
    monkeypatch.setattr(jsonload, "MAX_NODES", LIMIT)
    slow = load_text(dump_text(obj), LABEL)
    assert [f.rule for f in slow.findings] == ["KV001"] and not slow.documents  # what the loader says
    fast = load_object(obj, LABEL)
    # the fast path must either give way to the loader or say the same
    if fast is not None:
        assert [f.message for f in fast.findings] == [f.message for f in slow.findings]
        assert len(fast.documents) == len(slow.documents)


def test_at_the_node_limit_both_read_the_object(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "MAX_NODES", LIMIT)
    monkeypatch.setattr(jsonload, "MAX_NODES", LIMIT)
    obj = {f"k{i}": 0 for i in range(LIMIT // 2 - 1)}  # 1 + 2 * 999 = 1999 values
    slow = load_text(dump_text(obj), LABEL)
    fast = load_object(obj, LABEL)
    assert not slow.findings and fast is not None and not fast.findings
    assert fast.documents[0].data == slow.documents[0].data
