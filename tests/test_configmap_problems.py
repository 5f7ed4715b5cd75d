"""A serving container that takes its engine command, its ``--config`` file or its model's env from a ConfigMap
that is among the inputs but broken (the key it names is missing or misspelt, ``data`` is not a mapping, a value
is a mapping) is told what broke and where, not that the ConfigMap is "not among the inputs" or that the
variable has "no env entry"; a ConfigMap that really is missing is named. Made-up manifests in the shapes of
the wrapper-script and ``--config`` ConfigMaps of fixtures/collected (castai's vLLM chart, production-stack):
tests/configmap_pods.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from configmap_pods import SHAPES, pod

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Diagnostic

_GOOD = {
    "start.sh": "|\n    exec vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096",
    "config.yaml": "|\n    model: Qwen/Qwen2.5-7B-Instruct",
    "MODEL_ID": "Qwen/Qwen2.5-7B-Instruct",
    "MODEL": "Qwen/Qwen2.5-7B-Instruct",
}


def _configmap(data: str) -> str:
    return f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: llm-files}}\ndata:{data}\n"


def _run(tmp_path: Path, shape: str, data: str | None) -> list[Diagnostic]:
    text = pod(shape)
    if data is not None:
        text += _configmap(data)
    f = tmp_path / "llm.yaml"
    f.write_text(text)
    return [
        d for d in run_check([str(f)], Options(allow_hub=False)).diagnostics if d.object == "Deployment/llm"
    ]


def _keys(**kw: str) -> str:
    return "".join(f"\n  {k}: {v}" for k, v in kw.items())


#: the key each shape reads, misspelt in the broken ConfigMap
_KEY = {"script": "start.sh", "config": "config.yaml", "tgi": "MODEL_ID", "var": "MODEL"}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_misspelt_key_is_named_with_the_keys_the_configmap_has(tmp_path: Path, shape: str) -> None:
    key = _KEY[shape]
    wrong = key.replace(".sh", ".bash").replace(".yaml", ".yml").replace("MODEL", "MODEL_NAME")
    found = _run(tmp_path, shape, _keys(**{wrong: _GOOD[key]}))
    said = [d for d in found if d.rule in ("KV502", "KV503")]
    assert said, found
    text = " ".join(d.message for d in said)
    assert "not among the inputs" not in text and "no env entry" not in text
    if shape == "tgi":  # envFrom takes every key: the one TGI reads is not there
        assert "(llm-files) sets no MODEL_ID" in text
    else:
        assert f"ConfigMap llm-files ({tmp_path / 'llm.yaml'}:" in text
        assert f"has no key {key} (its keys: {wrong})" in text
        assert "fix the ConfigMap" in " ".join(d.fix for d in said) or "make the ConfigMap hold" in " ".join(
            d.fix for d in said
        )


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_data_that_is_not_a_mapping_is_said(tmp_path: Path, shape: str) -> None:
    found = _run(tmp_path, shape, " |\n  " + _KEY[shape] + ": x")
    text = " ".join(d.message for d in found if d.rule in ("KV502", "KV503"))
    assert "has data that is a string, not a mapping of keys to strings (the API server refuses it)" in text
    assert "not among the inputs" not in text


@pytest.mark.parametrize("shape", ["config", "tgi"])
def test_a_value_that_is_a_mapping_is_refused_not_read(tmp_path: Path, shape: str) -> None:
    """The API server refuses a ConfigMap whose value is a mapping (``data`` is map[string]string): kvlint used
    to read the --config file as the mapping's Python text and size the container from it."""
    key = _KEY[shape]
    found = _run(tmp_path, shape, f"\n  {key}:\n    model: Qwen/Qwen2.5-7B-Instruct")
    text = " ".join(d.message for d in found if d.rule == "KV503")
    assert f"holds a mapping at key {key}, not a string" in text
    assert not any(d.rule == "KV202" for d in found)  # not sized from str(dict)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_configmap_not_among_the_inputs_is_named(tmp_path: Path, shape: str) -> None:
    found = _run(tmp_path, shape, None)
    said = [d for d in found if d.rule in ("KV502", "KV503")]
    if shape == "script":  # no ConfigMap at all: the script is not looked for (as before)
        assert any("the container runs the script /etc/llm/start.sh" in d.message for d in said)
        return
    assert any(
        "ConfigMap llm-files is not among the inputs" in d.message  # env
        or "ConfigMap llm-files, which is not among the inputs" in d.message  # --config file
        for d in said
    ), said
    assert any("pass the ConfigMap with the workload" in d.fix for d in said)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_good_configmap_is_read(tmp_path: Path, shape: str) -> None:
    key = _KEY[shape]
    found = _run(tmp_path, shape, _keys(**{key: _GOOD[key]}))
    assert not [d for d in found if d.rule in ("KV502", "KV503") and d.severity != "info"], found
