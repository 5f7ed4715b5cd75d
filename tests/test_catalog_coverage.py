"""Every implemented check has a rule file in rules/, and every rule file a check (or is listed as
planned for a later issue)."""

from __future__ import annotations

from kvlint.rules import IMPLEMENTED
from kvlint.rules.catalog import load_catalog

# Catalogued rules whose checks are not written yet.
PLANNED: set[str] = set()


def test_every_check_has_a_rule_file() -> None:
    assert sorted(IMPLEMENTED - set(load_catalog())) == []


def test_every_rule_file_has_a_check_or_is_planned() -> None:
    missing = set(load_catalog()) - IMPLEMENTED - PLANNED
    assert sorted(missing) == []
    assert not (PLANNED & IMPLEMENTED), "a planned rule is implemented now: drop it from PLANNED"
