"""Generate ``kvlint/data/accelerators.json`` from the research catalogue.

Run once (and again whenever the research catalogue or the supplement changes)::

    .venv/bin/python -m kvlint.accelerators._build_catalogue [../shared/corpus/accelerators.yaml]

Input: the kvlint research catalogue (``corpus/accelerators.yaml``: ``gpus``, ``label_conventions``,
``mig_profiles``, ``instance_types``), where every fact carries a ``source``, merged with this package's
research supplement (``kvlint/accelerators/supplement.yaml``, same format: consumer/workstation GPUs, unified-memory
parts, the AMD Instinct line, measured totals for corpus entries, AMD device ids, OCI shapes; see
:func:`load_research`). Output: a compact, indexed
catalogue that :mod:`kvlint.accelerators.registry` loads at run time, written as JSON (``json.loads`` reads it
in about 2 ms where libyaml's loader took about 80 ms of every command's start-up). Every output entry keeps the
sources of the facts it was built from; values the research catalogue marks ``unverified``/``mock`` keep
that status in their ``memory_source`` / ``status`` text.

What this script *decides* (everything else is copied):

* ``memory_bytes`` — the device total as CUDA reports it (what vLLM multiplies by
  ``gpu_memory_utilization``), chosen in this order: ``cuda_total_bytes`` (deviceQuery
  ``totalGlobalMem``), ``cuda_total_gib`` (2-decimal GiB from ``cudaGetDeviceProperties``),
  ``torch_total_capacity_gib`` (torch OOM "total capacity"), NVML total (``nvidia_smi_total_mib``) minus
  the typical driver reserve, HIP total (``reported_total_mib``, AMD), and last the marketing size
  (``approximate``). An entry whose ``memory_twin`` names a board with the same memory (same die, same
  memory stacks, the same NVML total) takes that board's observed NVML-minus-CUDA reserve instead of the
  typical one: the observed reserve is larger on the larger boards (Hopper: 453 MiB at 80 GB, 595 at 94 GB,
  699 at 141 GB; A100 80GB: 762), and the median would size a board above the twin it shares its memory with.
* the typical driver reserve = median of ``smi_minus_cuda_mib_derived`` over the GPUs that have both an
  NVML and a CUDA total (computed below, written to ``meta.driver_reserve``).
* ``bf16`` = compute capability >= 8.0 for NVIDIA (vLLM's rule, checked against the catalogue's own
  ``bf16`` values); ``fp8`` = ``fp8_e4m3_hw``, or for NVIDIA entries without it (the supplement's) compute
  capability >= 8.9, the rule the corpus's own values follow (``meta.fp8_rule``).
* GFD ``nvidia.com/gpu.product`` values for entries that only give an NVML name: GFD's sanitise rule (characters
  outside ``[A-Za-z0-9-_. ]`` dropped, whitespace runs joined with ``-``; NVIDIA k8s-device-plugin
  ``internal/lm/resource.go``), status ``derived``; one value naming two boards (GeForce RTX 3080 10GB/12GB) keeps
  both ids, smallest memory first.
* AMD ``amd.com/gpu.device-id`` / ``amd.com/gpu.product-name`` values from the supplement's device-id table
  (``amdgpu.ids`` names with the labeller's ``' ' -> '_'``, parentheses removed).
* the mapping of the cloud tables' free-text GPU names (``nvidia-a100-40gb (SXM/PCIe not stated by
  source)``) to catalogue ids, and the short aliases (:data:`ALIASES`).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
from pathlib import Path
from typing import Any

import yaml

#: The shared research file beside the checkout (``../shared`` relative to the repository root).
DEFAULT_INPUT = str(Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "accelerators.yaml")
SUPPLEMENT = Path(__file__).resolve().parent / "supplement.yaml"
OUTPUT = Path(__file__).resolve().parent.parent / "data" / "accelerators.json"
CORPUS_REF = "corpus/accelerators.yaml (kvlint research catalogue)"
SUPPLEMENT_REF = "kvlint/accelerators/supplement.yaml (kvlint research supplement)"
#: Where the corpus's bf16 rule comes from (its meta.bf16_rule): vLLM rejects bf16 below CC 8.0.
BF16_RULE_SRC = "https://github.com/vllm-project/vllm/issues/946"
#: Where the corpus's NVIDIA fp8 values come from (its meta.fp8_rule): FP8 compute needs CC >= 8.9.
FP8_RULE_SRC = "https://docs.vllm.ai/en/v0.32.0/features/quantization/llm_compressor/fp8/"
GFD_SANITISE_SRC = (
    "github:NVIDIA/k8s-device-plugin/internal/lm/resource.go@1b826acc6af3079d8923bac395c3124b8861a9a6"
)
MIB = 1 << 20
GIB = 1 << 30

# Display names for entries whose NVML name is not sourced (the research catalogue keeps nvml_name null).
FALLBACK_NAMES = {
    "nvidia-a30": "NVIDIA A30",
    "nvidia-l40": "NVIDIA L40",
    "nvidia-gh200-144gb": "NVIDIA GH200 144GB HBM3e",
    "nvidia-gb200": "NVIDIA GB200",
    "nvidia-rtx-pro-6000-blackwell": "NVIDIA RTX PRO 6000 Blackwell",
    "amd-instinct-mi210": "AMD Instinct MI210",
    "amd-instinct-mi250x": "AMD Instinct MI250X",
    "amd-instinct-mi325x": "AMD Instinct MI325X",
    "amd-instinct-mi355x": "AMD Instinct MI355X",
    "intel-gaudi2": "Intel Gaudi 2",
    "intel-gaudi3": "Intel Gaudi 3",
    "google-tpu-v4": "Google TPU v4",
    "google-tpu-v5e": "Google TPU v5e",
    "google-tpu-v5p": "Google TPU v5p",
    "google-tpu-v6e": "Google TPU v6e (Trillium)",
}

# Entries whose marketing size is not the size of one Kubernetes-visible device.
PER_DEVICE_GIB: dict[str, tuple[int, str]] = {
    "amd-instinct-mi250x": (
        64,
        "marketing 128 GB covers 2 GCDs and each GCD is its own device (research note)",
    ),
}

# Free-text GPU names used by the cloud tables -> catalogue id, with the assumption made.
GPU_TEXT_IDS: dict[str, tuple[str | None, str]] = {
    "nvidia-v100-16gb": ("nvidia-v100-sxm2-16gb", "form factor not stated by the source; SXM2 entry used"),
    "nvidia-v100-32gb": ("nvidia-v100-sxm2-32gb", "form factor not stated by the source; SXM2 entry used"),
    "nvidia-a100-40gb": ("nvidia-a100-sxm4-40gb", "form factor not stated by the source; SXM4 entry used"),
    "nvidia-a100-80gb": ("nvidia-a100-sxm4-80gb", "form factor not stated by the source; SXM4 entry used"),
    "nvidia-h100-80gb": ("nvidia-h100-sxm5-80gb", "form factor not stated by the source; SXM5 entry used"),
    "nvidia-t4g": (
        "nvidia-t4",
        "T4G (Graviton g5g) mapped to the T4 entry (same GPU per the source label t4g)",
    ),
    "nvidia-b300": (None, "B300 is not in the catalogue"),
    "amd-radeon-pro-v520": (None, "Radeon Pro V520 is not in the catalogue"),
}

# Azure docs word some HGX boards "PCIe"; the research catalogue keeps that wording as "(doc says PCIe;
# unverified)". Follow the doc, say so.
AZURE_TEXT_IDS: dict[str, tuple[str, str]] = {
    "nvidia-a100-40gb": ("nvidia-a100-pcie-40gb", "Azure doc says PCIe (unverified); PCIe entry used"),
    "nvidia-a100-80gb": ("nvidia-a100-pcie-80gb", "Azure doc says PCIe (unverified); PCIe entry used"),
    "nvidia-h100-80gb": ("nvidia-h100-pcie-80gb", "Azure doc says PCIe (unverified); PCIe entry used"),
    "nvidia-v100-16gb": ("nvidia-v100-sxm2-16gb", "variant not stated by the source; SXM2 16GB entry used"),
}

# GKE accelerator values whose GPU the research catalogue names in free text.
GKE_TEXT_IDS: dict[str, tuple[str | None, str]] = {
    "nvidia-tesla-v100": ("nvidia-v100-sxm2-16gb", "GCP V100 is 16GB; SXM2 entry used"),
    "nvidia-tesla-p100": (None, "P100 is not in the catalogue"),
    "nvidia-tesla-p4": (None, "P4 is not in the catalogue"),
    "nvidia-tesla-k80": (None, "K80 is not in the catalogue"),
    "nvidia-gb300": (None, "GB300 is not in the catalogue"),
    "nvidia-rtx-pro-6000-vws": (
        "nvidia-rtx-pro-6000-blackwell",
        "same GPU as nvidia-rtx-pro-6000 with a vWS licence",
    ),
}

# Short hints shown in Placement.how for GKE values whose name hides the GPU's size.
GKE_HOW = {
    "nvidia-tesla-a100": "GKE nvidia-tesla-a100 is the A100 40GB",
    "nvidia-tesla-v100": "GKE V100 is 16GB",
    "nvidia-h100-mega-80gb": "A3 Mega H100 80GB",
    "nvidia-rtx-pro-6000-vws": "RTX PRO 6000 with a vWS licence",
}

# MIG tables of the research catalogue (keyed by the start of their "gpu" text) -> catalogue ids.
MIG_TABLE_IDS: list[tuple[str, list[str]]] = [
    ("A100 40GB", ["nvidia-a100-sxm4-40gb", "nvidia-a100-pcie-40gb"]),
    # the A100 80GB table's device ids include the A800 80GB boards (0x20F3 SXM4, 0x20F5 PCIe; mig-parted)
    (
        "A100 80GB",
        ["nvidia-a100-sxm4-80gb", "nvidia-a100-pcie-80gb", "nvidia-a800-sxm4-80gb", "nvidia-a800-pcie-80gb"],
    ),
    ("A30", ["nvidia-a30"]),
    ("H100 80GB", ["nvidia-h100-sxm5-80gb", "nvidia-h100-pcie-80gb"]),
    ("H100 NVL", ["nvidia-h100-nvl-94gb"]),
    ("H100 96GB", ["nvidia-gh200-96gb", "nvidia-h20"]),  # the table's device ids include the H20's 0x2329
    ("H200", ["nvidia-h200-141gb", "nvidia-h200-nvl-141gb"]),
    ("GH200 144G", ["nvidia-gh200-144gb"]),
    ("B200", ["nvidia-b200"]),
    ("GB200", ["nvidia-gb200"]),
    ("B300", []),
    ("RTX PRO 6000", ["nvidia-rtx-pro-6000-blackwell"]),
]

# Azure Karpenter (NAP) karpenter.azure.com/sku-gpu-name values: the GPU token of the VM size name.
AZURE_SKU_GPU_TOKENS = ["A100", "H100", "H200", "T4", "A10", "MI300X"]

# Short aliases accepted by --accelerator, kvlint.io/accelerator and the config default.
ALIASES: dict[str, tuple[str, str]] = {
    "h100": ("nvidia-h100-sxm5-80gb", "H100 80GB SXM5 (HGX), the board behind p5/a3/ND H100 v5 instances"),
    "h100-sxm": ("nvidia-h100-sxm5-80gb", "H100 SXM5 80GB"),
    "h100-sxm5": ("nvidia-h100-sxm5-80gb", "H100 SXM5 80GB"),
    "h100-80gb": ("nvidia-h100-sxm5-80gb", "H100 80GB; SXM5 (same memory figure class as PCIe)"),
    "h100-pcie": ("nvidia-h100-pcie-80gb", "H100 PCIe 80GB"),
    "h100-nvl": ("nvidia-h100-nvl-94gb", "H100 NVL 94GB"),
    "h200": ("nvidia-h200-141gb", "H200 SXM 141GB"),
    "h200-nvl": ("nvidia-h200-nvl-141gb", "H200 NVL 141GB"),
    "gh200": ("nvidia-gh200-96gb", "GH200 with 96GB HBM3 (the 480GB superchip)"),
    "gh200-144gb": ("nvidia-gh200-144gb", "GH200 with 144GB HBM3e"),
    "a100": ("nvidia-a100-sxm4-40gb", "ambiguous (40GB or 80GB): the smaller, conservative; say a100-80gb"),
    "a100-40gb": ("nvidia-a100-sxm4-40gb", "A100 SXM4 40GB"),
    "a100-80gb": ("nvidia-a100-sxm4-80gb", "A100 SXM4 80GB"),
    "a100-sxm": ("nvidia-a100-sxm4-40gb", "ambiguous size: the smaller (40GB)"),
    "a100-pcie": ("nvidia-a100-pcie-40gb", "ambiguous size: the smaller (40GB)"),
    "a800-80gb": (
        "nvidia-a800-sxm4-80gb",
        "A800 SXM4 80GB (China-market A100 80GB); say a800-pcie-80gb for PCIe",
    ),
    "h20-141gb": ("nvidia-h20-3e", "H20-3e, the 141GB H20 (NVML name NVIDIA H20-3e); h20 is the 96GB board"),
    "a10": ("nvidia-a10", "A10 24GB"),
    "a10g": ("nvidia-a10g", "A10G 24GB (AWS g5)"),
    "a30": ("nvidia-a30", "A30 24GB"),
    "a40": ("nvidia-a40", "A40 48GB"),
    "l4": ("nvidia-l4", "L4 24GB"),
    "l40": ("nvidia-l40", "L40 48GB"),
    "l40s": ("nvidia-l40s", "L40S 48GB"),
    "t4": ("nvidia-t4", "T4 16GB"),
    "v100": ("nvidia-v100-sxm2-16gb", "ambiguous (16GB or 32GB): the smaller, conservative; say v100-32gb"),
    "v100-16gb": ("nvidia-v100-sxm2-16gb", "V100 SXM2 16GB"),
    "v100-32gb": ("nvidia-v100-sxm2-32gb", "V100 SXM2 32GB"),
    "b200": ("nvidia-b200", "B200 (HGX)"),
    "gb200": ("nvidia-gb200", "GB200"),
    "rtx-pro-6000": ("nvidia-rtx-pro-6000-blackwell", "RTX PRO 6000 Blackwell 96GB"),
    "rtx-pro-4500": ("nvidia-rtx-pro-4500-blackwell", "RTX PRO 4500 Blackwell 32GB (AWS g7)"),
    "rtx-2080-ti": (
        "nvidia-geforce-rtx-2080-ti",
        "GeForce RTX 2080 Ti 11GB (22GB modified boards: nvidia.com/gpu.memory)",
    ),
    "rtx-2080ti": ("nvidia-geforce-rtx-2080-ti", "GeForce RTX 2080 Ti 11GB"),
    "gtx-2080ti": (
        "nvidia-geforce-rtx-2080-ti",
        "GeForce RTX 2080 Ti 11GB (no GTX 2080 Ti exists; the spelling a team label uses: TobiasEdman/des-chatbot)",
    ),
    "rtx-3060": ("nvidia-geforce-rtx-3060-12gb", "GeForce RTX 3060 12GB (the catalogue has no 8GB entry)"),
    "rtx-3080": ("nvidia-geforce-rtx-3080-10gb", "ambiguous (10GB or 12GB): the smaller; say rtx-3080-12gb"),
    "rtx-3080-12gb": ("nvidia-geforce-rtx-3080-12gb", "GeForce RTX 3080 12GB"),
    "rtx-3090": ("nvidia-geforce-rtx-3090", "GeForce RTX 3090"),
    "rtx-3090-ti": ("nvidia-geforce-rtx-3090-ti", "GeForce RTX 3090 Ti"),
    "rtx-4070": ("nvidia-geforce-rtx-4070", "GeForce RTX 4070 12GB"),
    "rtx-4070-ti": ("nvidia-geforce-rtx-4070-ti", "GeForce RTX 4070 Ti 12GB"),
    "rtx-4070-ti-super": ("nvidia-geforce-rtx-4070-ti-super", "GeForce RTX 4070 Ti SUPER 16GB"),
    "rtx-4080": ("nvidia-geforce-rtx-4080", "GeForce RTX 4080 16GB"),
    "rtx-4080-super": ("nvidia-geforce-rtx-4080-super", "GeForce RTX 4080 SUPER 16GB"),
    "rtx-4090": ("nvidia-geforce-rtx-4090", "GeForce RTX 4090"),
    "rtx-5080": ("nvidia-geforce-rtx-5080", "GeForce RTX 5080 16GB"),
    "rtx-5090": ("nvidia-geforce-rtx-5090", "GeForce RTX 5090"),
    "rtx-a4000": ("nvidia-rtx-a4000", "RTX A4000 16GB"),
    "rtx-a4500": ("nvidia-rtx-a4500", "RTX A4500 20GB"),
    "rtx-a5000": ("nvidia-rtx-a5000", "RTX A5000 24GB"),
    "rtx-a6000": ("nvidia-rtx-a6000", "RTX A6000 48GB"),
    "rtx-4000-ada": ("nvidia-rtx-4000-ada", "RTX 4000 Ada Generation 20GB"),
    "rtx-4500-ada": ("nvidia-rtx-4500-ada", "RTX 4500 Ada Generation 24GB"),
    "rtx-5000-ada": ("nvidia-rtx-5000-ada", "RTX 5000 Ada Generation 32GB"),
    "rtx-6000-ada": ("nvidia-rtx-6000-ada", "RTX 6000 Ada Generation 48GB"),
    "rtx-8000": ("nvidia-quadro-rtx-8000", "Quadro RTX 8000 48GB (Turing)"),
    "rtx-6000": (
        "nvidia-quadro-rtx-6000",
        "ambiguous (Quadro RTX 6000 24GB or RTX 6000 Ada 48GB): the smaller; say rtx-6000-ada",
    ),
    "gb10": ("nvidia-gb10", "NVIDIA GB10 (DGX Spark), unified memory"),
    "dgx-spark": ("nvidia-gb10", "DGX Spark = NVIDIA GB10, unified memory"),
    "mi100": ("amd-instinct-mi100", "AMD Instinct MI100"),
    "mi210": ("amd-instinct-mi210", "AMD Instinct MI210"),
    "mi250": ("amd-instinct-mi250", "AMD Instinct MI250 (per GCD)"),
    "mi250x": ("amd-instinct-mi250x", "AMD Instinct MI250X"),
    "mi300a": ("amd-instinct-mi300a", "AMD Instinct MI300A (APU, unified memory)"),
    "mi300x": ("amd-instinct-mi300x", "AMD Instinct MI300X"),
    "mi325x": ("amd-instinct-mi325x", "AMD Instinct MI325X"),
    "mi350x": ("amd-instinct-mi350x", "AMD Instinct MI350X"),
    "mi355x": ("amd-instinct-mi355x", "AMD Instinct MI355X"),
    "w7900": ("amd-radeon-pro-w7900", "AMD Radeon PRO W7900 48GB"),
    "gaudi2": ("intel-gaudi2", "Intel Gaudi 2"),
    "gaudi3": ("intel-gaudi3", "Intel Gaudi 3"),
    "tpu-v4": ("google-tpu-v4", "Google TPU v4 (per chip)"),
    "tpu-v5e": ("google-tpu-v5e", "Google TPU v5e (per chip)"),
    "tpu-v5p": ("google-tpu-v5p", "Google TPU v5p (per chip)"),
    "tpu-v6e": ("google-tpu-v6e", "Google TPU v6e (per chip)"),
}


def _merge_gpus(base: list[dict[str, Any]], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Supplement ``gpus`` over the corpus ``gpus``: a known id gets the supplement's facts (each replaces the
    corpus fact of the same name; the names are kept in ``_supplement_facts``); a new id is appended whole."""
    out = [dict(g) for g in base]
    index = {g["id"]: g for g in out}
    for g in extra:
        gid = g["id"]
        if gid in index:
            target = index[gid]
            keys = [k for k in g if k != "id"]
            target.update({k: g[k] for k in keys})
            target["_supplement_facts"] = sorted(set(target.get("_supplement_facts", [])) | set(keys))
        else:
            new = dict(g)
            new["_supplement_facts"] = ["(new entry)"]
            out.append(new)
            index[gid] = new
    return out


def load_research(path: str, supplement: str | Path | None = SUPPLEMENT) -> dict[str, Any]:
    """The research catalogue at ``path`` with the supplement merged in (``None``: the corpus alone).

    ``gpus`` are merged by id (:func:`_merge_gpus`); the supplement's ``label_conventions`` add observed GFD
    product values and the AMD ``amd_gpu_device_ids`` / ``amd_gpu_vram`` tables; its ``instance_types`` add
    providers (``oci``) or rows; its ``mig_measurements`` give ``nvidia-smi mig -lgip`` memory to a MIG table that
    has none (:func:`_merge_mig_measurement`).
    """
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as fh:
        research = yaml.load(fh, Loader=loader)
    if supplement is None:
        return research
    with open(supplement, encoding="utf-8") as fh:
        extra = yaml.load(fh, Loader=loader)
    research["gpus"] = _merge_gpus(research["gpus"], extra.get("gpus") or [])
    lc, xlc = research["label_conventions"], extra.get("label_conventions") or {}
    gfd_extra = (xlc.get("nvidia_gpu_feature_discovery") or {}).get("product_values_observed") or []
    lc["nvidia_gpu_feature_discovery"].setdefault("product_values_observed", []).extend(gfd_extra)
    for key in ("amd_gpu_device_ids", "amd_gpu_vram", "coreweave_gpu_class", "doks_gpu_model"):
        if key in xlc:
            lc[key] = xlc[key]
    for provider, rows in (extra.get("instance_types") or {}).items():
        research["instance_types"].setdefault(provider, []).extend(rows)
    for m in extra.get("mig_measurements") or []:
        _merge_mig_measurement(research["mig_profiles"]["per_gpu"], m)
    research.setdefault("meta", {})["supplement"] = {
        "file": SUPPLEMENT_REF,
        "compiled": (extra.get("meta") or {}).get("compiled"),
        "reading_notes": (extra.get("meta") or {}).get("reading_notes"),
    }
    return research


def _merge_mig_measurement(tables: list[dict[str, Any]], m: dict[str, Any]) -> None:
    """Set ``memory_gib_lgip`` of each profile of the one MIG table whose ``gpu`` text starts with ``m['table']``
    from the supplement's ``nvidia-smi mig -lgip`` capture (adding the profiles the table lacks; a list of figures
    is captures that differ by driver, sized by their minimum); a table that already holds a measured figure is not
    overwritten."""
    found = [t for t in tables if str(t.get("gpu", "")).startswith(m["table"])]
    if len(found) != 1:
        raise SystemExit(f"mig_measurements: {m['table']!r} matches {len(found)} MIG tables, not one")
    (table,) = found
    rows = {p["profile"]: p for p in table["profiles"]}
    for profile, gib in m["profiles"].items():
        row = rows.get(profile)
        if row is None:
            row = {"profile": profile}
            table["profiles"].append(row)
        have = (row.get("memory_gib_lgip") or {}).get("value")
        if have is not None:
            raise SystemExit(f"mig_measurements: {m['table']} {profile} is already measured ({have} GiB)")
        # a list holds captures that differ by driver; :func:`_profile_memory` takes its minimum
        value = [float(g) for g in gib] if isinstance(gib, list) else float(gib)
        row["memory_gib_lgip"] = {"value": value, "source": m["source"]}
    for name, spec in (m.get("renamed") or {}).items():
        # one GPU instance profile that some drivers list under another name (A100 80GB 3g.39gb on 535/545)
        if name in rows or spec["same_as"] not in rows:
            raise SystemExit(
                f"mig_measurements: {m['table']} renamed {name} -> {spec['same_as']}: not one new name"
            )
        same = rows[spec["same_as"]]
        table["profiles"].append(
            {**same, "profile": name, "same_as": {"profile": spec["same_as"], "source": spec["source"]}}
        )


def gfd_sanitise(name: str) -> str:
    """GFD's product-label rule for an NVML device name: characters outside ``[A-Za-z0-9-_. ]`` dropped,
    whitespace runs joined with ``-`` (``sanitise`` in NVIDIA k8s-device-plugin ``internal/lm/resource.go``)."""
    return "-".join(re.sub(r"[^A-Za-z0-9\-_. ]", "", name).split())


#: Kubernetes label-value syntax (at most 63 characters): values outside it cannot be node labels.
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def amd_label_sanitise(name: str) -> str | None:
    """The AMD node labeller's product-name rule (spaces -> ``_``, ``(``/``)`` removed; ROCm k8s-device-plugin
    ``cmd/k8s-node-labeller/main.go``); None when the result is not a valid label value (``MI250X / MI250``)."""
    value = name.strip().replace(" ", "_").replace("(", "").replace(")", "")
    return value if len(value) <= 63 and _LABEL_VALUE.match(value) else None


def _val(entry: dict[str, Any], key: str) -> Any:
    """``entry[key]['value']`` for the catalogue's {value, source, note} facts (or a bare value)."""
    fact = entry.get(key)
    if isinstance(fact, dict):
        return fact.get("value")
    return fact


def _src(entry: dict[str, Any], key: str) -> str | None:
    """The fact's source; for a fact without one, its status and note (e.g. an unverified citation)."""
    fact = entry.get(key)
    if not isinstance(fact, dict):
        return None
    if fact.get("source"):
        return str(fact["source"])
    if fact.get("value") is not None and fact.get("note"):
        return f"{fact.get('status', 'unsourced')}: {fact['note']}"
    return None


def _fact(entry: dict[str, Any], key: str) -> dict[str, Any] | None:
    """A compact copy of a {value, source, note, status} fact, or None when the value is null."""
    fact = entry.get(key)
    if not isinstance(fact, dict) or fact.get("value") is None:
        return None
    return {k: fact[k] for k in ("value", "source", "note", "status", "method", "basis") if k in fact}


def _cc_tuple(cc: str | None) -> tuple[int, int] | None:
    if not cc:
        return None
    major, _, minor = str(cc).partition(".")
    return int(major), int(minor or 0)


def driver_reserve(gpus: list[dict[str, Any]]) -> dict[str, Any]:
    """Typical NVML-minus-CUDA reserve (MiB): median over entries with both totals, re-checked here."""
    obs = []
    for g in gpus:
        smi, cuda = _val(g, "nvidia_smi_total_mib"), _val(g, "cuda_total_bytes")
        if smi is None or cuda is None or (g.get("vendor") or "nvidia") != "nvidia":
            continue
        if (g.get("nvidia_smi_total_mib") or {}).get("status") == "unverified":
            continue
        recomputed = smi - cuda / MIB
        diff = g.get("smi_minus_cuda_mib_derived")
        if diff is None:  # supplement entries: computed here (same host for both figures, see their sources)
            diff = int(round(recomputed))
        if abs(recomputed - diff) > 1.0:
            raise SystemExit(f"{g['id']}: smi_minus_cuda_mib_derived {diff} != recomputed {recomputed:.1f}")
        obs.append(
            {"id": g["id"], "nvidia_smi_total_mib": smi, "cuda_total_bytes": cuda, "smi_minus_cuda_mib": diff}
        )
    values = [o["smi_minus_cuda_mib"] for o in obs]
    return {
        "rule": "median of smi_minus_cuda_mib_derived (NVML total MiB - CUDA total MiB, same host) over the "
        "GPUs that have both; used to derive a CUDA total from an NVML total",
        "median_mib": int(round(statistics.median(values))),
        "min_mib": min(values),
        "max_mib": max(values),
        "observations": obs,
    }


def memory_of(
    g: dict[str, Any], reserve_mib: int, observations: list[dict[str, Any]] | None = None
) -> tuple[int, str, str | None]:
    """(memory_bytes, memory_source, source) for one research entry; see the module docstring.
    ``observations`` are :func:`driver_reserve`'s same-host NVML/CUDA pairs, read for a ``memory_twin``."""
    cuda = _val(g, "cuda_total_bytes")
    if cuda:
        return (
            int(cuda),
            f"measured: CUDA total {int(cuda)} B ({cuda / GIB:.2f} GiB, deviceQuery)",
            _src(g, "cuda_total_bytes"),
        )
    cuda_gib = _val(g, "cuda_total_gib")
    if cuda_gib:
        method = (g.get("cuda_total_gib") or {}).get("method") or "cudaGetDeviceProperties"
        return (
            int(round(cuda_gib * GIB)),
            f"measured: CUDA total {cuda_gib} GiB ({method}, 2 decimals)",
            _src(g, "cuda_total_gib"),
        )
    torch_gib = _val(g, "torch_total_capacity_gib")
    if torch_gib:
        return (
            int(round(torch_gib * GIB)),
            f"measured: torch total capacity {torch_gib} GiB (OOM message, 2 decimals)",
            _src(g, "torch_total_capacity_gib"),
        )
    smi = _val(g, "nvidia_smi_total_mib")
    if smi:
        status = (g.get("nvidia_smi_total_mib") or {}).get("status")
        tag = f" ({status} citation)" if status else ""
        twin = _val(g, "memory_twin")
        if twin:
            obs = next((o for o in observations or [] if o["id"] == twin), None)
            if obs is None or int(obs["nvidia_smi_total_mib"]) != int(smi):
                raise SystemExit(
                    f"{g['id']}: memory_twin {twin} has no same-host NVML/CUDA observation with NVML total {smi}"
                )
            r = int(obs["smi_minus_cuda_mib"])
            reserve_bytes = int(obs["nvidia_smi_total_mib"]) * MIB - int(obs["cuda_total_bytes"])  # unrounded
            return (
                int(smi) * MIB - reserve_bytes,
                f"derived: NVML {smi} MiB{tag} - {r} MiB reserve observed on {twin} (same memory, same NVML "
                "total)",
                _src(g, "nvidia_smi_total_mib"),
            )
        return (
            (int(smi) - reserve_mib) * MIB,
            f"derived: NVML {smi} MiB{tag} - {reserve_mib} MiB typical reserve",
            _src(g, "nvidia_smi_total_mib"),
        )
    hip = _val(g, "reported_total_mib")
    if hip:
        return int(hip) * MIB, f"measured: HIP total global memory {hip} MiB", _src(g, "reported_total_mib")
    gb = _val(g, "marketing_memory_gb")
    per_device = g.get("per_device_memory_gib")
    if isinstance(per_device, dict) and per_device.get("value"):
        gib = per_device["value"]
        why = per_device.get("note") or per_device.get("basis") or ""
        return gib * GIB, f"approximate: {gib} GiB per device ({why})", per_device.get("source")
    if g["id"] in PER_DEVICE_GIB:
        gib, why = PER_DEVICE_GIB[g["id"]]
        return gib * GIB, f"approximate: {gib} GiB per device ({why})", _src(g, "marketing_memory_gb")
    if gb:
        if g.get("vendor", "nvidia") == "nvidia":
            return (
                (int(gb) * 1024 - reserve_mib) * MIB,
                f"approximate: marketing {gb} GB taken as {gb} GiB nominal - {reserve_mib} MiB typical reserve "
                "(no NVML/CUDA measurement)",
                _src(g, "marketing_memory_gb"),
            )
        return (
            int(gb) * GIB,
            f"approximate: marketing {gb} GB taken as {gb} GiB (no measurement)",
            _src(g, "marketing_memory_gb"),
        )
    raise SystemExit(f"{g['id']}: no memory figure at all")


def build_accelerators(
    gpus: list[dict[str, Any]], reserve_mib: int, observations: list[dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Research ``gpus`` -> ``id -> compact entry`` (see the module docstring for the choices)."""
    out: dict[str, dict[str, Any]] = {}
    for g in gpus:
        gid = g["id"]
        vendor = g.get("vendor") or "nvidia"
        mem, mem_source, mem_src = memory_of(g, reserve_mib, observations)
        cc = _val(g, "compute_capability")
        sources: dict[str, Any] = {"memory": mem_src}
        if vendor == "nvidia":
            if not cc:
                raise SystemExit(f"{gid}: NVIDIA entry without compute capability")
            bf16 = _cc_tuple(cc) >= (8, 0)  # type: ignore[operator]
            if _val(g, "bf16") is not None and _val(g, "bf16") != bf16:
                raise SystemExit(f"{gid}: bf16 {_val(g, 'bf16')} disagrees with CC {cc}")
            sources["compute_capability"] = _src(g, "compute_capability")
            sources["bf16"] = f"compute capability >= 8.0 (vLLM rule: {_src(g, 'bf16') or BF16_RULE_SRC})"
        else:
            bf16 = _val(g, "bf16")
            sources["bf16"] = _src(g, "bf16")
            if bf16 is None and g.get("llvm_target"):
                sibling = next(
                    (
                        s
                        for s in gpus
                        if s.get("llvm_target") == g["llvm_target"] and _val(s, "bf16") is not None
                    ),
                    None,
                )
                if sibling is not None:
                    bf16 = _val(sibling, "bf16")
                    sources["bf16"] = (
                        f"same LLVM target {g['llvm_target']} as {sibling['id']}: {_src(sibling, 'bf16')}"
                    )
            bf16 = bool(bf16)
        fp8 = _val(g, "fp8_e4m3_hw")
        sources["fp8"] = _src(g, "fp8_e4m3_hw") or "not sourced (null in the research catalogue): False"
        if vendor == "nvidia" and "fp8_e4m3_hw" not in g:  # supplement entries: the corpus's own CC rule
            fp8 = _cc_tuple(cc) >= (8, 9)  # type: ignore[operator]
            sources["fp8"] = f"compute capability >= 8.9 (vLLM rule: {FP8_RULE_SRC})"
        name = _val(g, "nvml_name") or _val(g, "rocm_marketing_name") or FALLBACK_NAMES.get(gid) or gid
        sources["name"] = _src(g, "nvml_name") or _src(g, "rocm_marketing_name") or "kvlint display name"
        entry: dict[str, Any] = {
            "name": name,
            "vendor": vendor,
            "architecture": g.get("architecture"),
            "form_factor": g.get("form_factor"),
            "memory_bytes": mem,
            "memory_source": mem_source,
            "compute_capability": str(cc) if cc else None,
            "bf16": bf16,
            "fp8": bool(fp8),
            "sources": {k: v for k, v in sources.items() if v},
        }
        for key in (
            "nvidia_smi_total_mib",
            "cuda_total_bytes",
            "cuda_total_gib",
            "torch_total_capacity_gib",
            "cloud_api_gpu_memory_mib",
            "marketing_memory_gb",
            "reported_total_mib",
            "per_device_memory_gib",
            "unified_memory",
            "memory_twin",
            "mig_capable",
            "gfd_product_label",
            "amd_product_name_label",
            "gke_tpu_accelerator",
            "k8s_resource",
            "llvm_target",
        ):
            fact = _fact(g, key) if isinstance(g.get(key), dict) else None
            if fact is None and g.get(key) is not None and not isinstance(g.get(key), dict):
                fact = {"value": g[key]}
            if fact is not None:
                entry[key] = fact
        if g.get("nvml_name_variants"):
            entry["nvml_name_variants"] = [
                {k: v[k] for k in ("value", "source", "note") if k in v} for v in g["nvml_name_variants"]
            ]
        if g.get("_supplement_facts"):
            entry["supplement_facts"] = list(g["_supplement_facts"])
        out[gid] = entry
    return out


def _strip_text_id(text: str | None) -> str | None:
    """``'nvidia-a100-40gb (SXM/PCIe not stated by source)'`` -> ``'nvidia-a100-40gb'``."""
    if not text:
        return None
    return text.split(" (")[0].strip()


def map_gpu_text(
    text: str | None, ids: set[str], table: dict[str, tuple[Any, str]]
) -> tuple[str | None, str]:
    """Free-text GPU name of a cloud table -> (catalogue id or None, note)."""
    base = _strip_text_id(text)
    if base is None:
        return None, "GPU not stated by the source"
    if base in table:
        return table[base]
    if base in ids:
        return base, ""
    if base in GPU_TEXT_IDS:
        return GPU_TEXT_IDS[base]
    return None, f"{text} is not in the catalogue"


def build_instance_types(research: dict[str, Any], ids: set[str]) -> dict[str, dict[str, Any]]:
    """``instance_types`` (aws/gcp/azure/other) -> ``name -> {id, count, fraction, provider, ...}``."""
    out: dict[str, dict[str, Any]] = {}
    for provider, rows in research["instance_types"].items():
        for row in rows:
            name = row["name"]
            if " " in name:  # "n1-standard-* + nvidia-tesla-t4": a rule, not an instance type
                continue
            table = AZURE_TEXT_IDS if provider == "azure" else {}
            gid, note = map_gpu_text(row.get("gpu_id"), ids, table)
            count = row.get("gpu_count")
            item: dict[str, Any] = {"provider": provider, "id": gid}
            if isinstance(count, int):
                item["count"] = count
            elif isinstance(count, str) and re.fullmatch(r"1/\d+", count):
                item["count"] = 1
                item["fraction"] = count
            else:
                item["count"] = None
            if row.get("share_unknown"):  # a share of one GPU whose size no table gives: no count, no memory
                item["share_unknown"] = True
            if row.get("accelerator_label"):
                item["accelerator_label"] = row["accelerator_label"]
            if row.get("gpu_memory_mib_per_gpu_ec2") is not None:
                item["gpu_memory_mib_ec2"] = row["gpu_memory_mib_per_gpu_ec2"]
            # a fractional GPU's own frame buffer, as the cloud's size table gives it: Azure's "GPU memory" in GiB
            # (NVadsA10 v5: "1/6th of a GPU with 4-GiB frame buffer"), EC2's GPU memory of a fractional instance
            # (g6f, instance-gpu-count 0) in MiB
            if item.get("fraction") and row.get("accelerator_memory_gb") is not None:
                item["slice_memory_mib"] = int(row["accelerator_memory_gb"]) * 1024
            elif item.get("count") == 0 and row.get("gpu_memory_mib_per_gpu_ec2") is not None:
                item["slice_memory_mib"] = int(row["gpu_memory_mib_per_gpu_ec2"])
            if row.get("vgpu_profile"):
                # a whole GPU run as a vGPU (NVadsA10 v5's NV36ads/NV72ads: A10-24Q): each GPU is the profile's frame
                # buffer, the size table's memory over its whole GPU count
                gib, n = row.get("accelerator_memory_gb"), item.get("count")
                if (
                    item.get("fraction")
                    or not isinstance(n, int)
                    or n < 1
                    or not isinstance(gib, int)
                    or gib % n
                ):
                    raise SystemExit(
                        f"instance_types: {name}: vgpu_profile needs a whole GPU count dividing its memory"
                    )
                item["vgpu_profile"] = str(row["vgpu_profile"])
                item["slice_memory_mib"] = gib // n * 1024
            if row.get("count_unit"):
                item["count_unit"] = row["count_unit"]
            notes = [n for n in (note, row.get("note")) if n]
            if notes:
                item["note"] = "; ".join(notes)
            item["source"] = row.get("source")
            out[name] = item
    return out


def build_labels(
    research: dict[str, Any], accs: dict[str, dict[str, Any]], inst: dict[str, Any]
) -> dict[str, Any]:
    """Label-value tables: GFD products, GKE accelerators/TPUs, Karpenter GPU names, Azure, AMD."""
    ids = set(accs)
    lc = research["label_conventions"]
    gfd: dict[str, dict[str, Any]] = {}
    for gid, a in accs.items():
        fact = a.get("gfd_product_label")
        if fact:
            gfd[fact["value"]] = {"id": gid, "source": fact.get("source"), "status": fact.get("status", "")}
    # Entries with an NVML name but no GFD value (the supplement's): GFD's sanitise rule, status derived. A name
    # two boards share (GeForce RTX 3080 10GB/12GB) keeps every id, smallest memory first; nvidia.com/gpu.memory
    # tells them apart on a node (kvlint.accelerators.placement).
    for gid, a in sorted(accs.items(), key=lambda kv: (kv[1]["memory_bytes"], kv[0])):
        if a["vendor"] != "nvidia":
            continue
        names = []
        if not a.get("gfd_product_label") and a["sources"].get("name") != "kvlint display name":
            names.append((a["name"], a["sources"].get("name")))
        names += [(v["value"], v.get("source")) for v in a.get("nvml_name_variants") or []]
        for name, name_src in names:
            value = gfd_sanitise(name)
            row = gfd.get(value)
            if row is None:
                gfd[value] = {
                    "id": gid,
                    "source": f"{GFD_SANITISE_SRC} applied to the NVML name ({name_src})",
                    "status": "derived",
                }
            elif row["id"] != gid:
                row.setdefault("ids", [row["id"]])
                if gid not in row["ids"]:
                    row["ids"].append(gid)
                row["note"] = "one NVML name for several boards; nvidia.com/gpu.memory tells them apart"
    gfd_label_src = lc["nvidia_gpu_feature_discovery"]["source"]
    for obs in lc["nvidia_gpu_feature_discovery"].get("product_values_observed", []):
        value = obs["value"]
        base = value.split("-MIG-")[0]
        hit = next(
            (v for v in gfd if v.lower().removeprefix("nvidia-") == base.lower().removeprefix("nvidia-")),
            None,
        )
        if hit and value not in gfd and "-MIG-" not in value:
            gfd[value] = {"id": gfd[hit]["id"], "source": obs.get("source"), "status": "observed_on_a_node"}
        elif value in gfd and gfd[value].get("status") == "derived":  # a derived value seen on a real node
            gfd[value]["status"] = "observed_on_a_node"
            gfd[value]["observed"] = obs.get("source")
    gke: dict[str, dict[str, Any]] = {}
    for row in lc["gke"]["gke_accelerator_values"]:
        value = row["value"]
        if value in GKE_TEXT_IDS:
            gke_id, note = GKE_TEXT_IDS[value]
        else:
            gke_id, note = map_gpu_text(row.get("gpu"), ids, {})
        gke[value] = {"id": gke_id, "machine": row.get("machine"), "source": row.get("source")}
        extra = "; ".join(n for n in (note, row.get("note")) if n)
        if extra:
            gke[value]["note"] = extra
        if value in GKE_HOW:
            gke[value]["how"] = GKE_HOW[value]
    tpu: dict[str, dict[str, Any]] = {}
    for gid, a in accs.items():
        fact = a.get("gke_tpu_accelerator")
        if fact:
            tpu[fact["value"]] = {"id": gid, "source": fact.get("source")}
    for row in lc["gke"].get("gke_tpu_accelerator_values", []):
        tpu.setdefault(
            row["value"],
            {"id": None, "source": row.get("source"), "note": "TPU generation not in the catalogue"},
        )
    karpenter: dict[str, dict[str, Any]] = {}
    for name, it in inst.items():
        if it["provider"] != "aws" or not it.get("accelerator_label"):
            continue
        k = karpenter.setdefault(
            it["accelerator_label"], {"ids": [], "source": it["source"], "instance_types": []}
        )
        if it["id"] and it["id"] not in k["ids"]:
            k["ids"].append(it["id"])
        k["instance_types"].append(name)
    for k in karpenter.values():
        k["instance_types"] = k["instance_types"][:3] + (["..."] if len(k["instance_types"]) > 3 else [])
    azure: dict[str, dict[str, Any]] = {}
    series = {row["name"]: row.get("series", "") for row in research["instance_types"].get("azure", [])}
    for name, it in inst.items():
        if it["provider"] != "azure" or not it["id"]:
            continue
        token = next(
            (
                t
                for t in AZURE_SKU_GPU_TOKENS
                if re.search(rf"_{t}_", name) or t in series.get(name, "").split()
            ),
            None,
        )
        if token is None and name.endswith("s_v3"):
            token = "V100"  # NCv3 series (V100) names carry no GPU token
        if token is None:
            continue
        z = azure.setdefault(token, {"ids": [], "vm_sizes": [], "source": it["source"]})
        if it["id"] not in z["ids"]:
            z["ids"].append(it["id"])
        z["vm_sizes"].append(name)
    amd: dict[str, dict[str, Any]] = {}
    for gid, a in accs.items():
        fact = a.get("amd_product_name_label")
        if fact:
            amd[fact["value"]] = {"id": gid, "source": fact.get("source")}
    dev_table = lc.get("amd_gpu_device_ids") or {}
    amd_dev: dict[str, dict[str, Any]] = {}
    for row in dev_table.get("values") or []:
        dev_id = str(row["device_id"]).lower()
        gid = row.get("id")
        if gid is not None and gid not in ids:
            raise SystemExit(f"AMD device id {dev_id} -> unknown id {gid}")
        item = {"id": gid, "product": row["product"], "revision": str(row.get("revision", ""))}
        if row.get("note"):
            item["note"] = row["note"]
        amd_dev[dev_id] = item
        label = amd_label_sanitise(row["product"])
        if gid and label and label not in amd:
            amd[label] = {
                "id": gid,
                "source": f"{dev_table.get('source')} (libdrm name {row['product']!r}, labeller rule)",
                "status": "derived",
            }
    return {
        "nvidia_gpu_product": {
            "source": gfd_label_src,
            "rule": "GFD sanitised NVML name; '-MIG-<profile>' suffix under mig.strategy=single, '-SHARED' suffix "
            "for time-slicing/MPS replicas; old drivers omit the 'NVIDIA-' prefix",
            "values": gfd,
        },
        "gke_accelerator": {"source": lc["gke"]["source"], "values": gke},
        "gke_tpu_accelerator": {"source": lc["gke"]["source"], "values": tpu},
        "karpenter_instance_gpu_name": {"source": lc["eks_karpenter"]["source"], "values": karpenter},
        "azure_sku_gpu_name": {
            "source": lc["aks"]["labels"][5]["source"]
            if len(lc["aks"]["labels"]) > 5
            else lc["aks"]["source"],
            "rule": "GPU token of the VM size name or series (Standard_NC24ads_A100_v4 -> A100); NCv3 (*s_v3) -> V100",
            "values": azure,
        },
        "amd_gpu_product_name": {
            "source": lc["amd_gpu_operator"]["source"],
            "rule": "sysfs product_name with spaces -> '_' and parentheses removed; matched on its MI### token",
            "values": amd,
        },
        "amd_gpu_device_id": {
            "source": dev_table.get("source"),
            "rule": dev_table.get("rule"),
            "values": amd_dev,
        },
        "amd_gpu_vram": {
            "source": (lc.get("amd_gpu_vram") or {}).get("source"),
            "rule": (lc.get("amd_gpu_vram") or {}).get("rule"),
        },
        "coreweave_gpu_class": _coreweave_classes(lc.get("coreweave_gpu_class") or {}, ids),
        "doks_gpu_model": _coreweave_classes(lc.get("doks_gpu_model") or {}, ids, "doks_gpu_model"),
    }


def _coreweave_classes(
    table: dict[str, Any], ids: set[str], name: str = "coreweave_gpu_class"
) -> dict[str, Any]:
    """CoreWeave ``gpu.nvidia.com/class`` values (the supplement's ``coreweave_gpu_class``), or the rows of another
    table of the same shape (``name``: DigitalOcean's ``doks_gpu_model``) -> ``{id, table, note}``; an id the
    catalogue lacks is an error (a typo would silently leave the value unknown)."""
    values: dict[str, dict[str, Any]] = {}
    for row in table.get("values") or []:
        gid = row.get("id")
        if gid is not None and gid not in ids:
            raise SystemExit(f"{name} {row['value']}: {gid} is not a catalogue id")
        item: dict[str, Any] = {"id": gid, "table": row.get("table", "")}
        if row.get("note"):
            item["note"] = row["note"]
        values[str(row["value"])] = item
    return {"source": table.get("source"), "rule": table.get("rule"), "values": values}


def _profile_memory(p: dict[str, Any]) -> tuple[int | None, str, str | None]:
    """(MiB, status text, source) of one MIG profile row; lists of driver-dependent values -> the minimum.

    A corpus figure (``memory_mib``) is taken first, unless it is a go-nvml mock and the supplement has an
    ``nvidia-smi mig -lgip`` capture of the slice (``memory_gib_lgip``): a measurement beats a mock (the A100 80GB's
    1g.10gb: mock 9,856 MiB, captured 9.50 GiB = 9,728 MiB)."""
    mock = isinstance(p.get("memory_mib"), dict) and p["memory_mib"].get("status") == "mock"
    measured = isinstance(p.get("memory_gib_lgip"), dict) and p["memory_gib_lgip"].get("value") is not None
    if (
        isinstance(p.get("memory_mib"), dict)
        and p["memory_mib"].get("value") is not None
        and not (mock and measured)
    ):
        f = p["memory_mib"]
        return int(f["value"]), f.get("status", "observed") + " (MiB)", f.get("source")
    if isinstance(p.get("memory_gib_lgip"), dict) and p["memory_gib_lgip"].get("value") is not None:
        f = p["memory_gib_lgip"]
        v = f["value"]
        if isinstance(v, list):
            return (
                int(round(min(v) * 1024)),
                f"nvidia-smi mig -lgip, driver-dependent {v} GiB: minimum",
                f.get("source"),
            )
        return int(round(float(v) * 1024)), "nvidia-smi mig -lgip GiB", f.get("source")
    m = re.match(r"\d+g\.(\d+)gb", p["profile"])
    if m:
        gb = int(m.group(1))
        return int(gb * 10**9 // MIB), f"approximate: {gb} GB from the profile name (no measurement)", None
    return None, "unknown", None


def build_mig(research: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """MIG tables -> ``gpu id -> profile -> {memory_mib, status, source}``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for table in research["mig_profiles"]["per_gpu"]:
        ids = next((i for prefix, i in MIG_TABLE_IDS if table["gpu"].startswith(prefix)), None)
        if ids is None:
            raise SystemExit(f"MIG table {table['gpu']!r} has no id mapping")
        for p in table["profiles"]:
            mib, status, src = _profile_memory(p)
            if p.get("same_as"):
                same = p["same_as"]
                status = f"{status}; {same['profile']} under the name some drivers give it"
                src = f"{src or table.get('source')} ; {same['source']}"
            row = {"memory_mib": mib, "status": status, "source": src or table.get("source")}
            for gid in ids:
                out.setdefault(gid, {})[p["profile"]] = row
    return out


def build(path: str, supplement: str | Path | None = SUPPLEMENT) -> dict[str, Any]:
    """Read the research catalogue at ``path`` (with the supplement merged in, :func:`load_research`) and return
    the curated catalogue (a plain dict)."""
    research = load_research(path, supplement)
    gpus = research["gpus"]
    reserve = driver_reserve(gpus)
    accs = build_accelerators(gpus, reserve["median_mib"], reserve["observations"])
    mig = build_mig(research)
    for gid, profiles in mig.items():
        if gid in accs:
            accs[gid]["mig_profiles"] = profiles
    inst = build_instance_types(research, set(accs))
    labels = build_labels(research, accs, inst)
    aliases = {}
    for alias, (gid, note) in ALIASES.items():
        if gid not in accs:
            raise SystemExit(f"alias {alias} -> unknown id {gid}")
        aliases[alias] = {"id": gid, "note": note}
    meta = research["meta"]
    return {
        "meta": {
            "generated_from": CORPUS_REF + (f" + {SUPPLEMENT_REF}" if supplement is not None else ""),
            "generator": "kvlint/accelerators/_build_catalogue.py",
            "research_compiled": meta.get("compiled"),
            "source_format": meta.get("source_format"),
            "memory_bytes": "device total as CUDA reports it (cudaMemGetInfo total = what vLLM multiplies by "
            "gpu_memory_utilization); memory_source says measured / derived / approximate",
            "bf16_rule": meta.get("bf16_rule"),
            "fp8_rule": meta.get("fp8_rule"),
            "driver_reserve": reserve,
            "supplement_reading_notes": (meta.get("supplement") or {}).get("reading_notes"),
        },
        "accelerators": accs,
        "aliases": aliases,
        "labels": labels,
        "instance_types": inst,
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``python -m kvlint.accelerators._build_catalogue [INPUT [OUTPUT]]``."""
    args = sys.argv[1:] if argv is None else argv
    src = args[0] if args else DEFAULT_INPUT
    dst = Path(args[1]) if len(args) > 1 else OUTPUT
    if not os.path.isfile(src):
        # the default is the shared research file beside the checkout, which a plain clone lacks
        print(
            f"{src}: no such file: the catalogue is built from the shared research catalogue "
            "(corpus/accelerators.yaml of ../shared beside the checkout); give its path as the first argument",
            file=sys.stderr,
        )
        return 2
    data = build(src)
    notice = {
        "_generated": "GENERATED by kvlint/accelerators/_build_catalogue.py -- do not hand-edit; re-run the script.",
        "_source": f"{CORPUS_REF} + {SUPPLEMENT_REF}; every entry keeps the sources of its facts.",
    }
    dst.write_text(json.dumps({**notice, **data}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"wrote {dst}: {len(data['accelerators'])} accelerators, {len(data['instance_types'])} instance types"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
