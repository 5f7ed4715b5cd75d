"""kvlint.values.yaml_text: a manifest value spelt in YAML for a message (not Python's repr)."""

from __future__ import annotations

import pytest
import yaml

from kvlint.values import yaml_text


@pytest.mark.parametrize(
    "written, shown",
    [
        ("true", "true"),
        ("null", "null"),
        ("2.5", "2.5"),
        (".inf", ".inf"),
        ("{a: 1, b: [x, true]}", "{a: 1, b: [x, true]}"),
        ("two", "'two'"),  # a string on its own is quoted, so the message shows it is text
        ("'3'", "'3'"),
        ("{'true': x}", "{'true': x}"),  # quoted inside only where YAML needs it
        ('"it\'s"', "'it''s'"),
        ('"a\\nb"', '"a\\nb"'),  # a control character stays escaped, on one line
    ],
)
def test_value_is_spelt_so_yaml_reads_it_back(written: str, shown: str) -> None:
    value = yaml.safe_load(written)
    assert yaml_text(value) == shown
    assert yaml.safe_load(shown) == value


def test_long_value_is_cut() -> None:
    text = yaml_text({"k": "x" * 200}, limit=40)
    assert len(text) == 40 and text.startswith("{k: xxx") and text.endswith("...")
