"""KV404 on Google TPU pods (kvlint.rules.families.parallelism._tpu_single_process): vLLM on a single-host TPU
without pipeline parallelism runs the model in one process (tpu-inference's ``TpuPlatform`` forces the ``uni``
executor), so an absent memory-backed ``/dev/shm`` is not reported there; pipeline parallelism, the Ray
multi-host backend and a vLLM release before v0.14.0 (the torch_xla path) still are. The manifest is the GKE
sample in fixtures/collected (GoogleCloudPlatform/kubernetes-engine-samples ai-ml/vllm-tpu/vllm-llama3-70b.yaml,
source in fixtures/collected/INDEX.csv) with its ``dshm`` volume taken out, run through ``kvlint check``."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main

_SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "fixtures/collected/GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__vllm-tpu__vllm-llama3-70b.yaml"
)


def _without_shm(text: str) -> str:
    """The sample without its ``dshm`` mount and volume (the rest of the pod unchanged)."""
    for block in (
        "        - name: dshm\n          mountPath: /dev/shm\n",
        "      - name: dshm\n        emptyDir:\n          medium: Memory\n",
    ):
        assert block in text
        text = text.replace(block, "")
    return text


def _kv404_lines(tmp_path: Path, text: str) -> list[str]:
    p = tmp_path / "vllm-tpu.yaml"
    p.write_text(text)
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(p)])
    assert r.exit_code in (0, 1), r.output
    return [line for line in r.stdout.splitlines() if " KV404 " in line]


def test_single_host_tpu_without_dev_shm_is_not_kv404(tmp_path: Path) -> None:
    text = _without_shm(_SAMPLE.read_text())
    assert "--tensor-parallel-size=8" in text and "google.com/tpu: 8" in text
    assert _kv404_lines(tmp_path, text) == []


def test_the_same_pod_on_nvidia_gpus_is_still_kv404(tmp_path: Path) -> None:
    """The exemption is the TPU's: the pod moved to 8 NVIDIA GPUs gets KV404 (NCCL needs /dev/shm)."""
    text = _without_shm(_SAMPLE.read_text())
    text = text.replace("google.com/tpu: 8", "nvidia.com/gpu: 8")
    text = text.replace(
        "cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice",
        "cloud.google.com/gke-accelerator: nvidia-h100-80gb",
    )
    text = text.replace("image: vllm/vllm-tpu:latest", "image: vllm/vllm-openai:v0.11.0")
    assert len(_kv404_lines(tmp_path, text)) == 1


def test_pipeline_parallel_on_tpu_is_still_kv404(tmp_path: Path) -> None:
    """tpu-inference runs its MultiprocExecutor when pipeline_parallel_size > 1: workers in separate processes."""
    text = _without_shm(_SAMPLE.read_text())
    text = text.replace(
        "- --tensor-parallel-size=8\n", "- --tensor-parallel-size=4\n        - --pipeline-parallel-size=2\n"
    )
    assert len(_kv404_lines(tmp_path, text)) == 1


def test_ray_multihost_backend_on_tpu_is_still_kv404(tmp_path: Path) -> None:
    text = _without_shm(_SAMPLE.read_text())
    text = text.replace(
        "        - name: VLLM_USE_V1\n",
        '        - name: TPU_MULTIHOST_BACKEND\n          value: "ray"\n        - name: VLLM_USE_V1\n',
    )
    assert len(_kv404_lines(tmp_path, text)) == 1


def test_a_torch_xla_era_vllm_on_tpu_is_still_kv404(tmp_path: Path) -> None:
    """vLLM before v0.14.0 ran its own torch_xla TPU workers when tpu-inference was not installed."""
    text = _without_shm(_SAMPLE.read_text()).replace("vllm/vllm-tpu:latest", "vllm/vllm-tpu:v0.9.2")
    assert len(_kv404_lines(tmp_path, text)) == 1
