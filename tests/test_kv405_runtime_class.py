"""KV405 on a container that requests no GPU in a pod run with NVIDIA's runtime class (branch sizing53).

mshahzeb/k8s-llm-stack's vLLM and TGI Deployments (fixtures/collected) set ``runtimeClassName: nvidia`` and no
``nvidia.com/gpu``, as do Angel-Intelligence's Jetson Thor Deployment (whose comment says the GPU request was
removed "to allow GPU sharing", "GPU access via runtimeClassName: nvidia"). Such a pod is not unscheduled GPU-less
by accident: NVIDIA's container runtime hands it the devices its NVIDIA_VISIBLE_DEVICES names (``all`` in the CUDA
base images) unless the node refuses that variable from unprivileged containers
(nvidia-container-toolkit ``accept-nvidia-visible-devices-envvar-when-unprivileged``, true by default). KV405 says
so, and that the scheduler counts none of them; a pod without the runtime class keeps the plain wording.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"


def _kv405(path: Path) -> list[str]:
    return [
        d.message for d in run_check([str(path)], Options(allow_hub=False)).diagnostics if d.rule == "KV405"
    ]


def test_a_pod_with_nvidias_runtime_class_is_told_what_the_runtime_does(tmp_path: Path) -> None:
    path = COLLECTED / "mshahzeb__k8s-llm-stack__vllm.yaml"
    text = path.read_text()
    assert text.count("runtimeClassName: nvidia") == 1 and "nvidia.com/gpu" not in text
    (message,) = _kv405(path)
    assert "runtimeClassName nvidia" in message and "NVIDIA_VISIBLE_DEVICES" in message, message
    assert "accept-nvidia-visible-devices-envvar-when-unprivileged" in message and "counts none" in message
    # the hook behaviour is the legacy mode's: under CDI injection (the GPU Operator's default since v25.10.0,
    # NVIDIA/gpu-operator#1119) a container without a GPU request gets no device, which the message must not deny
    legacy, cdi = message.split("; on a node where GPUs are injected through CDI", 1)
    assert "legacy mode" in legacy and "v25.10.0" in cdi and "only a GPU request" in cdi, message
    plain = tmp_path / "plain.yaml"
    plain.write_text(text.replace("runtimeClassName: nvidia", "runtimeClassName: kata"))
    (message,) = _kv405(plain)
    assert "NVIDIA_VISIBLE_DEVICES" not in message and "requests no GPU resource" in message
