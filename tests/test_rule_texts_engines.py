"""Rule texts shared by several engines (the catalogue's summary and fix, which SARIF's rule descriptors, the rule
documentation and ``kvlint rules`` show once for every engine): a vLLM flag they name comes with the option of
each other engine the rule applies to (kvlint.engines.options.COUNTERPARTS: TGI's --num-shard for vLLM's
--tensor-parallel-size, SGLang's --context-length for --max-model-len...). Before, KV101, KV104, KV105 and KV106
told TGI and SGLang users to set vLLM's flags only."""

from __future__ import annotations

import re

import pytest

from kvlint.engines.options import COUNTERPARTS
from kvlint.rules.catalog import load_catalog
from kvlint.types import ENGINE_NAMES

CATALOG = load_catalog()
SHARED = sorted(r for r, spec in CATALOG.items() if "vllm" in spec.engines and len(spec.engines) > 1)

#: vLLM's option -> {engine name: that engine's option}, from the KV205 counterpart tables read backwards
VLLM_TO: dict[str, dict[str, str]] = {}
for _engine, _table in COUNTERPARTS.items():
    for _theirs, (_ours, _owner) in _table.items():
        if _owner == "vLLM":
            VLLM_TO.setdefault(_theirs, {})[_engine] = _ours.split()[0]


@pytest.mark.parametrize("rule", SHARED)
def test_shared_rule_text_names_each_engines_own_flag(rule: str) -> None:
    spec = CATALOG[rule]
    text = f"{spec.summary}\n{spec.fix}"
    named = set(re.findall(r"--[a-z][a-z-]+", text))
    for flag in sorted(named & VLLM_TO.keys()):
        for engine in spec.engines:
            if engine == "vllm":
                continue
            own = VLLM_TO[flag].get(ENGINE_NAMES[engine])
            assert own is None or own in named, f"{rule}: names {flag} but not {ENGINE_NAMES[engine]}'s {own}"


def test_the_check_sees_shared_rules() -> None:
    assert {"KV101", "KV104", "KV105", "KV106"} <= set(SHARED)
