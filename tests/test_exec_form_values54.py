"""An option's value written ``$NAME`` in a command run without a shell (exec form), for each engine (branch shell54).

The kubelet expands only ``$(NAME)`` in a container's ``command`` and ``args`` (Kubernetes docs, "Define a Command and
Arguments for a Container"), so ``args: [--tensor-parallel-size, "$TP"]`` hands vLLM the text ``$TP``, which its
argparse refuses ("argument --tensor-parallel-size/-tp: invalid int value: '$TP'"), as SGLang's does and TGI's clap
("invalid value '$NUM_SHARD' for '--num-shard <NUM_SHARD>': invalid digit found in string"): the engine exits before
loading the model. kvlint said "the value comes from a variable kvlint cannot resolve ... not sized", a warning, as
for a shell's variable. It is now KV206, an error, saying why, with ``$(NAME)`` as the fix. The same value in a
``sh -c`` script is the shell's (tests/test_exec_form_literal54.py reads the bare-word case the same way).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

OFF = Options(allow_hub=False)

COMMANDS = {
    "vllm": (
        "vllm/vllm-openai:v0.10.1",
        ["vllm", "serve", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "$TP"],
    ),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:2.4.0",
        ["text-generation-launcher", "--model-id", "Qwen/Qwen3-0.6B", "--num-shard", "$TP"],
    ),
    "sglang": (
        "lmsysorg/sglang:v0.4.6.post1-cu124",
        ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-0.6B", "--tp-size", "$TP"],
    ),
}


def _found(tmp_path: Path, engine: str, *, shell: bool = False) -> list[tuple[str, str, str, str]]:
    image, argv = COMMANDS[engine]
    command = ["sh", "-c", " ".join(argv)] if shell else argv
    path = tmp_path / f"{engine}.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  selector:\n"
        "    matchLabels: {app: chat}\n  template:\n    metadata:\n      labels: {app: chat}\n    spec:\n"
        "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
        f"        - name: server\n          image: {image}\n          command: {json.dumps(command)}\n"
        "          env:\n            - {name: TP, value: '1'}\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    res = run_check([str(path)], OFF)
    return [(d.rule, d.severity, d.message, d.fix or "") for d in res.diagnostics]


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_an_exec_form_value_reaches_the_engine_as_written(tmp_path: Path, engine: str) -> None:
    found = _found(tmp_path, engine)
    (kv206,) = [(s, m, f) for r, s, m, f in found if r == "KV206"]
    severity, message, fix = kv206
    assert severity == "error" and "'$TP'" in message
    assert "expands only $(VAR)" in message and "receives the text $TP as written" in message
    assert fix.startswith("write $(TP)")
    assert not [m for r, _, m, _ in found if r == "KV503" and "$TP" in m]


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_in_a_shell_script_the_shell_expands_it(tmp_path: Path, engine: str) -> None:
    found = _found(tmp_path, engine, shell=True)
    assert not [m for r, _, m, _ in found if r in ("KV206", "KV503") and "$TP" in m]
