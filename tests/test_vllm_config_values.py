"""A vLLM ``--config`` file whose values PyYAML's constructors or ``json.dumps`` fail on (vLLM reads the file
with ``yaml.safe_load`` and passes a mapping on as JSON): a KV503 warning at the value, naming the key and the
error, never an exception's text in place of the command and never an unread container."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

_MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: vllm-config
data:
  config.yaml: |
    max-model-len: 8192
    {line}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: v
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--config", "/cfg/config.yaml"]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
        volumeMounts: [{{name: c, mountPath: /cfg}}]
      volumes: [{{name: c, configMap: {{name: vllm-config}}}}]
"""


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("k: {a: 2024-01-01}", "TypeError"),  # json.dumps of a date
        ("k: {a: !!binary aGk=}", "TypeError"),  # json.dumps of bytes
        ("k: !!int", "IndexError"),  # PyYAML's int constructor on an empty value
        ("k: !!float", "IndexError"),
        ("k: !!timestamp x", "AttributeError"),
    ],
)
def test_unreadable_config_value_is_a_warning_at_the_value(line: str, error: str, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(_MANIFEST.format(line=line))
    result = run_check([str(path)], Options(allow_hub=False))
    notes = [d for d in result.diagnostics if d.rule == "KV503"]
    assert len(notes) == 1, [d.message for d in result.diagnostics]
    d = notes[0]
    assert "--config /cfg/config.yaml cannot be read" in d.message
    assert "the value of 'k' on line 2" in d.message and error in d.message
    assert (d.loc.line, d.loc.column) == (8, 8)  # the value inside the ConfigMap's block scalar
    assert "could not read this container's command" not in d.message
    assert result.containers and result.containers[0].serving.engine == "vllm"


def test_config_key_that_is_not_a_scalar_and_deep_nesting(tmp_path: Path) -> None:
    for line, words in (
        ("? [a]\n    : 1", "is not a plain name"),
        ("k: " + "[" * 3000 + "]" * 3000, "nests deeper"),
    ):
        path = tmp_path / "m.yaml"
        path.write_text(_MANIFEST.format(line=line))
        result = run_check([str(path)], Options(allow_hub=False))
        notes = [d.message for d in result.diagnostics if d.rule == "KV503"]
        assert len(notes) == 1 and words in notes[0], notes


def _alias_levels(levels: int, width: int = 10) -> str:
    """``a0`` a list of ``width`` strings, each next level a list of ``width`` aliases of the one before, and
    an option ``k`` holding the last: ``width ** levels`` values expanded, a few hundred bytes of text."""
    lines = ["a0: &a0 [" + ",".join(["xxxxxxxx"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "\n    ".join(lines) + f"\n    k: {{m: *a{levels}}}"


def test_an_alias_bomb_in_a_config_file_is_refused_quickly(tmp_path: Path) -> None:
    """Nine levels of ten aliases in a ConfigMap-mounted --config (~1 KB): its values were built expanded (lists
    turn into repeated arguments, mappings into JSON text), 25 s and 2.9 GB before the process ran out of
    memory. Now the loader's rule for manifests: no more values than the text has characters."""
    import time

    path = tmp_path / "m.yaml"
    path.write_text(_MANIFEST.format(line=_alias_levels(9)))
    start = time.process_time()
    result = run_check([str(path)], Options(allow_hub=False))
    assert time.process_time() - start < 5
    notes = [d.message for d in result.diagnostics if d.rule == "KV503"]
    assert any("--config /cfg/config.yaml cannot be read" in n and "alias bomb" in n for n in notes), notes


def test_small_and_recursive_aliases_in_a_config_file_are_read(tmp_path: Path) -> None:
    for line in (_alias_levels(1, 3), "k: &r [1, *r]"):
        path = tmp_path / "m.yaml"
        path.write_text(_MANIFEST.format(line=line))
        result = run_check([str(path)], Options(allow_hub=False))
        notes = [d.message for d in result.diagnostics if d.rule == "KV503" and "cannot be read" in d.message]
        assert notes == []
        assert result.containers[0].serving.get("max_model_len") is not None
