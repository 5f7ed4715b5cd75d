"""HAMi GPU sharing (Project-HAMi/HAMi, HAMi-core): its resource names are not misspellings (KV409), and the
memory slice it gives each vGPU is the device total the engine sees (kvlint.accelerators.sharing).

The manifest is HAMi's own vLLM example (fixtures/collected, Project-HAMi/HAMi@df6ac09e
``examples/nvidia/vllm_cross_vgpu.yaml``): ``nvidia.com/gpu: 2``, ``nvidia.com/gpumem-percentage: 30``,
``nvidia.com/gpucores: 30``; the variants below edit its resources.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.accelerators import registry as cat
from kvlint.accelerators.sharing import SHARING_RESOURCES, hami_slice
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
HAMI = (COLLECTED / "Project-HAMi__HAMi__examples__nvidia__vllm_cross_vgpu.yaml").read_text()
MIB = 1024 * 1024
#: the example's resources, limits then requests
PERCENT_LIMIT = "              nvidia.com/gpumem-percentage: 30 # Each vGPU gets 30% GPU memory\n"
PERCENT_REQUEST = "              nvidia.com/gpumem-percentage: 30\n"


def run(text: str, **kw):
    return run_documents(load_text(text, "hami.yaml"), Options(allow_hub=False, **kw))


def by_rule(result, rule: str) -> list:
    return [d for d in result.diagnostics if d.rule == rule]


def only(result):
    (cr,) = result.containers
    return cr


def slice_of(limit: str, request: str | None = None) -> str:
    """The example with its memory percentage (limits and requests) replaced."""
    text = HAMI.replace(PERCENT_LIMIT, limit, 1)
    return text.replace(PERCENT_REQUEST, request if request is not None else limit, 1)


def test_hami_resource_names_are_advertised_not_misspelt() -> None:
    assert PERCENT_LIMIT in HAMI and PERCENT_REQUEST in HAMI
    r = run(HAMI, accelerator="a100-80gb")
    assert not by_rule(r, "KV409")
    # a misspelt HAMi name is still caught, with the name it is close to
    typo = run(
        HAMI.replace("nvidia.com/gpumem-percentage", "nvidia.com/gpumem-percent"), accelerator="a100-80gb"
    )
    assert {d.message.split("'")[1] for d in by_rule(typo, "KV409")} == {"nvidia.com/gpumem-percent"}
    assert all("did you mean nvidia.com/gpumem-percentage?" in d.message for d in by_rule(typo, "KV409"))
    assert all(d.severity == "error" for d in by_rule(typo, "KV409"))


@pytest.mark.parametrize("name", sorted(SHARING_RESOURCES))
def test_sharing_plugin_names_are_not_kv409(name: str) -> None:
    text = HAMI.replace("nvidia.com/gpucores: 30 # Each vGPU gets 30% GPU cores", f"{name}: 30", 1)
    assert f"{name}: 30" in text
    names = [d.message for d in by_rule(run(text, accelerator="a100-80gb"), "KV409")]
    assert not [
        m for m in names if m.startswith((f"resources.limits '{name}'", f"resources.requests '{name}'"))
    ]


def test_percentage_slice_is_the_device_total_the_engine_sees() -> None:
    acc = cat.require("a100-80gb", "test")
    sliced = only(run(HAMI, accelerator="a100-80gb"))
    whole = only(run(slice_of(""), accelerator="a100-80gb"))
    assert whole.plan.total_bytes == acc.memory_bytes
    # HAMi Fit: Totalmem (MiB, rounded down) x 30 / 100, rounded down
    assert sliced.plan.total_bytes == (acc.memory_bytes // MIB) * 30 // 100 * MIB
    assert sliced.plan.budget_bytes < whole.plan.budget_bytes
    assert "HAMi nvidia.com/gpumem-percentage: 30% of the card per vGPU" in sliced.placement.how
    assert "HAMi-core" in sliced.placement.how


def test_gpucores_alone_does_not_change_memory() -> None:
    acc = cat.require("a100-80gb", "test")
    cores_only = only(run(slice_of(""), accelerator="a100-80gb"))
    assert "nvidia.com/gpucores: 30" in slice_of("")
    assert cores_only.placement.gpu_slice is None
    assert cores_only.plan.total_bytes == acc.memory_bytes


def test_absolute_slice_without_a_gpu_model_plans_on_the_slice() -> None:
    text = slice_of("              nvidia.com/gpumem: 12000\n")
    cr = only(run(text))
    assert cr.placement.accelerator is not None and cr.placement.accelerator.id == "generic"
    assert cr.plan is not None and cr.plan.total_bytes == 12000 * MIB
    assert "without a known GPU model" in cr.placement.how
    assert not by_rule(run(text), "KV501")  # the memory total is known: no fleet guess
    # with a known card the same slice replaces the card's total
    on_l40s = only(run(text, accelerator="l40s"))
    assert on_l40s.plan.total_bytes == 12000 * MIB


@pytest.mark.parametrize(("written", "mib"), [("16k", 16000), ("1Ki", 1024), ("2e3", 2000), ("20000m", 20)])
def test_gpumem_quantities_are_read_as_hami_reads_them(written: str, mib: int) -> None:
    """HAMi reads ``gpumem`` with ``Quantity.AsInt64``: any whole number. The API server stores 16000 as its
    canonical form ``16k``, which is what the webhook reviews (a Deployment on UPDATE, its ReplicaSet): KV409
    called it "not a plain number" and, an error, denied a pod HAMi schedules with a 16000 MiB slice."""
    text = slice_of(f'              nvidia.com/gpumem: "{written}"\n')
    r = run(text, accelerator="a100-80gb")
    assert not by_rule(r, "KV409")
    assert only(r).plan.total_bytes == mib * MIB


def test_gpumem_quantities_hami_does_not_read() -> None:
    for written in ("0.5", "1500m", "1e30", "16 k", "sixteen", "x" * 5000):
        s = hami_slice({"resources": {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem": written}}})
        assert s is not None and s.mib is None and s.issues[0][0] == "error", written
        assert "not a whole number of MiB" in s.issues[0][1] and len(s.issues[0][1]) < 300
    for raw in (1e308, float("inf"), float("nan"), -(2**70), 2**70):
        s = hami_slice({"resources": {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": raw}}})
        assert s is not None and s.percent is None, raw  # AsInt64 fails: HAMi leaves the percentage unset
    s = hami_slice({"resources": {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem": "16Gi"}}})
    assert s is not None and "17179869184 MiB to HAMi" in s.issues[0][1]


def test_percentage_without_a_gpu_model_is_planned_per_fleet_card() -> None:
    r = run(HAMI)
    cr = only(r)
    assert cr.fleet
    (d,) = by_rule(r, "KV501")
    assert "(HAMi nvidia.com/gpumem-percentage: 30% of each card per vGPU)" in d.message
    for entry in cr.fleet:
        if entry.detail is not None:
            card = entry.accelerator.memory_bytes
            assert entry.detail.plan.total_bytes == (card // MIB) * 30 // 100 * MIB


def test_slice_larger_than_the_card_stays_pending() -> None:
    acc = cat.require("l4", "test")
    text = slice_of(f"              nvidia.com/gpumem: {acc.memory_bytes // MIB + 1}\n")
    (d,) = by_rule(run(text, accelerator="l4"), "KV409")
    assert d.severity == "error" and "CardInsufficientMemory" in d.message and "Pending" in d.message
    fits = slice_of(f"              nvidia.com/gpumem: {acc.memory_bytes // MIB}\n")
    assert not by_rule(run(fits, accelerator="l4"), "KV409")


def test_percentages_hami_clamps_or_ignores() -> None:
    acc = cat.require("a100-80gb", "test")
    over = run(slice_of("              nvidia.com/gpumem-percentage: 150\n"), accelerator="a100-80gb")
    (d,) = by_rule(over, "KV409")
    assert d.severity == "warning" and "clamp it to 100" in d.message
    assert only(over).plan.total_bytes == acc.memory_bytes // MIB * MIB
    zero = run(slice_of("              nvidia.com/gpumem-percentage: 0\n"), accelerator="a100-80gb")
    (d,) = by_rule(zero, "KV409")
    assert d.severity == "warning" and "ignored" in d.message
    assert only(zero).plan.total_bytes == acc.memory_bytes


def test_slice_without_a_vgpu_count() -> None:
    text = HAMI.replace(
        "              nvidia.com/gpu: 2 # Use 2 HAMi vGPUs for tensor parallel workers\n", "", 1
    )
    text = text.replace("              nvidia.com/gpu: 2\n", "", 1)
    assert "nvidia.com/gpu:" not in text
    r = run(text, accelerator="a100-80gb")
    msgs = [d.message for d in by_rule(r, "KV409")]
    assert any("adds nvidia.com/gpu: defaultGPUNum" in m for m in msgs)
    assert not by_rule(r, "KV405")  # KV409 says what HAMi does; no second 'requests no GPU' warning


def test_hami_slice_reads_like_generate_resource_requests() -> None:
    # limits before requests
    s = hami_slice(
        {
            "resources": {
                "limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem": "4000"},
                "requests": {"nvidia.com/gpumem": 8000},
            }
        }
    )
    assert s is not None and s.mib == 4000 and not s.issues
    # gpumem wins over the percentage
    s = hami_slice(
        {
            "resources": {
                "limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem": 4000, "nvidia.com/gpumem-percentage": 50}
            }
        }
    )
    assert s is not None and s.mib == 4000 and s.percent is None and len(s.issues) == 1
    assert s.total_bytes(80 * 1024 * MIB) == 4000 * MIB
    # a quantity with a unit is not a plain integer: HAMi rejects it
    s = hami_slice({"resources": {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem": "16Gi"}}})
    assert s is not None and s.mib is None and s.issues[0][0] == "error"
    # nothing set: HAMi's defaultMemory (the whole card), no slice
    assert hami_slice({"resources": {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpucores": 50}}}) is None


def test_production_stack_values_with_hami_keys_are_sized_on_the_slice(tmp_path: Path) -> None:
    """The production-stack chart writes ``limitGPUMem`` (a string, as its values.schema.json wants) as
    ``nvidia.com/gpumem`` (kvlint.workloads.stack_values): the Deployment it builds is planned on the slice, with
    no KV409."""
    from kvlint.pipeline import run_check

    values = Path(__file__).resolve().parents[1] / "fixtures" / "helm" / "values"
    src = values / "vllm-project__production-stack__tutorials__assets__values-04-multiple-models.yaml"
    text = src.read_text()
    assert text.count("    requestGPU: 1\n") == 2
    text = text.replace("    requestGPU: 1\n", '    requestGPU: 1\n    limitGPUMem: "20000"\n', 1)
    path = tmp_path / "values.yaml"
    path.write_text(text)
    r = run_check([str(path)], Options(allow_hub=False, accelerator="a100-80gb"))
    assert not by_rule(r, "KV409")
    totals = sorted(cr.plan.total_bytes for cr in r.containers if cr.plan is not None)
    assert totals == [20000 * MIB, cat.require("a100-80gb", "test").memory_bytes]


def test_live_cluster_placement_keeps_the_slice() -> None:
    """``--cluster``: the worst-case node's placement carries the HAMi slice (kvlint.cluster)."""
    from kvlint.cluster import Node, NodeInventory, placement_from_cluster

    l4 = cat.require("l4", "test")
    inv = NodeInventory(
        nodes=(
            Node(
                "gpu-a", labels={"nvidia.com/gpu.product": "NVIDIA-L4"}, allocatable={"nvidia.com/gpu": "10"}
            ),
        ),
        source="test",
    )
    container = {"resources": {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": 50}}}
    p = placement_from_cluster({}, container, inv)
    assert p.accelerator is not None and p.accelerator.id == l4.id
    assert p.gpu_slice is not None and p.gpu_slice.percent == 50
    assert p.memory_bytes == (l4.memory_bytes // MIB) * 50 // 100 * MIB


@pytest.mark.parametrize(
    ("count", "memory", "plugin"),
    [
        ("volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "Volcano's vGPU"),
        ("aliyun.com/gpu-count", "aliyun.com/gpu-mem", "Alibaba's gpushare"),
    ],
)
def test_other_sharing_plugins_are_named_not_misspelt(count: str, memory: str, plugin: str) -> None:
    """Volcano vGPU and Alibaba gpushare requests: no KV409, and KV405 names the plugin instead of saying the
    container requests no GPU."""
    text = HAMI.replace("nvidia.com/gpumem-percentage", memory).replace(
        "nvidia.com/gpucores", "nvidia.com/priority"
    )
    text = text.replace("nvidia.com/gpu:", f"{count}:")
    assert "nvidia.com/gpu:" not in text and "gpumem" not in text
    r = run(text, accelerator="a100-80gb")
    assert not by_rule(r, "KV409")
    (d,) = by_rule(r, "KV405")
    assert d.severity == "warning" and f"through {count}, {plugin}" in d.message
    assert "requests no GPU resource" not in d.message
