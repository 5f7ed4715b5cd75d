"""TGI settings the memory model reads, set from an env entry kvlint cannot read (``valueFrom`` a Secret key or a
ConfigMap that is not among the inputs): a KV503 info note at the entry says the launcher default is assumed
(kvlint.engines.tgi.parse_tgi_argv, as for vLLM's unresolved --max-model-len), instead of silently planning with
the default. The manifest is the GKE TGI sample in fixtures/tgi (GoogleCloudPlatform/kubernetes-engine-samples
ai-ml/llm-serving-gemma/tgi/tgi-2-27b-it.yaml, source in fixtures/tgi/SOURCE.md) with its limits moved to a
Secret and a ConfigMap, run through ``kvlint check``."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main

_SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "fixtures/tgi/GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__tgi__tgi-2-27b-it.yaml"
)
_CONFIGMAP = """\
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: tgi-limits
data:
  max-input-length: "1562"
"""


def _opaque(text: str) -> str:
    """MAX_TOTAL_TOKENS from a Secret key, MAX_INPUT_LENGTH from a ConfigMap key (the rest unchanged)."""
    for name, value, ref in (
        (
            "MAX_TOTAL_TOKENS",
            "2048",
            "secretKeyRef:\n              name: tgi-secret\n              key: max-total",
        ),
        (
            "MAX_INPUT_LENGTH",
            "1562",
            "configMapKeyRef:\n              name: tgi-limits\n              key: max-input-length",
        ),
    ):
        literal = f"        - name: {name}\n          value: '{value}'\n"
        assert literal in text
        text = text.replace(literal, f"        - name: {name}\n          valueFrom:\n            {ref}\n")
    return text


def _check(tmp_path: Path, text: str, rule: str = "KV503") -> tuple[Path, list[str]]:
    """``kvlint check`` on ``text``: the file and its ``rule`` findings, each with its continuation lines (also
    used by tests/test_tgi_kv_dtype_env.py)."""
    p = tmp_path / "tgi.yaml"
    p.write_text(text)
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(p)])
    assert r.exit_code in (0, 1), r.output
    assert "Traceback" not in r.output
    findings: list[str] = []
    for line in r.stdout.splitlines():
        if line.startswith(f"{p}:"):
            findings.append(line)
        elif line.startswith(" ") and findings:
            findings[-1] += " " + line.strip()
    return p, [f for f in findings if f" {rule} " in f]


def _line_of(text: str, name: str) -> int:
    """The line (1-based) of the ``valueFrom`` mapping of env entry ``name``: its Secret or ConfigMap key ref."""
    lines = text.splitlines()
    i = lines.index(f"        - name: {name}")
    assert lines[i + 1] == "          valueFrom:" and lines[i + 2].endswith("KeyRef:")
    return i + 3


def test_limits_from_a_secret_and_an_unread_configmap_are_noted_at_their_entries(tmp_path: Path) -> None:
    text = _opaque(_SAMPLE.read_text())
    p, notes = _check(tmp_path, text)
    total = [n for n in notes if "MAX_TOTAL_TOKENS" in n]
    inp = [n for n in notes if "MAX_INPUT_LENGTH" in n]
    assert len(total) == 1 and len(inp) == 1, notes
    assert total[0].startswith(f"{p}:{_line_of(text, 'MAX_TOTAL_TOKENS')}:")
    assert " info KV503 " in total[0]
    assert "MAX_TOTAL_TOKENS: the value comes from a Secret key kvlint cannot read" in total[0]
    assert "the engine default is assumed" in total[0]
    assert inp[0].startswith(f"{p}:{_line_of(text, 'MAX_INPUT_LENGTH')}:")
    assert "MAX_INPUT_LENGTH: the value comes from a ConfigMap key kvlint cannot read" in inp[0]


def test_a_configmap_among_the_inputs_is_read_and_not_noted(tmp_path: Path) -> None:
    """With the ConfigMap in the same input kvlint reads MAX_INPUT_LENGTH from it: only the Secret is noted."""
    _, notes = _check(tmp_path, _opaque(_SAMPLE.read_text()) + _CONFIGMAP)
    assert [n for n in notes if "MAX_TOTAL_TOKENS" in n]
    assert not [n for n in notes if "MAX_INPUT_LENGTH" in n], notes


def test_literal_values_are_not_noted(tmp_path: Path) -> None:
    _, notes = _check(tmp_path, _SAMPLE.read_text())
    assert not [n for n in notes if "MAX_" in n], notes
