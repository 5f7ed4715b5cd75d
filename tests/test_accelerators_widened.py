"""Tests for the widened accelerator catalogue (kvlint issue 15): consumer/workstation GPUs, unified-memory parts,
the AMD Instinct line, AMD node-labeller labels, GFD values derived from NVML names, OCI shapes.

Expected values come from the packaged catalogue data file (kvlint/data/accelerators.json) and the research
supplement it is built from (kvlint/accelerators/supplement.yaml), never re-typed; node-label sets are real ones
from public issues (fixtures/accelerators/node-labels.yaml, SOURCE per set).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint.accelerators import aliases, catalogue, instance_type, lookup, resolve_placement
from kvlint.accelerators import registry as cat
from kvlint.accelerators._build_catalogue import (
    SUPPLEMENT,
    amd_label_sanitise,
    build,
    gfd_sanitise,
    load_research,
)

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "kvlint" / "data" / "accelerators.json"
LABELS = ROOT / "fixtures" / "accelerators" / "node-labels.yaml"
CORPUS = SHARED / "corpus/accelerators.yaml"
GIB = 1 << 30
MIB = 1 << 20


def _load(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


RAW = json.loads(DATA.read_text(encoding="utf-8"))
SUPP = _load(SUPPLEMENT)
#: entries the supplement adds (the others only add facts to corpus entries and carry no ``vendor``)
NEW_IDS = [g["id"] for g in SUPP["gpus"] if "vendor" in g]
NODE_LABELS = _load(LABELS)


def place(labels: dict[str, Any], resources: dict[str, Any] | None = None) -> Any:
    pod = {
        "nodeSelector": dict(labels),
        "containers": [{"name": "c", "resources": resources or {"limits": {"nvidia.com/gpu": 1}}}],
    }
    return resolve_placement(pod, pod["containers"][0], {})


# --------------------------------------------------------------------------------------------------
# the data file is the build's output, and the supplement's facts carry sources


@pytest.mark.skipif(not CORPUS.exists(), reason="research catalogue not available")
def test_packaged_catalogue_is_the_build_of_corpus_plus_supplement() -> None:
    # the file's two notice keys ("_generated", "_source": JSON has no comments) are the writer's, not the build's
    assert sorted(k for k in RAW if k.startswith("_")) == ["_generated", "_source"]
    assert build(str(CORPUS)) == {k: v for k, v in RAW.items() if not k.startswith("_")}


def test_supplement_facts_have_sources() -> None:
    missing = []
    for g in SUPP["gpus"]:
        for key, fact in g.items():
            facts = fact if isinstance(fact, list) else [fact]
            for f in facts:
                if isinstance(f, dict) and f.get("value") is not None:
                    if not f.get("source") and f.get("status") != "unverified":
                        missing.append((g["id"], key))
    assert not missing


def test_new_entries_are_in_the_catalogue_with_their_vendor_fields() -> None:
    accs = catalogue()
    assert len(NEW_IDS) >= 25
    for gid in NEW_IDS:
        acc = accs[gid]
        entry = RAW["accelerators"][gid]
        assert acc.memory_bytes == entry["memory_bytes"] > 0
        assert acc.vendor == entry["vendor"] and acc.bf16 == entry["bf16"] and acc.fp8 == entry["fp8"]
        assert "(new entry)" in entry["supplement_facts"]
        if acc.vendor == "nvidia":
            assert acc.cc is not None and acc.bf16 == (acc.cc >= (8, 0)) and acc.fp8 == (acc.cc >= (8, 9))
        else:
            assert entry["llvm_target"]["value"].startswith("gfx")


def test_supplement_measurements_decide_memory() -> None:
    """A printed total in the supplement is the catalogue figure (deviceQuery bytes, or 2-decimal GiB)."""
    merged = {g["id"]: g for g in load_research(str(CORPUS))["gpus"]} if CORPUS.exists() else {}
    checked = 0
    for g in SUPP["gpus"]:
        full = merged.get(g["id"], g)
        acc = catalogue()[g["id"]]
        if (full.get("cuda_total_bytes") or {}).get("value"):
            assert acc.memory_bytes == full["cuda_total_bytes"]["value"]
        elif (full.get("cuda_total_gib") or {}).get("value"):
            assert acc.memory_bytes == round(full["cuda_total_gib"]["value"] * GIB)
        elif (full.get("torch_total_capacity_gib") or {}).get("value"):
            assert acc.memory_bytes == round(full["torch_total_capacity_gib"]["value"] * GIB)
        else:
            continue
        assert acc.memory_source.startswith("measured")
        checked += 1
    assert checked >= 15


def test_a6000_measured_total_replaces_the_marketing_size() -> None:
    a6000 = RAW["accelerators"]["nvidia-rtx-a6000"]
    assert a6000["memory_bytes"] == a6000["cuda_total_bytes"]["value"]
    # the marketing figure (48 GB taken as GiB, minus the reserve) was about 3 GiB too high for this board
    marketing = a6000["marketing_memory_gb"]["value"] * GIB - cat.driver_reserve_mib() * MIB
    assert marketing - a6000["memory_bytes"] > 2 * GIB


# --------------------------------------------------------------------------------------------------
# lookups by id, alias and label value


@pytest.mark.parametrize(
    "gid",
    [
        "nvidia-geforce-rtx-3060-12gb",
        "nvidia-geforce-rtx-4070-ti-super",
        "nvidia-geforce-rtx-5080",
        "nvidia-rtx-a5000",
        "nvidia-rtx-4000-ada",
        "nvidia-quadro-rtx-8000",
        "nvidia-gb10",
        "amd-instinct-mi300a",
        "amd-instinct-mi350x",
        "amd-radeon-pro-w7900",
    ],
)
def test_lookup_new_entries_by_id_alias_and_label(gid: str) -> None:
    acc = lookup(gid)
    assert acc is not None and acc.id == gid
    assert acc.memory_bytes == RAW["accelerators"][gid]["memory_bytes"]
    named = [a for a, target in RAW["aliases"].items() if target["id"] == gid]
    assert named, gid
    for alias in named:
        assert lookup(alias) is acc and lookup(alias.upper()) is acc
    # the vendor prefix may be left out
    assert lookup(gid.split("-", 1)[1]) is acc
    # every node-label value the catalogue lists for the entry resolves to it
    gfd = [v for v, row in RAW["labels"]["nvidia_gpu_product"]["values"].items() if row["id"] == gid]
    amd = [v for v, row in RAW["labels"]["amd_gpu_product_name"]["values"].items() if row["id"] == gid]
    assert gfd or amd, gid
    for value in gfd:
        assert lookup(value) is acc and place({"nvidia.com/gpu.product": value}).accelerator is acc
    for value in amd:
        p = place({"amd.com/gpu.product-name": value}, {"limits": {"amd.com/gpu": 1}})
        assert p.accelerator is acc and p.resource == "amd.com/gpu"


def test_every_alias_note_names_a_real_entry() -> None:
    for alias, gid in aliases().items():
        assert gid in catalogue() and RAW["aliases"][alias]["note"]


def test_gfd_sanitise_reproduces_observed_product_values() -> None:
    """The rule that derives GFD values from NVML names gives the values seen on real nodes."""
    pairs = [
        (a["name"], row_value)
        for row_value, row in RAW["labels"]["nvidia_gpu_product"]["values"].items()
        if row.get("status") == "observed_on_a_node"
        for a in [RAW["accelerators"][row["id"]]]
        if a["name"].startswith("NVIDIA ") and row_value.startswith("NVIDIA-")
    ]
    assert len(pairs) >= 4
    for name, value in pairs:
        assert gfd_sanitise(name) == value, (name, value)


def test_amd_labeller_rule_drops_values_kubernetes_rejects() -> None:
    rows = RAW["labels"]["amd_gpu_device_id"]["values"]
    products = {row["product"] for row in rows.values()}
    kept = {amd_label_sanitise(p) for p in products} - {None}
    assert kept <= set(RAW["labels"]["amd_gpu_product_name"]["values"]) | {
        amd_label_sanitise(r["product"]) for r in rows.values() if r["id"] is None
    }
    slashed = [p for p in products if "/" in p]
    assert slashed and all(amd_label_sanitise(p) is None for p in slashed)


# --------------------------------------------------------------------------------------------------
# AMD pods


def test_azure_mi300x_node_labels_resolve_to_the_instinct_part() -> None:
    case = NODE_LABELS["azure-nd-mi300x-v5"]["labels"]
    row = RAW["labels"]["amd_gpu_device_id"]["values"][str(case["amd.com/gpu.device-id"])]
    assert "MI300X" in row["product"]
    labels = {k: v for k, v in case.items() if k != "node.kubernetes.io/instance-type"}
    p = place(labels, {"limits": {"amd.com/gpu": 8}})
    assert p.accelerator is not None and p.accelerator.id == row["id"] and "MI300X" in p.accelerator.name
    assert (p.gpus, p.resource) == (8, "amd.com/gpu")
    assert p.how.startswith("nodeSelector amd.com/gpu.device-id=74b5") and row["product"] in p.how
    # the instance-type label alone (Azure VM size) names the same part
    it = place({"node.kubernetes.io/instance-type": case["node.kubernetes.io/instance-type"]})
    assert it.accelerator is p.accelerator


def test_amd_counted_label_form_and_vram_alone() -> None:
    case = NODE_LABELS["azure-nd-mi300x-v5"]["labels"]
    counted = {k: v for k, v in case.items() if k.startswith("beta.amd.com/gpu.device-id.")}
    p = place(counted, {"limits": {"amd.com/gpu": 1}})
    gid = RAW["labels"]["amd_gpu_device_id"]["values"]["74b5"]["id"]
    assert p.accelerator is not None and p.accelerator.id == gid
    v = place({"amd.com/gpu.vram": case["amd.com/gpu.vram"]}, {"limits": {"amd.com/gpu": 1}})
    assert v.accelerator is not None and v.accelerator.id == gid and "not labelled" in v.how


def test_gpu_operator_node_without_product_name() -> None:
    labels = NODE_LABELS["mi300x-gpu-operator"]["labels"]
    p = place(labels, {"limits": {"amd.com/gpu": 1}})
    assert p.accelerator is not None and p.accelerator.vendor == "amd" and "MI300X" in p.accelerator.name


@pytest.mark.parametrize("device_id", sorted(RAW["labels"]["amd_gpu_device_id"]["values"]))
def test_every_amd_device_id(device_id: str) -> None:
    row = RAW["labels"]["amd_gpu_device_id"]["values"][device_id]
    p = place({"amd.com/gpu.device-id": device_id}, {"limits": {"amd.com/gpu": 1}})
    if row["id"] is None:
        assert p.accelerator is None and "not in the catalogue" in p.how
    else:
        assert p.accelerator is not None and p.accelerator.id == row["id"]
        token = row["product"].split()[2]  # "AMD Instinct MI300X VF" -> MI300X, "AMD Radeon Pro W7900" -> Pro
        assert token in p.accelerator.name or row.get("note")


def test_unknown_amd_device_id_is_said() -> None:
    p = place({"amd.com/gpu.device-id": "ffff"}, {"limits": {"amd.com/gpu": 1}})
    assert p.accelerator is None and "not a known AMD device id" in p.how


def test_amd_vram_ambiguity_takes_the_smallest_and_keeps_candidates() -> None:
    p = place({"amd.com/gpu.vram": "64G"}, {"limits": {"amd.com/gpu": 1}})
    expected = cat.amd_vram("64G")
    assert len(expected) > 1 and p.accelerator is expected[0]
    assert [a.id for a in p.candidates] == [a.id for a in expected]


# --------------------------------------------------------------------------------------------------
# homelab NVIDIA pods


def test_homelab_rtx4090_node_labels_resolve() -> None:
    labels = NODE_LABELS["homelab-rtx-4090"]["labels"]
    row = RAW["labels"]["nvidia_gpu_product"]["values"][labels["nvidia.com/gpu.product"]]
    assert row["status"] == "observed_on_a_node"
    p = place(labels)
    assert p.accelerator is not None and p.accelerator.id == row["id"]
    assert p.memory_bytes == RAW["accelerators"][row["id"]]["memory_bytes"]  # label agrees within 2%
    assert p.how == "nodeSelector nvidia.com/gpu.product=NVIDIA-GeForce-RTX-4090"


def test_one_nvml_name_two_boards_memory_label_decides() -> None:
    value, row = next(
        (v, r) for v, r in RAW["labels"]["nvidia_gpu_product"]["values"].items() if len(r.get("ids", [])) > 1
    )
    boards = [catalogue()[i] for i in row["ids"]]
    assert boards == sorted(boards, key=lambda a: a.memory_bytes)
    for board in boards:
        p = place({"nvidia.com/gpu.product": value, "nvidia.com/gpu.memory": str(cat.nvml_total_mib(board))})
        assert p.accelerator is board and "selects" in p.how
    q = place({"nvidia.com/gpu.product": value})
    assert q.accelerator is boards[0] and {a.id for a in q.candidates} == set(row["ids"])
    # NotIn on that value rules out every board it may be
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.product", "operator": "NotIn", "values": [value]},
                            {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["8000"]},
                        ]
                    }
                ]
            }
        }
    }
    pod = {"affinity": aff, "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    r = resolve_placement(pod, pod["containers"][0], {})
    assert r.accelerator is not None and r.accelerator.id not in row["ids"]


def test_gb10_is_unified_and_has_no_nvml_total() -> None:
    entry = RAW["accelerators"]["nvidia-gb10"]
    assert entry["unified_memory"]["value"] is True
    assert "nvidia_smi_total_mib" not in entry  # nvidia-smi prints [N/A] for memory.total on GB10
    assert entry["memory_bytes"] < entry["marketing_memory_gb"]["value"] * GIB


# --------------------------------------------------------------------------------------------------
# cloud instance types and shapes


@pytest.mark.parametrize(
    "name", sorted(k for k, v in RAW["instance_types"].items() if v["provider"] == "oci")
)
def test_oci_shapes(name: str) -> None:
    row = RAW["instance_types"][name]
    it = instance_type(name)
    assert it is not None and it.provider == "oci" and it.gpus == row["count"]
    assert it.accelerator is not None and it.accelerator.id == row["id"]
    p = place({"node.kubernetes.io/instance-type": name})
    assert p.accelerator is it.accelerator and f"{row['count']}x {row['id']}" in p.how


def test_aws_g7_now_names_the_rtx_pro_4500() -> None:
    rows = {k: v for k, v in RAW["instance_types"].items() if k.startswith("g7.")}
    assert rows and {v["id"] for v in rows.values()} == {"nvidia-rtx-pro-4500-blackwell"}
    p = place({"karpenter.k8s.aws/instance-gpu-name": "rtx-pro-4500"})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-rtx-pro-4500-blackwell"


def test_docs_state_the_catalogue_reserve_and_list_every_alias_family() -> None:
    doc = (ROOT / "docs" / "accelerators.md").read_text(encoding="utf-8")
    reserve = RAW["meta"]["driver_reserve"]
    assert f"{reserve['median_mib']} MiB over {len(reserve['observations'])} GPUs" in doc
    assert f"from {reserve['min_mib']} MiB" in doc and f"to {reserve['max_mib']} MiB" in doc
    coverage = doc[doc.index("## Coverage") : doc.index("## Labels")].lower()
    for gid in NEW_IDS:  # each new entry's model number is in the coverage list
        token = re.findall(
            r"mi\d{3}[a-z]?|w\d{4}|gb\d+|a\d{4}|\d{4}|(?<=-)l\d{2}\b|(?<=-)[ah]\d{2,3}\b", gid
        )[0]
        assert token in coverage, gid
