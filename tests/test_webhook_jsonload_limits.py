"""The webhook's direct JSON-to-document builder against the loader at MAX_NODES (found by an adversarial probe).

``kvlint.load`` counts every key of a mapping as a value towards :data:`kvlint.load.MAX_NODES` (a mapping of
``K`` scalar entries is ``1 + 2K`` values there), while ``kvlint.webhook.jsonload.load_object`` counted only
the mapping and its values (``1 + K``) until it counted keys too. A mapping of 1,000,000 keys was therefore
rejected by the loader (KV001 "document expands to more than 2000000 values") but built by the fast path, so
the review of that object differed from ``load_text(dump_text(obj))``, which the fast path promises to
reproduce (or give way).
"""

from __future__ import annotations

from kvlint.load import MAX_NODES, load_text
from kvlint.webhook.jsonload import dump_text, load_object

LABEL = "<admission ConfigMap/default/x>.json"


def test_wide_mapping_at_the_node_limit_matches_the_loader() -> None:
    keys = MAX_NODES // 2  # 1 + 2 * keys values for the loader: just past MAX_NODES
    obj = {f"k{i}": 0 for i in range(keys)}
    slow = load_text(dump_text(obj), LABEL)
    assert [f.rule for f in slow.findings] == ["KV001"] and not slow.documents  # what the loader says
    fast = load_object(obj, LABEL)
    # the fast path must either give way to the loader or say the same
    if fast is not None:
        assert [f.message for f in fast.findings] == [f.message for f in slow.findings]
        assert len(fast.documents) == len(slow.documents)
