"""MPS sharing caps each replica's device memory (branch gpus55). NVIDIA's device plugin, under ``sharing.mps`` with
``replicas: N``, starts an MPS control daemon that gives every client ``set_default_device_pinned_mem_limit <index>
<total / N>M`` (NVIDIA/k8s-device-plugin ``cmd/mps-control-daemon/mps/daemon.go``
``Daemon.perDevicePinnedDeviceMemoryLimits``: the NVML total in bytes / replicas / 2^20, rounded down); GKE's MPS
is read the same way. Time-slicing caps nothing. The client still reads the whole GPU as its total
(k8s-device-plugin issue #764), so the engine's fraction of the whole GPU must fit the cap (KV106)."""

from __future__ import annotations

import json
import math

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


def test_an_mps_replica_is_capped_at_its_share_of_the_gpu_and_time_slicing_is_not(tmp_path) -> None:
    """The cap is what the client may allocate; the engine still reads the whole GPU as its total, so the plan (the
    figures the engine prints) stays on the whole L4 and the cap is held against the engine's claim (KV106)."""
    l4 = cat.require("nvidia-l4")
    gfd = "nvidia.com/gpu.product: NVIDIA-L4"
    gke = "cloud.google.com/gke-accelerator: nvidia-l4"
    got, _diags = _run(
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
    for name in ("mps4", "gkemps2", "sliced4", "mpsnocount"):
        assert got[name]["plan"]["memory"]["total_bytes"] == l4.memory_bytes, name
        assert got[name]["device_share"] is None
    for name, n in (("mps4", 4), ("gkemps2", 2)):
        assert f"{nvml:,} MiB / {n} = {nvml // n:,} MiB" in got[name]["accelerator_how"], name
    for name in ("sliced4", "mpsnocount"):
        assert "MiB / " not in got[name]["accelerator_how"], name


def _cap_fraction(cap_bytes: int, total_bytes: int) -> float:
    """The largest memory fraction of the whole GPU (two decimals, rounded down) whose claim, with KV106's 0.6 GiB
    CUDA context and NCCL reserve, fits ``cap_bytes``."""
    return math.floor(100 * (cap_bytes - 0.6 * 2**30) / total_bytes) / 100


def test_kv106_holds_each_mps_engine_to_its_cap_even_alone(tmp_path) -> None:
    """One pod at vLLM's default 0.9 on an L4 of 4 MPS replicas claims 0.9 x the whole GPU, over the 5,758 MiB cap:
    vLLM finds only the cap free and stops (request_memory). At 0.2 it fits. Before, the plan and KV106 ignored the
    cap: one MPS pod alone was judged as two time-sliced engines would be."""
    l4 = cat.require("nvidia-l4")
    gfd = "nvidia.com/gpu.product: NVIDIA-L4"
    mps = f"{gfd}, nvidia.com/gpu.sharing-strategy: mps, nvidia.com/gpu.replicas: '4'"
    (tmp_path / "low").mkdir()
    _got, diags = _run(tmp_path, {"mps": mps})
    (kv106,) = [d for d in diags if d["rule"] == "KV106"]
    cap = (cat.nvml_total_mib(l4) // 4) * 2**20
    assert kv106["severity"] == "error" and f"may allocate at most {cap / 2**30:.2f} GiB" in kv106["message"]
    assert "Free memory on device" in kv106["message"]
    assert f"--gpu-memory-utilization {_cap_fraction(cap, l4.memory_bytes):.2f} or less" in kv106["fix"]
    low = tmp_path / "low" / "low.yaml"
    low.write_text(
        _POD.format(name="low", selector=mps).replace('"4096"]', '"4096", --gpu-memory-utilization, "0.2"]')
    )
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", str(low)]
    )
    assert r.exit_code == 0, r.stderr
    assert "--gpu-memory-utilization" in low.read_text()
    assert not [d for d in json.loads(r.stdout)["diagnostics"] if d["rule"] == "KV106"]


def test_kv410_a_container_asking_more_than_one_mps_replica_is_refused_by_the_device_plugin(tmp_path) -> None:
    """NVIDIA's device plugin refuses more than one replica a container under MPS whatever failRequestsGreaterThanOne
    says (``internal/rm/rm.go`` ``ValidateRequest``; older releases forced that setting on, ``api/config/v1/config.go``
    ``NewConfig``): a container asking 2 replicas fails admission ("... is 1; found 2"). Time-slicing
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
    # the current plugin's words (internal/rm/rm.go ValidateRequest, wrapped by Allocate in internal/plugin/server.go)
    assert (
        'invalid allocation request for "nvidia.com/gpu": invalid request: maximum request size for shared '
        "resources is 1; found 2" in d["message"]
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
    assert p.mps_limit_bytes == (nvml // 2) * 2**20 and p.memory_bytes == p.accelerator.memory_bytes


def test_mps_asked_on_a_mig_slice_caps_nothing() -> None:
    """NVIDIA's device plugin does not share a MIG device through MPS (``internal/plugin/mps.go`` ``getMPSOptions``:
    "sharing using MPS is not supported for MIG devices"): a MIG slice on nodes labelled for MPS sharing was capped
    at half its memory as an MPS client; now no cap, and the placement says why. A whole GPU there keeps its cap."""
    from kvlint.accelerators.placement import MPS_ON_MIG_NOTE, resolve_placement

    mps = {"nvidia.com/gpu.sharing-strategy": "mps", "nvidia.com/gpu.replicas": "2"}
    single = {
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
        "nvidia.com/mig.strategy": "single",
    }
    board = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}
    for labels, resource in ((single, "nvidia.com/gpu"), (board, "nvidia.com/mig-1g.5gb")):
        p = resolve_placement(
            {"nodeSelector": {**labels, **mps}}, {"resources": {"limits": {resource: 1}}}, {}
        )
        assert p.mig_profile == "1g.5gb" and p.mps_limit_bytes is None, (resource, p.mps_limit_bytes)
        assert MPS_ON_MIG_NOTE in p.how
    whole = resolve_placement(
        {"nodeSelector": {**board, **mps}}, {"resources": {"limits": {"nvidia.com/gpu": 1}}}, {}
    )
    assert whole.mps_limit_bytes is not None and whole.mps_limit_bytes < whole.memory_bytes


def test_kv410_a_mig_device_asked_on_mps_nodes_is_never_served(tmp_path) -> None:
    """Nodes selected for MPS sharing serve no MIG device (``internal/plugin/mps.go`` ``getMPSOptions``: the plugin
    for that resource does not start): a pod asking one there stays Pending. Before, no finding (its MIG slice was
    sized as a capped MPS client). The same slice without the MPS selector, and a whole GPU with it, get none."""
    board = "nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB"
    mps = "nvidia.com/gpu.sharing-strategy: mps, nvidia.com/gpu.replicas: '2'"
    pods = {"mig_mps": f"{board}, {mps}", "mig_alone": board, "whole_mps": f"{board}, {mps}"}
    files = []
    for name, selector in pods.items():
        text = _POD.format(name=name, selector=selector)
        if name.startswith("mig"):
            text = text.replace("nvidia.com/gpu: 1", "nvidia.com/mig-1g.5gb: 1")
        f = tmp_path / f"{name}.yaml"
        f.write_text(text)
        files.append(str(f))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", *files]
    )
    assert r.exit_code == 0, r.stderr
    kv410 = [d for d in json.loads(r.stdout)["diagnostics"] if d["rule"] == "KV410"]
    assert [d["file"].rsplit("/", 1)[-1] for d in kv410] == ["mig_mps.yaml"], kv410
    (d,) = kv410
    assert "sharing using MPS is not supported for MIG devices" in d["message"] and d["line"] == 5, d
