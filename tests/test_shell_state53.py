"""What the shell reading leaves for the engines' parsers, against bash and dash themselves (the harness of
tests/test_shell_state50.py: a ``vllm`` on ``PATH`` that prints its arguments). Offline; bash, dash and coreutils'
env only (skipped without them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kvlint.engines.shell import ShellArg, commands, unresolved
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shell_state50 import _bash  # noqa: E402

_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: ["%s", "-c"]
        args: [%s]
        resources: {limits: {nvidia.com/gpu: 4}}
"""


def _findings(script: str, shell: str = "bash") -> dict[str, list[str]]:
    result = run_documents(
        load_text(_MANIFEST % (shell, json.dumps(script)), "d.yaml"), Options(allow_hub=False)
    )
    out: dict[str, list[str]] = {}
    for d in result.diagnostics:
        out.setdefault(d.rule, []).append(f"{d.message} | fix: {d.fix}")
    return out


def _env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}


def _dash(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    dash = shutil.which("dash")
    if dash is None or shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash, dash or env here")
    return subprocess.run([dash, "-c", script], env=env, capture_output=True, timeout=60, check=False)


@pytest.mark.parametrize(
    "word",
    [
        "--tensor-parallel-size=${X:+${N}}",
        "--tensor-parallel-size=${U:-${N}}",
        "--tensor-parallel-size=${1:-${N}}",
    ],
)
def test_an_option_whose_value_nests_an_unknown_reference_keeps_its_option(word: str, tmp_path: Path) -> None:
    """``--tensor-parallel-size=${X:+${N}}`` with N unknown is one word bash passes, the option with a value kvlint
    cannot see: the ``}}`` that ends it closes the word's own shell references, not a Go/Helm template action (the
    word was skipped as one, the option lost: sized at TP 1, KV403 on 4 GPUs). KV503 says the size is not known."""
    env = _env(tmp_path)
    script = f"vllm serve Qwen/Qwen2.5-7B-Instruct {word} --max-model-len 4096"
    argv, _environ = _bash(script.replace("${N}", "4"), tmp_path, env)
    assert argv[3] == "--tensor-parallel-size=4"  # (one word, the option's, as bash passes it)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert unresolved(engine[3].text) and engine[3].text.startswith("--tensor-parallel-size=")
    got = _findings(script)
    assert "KV403" not in got, got
    assert any(m.startswith("--tensor-parallel-size ") and "not sized" in m for m in got["KV503"]), got


@pytest.mark.parametrize(
    ("option", "what"),
    [
        (
            "--tensor-parallel-size={2,4}{,}",
            "--tensor-parallel-size {2,4}{,}: the value is a brace expansion",
        ),
        (
            "--tensor-parallel-size {1..4}{,}",
            "--tensor-parallel-size {1..4}{,}: the value is a brace expansion",
        ),
        ("--tensor-parallel-size ~u/4", "--tensor-parallel-size ~u/4: the value is a tilde expansion"),
        ("--tensor-parallel-size $TP", "--tensor-parallel-size $TP: the value comes from a variable"),
    ],
)
def test_kv503_says_what_an_unresolved_value_is(option: str, what: str) -> None:
    """A brace or tilde word kvlint does not read is no variable: KV503 shows it as written (it showed
    ``$({2,4}{,})``, said "comes from a variable", and its fix told to give ``VAR`` a literal value), and its fix is
    the size itself; a variable's KV503 is as it was."""
    (msg,) = _findings(f"vllm serve Qwen/Qwen2.5-7B-Instruct {option} --max-model-len 4096")["KV503"]
    assert msg.startswith(what), msg
    assert ("VAR" in msg) is False and ("TP a literal value" in msg) is ("$TP" in option), msg
