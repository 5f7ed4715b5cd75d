"""Every container rule of the catalogue has a registered check for each engine it declares, and every
registered check a catalogue entry (the registry refuses a check without one)."""

from __future__ import annotations

from kvlint.rules.catalog import load_catalog
from kvlint.rules.registry import implemented, missing_checks, registry


def test_every_check_has_a_rule_file() -> None:
    assert sorted(set(registry()) - set(load_catalog())) == []


def test_every_rule_file_has_a_check_for_each_declared_engine() -> None:
    assert missing_checks() == {}
    assert implemented() == frozenset(load_catalog())
