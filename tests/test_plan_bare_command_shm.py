"""``kvlint plan`` on a bare command line (no pod): remedies that move the engine to more GPUs still say it needs a
memory-backed /dev/shm, but in a form that fits a command run anywhere (docker's ``--ipc=host``/``--shm-size`` or a
pod's emptyDir), not the pod-only "emptyDir ... mounted at /dev/shm, which KV404 requires" (KV404 is a pod rule that
``kvlint plan`` does not run) nor "GPUs per pod". Pods keep the pod form (tests/test_remedy_roundtrip.py)."""

from __future__ import annotations

import pytest

from kvlint.capacity.plan_command import plan_command
from kvlint.options import Options
from kvlint.rules.families.parallelism import SHM_NOTE_COMMAND

COMMANDS = {
    "vllm": ["vllm", "serve", "meta-llama/Llama-3.1-8B"],
    "tgi": ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-70B"],
    "sglang": [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "meta-llama/Llama-3.1-8B",
        "--context-length",
        "131072",
    ],  # fmt: skip
}


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_bare_command_remedy_names_dev_shm_without_a_pod(engine: str) -> None:
    out = plan_command(COMMANDS[engine], Options(allow_hub=False, accelerator="l4"), gpus=1)
    fixes = [d.fix for d in out.diagnostics if d.fix and "GPUs" in d.fix]
    assert fixes, [d.fix for d in out.diagnostics]  # a remedy that raises the GPU count
    for fix in fixes:
        assert SHM_NOTE_COMMAND in fix, fix
        assert "KV404" not in fix and "mounted at /dev/shm" not in fix and "per pod" not in fix, fix
