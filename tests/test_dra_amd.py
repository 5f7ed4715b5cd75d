"""AMD's DRA driver (ROCm/k8s-gpu-dra-driver, device class ``gpu.amd.com``): a pod taking its GPUs through a
ResourceClaimTemplate of that class is counted as one with ``amd.com/gpu`` is, as NVIDIA's ``gpu.nvidia.com`` was
already. Before, its devices counted as no GPU at all: a vLLM pod with TP 2 on one AMD DRA device passed without
KV403. The manifests follow the driver's ``example/example.yaml`` (a ResourceClaimTemplate with one request of
``deviceClassName: gpu.amd.com``) and ``docs/driver-attributes.md`` (a CEL selector on ``type`` picks partitions)."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: amd-gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.amd.com
          allocationMode: ExactCount
          count: COUNT
SELECTORS---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      nodeSelector: {amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM}
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: amd-gpus
      containers:
      - name: vllm
        image: rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521
        args: [--model, Qwen/Qwen3-8B, --tensor-parallel-size, "2", --max-model-len, "8192"]
        resources:
          claims:
          - name: gpus
"""

PARTITIONS = """\
          selectors:
          - cel:
              expression: 'device.attributes["gpu.amd.com"].type == "amdgpu-partition"'
"""


def _run(tmp_path: Path, count: int, selectors: str = ""):
    path = tmp_path / "amd-dra.yaml"
    path.write_text(TEMPLATE.replace("COUNT", str(count)).replace("SELECTORS", selectors))
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = res.containers
    return cr, [d for d in res.diagnostics if d.rule == "KV403"]


def test_amd_dra_devices_are_the_pods_gpus(tmp_path: Path) -> None:
    cr, kv403 = _run(tmp_path, 2)
    assert cr.placement is not None
    assert (cr.placement.gpus, cr.placement.resource) == (2, "gpu.amd.com")
    assert kv403 == []


def test_fewer_amd_dra_devices_than_tensor_parallel_workers_is_kv403(tmp_path: Path) -> None:
    cr, kv403 = _run(tmp_path, 1)
    (d,) = kv403
    assert d.severity == "error"
    assert "needs 2 GPUs but the pod requests 1 (gpu.amd.com: 1)" in d.message


def test_amd_partitions_are_not_whole_gpus(tmp_path: Path) -> None:
    """A request whose selector asks for partitions (type amdgpu-partition) is not counted as GPUs: a partition is a
    slice of one, whose memory the claim does not say."""
    cr, kv403 = _run(tmp_path, 1, PARTITIONS)
    assert cr.placement is not None and cr.placement.gpus is None
    assert kv403 == []


AUTO_PARTITION = """\
          selectors:
          - cel:
              expression: 'device.attributes["gpu.amd.com"].computePartition == "MODE"'
"""


def test_amd_auto_partition_devices_that_split_a_gpu_are_not_whole_gpus(tmp_path: Path) -> None:
    """With the driver's AutoPartition feature gate each GPU is advertised as one device per compute / memory mode:
    ``computePartition`` ``cpx`` is an eighth of the GPU, ``dpx`` a half, ``spx`` the whole one (its ``type`` stays
    ``amdgpu`` for spx only; docs/driver-attributes.md "Auto-partition mode", whose claim example selects
    ``computePartition == "cpx"``). kvlint counted a cpx device as a whole MI300X."""
    for mode in ("cpx", "dpx"):
        cr, kv403 = _run(tmp_path, 2, AUTO_PARTITION.replace("MODE", mode))
        assert cr.placement is not None and cr.placement.gpus is None, mode
        assert kv403 == []
    cr, _kv403 = _run(tmp_path, 2, AUTO_PARTITION.replace("MODE", "spx"))
    assert cr.placement is not None and (cr.placement.gpus, cr.placement.resource) == (2, "gpu.amd.com")
