"""break52: hostile and odd inputs to this session's new paths (MIG slices in the plan, AMD partitions, ...).

A MIG slice whose profile no MIG table of the catalogue holds (``nvidia.com/mig-1g.11gb`` on an H100, or GKE's
partition label with such a value) was planned on the whole board's memory (79.20 GiB for an H100 80GB), up to
seven times what the slice the engine sees holds: a 70B model "needs --tensor-parallel-size 4" on a 1g slice.
It is now not sized, KV501 saying why; a known profile is sized on its slice as before, and ``--gpu-memory``
still gives the memory.
"""

from __future__ import annotations

from typing import Any

from kvlint.accelerators import registry as cat
from kvlint.accelerators import resolve_placement
from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents

H100 = {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}


def _pod(limits: dict[str, Any], selector: dict[str, str] = H100) -> dict[str, Any]:
    return {"nodeSelector": dict(selector), "containers": [{"name": "c", "resources": {"limits": limits}}]}


def test_an_unknown_mig_profile_is_not_sized_on_the_whole_gpu() -> None:
    pod = _pod({"nvidia.com/mig-1g.11gb": 1})
    assert cat.mig_gpus("1g.11gb") == []  # no MIG table holds it
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.memory_bytes is None, p.how
    assert p.undecided and "1g.11gb" in "; ".join(p.undecided)


def test_an_unknown_gke_partition_is_not_sized_on_the_whole_gpu() -> None:
    pod = _pod({"nvidia.com/gpu": 1}, {**H100, "cloud.google.com/gke-gpu-partition-size": "2g.33gb"})
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.memory_bytes is None, p.how


def test_an_unknown_profile_in_gfds_product_label_is_not_sized_on_the_whole_gpu() -> None:
    """mig.strategy=single: ``nvidia.com/gpu`` on a node GFD labels ``...-MIG-<profile>``."""
    gfd = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.11gb"}
    pod = _pod({"nvidia.com/gpu": 1}, gfd)
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.memory_bytes is None, p.how
    # GFD's memory label (the MIG device's, under the single strategy) still sizes it
    pod = _pod({"nvidia.com/gpu": 1}, {**gfd, "nvidia.com/gpu.memory": "11000"})
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.memory_bytes == 11000 * cat.MIB, p.how


def test_a_known_profile_and_gpu_memory_are_still_sized() -> None:
    pod = _pod({"nvidia.com/mig-1g.10gb": 1})
    p = resolve_placement(pod, pod["containers"][0], {})
    assert (
        p.accelerator is not None
        and p.memory_bytes == cat._cat().mig[p.accelerator.id]["1g.10gb"].memory_bytes
    )
    pod = _pod({"nvidia.com/mig-1g.11gb": 1})
    p = resolve_placement(pod, pod["containers"][0], {}, gpu_memory_bytes=11 * 2**30)
    assert p.memory_bytes == 11 * 2**30, p.how


def test_check_reports_kv501_not_a_whole_gpu_plan() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: unk}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, meta-llama/Llama-3.1-70B-Instruct, --max-model-len, "8192"]
        resources: {limits: {nvidia.com/mig-1g.11gb: 1}}
"""
    res = run_documents(load_text(text, "unk.yaml"), Options(allow_hub=False))
    rules = {d.rule for d in res.diagnostics}
    assert "KV501" in rules and "KV101" not in rules, [(d.rule, d.message) for d in res.diagnostics]
    assert not any("79.20 GiB" in d.message for d in res.diagnostics)


# pip's --no-binary/--only-binary values: pip's own loop scanned the rest of a value once per ``:all:``


def _pip_handle_mutual_excludes(value: str, target: set[str], other: set[str]) -> None:
    """pip 26.3 ``models/format_control.py`` ``FormatControl.handle_mutual_excludes``, as pip writes it (the
    reference the linear reading must agree with)."""
    import re

    new = value.split(",")
    while ":all:" in new:
        other.clear()
        target.clear()
        target.add(":all:")
        del new[: new.index(":all:") + 1]
        if ":none:" not in new:
            return
    for name in new:
        if name == ":none:":
            target.clear()
            continue
        name = re.sub(r"[-_.]+", "-", name).lower()
        other.discard(name)
        target.add(name)


def test_format_control_agrees_with_pips_loop() -> None:
    import itertools

    from kvlint.engines.images import _format_control

    words = [":all:", ":none:", "vllm", "Torch_X", ""]
    for n in range(5):
        for combo in itertools.product(words, repeat=n):
            value = ",".join(combo)
            for start in ((set(), set()), ({"vllm"}, {":all:"}), ({":all:"}, {"torch-x"})):
                mine = (set(start[0]), set(start[1]))
                _format_control(value.split(","), *mine)
                ref = (set(start[0]), set(start[1]))
                _pip_handle_mutual_excludes(value, *ref)
                assert mine == ref, (value, start)


class _Counted(str):
    """A name that counts the comparisons made with it."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_format_control_reads_a_value_once() -> None:
    """20,000 ``:all:`` and a final ``:none:`` (120 KB, one argument under execve's 128 KiB): pip's loop made
    about 200 million comparisons (3.8 s); each name is now compared a few times."""
    from kvlint.engines.images import _format_control

    n = 20_000
    names = [_Counted(":all:") for _ in range(n)] + [_Counted(":none:")]
    _Counted.compared = 0
    target: set[str] = set()
    _format_control(names, target, set())
    assert _Counted.compared <= 4 * len(names), _Counted.compared
    assert target == set()


def test_why_undecided_is_read_once_per_pod(monkeypatch: Any) -> None:
    """A pod of 40 containers whose 4,000 ``nodeSelectorTerms`` name no GPU kvlint knows: each container's KV501
    read every term's values again (480,000 values, 3 s). The pod's reasons are now read once for its containers."""
    import json

    from kvlint.accelerators import placement

    calls = []
    real = placement._why_undecided

    def counted(*args: Any, **kwargs: Any) -> list[str]:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(placement, "_why_undecided", counted)
    terms = [
        {
            "matchExpressions": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [f"zz{i}.x"]}
            ]
        }
        for i in range(50)
    ]
    containers = [
        {
            "name": f"c{j}",
            "image": "vllm/vllm-openai:v0.11.0",
            "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct"],
            "resources": {"limits": {"nvidia.com/gpu": 1}},
        }
        for j in range(40)
    ]
    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    }
    spec = {"affinity": affinity, "containers": containers}
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    obj["spec"] = {"template": {"spec": spec}}
    res = run_documents(load_text(json.dumps(obj), "d.yaml"), Options(allow_hub=False))
    kv501 = [d for d in res.diagnostics if d.rule == "KV501"]
    assert len(kv501) == 40 and all("zz0.x" in d.message for d in kv501)
    assert len(calls) <= 2, len(calls)
