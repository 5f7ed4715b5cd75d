"""A bare ``$ARGS`` whose value the container's script sets from something kvlint does not read (branch shell54).

``ARGS=$(cat /etc/vllm/args); vllm serve m $ARGS`` hands vLLM the words of the file; kvlint said "$ARGS ... not set
in the container env: the shell expands it to nothing unless the image sets it" (an info) and sized the container
on the engine defaults, though the words may set ``--tensor-parallel-size``. The same holds for ``read ARGS``, for
an array built in a loop (aws/deep-learning-containers ``vllm/build_artifacts/sagemaker_entrypoint.sh`` turns
``SM_VLLM_*`` variables into ``ARGS+=(...)`` and runs ``python3 -m vllm.entrypoints.openai.api_server
"${ARGS[@]}"``), and for ``ARGS=$(cmd) eval 'vllm serve m $ARGS'`` (the prefix holds while eval runs, POSIX XCU
2.9.1 and bash(1) "SIMPLE COMMAND EXPANSION"). Where bash expands the word before the prefix is assigned
(``ARGS=$(cmd) vllm serve m $ARGS``, ``ARGS=$(cmd) eval "vllm serve m $ARGS"``) it is nothing, as kvlint said. Each
script runs in the real bash with a ``vllm`` that records its arguments: kvlint takes the word for unseen arguments
exactly when bash passes vLLM words beyond ``serve m``. Offline; the bash part is skipped without bash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.shell import commands
from kvlint.pipeline import Options, run_check

OFF = Options(allow_hub=False)

SCRIPTS = [
    "ARGS=$(cat args.txt); vllm serve m $ARGS",
    "ARGS=$(cat args.txt) vllm serve m $ARGS",
    "ARGS=$(cat args.txt) eval 'vllm serve m $ARGS'",
    'ARGS=$(cat args.txt) eval "vllm serve m $ARGS"',
    "read -r ARGS < args.txt; vllm serve m ${ARGS}",
    "f() { vllm serve m $ARGS; }; ARGS=$(cat args.txt) f",
    "ARGS=(); while read -r w; do ARGS+=($w); done < args.txt; vllm serve m ${ARGS[@]}",
    "ARGS=$(cat args.txt); ARGS=1 eval 'true'; vllm serve m $ARGS",
    "vllm serve m $ARGS",
    'read -ra ARGS < args.txt; vllm serve m "${ARGS[@]}"',
    'vllm serve m "${ARGS[@]}"',
    # a value assigned from one kvlint does not read holds its reference as written: still that value's words
    'ARGS=$(cat args.txt); ARGS="$ARGS --enforce-eager"; vllm serve m $ARGS',
    "A=$(cat args.txt); B=$A; vllm serve m $B",
    'ARGS=$(cat args.txt); ARGS="$ARGS --enforce-eager"; ARGS=; vllm serve m $ARGS',
    # env's NAME=value set to a command's output: in the environment of the script env runs (review54D)
    """env ARGS="$(cat args.txt)" sh -c 'vllm serve m $ARGS'""",
    """env A=1 ARGS="$(cat args.txt)" bash -c 'vllm serve m $ARGS'""",
    """env ARGS="$(cat args.txt)" ARGS= sh -c 'vllm serve m $ARGS'""",
    """ARGS=$(cat args.txt) env ARGS= sh -c 'vllm serve m $ARGS'""",
    """env ARGS="$(cat args.txt)" env -u ARGS sh -c 'vllm serve m $ARGS'""",
]


def _ran(script: str, tmp_path: Path) -> list[str]:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "vllm"
    shim.write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
    shim.chmod(0o755)
    (tmp_path / "args.txt").write_text("--tensor-parallel-size 2\n")
    out = tmp_path / "argv"
    env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", "ARGV_OUT": str(out)}
    subprocess.run([bash, "-c", script], env=env, cwd=tmp_path, check=False, timeout=60, capture_output=True)
    return out.read_bytes().decode().split("\0")[:-1]


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_reference_is_unseen_arguments_exactly_when_bash_passes_words(script: str, tmp_path: Path) -> None:
    (command,) = [c for c in commands(script, {}) if c and c[0].text == "vllm"]
    passed = _ran(script, tmp_path)
    assert passed[:2] == ["serve", "m"]
    assert bool(command.maybe_set) == (len(passed) > 2), (script, passed, command.maybe_set)


def _manifest(tmp_path: Path, script: str) -> Path:
    path = tmp_path / "deploy.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  selector:\n"
        "    matchLabels: {app: chat}\n  template:\n    metadata:\n      labels: {app: chat}\n    spec:\n"
        "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
        "        - name: server\n          image: vllm/vllm-openai:v0.10.1\n          command: [bash, -c]\n"
        f"          args: [{json.dumps(script)}]\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    return path


def test_a_script_set_reference_leaves_the_container_not_sized(tmp_path: Path) -> None:
    res = run_check(
        [str(_manifest(tmp_path, "ARGS=$(cat /etc/vllm/args); vllm serve Qwen/Qwen3-0.6B $ARGS"))], OFF
    )
    (note,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert (
        note.severity == "warning" and "the script sets ARGS to a value kvlint does not read" in note.message
    )
    assert "not set in the container env" not in note.message
    (cr,) = res.containers
    assert cr.plan is None and "tensor_parallel_size" in cr.serving.unresolved


def test_a_prefix_before_the_engine_itself_is_still_nothing(tmp_path: Path) -> None:
    res = run_check(
        [str(_manifest(tmp_path, "ARGS=$(cat /etc/vllm/args) vllm serve Qwen/Qwen3-0.6B $ARGS"))], OFF
    )
    (note,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert note.severity == "info" and "expands it to nothing" in note.message


def test_an_array_built_from_the_environment_may_hold_the_model(tmp_path: Path) -> None:
    """The SageMaker entrypoint's shape: no model among the words read, so not "vLLM would start its default"."""
    script = (
        "ARGS=(--port 8080); while IFS='=' read -r key value; do ARGS+=(--${key#SM_VLLM_}); "
        'ARGS+=("$value"); done < <(env | grep ^SM_VLLM_); '
        'exec python3 -m vllm.entrypoints.openai.api_server "${ARGS[@]}"'
    )
    res = run_check([str(_manifest(tmp_path, script))], OFF)
    messages = [d.message for d in res.diagnostics if d.rule == "KV503"]
    assert not [m for m in messages if "built-in default model" in m]
    (note,) = messages
    assert "the script sets ARGS" in note and "so may the model" in note


def test_many_prefixes_before_an_eval_of_many_words() -> None:
    """20,000 ``Ai=$(x)`` before ``eval`` and 20,000 words after it: each prefix is looked up once among the names the
    words refer to (a scan of the words per prefix was quadratic: 5,000 of each took six times the reading of the
    words). The reference eval reads is marked; the words are the eval's."""
    k = 20_000
    script = (
        "".join(f"A{i}=$(x) " for i in range(k))
        + "eval 'vllm serve m $A0' "
        + " ".join(f"$B{i}" for i in range(k))
    )
    (command,) = [c for c in commands(script, {}) if c and c[0].text == "vllm"]
    assert command.maybe_set == {"A0"}
    assert [w.text for w in command][-(k + 1)] == "$A0"


def test_an_array_nothing_sets_is_nothing(tmp_path: Path) -> None:
    """``"${ARGS[@]}"`` of an array neither the script nor the container sets: bash passes no words (the last script
    of :data:`SCRIPTS`), so the info note and the engine defaults stand, as for ``$ARGS``; it was "arguments not all
    known" (the array reference was read as ``$@``). Set by the container's env (a ``valueFrom`` kvlint cannot read),
    it may be any words."""
    res = run_check([str(_manifest(tmp_path, 'vllm serve Qwen/Qwen3-0.6B "${ARGS[@]}"'))], OFF)
    (note,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert note.severity == "info" and "expands it to nothing" in note.message, note.message
    (cr,) = res.containers
    assert cr.plan is not None
    path = _manifest(tmp_path, 'vllm serve Qwen/Qwen3-0.6B "${ARGS[@]}"')
    path.write_text(
        path.read_text()
        + "          env:\n            - name: ARGS\n              valueFrom: {configMapKeyRef: {name: a, key: b}}\n"
    )
    res = run_check([str(path)], OFF)
    (note,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert note.severity == "warning" and "no literal value in the container env" in note.message, (
        note.message
    )


def test_a_value_built_on_one_kvlint_does_not_read_leaves_the_container_not_sized(tmp_path: Path) -> None:
    """``ARGS="$ARGS --enforce-eager"`` after ``ARGS=$(cat f)`` (options built up a word at a time): bash gives vLLM
    the file's words and the flag (the :data:`SCRIPTS` case); kvlint kept the first as the text ``${ARGS}``, took it
    for a variable not set at all ("expands it to nothing", an info) and sized the container at the defaults."""
    script = 'ARGS=$(cat /etc/vllm/args); ARGS="$ARGS --enforce-eager"; vllm serve Qwen/Qwen3-0.6B $ARGS'
    res = run_check([str(_manifest(tmp_path, script))], OFF)
    (note,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert note.severity == "warning" and "the script sets ARGS" in note.message, note.message
    (cr,) = res.containers
    assert cr.plan is None and "tensor_parallel_size" in cr.serving.unresolved


def test_a_size_env_sets_to_a_command_s_output_is_not_known(tmp_path: Path) -> None:
    """``env TP=$(nproc) sh -c '... ${TP:-1}'``: the script sees TP set to the command's output, so the default
    is not the value; kvlint read TP as unset there (env's assignment of an unknown value dropped) and sized the
    container at 1 GPU per replica."""
    script = "env TP=\"$(cat /etc/tp)\" sh -c 'vllm serve Qwen/Qwen3-0.6B --tensor-parallel-size ${TP:-1}'"
    res = run_check([str(_manifest(tmp_path, script))], OFF)
    (cr,) = res.containers
    assert cr.plan is None and "tensor_parallel_size" in cr.serving.unresolved
