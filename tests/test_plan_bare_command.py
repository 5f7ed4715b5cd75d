"""``kvlint plan`` on a bare command line (no pod, no image) says things in the form that fits a command.

Remedies that move the engine to more GPUs still say it needs a
memory-backed /dev/shm, but in a form that fits a command run anywhere (docker's ``--ipc=host``/``--shm-size`` or a
pod's emptyDir), not the pod-only "emptyDir ... mounted at /dev/shm, which KV404 requires" (KV404 is a pod rule that
``kvlint plan`` does not run) nor "GPUs per pod". Pods keep the pod form (tests/test_remedy_roundtrip.py). The TGI
and SGLang plans' version assumption said "unknown from the image" for a command, which has none."""

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


@pytest.mark.parametrize("engine", ["tgi", "sglang"])
def test_version_assumption_names_the_option_not_an_image(engine: str, tmp_path) -> None:
    out = plan_command(COMMANDS[engine], Options(allow_hub=False, accelerator="l4"), gpus=1)
    assert out.result.plan is not None
    notes = [a for a in out.result.plan.assumptions if "version unknown" in a]
    assert len(notes) == 1 and "--engine-version" in notes[0] and "image" not in notes[0], notes
    # a container whose image tag names no release keeps "from the image"
    from kvlint.pipeline import run_check

    image = {
        "tgi": "ghcr.io/huggingface/text-generation-inference:latest",
        "sglang": "lmsysorg/sglang:latest",
    }[engine]
    argv = COMMANDS[engine]
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: e\n"
        f"    image: {image}\n    command: {argv!r}\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n",
        encoding="utf-8",
    )
    result = run_check([str(tmp_path / "pod.yaml")], Options(allow_hub=False, accelerator="l4"))
    (c,) = result.containers
    assert c.plan is not None
    assert any("version unknown from the image" in a for a in c.plan.assumptions), c.plan.assumptions
