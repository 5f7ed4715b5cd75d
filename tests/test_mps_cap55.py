"""MPS sharing caps each replica's device memory (branch gpus55). NVIDIA's device plugin, under ``sharing.mps`` with
``replicas: N``, starts an MPS control daemon that gives every client ``set_default_device_pinned_mem_limit <index>
<total / N>M`` (NVIDIA/k8s-device-plugin ``cmd/mps-control-daemon/mps/daemon.go``
``Daemon.perDevicePinnedDeviceMemoryLimits``: the NVML total in bytes / replicas / 2^20, rounded down); GKE's MPS
splits the GPU by ``max-shared-clients-per-gpu`` the same way. Time-slicing caps nothing. Before, an L4 shared by
4 MPS replicas was sized as the whole 21.95 GiB L4 (and KV106 said two engines would oversubscribe it), where each
engine may use a quarter of it."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kvlint.accelerators import registry as cat
from kvlint.cli import main

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  nodeSelector: {{{selector}}}
  containers:
  - name: a
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _run(tmp_path, pods: dict[str, str]) -> tuple[dict[str, dict], list[dict]]:
    files = []
    for name, selector in pods.items():
        f = tmp_path / f"{name}.yaml"
        f.write_text(_POD.format(name=name, selector=selector))
        files.append(str(f))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", *files]
    )
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    return {w["name"]: w for w in out["workloads"]}, out["diagnostics"]


def test_an_mps_replica_is_sized_on_its_share_of_the_gpu_and_time_slicing_on_the_whole(tmp_path) -> None:
    l4 = cat.require("nvidia-l4")
    gfd = "nvidia.com/gpu.product: NVIDIA-L4"
    gke = "cloud.google.com/gke-accelerator: nvidia-l4"
    got, diags = _run(
        tmp_path,
        {
            "mps4": f"{gfd}, nvidia.com/gpu.sharing-strategy: mps, nvidia.com/gpu.replicas: '4'",
            "gkemps2": f"{gke}, cloud.google.com/gke-gpu-sharing-strategy: mps, "
            "cloud.google.com/gke-max-shared-clients-per-gpu: '2'",
            "sliced4": f"{gfd}, nvidia.com/gpu.sharing-strategy: time-slicing, nvidia.com/gpu.replicas: '4'",
            "mpsnocount": f"{gfd}, nvidia.com/gpu.sharing-strategy: mps",
        },
    )
    nvml = cat.nvml_total_mib(l4)  # the NVML total the plugin divides
    for name, n in (("mps4", 4), ("gkemps2", 2)):
        w = got[name]
        assert w["plan"]["memory"]["total_bytes"] == (nvml // n) * 2**20, name
        assert w["device_share"] == f"1/{n} MPS share" and w["sharing_strategy"] == "mps"
        assert f"{nvml:,} MiB / {n} = {nvml // n:,} MiB" in w["accelerator_how"]
    # time-slicing isolates nothing; MPS without a replica count gives no share to size
    for name in ("sliced4", "mpsnocount"):
        assert got[name]["plan"]["memory"]["total_bytes"] == l4.memory_bytes, name
        assert got[name]["device_share"] is None


def test_kv106_leaves_mps_replicas_to_their_caps(tmp_path) -> None:
    """Two engines at the default 0.9 on one time-sliced L4 claim more than the GPU (KV106); under MPS each claims
    0.9 of its own cap, which together stay within the GPU: no KV106."""
    gfd = "nvidia.com/gpu.product: NVIDIA-L4"
    _got, diags = _run(
        tmp_path,
        {
            "mps": f"{gfd}, nvidia.com/gpu.sharing-strategy: mps, nvidia.com/gpu.replicas: '2'",
            "sliced": f"{gfd}, nvidia.com/gpu.sharing-strategy: time-slicing, nvidia.com/gpu.replicas: '2'",
        },
    )
    kv106 = {d["file"].rsplit("/", 1)[-1] for d in diags if d["rule"] == "KV106"}
    assert kv106 == {"sliced.yaml"}


def test_kv410_a_container_asking_more_than_one_mps_replica_is_refused_by_the_device_plugin(tmp_path) -> None:
    """NVIDIA's device plugin forces failRequestsGreaterThanOne on under MPS (``api/config/v1/config.go`` ``NewConfig``):
    a container asking 2 replicas fails admission ("maximum request size for shared resources is 1"). Time-slicing
    leaves it off by default, so 2 time-sliced replicas are allocated (and not reported here)."""
    gfd = "nvidia.com/gpu.product: NVIDIA-L4"
    pods = {
        "mps2": f"{gfd}, nvidia.com/gpu.sharing-strategy: mps, nvidia.com/gpu.replicas: '4'",
        "sliced2": f"{gfd}, nvidia.com/gpu.sharing-strategy: time-slicing, nvidia.com/gpu.replicas: '4'",
    }
    files = []
    for name, selector in pods.items():
        f = tmp_path / f"{name}.yaml"
        f.write_text(
            _POD.format(name=name, selector=selector).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2")
        )
        files.append(str(f))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", *files]
    )
    assert r.exit_code == 0, r.stderr
    kv410 = [d for d in json.loads(r.stdout)["diagnostics"] if d["rule"] == "KV410"]
    assert [d["file"].rsplit("/", 1)[-1] for d in kv410] == ["mps2.yaml"]
    (d,) = kv410
    assert d["severity"] == "error"
    assert (
        "request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1"
        in d["message"]
    )


def test_a_node_labelled_mps_by_gfd_caps_the_engine_on_it() -> None:
    """GFD's labels of an 8 x RTX 4090 node under ``sharing.mps`` with ``replicas: 2`` (the label set GFD writes:
    k8s-device-plugin README, "Catalog of Labels"; NVML's 24564 MiB for the 4090), read as ``--cluster`` reads a
    node: each engine is capped at half the NVML total."""
    from kvlint.accelerators.placement import node_facts, placement_on_node

    labels = {
        "nvidia.com/gpu.compute.major": "8",
        "nvidia.com/gpu.compute.minor": "9",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.family": "ampere",
        "nvidia.com/gpu.memory": "24564",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-4090",
        "nvidia.com/gpu.replicas": "2",
        "nvidia.com/gpu.sharing-strategy": "mps",
        "nvidia.com/mps.capable": "true",
    }
    p = placement_on_node(node_facts(labels), {"resources": {"limits": {"nvidia.com/gpu": 1}}})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-geforce-rtx-4090"
    nvml = cat.nvml_total_mib(p.accelerator)
    assert abs(nvml - 24564) <= 0.02 * 24564  # the catalogue's NVML total is the label's figure
    assert p.mps_replicas == 2 and p.memory_bytes == (nvml // 2) * 2**20
