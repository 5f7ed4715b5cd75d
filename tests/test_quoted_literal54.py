"""A shell reference the script quotes (``sh -c "vllm serve M '$ARGS'"``) reaches the engine as text (branch literal54).

bash(1) "QUOTING": single quotes keep every character as written, ``\\$`` too; dash the same. The engine then gets
the word ``$ARGS`` itself, a positional argument none of the three takes (vLLM's and SGLang's argparse:
"unrecognized arguments"; TGI's clap: "unexpected argument"), and exits, as for an exec-form ``$ARGS``
(tests/test_exec_form_literal54.py). kvlint took the word for a reference the shell expands to arguments it cannot
see: a KV503 ("arguments not all known", not sized, when the env declares ARGS without a value; an info
otherwise). What the shells pass is checked here with bash and dash running the script on a shim that records its
argv; an unquoted or double-quoted ``$ARGS`` stays the shell's to expand.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

OFF = Options(allow_hub=False)

PROGRAMS = {
    "vllm": ("vllm/vllm-openai:v0.10.1", "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096"),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:2.4.0",
        "text-generation-launcher --model-id Qwen/Qwen2.5-7B-Instruct --max-total-tokens 4096",
    ),
    "sglang": (
        "lmsysorg/sglang:v0.4.6.post1-cu124",
        "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct",
    ),
}

#: (how the script writes the word, whether the shell passes the text $ARGS as written)
WORDS = [("'$ARGS'", True), ("\\$ARGS", True), ('"\\$ARGS"', True), ("$ARGS", False), ('"$ARGS"', False)]

#: the container's env: ARGS with a literal value, declared from a ConfigMap kvlint does not read, or not at all
ENVS = {
    "literal": "          env:\n            - {name: ARGS, value: '--port=8080'}\n",
    "valueFrom": "          env:\n            - name: ARGS\n              valueFrom: {configMapKeyRef: {name: x, key: y}}\n",
    "none": "",
}


def _passed(shell: str, script: str, tmp_path: Path) -> list[str]:
    """The argv the program of ``script`` receives when ``shell`` runs it with ARGS set (a shim records it)."""
    program = script.split()[0]
    shim = tmp_path / "bin" / program
    shim.parent.mkdir(exist_ok=True)
    shim.write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
    shim.chmod(0o755)
    out = tmp_path / "argv"
    out.unlink(missing_ok=True)
    env = {"PATH": f"{shim.parent}:/usr/bin:/bin", "ARGV_OUT": str(out), "ARGS": "--port=8080"}
    subprocess.run([shell, "-c", script], env=env, check=True, timeout=60, capture_output=True)
    return out.read_bytes().decode().split("\0")[:-1]


def _found(tmp_path: Path, engine: str, script: str, env: str) -> list[tuple[str, str, str]]:
    image = PROGRAMS[engine][0]
    quoted = script.replace("\\", "\\\\").replace('"', '\\"')
    path = tmp_path / "m.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  selector:\n"
        "    matchLabels: {app: chat}\n  template:\n    metadata:\n      labels: {app: chat}\n    spec:\n"
        "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
        f'        - name: server\n          image: {image}\n          command: ["sh", "-c", "{quoted}"]\n'
        f"{env}          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    return [(d.rule, d.severity, d.message) for d in run_check([str(path)], OFF).diagnostics]


@pytest.mark.parametrize("env", sorted(ENVS))
@pytest.mark.parametrize(("word", "as_text"), WORDS)
@pytest.mark.parametrize("engine", sorted(PROGRAMS))
def test_a_quoted_reference_is_the_engine_s_literal_word(
    tmp_path: Path, engine: str, word: str, as_text: bool, env: str
) -> None:
    script = f"{PROGRAMS[engine][1]} {word}"
    for shell in ("bash", "dash"):
        path = shutil.which(shell)
        if path is None:
            continue
        passed = _passed(path, script, tmp_path)
        assert (passed[-1] == "$ARGS") is as_text, (shell, passed)
    found = _found(tmp_path, engine, script, ENVS[env])
    literal = [m for r, s, m in found if r == "KV205" and s == "error" and "option $ARGS " in m]
    if as_text:
        assert literal and "the script quotes it" in literal[0] and "receives the text $ARGS" in literal[0]
        assert not [m for r, _, m in found if r == "KV503" and "$ARGS expands" in m]
    else:
        assert not literal


#: an integer option of each engine (a layout size, so an unresolved value would leave the container not sized)
SIZE_OPTION = {"vllm": "--tensor-parallel-size", "tgi": "--num-shard", "sglang": "--tp-size"}


@pytest.mark.parametrize(("word", "as_text"), [("'$TP'", True), ('"\\$TP"', True), ("$TP", False)])
@pytest.mark.parametrize("engine", sorted(PROGRAMS))
def test_a_quoted_value_is_the_engine_s_literal_text(
    tmp_path: Path, engine: str, word: str, as_text: bool
) -> None:
    # `--tensor-parallel-size '$TP'`: argparse "invalid int value: '$TP'", clap "invalid digit found in string"
    script = f"{PROGRAMS[engine][1]} {SIZE_OPTION[engine]} {word}"
    for shell in ("bash", "dash"):
        path = shutil.which(shell)
        if path is not None:
            assert (_passed(path, script, tmp_path)[-1] == "$TP") is as_text
    found = _found(tmp_path, engine, script, "          env:\n            - {name: TP, value: '1'}\n")
    invalid = [m for r, s, m in found if r == "KV206" and s == "error" and "'$TP'" in m]
    if as_text:
        assert invalid and "the script quotes it" in invalid[0]
    else:
        assert not invalid
