"""Tests for kvlint.accelerators: catalogue, aliases, parse_quantity, resolve_placement.

Data: the packaged catalogue (generated from ../shared/corpus/accelerators.yaml), fixtures copied from
real manifests (fixtures/accelerators, SOURCE notes inside), and, when present, the corpus manifests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint.accelerators import (
    UnknownAccelerator,
    aliases,
    catalogue,
    driver_reserve_mib,
    instance_type,
    lookup,
    parse_quantity,
    resolve_placement,
)
from kvlint.accelerators import registry as cat_mod
from kvlint.accelerators._build_catalogue import load_research
from kvlint.source import LDict, LList, Loc

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "accelerators"
DATA = ROOT / "kvlint" / "data" / "accelerators.json"
CORPUS = SHARED / "corpus/manifests"
GIB = 1 << 30
MIB = 1 << 20


def _raw() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))


def _ld(d: dict[str, Any], line: int = 1) -> LDict:
    """An LDict with a distinct fake position per key (line numbers increase), recursively."""
    out = LDict(loc=Loc("m.yaml", line, 1))
    for i, (k, v) in enumerate(d.items()):
        if isinstance(v, dict):
            v = _ld(v, line * 100 + i)
        elif isinstance(v, list):
            lst = LList(
                [_ld(x, line * 100 + i) if isinstance(x, dict) else x for x in v], loc=Loc("m.yaml", line, 2)
            )
            lst.locs = [Loc("m.yaml", line * 100 + i, 10 + j) for j in range(len(v))]
            v = lst
        out[k] = v
        out.locs[k] = Loc("m.yaml", line + i, 20)
    return out


def place(selector: dict[str, Any] | None = None, resources: dict[str, Any] | None = None, **kw: Any):
    pod: dict[str, Any] = {
        "containers": [{"name": "c", "resources": resources or {"limits": {"nvidia.com/gpu": 1}}}]
    }
    if selector is not None:
        pod["nodeSelector"] = selector
    if "affinity" in kw:
        pod["affinity"] = kw.pop("affinity")
    spec = _ld(pod)
    return resolve_placement(spec, spec["containers"][0], kw.pop("annotations", {}), **kw)


def affinity(*terms: list[tuple[str, str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": k, "operator": op, "values": vals} for k, op, vals in t]}
                    for t in terms
                ]
            }
        }
    }


# --------------------------------------------------------------------------------------------------
# parse_quantity


@pytest.mark.parametrize(
    "text,expected",
    [
        ("79.19GiB", round(79.19 * GIB)),
        ("80GB", 80 * 10**9),
        ("81559MiB", 81559 * MIB),
        ("24Gi", 24 * GIB),
        ("1e9", 10**9),
        ("1.5Ti", 3 * (1 << 39)),
        ("512Mi", 512 * MIB),
        ("24G", 24 * 10**9),
        ("80 gib", 80 * GIB),
        ("85045477376", 85045477376),
        (1024, 1024),
    ],
)
def test_parse_quantity(text: Any, expected: int) -> None:
    assert parse_quantity(text) == expected


def test_parse_quantity_gib_and_gb_differ() -> None:
    assert parse_quantity("80GiB") - parse_quantity("80GB") == 80 * (GIB - 10**9)


@pytest.mark.parametrize("junk", ["", "abc", "80 GX", "-5Gi", "12m", "1..2Gi", "Gi", None, True])
def test_parse_quantity_rejects_junk(junk: Any) -> None:
    with pytest.raises(ValueError):
        parse_quantity(junk)


# --------------------------------------------------------------------------------------------------
# catalogue and memory figures


def test_catalogue_entries_carry_sources_and_consistent_flags() -> None:
    cat = catalogue()
    assert len(cat) >= 40
    for acc in cat.values():
        assert acc.memory_bytes > 0, acc.id
        assert acc.memory_source.split(":")[0] in {"measured", "derived", "approximate"}, acc.memory_source
        assert "memory:" in acc.source or acc.memory_source.startswith("approximate"), acc.id
        if acc.vendor == "nvidia":
            assert acc.cc is not None
            assert acc.bf16 == (acc.cc >= (8, 0)), acc.id  # vLLM: bf16 needs CC >= 8.0
        else:
            assert acc.compute_capability is None


def test_memory_prefers_cuda_total_then_torch_then_derived() -> None:
    # the research input as the build reads it: the corpus with kvlint's supplement merged in
    corpus = SHARED / "corpus/accelerators.yaml"
    research = load_research(str(corpus)) if corpus.exists() else {"gpus": []}
    cat = catalogue()
    reserve = driver_reserve_mib()
    checked = 0
    for g in research.get("gpus", []):
        acc = cat[g["id"]]
        cuda = (g.get("cuda_total_bytes") or {}).get("value")
        cuda_gib = (g.get("cuda_total_gib") or {}).get("value")
        torch = (g.get("torch_total_capacity_gib") or {}).get("value")
        smi = (g.get("nvidia_smi_total_mib") or {}).get("value")
        if cuda:
            assert acc.memory_bytes == cuda and acc.memory_source.startswith("measured")
        elif cuda_gib:
            assert acc.memory_bytes == round(cuda_gib * GIB) and acc.memory_source.startswith("measured")
        elif torch and not g.get("cuda_total_gib"):
            assert acc.memory_bytes == round(torch * GIB)
        elif smi and not g.get("cuda_total_gib") and g.get("memory_twin"):
            # a board with another's memory: that board's observed NVML-minus-CUDA difference, not the median
            twin = cat[g["memory_twin"]["value"]]
            assert acc.memory_bytes == twin.memory_bytes and "reserve observed on" in acc.memory_source
        elif smi and not g.get("cuda_total_gib"):
            assert acc.memory_bytes == (smi - reserve) * MIB
            assert (
                f"NVML {smi} MiB" in acc.memory_source
                and f"{reserve} MiB typical reserve" in acc.memory_source
            )
        checked += 1
    if not research.get("gpus"):
        pytest.skip("research catalogue not available")
    assert checked >= 40


def test_driver_reserve_is_median_of_observations() -> None:
    obs = _raw()["meta"]["driver_reserve"]["observations"]
    diffs = sorted(o["nvidia_smi_total_mib"] - o["cuda_total_bytes"] / MIB for o in obs)
    n = len(diffs)
    median = diffs[n // 2] if n % 2 else (diffs[n // 2 - 1] + diffs[n // 2]) / 2
    assert n >= 5
    assert abs(driver_reserve_mib() - median) <= 1


def test_engine_memory_model_assumptions_vs_catalogue() -> None:
    # engine-memory-model.md §7 assumes H100-80GB 79.19 GiB, A100-80GB 79.15 GiB, L4 22.03 GiB.
    cat = catalogue()
    h100 = cat["nvidia-h100-sxm5-80gb"].memory_bytes / GIB
    a100 = cat["nvidia-a100-sxm4-80gb"].memory_bytes / GIB
    l4 = cat["nvidia-l4"].memory_bytes / GIB
    assert abs(h100 - 79.19) < 0.02  # agrees (79.205)
    assert 0.05 < a100 - 79.15 < 0.15  # catalogue measured 79.256: 0.11 GiB more than assumed
    assert 0.05 < 22.03 - l4 < 0.10  # catalogue measured 21.951: 0.08 GiB less than assumed


def test_memory_matches_totals_printed_by_vllm() -> None:
    rows = yaml.safe_load((FIXTURES / "groundtruth-totals.yaml").read_text())
    cat = catalogue()
    for row in rows:
        got = cat[row["accelerator"]].memory_bytes / GIB
        # driver-dependent; NVML totals or marketing sizes would be 0.4-1 GiB off
        assert abs(got - row["total_gib_reported"]) < 0.25, (row, got)


def test_fp8_follows_catalogue() -> None:
    cat = catalogue()
    assert cat["nvidia-h100-sxm5-80gb"].fp8 and cat["nvidia-l4"].fp8
    assert not cat["nvidia-a100-sxm4-80gb"].fp8 and not cat["nvidia-t4"].fp8
    raw = _raw()["accelerators"]
    for gid, acc in cat.items():
        assert acc.fp8 == raw[gid]["fp8"]


def test_non_cuda_vendors() -> None:
    cat = catalogue()
    assert cat["amd-instinct-mi300x"].vendor == "amd"
    assert cat["amd-instinct-mi300x"].memory_bytes == 196592 * MIB
    assert cat["intel-gaudi3"].vendor == "intel"
    assert cat["google-tpu-v5e"].vendor == "google"
    assert cat["amd-instinct-mi250x"].memory_bytes == 64 * GIB  # per GCD device, not the 128 GB package


# --------------------------------------------------------------------------------------------------
# lookup and aliases


@pytest.mark.parametrize(
    "ref,gid",
    [
        ("h100", "nvidia-h100-sxm5-80gb"),
        ("H100", "nvidia-h100-sxm5-80gb"),
        ("h100-pcie", "nvidia-h100-pcie-80gb"),
        ("a100", "nvidia-a100-sxm4-40gb"),
        ("a100-40gb", "nvidia-a100-sxm4-40gb"),
        ("a100-80gb", "nvidia-a100-sxm4-80gb"),
        ("l4", "nvidia-l4"),
        ("l40s", "nvidia-l40s"),
        ("a10g", "nvidia-a10g"),
        ("t4", "nvidia-t4"),
        ("h200", "nvidia-h200-141gb"),
        ("b200", "nvidia-b200"),
        ("mi300x", "amd-instinct-mi300x"),
        ("nvidia-h100-sxm5-80gb", "nvidia-h100-sxm5-80gb"),
        ("a100-pcie-80gb", "nvidia-a100-pcie-80gb"),
        ("NVIDIA-H100-80GB-HBM3", "nvidia-h100-sxm5-80gb"),
        ("nvidia-tesla-a100", "nvidia-a100-sxm4-40gb"),
        ("tpu_v6e", "google-tpu-v6e"),
    ],
)
def test_lookup(ref: str, gid: str) -> None:
    acc = lookup(ref)
    assert acc is not None and acc.id == gid


def test_every_alias_resolves_to_a_catalogue_entry() -> None:
    cat = catalogue()
    al = aliases()
    assert len(al) >= 40
    for alias, gid in al.items():
        assert gid in cat
        assert lookup(alias) is cat[gid]
    # every alias is documented in the module docstring table
    doc = cat_mod.__doc__ or ""
    for alias in al:
        assert f"``{alias}``" in doc, alias


@pytest.mark.parametrize("bad", ["h1000", "", "   ", "nvidia-", None])
def test_lookup_unknown(bad: Any) -> None:
    assert lookup(bad) is None


def test_require_names_close_matches() -> None:
    with pytest.raises(UnknownAccelerator, match="h100"):
        place(override="h10")


# --------------------------------------------------------------------------------------------------
# label tables


def test_every_gfd_product_label_resolves() -> None:
    values = _raw()["labels"]["nvidia_gpu_product"]["values"]
    assert len(values) >= 20
    for label, row in values.items():
        p = place({"nvidia.com/gpu.product": label})
        assert p.accelerator is not None and p.accelerator.id == row["id"], label
        if row.get("ids"):  # one NVML name for several boards: the smallest, and the choice is said
            assert p.how.startswith(f"nodeSelector nvidia.com/gpu.product={label} (") and "smallest" in p.how
        else:
            assert p.how == f"nodeSelector nvidia.com/gpu.product={label}"
        # newer drivers prefix "NVIDIA-", older ones did not: both spellings resolve
        other = label[len("NVIDIA-") :] if label.startswith("NVIDIA-") else "NVIDIA-" + label
        assert place({"nvidia.com/gpu.product": other}).accelerator.id == row["id"]  # type: ignore[union-attr]


def test_every_gfd_product_of_the_research_catalogue_resolves() -> None:
    research = SHARED / "corpus/accelerators.yaml"
    if not research.exists():
        pytest.skip("research catalogue not available")
    data = yaml.load(research.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for g in data["gpus"]:
        label = (g.get("gfd_product_label") or {}).get("value")
        if label:
            assert place({"nvidia.com/gpu.product": label}).accelerator.id == g["id"]  # type: ignore[union-attr]
    gfd = data["label_conventions"]["nvidia_gpu_feature_discovery"]
    for obs in gfd["product_values_observed"] + [
        {"value": v} for v in gfd["product_values_derived_from_nvml_names"]
    ]:
        value = obs["value"].split(" (")[0]
        assert place({"nvidia.com/gpu.product": value}).accelerator is not None, value


@pytest.mark.parametrize(
    "value,gid",
    [
        ("nvidia-tesla-t4", "nvidia-t4"),
        ("nvidia-tesla-a100", "nvidia-a100-sxm4-40gb"),
        ("nvidia-a100-80gb", "nvidia-a100-sxm4-80gb"),
        ("nvidia-l4", "nvidia-l4"),
        ("nvidia-h100-80gb", "nvidia-h100-sxm5-80gb"),
        ("nvidia-h100-mega-80gb", "nvidia-h100-sxm5-80gb"),
        ("nvidia-h200-141gb", "nvidia-h200-141gb"),
        ("nvidia-b200", "nvidia-b200"),
        ("nvidia-gb200", "nvidia-gb200"),
        ("nvidia-rtx-pro-6000", "nvidia-rtx-pro-6000-blackwell"),
    ],
)
def test_gke_accelerator_values(value: str, gid: str) -> None:
    p = place({"cloud.google.com/gke-accelerator": value, "cloud.google.com/gke-spot": "true"})
    assert p.accelerator is not None and p.accelerator.id == gid
    assert p.how.startswith(f"nodeSelector cloud.google.com/gke-accelerator={value}")
    assert p.loc == Loc("m.yaml", 101, 20)  # the value's position (first key of nodeSelector)


def test_every_gke_value_is_handled() -> None:
    for value, row in _raw()["labels"]["gke_accelerator"]["values"].items():
        p = place({"cloud.google.com/gke-accelerator": value})
        assert (p.accelerator.id if p.accelerator else None) == row["id"], value
        if row["id"] is None:  # a real GKE GPU kvlint lacks: decided (no fallback to default), unknown
            assert "not in the catalogue" in p.how
            assert place({"cloud.google.com/gke-accelerator": value}, default="h100").accelerator is None


def test_gke_unknown_value_does_not_fall_back_to_default() -> None:
    p = place({"cloud.google.com/gke-accelerator": "nvidia-made-up"}, default="l4")
    assert p.accelerator is None and "not a known GKE accelerator value" in p.how


@pytest.mark.parametrize(
    "value,gid",
    [
        ("t4", "nvidia-t4"),
        ("a10g", "nvidia-a10g"),
        ("l4", "nvidia-l4"),
        ("l40s", "nvidia-l40s"),
        ("h100", "nvidia-h100-sxm5-80gb"),
        ("h200", "nvidia-h200-141gb"),
        ("b200", "nvidia-b200"),
    ],
)
def test_karpenter_gpu_names(value: str, gid: str) -> None:
    p = place({"karpenter.k8s.aws/instance-gpu-name": value})
    assert p.accelerator is not None and p.accelerator.id == gid


def test_karpenter_a100_is_ambiguous() -> None:
    p = place({"karpenter.k8s.aws/instance-gpu-name": "a100"})
    assert p.accelerator.id == "nvidia-a100-sxm4-40gb"  # type: ignore[union-attr]
    assert "smallest" in p.how
    p = place(
        {"karpenter.k8s.aws/instance-gpu-name": "a100", "karpenter.k8s.aws/instance-gpu-memory": "81920"}
    )
    assert p.accelerator.id == "nvidia-a100-sxm4-80gb"  # type: ignore[union-attr]
    assert "instance-gpu-memory=81920" in p.how


@pytest.mark.parametrize(
    "name,gid,count",
    [
        ("p4d.24xlarge", "nvidia-a100-sxm4-40gb", 8),
        ("p4de.24xlarge", "nvidia-a100-sxm4-80gb", 8),
        ("p5.48xlarge", "nvidia-h100-sxm5-80gb", 8),
        ("g5.xlarge", "nvidia-a10g", 1),
        ("g5.48xlarge", "nvidia-a10g", 8),
        ("g6.xlarge", "nvidia-l4", 1),
        ("g6e.12xlarge", "nvidia-l40s", 4),
        ("p5e.48xlarge", "nvidia-h200-141gb", 8),
        ("a2-ultragpu-1g", "nvidia-a100-sxm4-80gb", 1),
        ("a2-highgpu-8g", "nvidia-a100-sxm4-40gb", 8),
        ("a3-megagpu-8g", "nvidia-h100-sxm5-80gb", 8),
        ("g2-standard-48", "nvidia-l4", 4),
        ("Standard_NC24ads_A100_v4", "nvidia-a100-pcie-80gb", 1),
        ("Standard_NC40ads_H100_v5", "nvidia-h100-nvl-94gb", 1),
        ("Standard_ND96isr_MI300X_v5", "amd-instinct-mi300x", 8),
        ("ct5lp-hightpu-4t", "google-tpu-v5e", 4),
    ],
)
def test_instance_types(name: str, gid: str, count: int) -> None:
    it = instance_type(name)
    assert it is not None and it.accelerator is not None
    assert (it.accelerator.id, it.gpus) == (gid, count)
    for key in ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"):
        p = place({key: name})
        assert p.accelerator is it.accelerator
        assert f"{count}x {gid}" in p.how


def test_fractional_and_non_gpu_instance_types() -> None:
    nv = instance_type("Standard_NV6ads_A10_v5")
    assert nv is not None and nv.fraction == "1/6" and nv.accelerator.id == "nvidia-a10"  # type: ignore[union-attr]
    trn = instance_type("trn1.32xlarge")
    assert trn is not None and trn.accelerator is None
    # a CPU or unknown instance type does not decide: the default applies
    assert (
        place({"node.kubernetes.io/instance-type": "m5.xlarge"}, default="l4").accelerator.id == "nvidia-l4"
    )  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "name,gid,count",
    [
        ("ml.g5.4xlarge", "nvidia-a10g", 1),
        ("ml.p5.48xlarge", "nvidia-h100-sxm5-80gb", 8),
        ("ML.G6E.12XLARGE", "nvidia-l40s", 4),
    ],
)
def test_sagemaker_hyperpod_instance_types(name: str, gid: str, count: int) -> None:
    """SageMaker HyperPod nodes label node.kubernetes.io/instance-type with the ml.-prefixed SageMaker name (the
    values HyperPod's Helm chart matches its NVIDIA device plugin on): the GPU is the EC2 row's of the rest."""
    it = instance_type(name)
    assert it is not None and it.accelerator is not None
    assert (it.accelerator.id, it.gpus, it.provider) == (gid, count, "aws")
    assert it.name == "ml." + name[3:].lower() and "sagemaker-hyperpod-cli" in it.source
    p = place({"node.kubernetes.io/instance-type": name})
    assert p.accelerator is it.accelerator
    assert f"{count}x {gid}" in p.how


def test_sagemaker_prefix_only_on_aws_rows() -> None:
    # the prefix names SageMaker (AWS) instances only: not a GCP or Azure size, not an unknown name, and a CPU
    # instance stays without a GPU (the default applies, as for m5.xlarge)
    assert instance_type("ml.a2-highgpu-8g") is None
    assert instance_type("ml.Standard_NC24ads_A100_v4") is None
    assert instance_type("ml.nosuch.48xlarge") is None
    assert instance_type("ml.") is None
    trn = instance_type("ml.trn1.32xlarge")
    assert trn is not None and trn.accelerator is None
    assert (
        place({"node.kubernetes.io/instance-type": "ml.m5.xlarge"}, default="l4").accelerator.id
        == "nvidia-l4"
    )  # type: ignore[union-attr]


def test_azure_amd_tpu_labels() -> None:
    assert place({"karpenter.azure.com/sku-gpu-name": "T4"}).accelerator.id == "nvidia-t4"  # type: ignore[union-attr]
    a100 = place({"karpenter.azure.com/sku-gpu-name": "A100"})
    # the smallest Azure A100: ND A100 v4's 40 GB board, an SXM4 behind NVSwitch (tests/test_accelerators_azure_nd_sxm.py)
    assert a100.accelerator.id == "nvidia-a100-sxm4-40gb" and "smallest" in a100.how  # type: ignore[union-attr]
    assert place({"amd.com/gpu.product-name": "Instinct_MI210"}).accelerator.id == "amd-instinct-mi210"  # type: ignore[union-attr]
    mi = place(
        {"amd.com/gpu.product-name": "AMD_Instinct_MI300X"}, resources={"limits": {"amd.com/gpu": "8"}}
    )
    assert mi.accelerator.vendor == "amd" and (mi.gpus, mi.resource) == (8, "amd.com/gpu")  # type: ignore[union-attr]
    tpu = place(
        {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice"}, resources={"limits": {"google.com/tpu": 4}}
    )
    assert tpu.accelerator.id == "google-tpu-v6e" and tpu.accelerator.vendor == "google"  # type: ignore[union-attr]
    assert (tpu.gpus, tpu.resource) == (4, "google.com/tpu")
    # kubernetes.azure.com/accelerator names the vendor only: it does not decide
    assert place({"kubernetes.azure.com/accelerator": "nvidia"}).accelerator is None


def test_coreweave_gpu_class_label() -> None:
    """CoreWeave's gpu.nvidia.com/class (coreweave/kubernetes-cloud coreweave-kubernetes/node-types.md): in a
    nodeSelector or a required affinity, the class names the board; several classes -> the smallest."""
    a5000 = place({"gpu.nvidia.com/class": "RTX_A5000"})
    assert a5000.accelerator.id == "nvidia-rtx-a5000" and "CoreWeave class RTX_A5000" in a5000.how  # type: ignore[union-attr]
    assert place({"gpu.nvidia.com/class": "A100_NVLINK_80GB"}).accelerator.id == "nvidia-a100-sxm4-80gb"  # type: ignore[union-attr]
    assert place({"gpu.nvidia.com/class": "h100_pcie"}).accelerator.id == "nvidia-h100-pcie-80gb"  # type: ignore[union-attr]
    either = place(affinity=affinity([("gpu.nvidia.com/class", "In", ["A100_PCIE_80GB", "A40"])]))
    assert either.accelerator.id == "nvidia-a40" and "nvidia-a100-pcie-80gb" in {  # type: ignore[union-attr]
        a.id for a in either.candidates
    }
    # a class of the table whose board the catalogue lacks, and a value the table does not have: no GPU, said why
    rtx4000 = place({"gpu.nvidia.com/class": "Quadro_RTX_4000"})
    assert rtx4000.accelerator is None and "not in the catalogue" in rtx4000.how
    assert place({"gpu.nvidia.com/class": "H200_SXM5_141GB"}).accelerator is None
    # a value not in CoreWeave's table (other clusters reuse the key) does not decide: a later label still does
    ori = place({"gpu.nvidia.com/class": "L40S", "node.kubernetes.io/instance-type": "g6e.xlarge"})
    assert ori.accelerator.id == "nvidia-l40s" and "g6e.xlarge" in ori.how  # type: ignore[union-attr]
    # GFD's product label, more specific, still decides when both are given
    both = place({"gpu.nvidia.com/class": "A40", "nvidia.com/gpu.product": "NVIDIA-L40S"})
    assert both.accelerator.id == "nvidia-l40s"  # type: ignore[union-attr]


def test_coreweave_class_table_matches_its_vram_column() -> None:
    """Each class's board has the VRAM CoreWeave's table gives it (its "table" text, "A40, Ampere, 48 GB"):
    the catalogue memory (CUDA total) within 10% below the marketed size."""
    table = json.loads(DATA.read_text(encoding="utf-8"))["labels"]["coreweave_gpu_class"]
    assert table["source"].startswith("github:coreweave/kubernetes-cloud/coreweave-kubernetes/node-types.md@")
    mapped = 0
    for value, row in table["values"].items():
        gb = int(row["table"].rsplit(", ", 1)[1].removesuffix(" GB"))
        if row["id"] is None:
            assert row.get("note"), value
            continue
        mapped += 1
        mem = catalogue()[row["id"]].memory_bytes
        assert 0.9 * gb * 1e9 <= mem <= gb * 1e9 * 1.08, (value, row["id"], mem)
    assert mapped >= 10


# --------------------------------------------------------------------------------------------------
# MIG, sharing, unknown products


def test_gfd_shared_suffix() -> None:
    p = place({"nvidia.com/gpu.product": "NVIDIA-L4-SHARED", "nvidia.com/gpu.replicas": "4"})
    assert p.accelerator.id == "nvidia-l4" and p.shared and p.max_sharers == 4  # type: ignore[union-attr]
    assert p.memory_bytes == p.accelerator.memory_bytes  # type: ignore[union-attr]


def test_gfd_mig_single_strategy_product() -> None:
    p = place({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"})
    assert p.accelerator.id == "nvidia-a100-sxm4-40gb"  # type: ignore[union-attr]
    assert p.memory_bytes_override == 4864 * MIB and p.memory_bytes == 4864 * MIB
    assert "MIG 1g.5gb" in p.how
    # with GFD's memory label (overwritten with the MIG device memory), the label wins
    q = place({"nvidia.com/gpu.product": "NVIDIA-H200-MIG-1g.18gb", "nvidia.com/gpu.memory": "16384"})
    assert q.accelerator.id == "nvidia-h200-141gb" and q.memory_bytes_override == 16384 * MIB  # type: ignore[union-attr]
    # H200's 1g.18gb gives 16.00 GiB (nvidia-smi mig -lgip), not 18 GB
    r = place({"nvidia.com/gpu.product": "NVIDIA-H200-MIG-1g.18gb"})
    assert r.memory_bytes_override == 16 * GIB


def test_mig_mixed_strategy_resource() -> None:
    p = place(
        {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        resources={"limits": {"nvidia.com/mig-3g.40gb": 1}},
    )
    assert p.resource == "nvidia.com/mig-3g.40gb" and p.gpus == 1
    assert p.accelerator.id == "nvidia-a100-sxm4-80gb" and p.memory_bytes_override == 40192 * MIB  # type: ignore[union-attr]
    # a profile that exists on one GPU family only names the GPU when nothing else does
    q = place(None, resources={"limits": {"nvidia.com/mig-4g.71gb": "1"}})
    assert q.accelerator is not None and q.accelerator.id.startswith("nvidia-h200")
    assert q.memory_bytes_override == round(69.5 * 1024) * MIB
    # "+me" profiles are spelled ".me" in resource names
    r = place(
        {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
        resources={"limits": {"nvidia.com/mig-1g.5gb.me": 1}},
    )
    assert r.memory_bytes_override == 4864 * MIB


def test_gke_partition_and_sharing_labels() -> None:
    p = place(
        {
            "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
            "cloud.google.com/gke-gpu-partition-size": "1g.5gb",
        }
    )
    assert p.accelerator.id == "nvidia-a100-sxm4-40gb" and p.memory_bytes_override == 4864 * MIB  # type: ignore[union-attr]
    q = place(
        {
            "cloud.google.com/gke-accelerator": "nvidia-l4",
            "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
            "cloud.google.com/gke-max-shared-clients-per-gpu": "3",
        }
    )
    assert q.shared and q.max_sharers == 3 and "time-sharing" in q.how


def test_shared_resource() -> None:
    p = place({"nvidia.com/gpu.product": "NVIDIA-L4"}, resources={"limits": {"nvidia.com/gpu.shared": "1"}})
    assert p.shared and p.resource == "nvidia.com/gpu.shared" and p.gpus == 1


def test_unknown_gfd_product_uses_memory_label() -> None:
    # the RTX 5880 Ada (NVIDIA/open-gpu-kernel-modules device 26B3) is not catalogued (the L20 this test used is)
    labels = {
        "nvidia.com/gpu.product": "NVIDIA-RTX-5880-Ada-Generation",
        "nvidia.com/gpu.memory": "46068",
        "nvidia.com/gpu.compute.major": "8",
        "nvidia.com/gpu.compute.minor": "9",
    }
    p = place(labels)
    acc = p.accelerator
    assert acc is not None and acc.name == "NVIDIA-RTX-5880-Ada-Generation" and acc.vendor == "nvidia"
    assert acc.memory_bytes == (46068 - driver_reserve_mib()) * MIB
    assert acc.compute_capability == "8.9" and acc.bf16 and acc.fp8
    # product unknown and no memory label: undetermined
    assert place({"nvidia.com/gpu.product": "NVIDIA-RTX-5880-Ada-Generation"}).accelerator is None


# --------------------------------------------------------------------------------------------------
# affinity, precedence, GPU counts


def test_affinity_single_gpu_across_values() -> None:
    aff = affinity([("node.kubernetes.io/instance-type", "In", ["g6e.2xlarge", "g6e.4xlarge"])])
    p = place(None, affinity=aff)
    assert p.accelerator.id == "nvidia-l40s"  # type: ignore[union-attr]
    assert p.how.startswith("nodeAffinity node.kubernetes.io/instance-type In [g6e.2xlarge, g6e.4xlarge]")
    assert "smallest" not in p.how
    assert p.loc is not None


def test_affinity_different_gpus_takes_smallest() -> None:
    aff = affinity(
        [("cloud.google.com/gke-accelerator", "In", ["nvidia-h100-80gb", "nvidia-l4", "nvidia-a100-80gb"])]
    )
    p = place(None, affinity=aff)
    assert p.accelerator.id == "nvidia-l4" and "smallest memory" in p.how  # type: ignore[union-attr]
    # the loc is the deciding value's position (second item of the values list)
    assert p.loc is not None and p.loc.column == 11


def test_affinity_terms_are_alternatives_and_ignore_notin() -> None:
    aff = affinity(
        [("nvidia.com/gpu.product", "In", ["NVIDIA-H100-80GB-HBM3"])],
        [("nvidia.com/gpu.product", "In", ["NVIDIA-A100-SXM4-80GB"]), ("zone", "In", ["a"])],
    )
    p = place(None, affinity=aff)
    assert p.accelerator.id == "nvidia-h100-sxm5-80gb"  # 79.20 GiB < 79.26 GiB  # type: ignore[union-attr]
    assert " | " in p.how
    notin = affinity([("cloud.google.com/gke-accelerator", "NotIn", ["nvidia-l4"])])
    assert place(None, affinity=notin).accelerator is None


def test_precedence() -> None:
    sel = {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    aff = affinity([("cloud.google.com/gke-accelerator", "In", ["nvidia-h100-80gb"])])
    ann = {"kvlint.io/accelerator": "a100-80gb"}
    assert (
        place(sel, affinity=aff, annotations=ann, override="b200", default="t4").accelerator.id
        == "nvidia-b200"
    )  # type: ignore[union-attr]
    p = place(sel, affinity=aff, annotations=ann, default="t4")
    assert (
        p.accelerator.id == "nvidia-a100-sxm4-80gb" and p.how == "annotation kvlint.io/accelerator=a100-80gb"
    )  # type: ignore[union-attr]
    assert place(sel, affinity=aff, default="t4").accelerator.id == "nvidia-l4"  # type: ignore[union-attr]
    assert place(None, affinity=aff, default="t4").accelerator.id == "nvidia-h100-sxm5-80gb"  # type: ignore[union-attr]
    d = place(None, default="t4")
    assert d.accelerator.id == "nvidia-t4" and d.how == "config default accelerator t4"  # type: ignore[union-attr]
    none = place(None)
    assert none.accelerator is None and none.memory_bytes is None
    # an unknown annotation value is reported and the next source is used
    bad = place(sel, annotations={"kvlint.io/accelerator": "h1000"})
    assert bad.accelerator.id == "nvidia-l4" and "h1000 ignored" in bad.how  # type: ignore[union-attr]
    with pytest.raises(UnknownAccelerator):
        place(None, default="nope")


def test_gpu_memory_override_wins() -> None:
    p = place(
        {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"},
        gpu_memory_bytes=parse_quantity("79.19GiB"),
    )
    assert p.memory_bytes == parse_quantity("79.19GiB") and "--gpu-memory" in p.how


@pytest.mark.parametrize(
    "resources,expected",
    [
        ({"limits": {"nvidia.com/gpu": 2}}, (2, "nvidia.com/gpu")),
        ({"limits": {"nvidia.com/gpu": "4"}}, (4, "nvidia.com/gpu")),
        ({"requests": {"nvidia.com/gpu": "1"}}, (1, "nvidia.com/gpu")),
        ({"limits": {"nvidia.com/gpu": 2}, "requests": {"nvidia.com/gpu": 1}}, (2, "nvidia.com/gpu")),
        ({"limits": {"memory": "10Gi", "habana.ai/gaudi": 8}}, (8, "habana.ai/gaudi")),
        ({"limits": {"aws.amazon.com/neuron": 16}}, (16, "aws.amazon.com/neuron")),
        ({"limits": {"gpu.intel.com/i915": 1}}, (1, "gpu.intel.com/i915")),
        ({"limits": {"gpu.intel.com/xe": 2}}, (2, "gpu.intel.com/xe")),
        ({"limits": {"nvidia.com/gpu": "{{ .Values.gpus }}"}}, (None, "nvidia.com/gpu")),
        ({"limits": {"cpu": 2}}, (None, None)),
        ("not-a-mapping", (None, None)),
    ],
)
def test_gpu_count(resources: Any, expected: tuple[Any, Any]) -> None:
    pod = _ld({"containers": [{"name": "c", "resources": resources}]})
    p = resolve_placement(pod, pod["containers"][0], {})
    assert (p.gpus, p.resource) == expected
    if expected[1]:
        assert p.gpus_loc is not None


def test_intel_xe_resource_is_advertised() -> None:
    """Intel's GPU plugin advertises gpu.intel.com/xe for GPUs on the xe kernel driver (llm-d-modelservice's
    examples/values-xpu.yaml requests it): not a misspelt resource (KV409), and an XPU, not a CUDA/ROCm GPU."""
    from kvlint.engines.images import NON_GPU_RESOURCES
    from kvlint.rules.families.parallelism import invalid_gpu_resources

    container = {"resources": {"limits": {"gpu.intel.com/xe": 1}, "requests": {"gpu.intel.com/xe": 1}}}
    assert invalid_gpu_resources(container) == []
    assert NON_GPU_RESOURCES["gpu.intel.com/xe"] == NON_GPU_RESOURCES["gpu.intel.com/i915"]


def test_bad_input_never_raises() -> None:
    for pod in ({}, {"nodeSelector": "x"}, {"nodeSelector": {"a": None}}, {"affinity": {"nodeAffinity": 3}},
                {"affinity": affinity([("k", "In", None)])}, {"nodeSelector": {"nvidia.com/gpu.product": 7}}):  # fmt: skip
        p = resolve_placement(pod, {"resources": {"limits": []}}, {})  # type: ignore[arg-type]
        assert p.accelerator is None
    assert resolve_placement(None, None, None).accelerator is None  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# real manifests


def _pod_specs(node: Any) -> list[Any]:
    """PodSpec-like mappings (with a ``containers`` list) anywhere in a document."""
    found: list[Any] = []
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            found.append(node)
        for v in node.values():
            found.extend(_pod_specs(v))
    elif isinstance(node, list):
        for v in node:
            found.extend(_pod_specs(v))
    return found


def _fixture_pods(name: str) -> list[Any]:
    from kvlint.load import load_text

    path = FIXTURES / name
    result = load_text(path.read_text(encoding="utf-8"), str(path))
    assert not [f for f in result.findings if f.rule == "KV001"], result.findings
    return [p for d in result.documents for p in _pod_specs(d.data)]


def test_fixture_gke_a100_40gb() -> None:
    (pod,) = _fixture_pods("gke-a100-40gb.yaml")
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator.id == "nvidia-a100-sxm4-40gb" and p.gpus == 1  # type: ignore[union-attr]
    assert p.how.startswith("nodeSelector cloud.google.com/gke-accelerator=nvidia-tesla-a100 (")
    assert "A100 40GB" in p.how
    lines = (FIXTURES / "gke-a100-40gb.yaml").read_text().splitlines()
    assert p.loc is not None and lines[p.loc.line - 1][p.loc.column - 1 :] == "nvidia-tesla-a100"
    assert p.gpus_loc is not None and lines[p.gpus_loc.line - 1].strip() == 'nvidia.com/gpu: "1"'
    assert p.gpus_loc.line > 27  # limits (after requests) is what counts


def test_fixture_gke_h100_mega() -> None:
    (pod,) = _fixture_pods("gke-h100-mega.yaml")
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator.id == "nvidia-h100-sxm5-80gb" and p.gpus == 8  # type: ignore[union-attr]
    assert p.memory_bytes == 85045477376


def test_fixture_eks_instance_type_affinity() -> None:
    (pod,) = _fixture_pods("eks-g6e-affinity.yaml")
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator.id == "nvidia-l40s" and p.gpus == 1  # type: ignore[union-attr]
    lines = (FIXTURES / "eks-g6e-affinity.yaml").read_text().splitlines()
    assert p.loc is not None and lines[p.loc.line - 1][p.loc.column - 1 :] == "g6e.2xlarge"


def test_fixture_lws_tpu() -> None:
    (pod,) = _fixture_pods("lws-tpu.yaml")
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator.id == "google-tpu-v5e" and p.accelerator.vendor == "google"  # type: ignore[union-attr]
    assert (p.gpus, p.resource) == (4, "google.com/tpu")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus manifests not available")
def test_corpus_manifests_never_raise() -> None:
    containers = known = 0
    for path in sorted(CORPUS.iterdir()):
        if path.suffix not in (".yaml", ".yml", ".tpl"):
            continue
        try:
            docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue  # malformed on purpose (KV001 cases)
        for doc in docs:
            for pod in _pod_specs(doc):
                ann: dict[str, str] = {}
                for c in pod["containers"]:
                    if not isinstance(c, dict):
                        continue
                    containers += 1
                    p = resolve_placement(pod, c, ann)
                    known += p.accelerator is not None
    assert containers > 50
    assert known >= 20  # GKE nodeSelectors, EKS instance-type affinity, TPU selectors


def test_gpu_resource_picks_the_first_of_the_lowest_rank():
    """The container's accelerator resource is the first key (in the order written) of the lowest rank of
    GPU_RESOURCES' order with MIG third, in limits before requests: compared with that rule written as a stable
    sort, on generated resource blocks (GPU, MIG, other vendors, CPU keys, non-string keys)."""
    import random

    from kvlint.accelerators import placement as pl

    def rank(key: object) -> int | None:
        if not isinstance(key, str):
            return None
        if key.startswith(pl.MIG_RESOURCE_PREFIX):
            return 2
        return (i if (i := pl.GPU_RESOURCES.index(key)) < 2 else i + 1) if key in pl.GPU_RESOURCES else None

    def reference(container: dict) -> str | None:
        res = container.get("resources")
        if not isinstance(res, dict):
            return None
        for section in ("limits", "requests"):
            block = res.get(section)
            if not isinstance(block, dict):
                continue
            ordered = sorted((k for k in block if rank(k) is not None), key=lambda k: rank(k) or 0)
            if ordered:
                return ordered[0]
        return None

    keys: list[object] = [
        *pl.GPU_RESOURCES,
        "nvidia.com/mig-1g.10gb",
        "nvidia.com/mig-3g.40gb",
        "cpu",
        "memory",
        7,
    ]
    rng = random.Random(19)
    for _ in range(3000):
        res: dict = {}
        for section in ("limits", "requests"):
            if rng.random() < 0.8:
                res[section] = {k: rng.randint(0, 8) for k in rng.sample(keys, rng.randint(0, 5))}
        container = {"resources": res} if rng.random() < 0.95 else {"resources": "x"}
        got = pl._gpu_resource(container)[0]
        assert got == reference(container), container
    assert pl._gpu_resource({})[0] is None


def test_catalogue_build_without_the_shared_research_file_says_what_it_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/accelerators.md's `python -m kvlint.accelerators._build_catalogue` in a clone without ../shared used to
    end in a FileNotFoundError traceback; it names the file it reads and writes nothing."""
    from kvlint.accelerators._build_catalogue import main as build_main

    missing, out = tmp_path / "accelerators.yaml", tmp_path / "out.json"
    assert build_main([str(missing), str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no such file" in err and "corpus/accelerators.yaml" in err
    assert not out.exists()
