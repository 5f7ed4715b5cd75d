"""Adversarial pass on what session 46 landed (branch break47): each test fails before its fix."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents


@pytest.mark.parametrize(
    "tagged", ["!!int", "!!float", "!!int ''", '!!float ""', "!!int +", "!!int _", "!!float _"]
)
def test_an_explicit_numeric_tag_on_empty_text_is_a_tag_error(tagged: str) -> None:
    # PyYAML's construct_yaml_int/float read value[0] after removing '_' and the sign: an IndexError the loader
    # did not catch, so the whole file was "kvlint could not finish checking" (please report it) where kubectl
    # refuses the document (go-yaml: cannot decode !!str `` as a !!int). Found by fuzzing corpus files.
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  x: {tagged}\n"
    loaded = load_text(text, "p.yaml")
    found = [f for f in loaded.findings if f.rule == "KV001"]
    assert len(found) == 1, [f.message for f in loaded.findings]
    assert "kubectl rejects the document" in found[0].message
    assert found[0].loc is not None and found[0].loc.line == 5
    result = run_documents(loaded, Options(allow_hub=False))
    assert not [d for d in result.diagnostics if "could not finish" in d.message]
