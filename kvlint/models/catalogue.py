"""The bundled model catalogue: real ``config.json`` files shipped with kvlint for offline use.

Layout (package data ``kvlint/data/models/``): ``index.yaml`` lists each entry's id, directory, variant ids
and cited checkpoint size; ``<org>--<name>/config.json`` is the config as found in the cited public source
(bytes unchanged), ``hf_quant_config.json`` when the source has one (ModelOpt), and ``entry.json`` the
provenance (source repository/path/commit or PyPI package/version/path, the source's licence, fidelity
level), the cited parameter count and checkpoint size with their citations, the curated variants and
notes. Built by :mod:`kvlint.models.build_catalogue`; described in ``docs/models.md``.

Only ``index.yaml`` is read when the catalogue is first used; an ``entry.json`` is read when its model is
looked up (``kvlint models`` lists from the index alone).

Variants are other hub ids whose architecture is identical to an entry (e.g. ``-Instruct`` of a base
model); each states why, and may carry ``overrides`` for config values that differ (the Qwen2.5
Instruct configs' ``max_position_embeddings`` 32768).

Name-derived quantized variants (:func:`derive_quantized`): an id that is not catalogued but is a
catalogued model's name plus a quantization suffix (``-AWQ``, ``-GPTQ-Int4``, ``-FP8-dynamic``,
``-bnb-4bit``, ``-quantized.w4a16``, ``-NVFP4``, ...; any publisher) resolves to that model's architecture
with a ``quantization_config`` inferred from the suffix. That is an assumption, and it is said so: the
entry's ``derived`` field, its first note and its source citation all say "derived from name".
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CatalogueEntry",
    "IndexRow",
    "architectures",
    "QUANT_SUFFIXES",
    "list_entries",
    "list_index",
    "lookup",
    "derive_quantized",
    "load_config",
    "processor_config",
    "DATA_DIR",
]

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "models"


@dataclass(frozen=True)
class CatalogueEntry:
    """One catalogue model (or a variant of one, or a name-derived quantized build of one).

    Attributes:
        id: the hub id this entry answers to (a variant's own id when found through a variant).
        base_id: the id of the stored config (== ``id`` unless this is a variant or a derived build).
        dir: directory under ``kvlint/data/models``.
        aliases: ids of the variants of the base entry.
        source: provenance dict (kind, repo, path, commit or package/version, url, licence, fidelity,
            fidelity_note).
        param_count: cited parameter count (elements; rounded unless ``param_count_exact``), or None.
        param_count_citation: where that count is stated.
        weight_bytes: checkpoint ``model.safetensors.index.json`` ``metadata.total_size`` in bytes, or None.
        weight_bytes_citation: where that size comes from.
        notes: caveats (incl. why a variant maps here, and a derived build's assumption first).
        overrides: config.json values that differ for this variant (applied by :func:`load_config`).
        derived: for a name-derived quantized build: ``{"suffix", "label", "quantization_config" or
            "hf_quant_config", "template"}`` and, for an AWQ build of a base not in float16, ``"torch_dtype":
            "float16"`` (applied by :func:`load_config`); None otherwise.
        unquantized: a variant that is the unquantized checkpoint a quantized stored build was made from
            (``unquantized: true`` in the variant list): :func:`load_config` drops the stored
            ``quantization_config`` and the entry has no ``hf_quant_config.json`` nor the base's checkpoint size.
    """

    id: str
    base_id: str
    dir: str
    aliases: tuple[str, ...]
    source: dict[str, Any]
    param_count: int | None
    param_count_exact: bool
    param_count_citation: str | None
    weight_bytes: int | None
    weight_bytes_citation: str | None
    notes: tuple[str, ...] = ()
    overrides: dict[str, Any] = field(default_factory=dict)
    has_hf_quant_config: bool = False
    derived: dict[str, Any] | None = None
    unquantized: bool = False

    @property
    def source_citation(self) -> str:
        """``repo@commit:path (fidelity)`` or ``pypi:package==version:path (fidelity)`` of the stored config;
        a derived build prefixes ``derived from name (...) of``."""
        s = self.source
        if s.get("kind") == "pypi":
            where = f"pypi:{s.get('package')}=={s.get('version')}:{s.get('path')}"
        else:
            commit = str(s.get("commit") or "")[:12]
            where = f"{s.get('repo')}@{commit}:{s.get('path')}"
        cite = f"{where} ({s.get('fidelity')})"
        if self.derived and self.derived.get("abridged"):
            cite = f"{cite}; quantization from the name suffix '{self.derived['suffix']}' ({self.derived['label']}, assumed)"
        elif self.derived:
            cite = (
                f"derived from name: {self.id} = {self.base_id} + '{self.derived['suffix']}' "
                f"({self.derived['label']}, assumed); config of {self.base_id} from {cite}"
            )
        return cite


@dataclass(frozen=True)
class IndexRow:
    """One ``index.yaml`` row: what ``kvlint models`` lists without reading any ``entry.json``."""

    id: str
    dir: str
    variants: tuple[str, ...]
    weight_bytes: int | None


def _norm(ref: str) -> str:
    r = ref.strip().strip("/").lower()
    if "--" in r and "/" not in r:
        r = r.replace("--", "/", 1)
    return r


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, IndexRow]:
    """``index.yaml`` rows keyed by id (the only file read at first use)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    index = yaml.load((DATA_DIR / "index.yaml").read_text(encoding="utf-8"), Loader=loader) or {}
    out: dict[str, IndexRow] = {}
    for item in index.get("models") or []:
        out[item["id"]] = IndexRow(
            id=item["id"],
            dir=item["dir"],
            variants=tuple(item.get("variants") or ()),
            weight_bytes=item.get("weight_bytes"),
        )
    return out


@functools.cache
def _raw(model_id: str) -> dict[str, Any]:
    """``entry.json`` of one catalogued id (read on first use of that model)."""
    row = _index()[model_id]
    d = DATA_DIR / row.dir
    entry: dict[str, Any] = json.loads((d / "entry.json").read_text(encoding="utf-8"))
    entry["_dir"] = row.dir
    entry["_hf_quant"] = (d / "hf_quant_config.json").exists()
    return entry


def _make(raw: dict[str, Any], variant: dict[str, Any] | None = None) -> CatalogueEntry:
    pc = raw.get("param_count") or {}
    wb = raw.get("weight_bytes") or {}
    notes = list(raw.get("notes") or [])
    unquantized = bool((variant or {}).get("unquantized"))
    if variant:
        notes.insert(0, f"{variant['id']} uses the config of {raw['id']}: {variant.get('why', '')}")
    if unquantized and variant:
        notes.insert(
            1, f"{raw['id']}'s quantization settings are not applied: {variant['id']} is unquantized"
        )
    return CatalogueEntry(
        id=variant["id"] if variant else raw["id"],
        base_id=raw["id"],
        dir=raw["_dir"],
        aliases=tuple(v["id"] for v in raw.get("variants") or []),
        source=dict(raw.get("source") or {}),
        param_count=pc.get("value"),
        param_count_exact=bool(pc.get("exact")),
        param_count_citation=pc.get("citation"),
        weight_bytes=None if unquantized else wb.get("value"),
        weight_bytes_citation=None if unquantized else wb.get("citation"),
        notes=tuple(notes),
        overrides=dict((variant or {}).get("overrides") or {}),
        has_hf_quant_config=bool(raw.get("_hf_quant")) and not unquantized,
        unquantized=unquantized,
    )


def list_index() -> list[IndexRow]:
    """All catalogue entries as index rows (id, directory, variant ids, cited checkpoint bytes), sorted by
    id case-insensitively. Reads ``index.yaml`` only."""
    return sorted(_index().values(), key=lambda r: r.id.lower())


def list_entries() -> list[CatalogueEntry]:
    """All base entries of the bundled catalogue with their provenance, sorted by id (reads every
    ``entry.json``; use :func:`list_index` for a listing)."""
    return [_make(_raw(row.id)) for row in list_index()]


@functools.lru_cache(maxsize=1)
def _by_name() -> dict[str, tuple[str, str | None]]:
    """Normalised id -> (catalogued id, variant id or None), from the index alone."""
    table: dict[str, tuple[str, str | None]] = {}
    for mid, row in _index().items():
        table[_norm(mid)] = (mid, None)
        for vid in row.variants:
            table.setdefault(_norm(vid), (mid, vid))
    return table


def close_ids(ref: str, limit: int = 3) -> list[str]:
    """Catalogued hub ids (bases and variants, as the catalogue spells them) that ``ref`` most likely means when
    it is not one itself: ids whose repository name is ``ref``'s last path component (``Qwen2.5-7B-Instruct`` ->
    ``Qwen/Qwen2.5-7B-Instruct``), or begins with it (``llama-3.1-8b`` -> ``meta-llama/Llama-3.1-8B``, ...), else
    the nearest by :func:`difflib.get_close_matches` (cutoff 0.8) on the whole id or on the name; case-insensitive,
    at most ``limit``, best first. ``[]`` when ``ref`` is catalogued or nothing is close. For `kvlint models show`'s
    "did you mean"; reads ``index.yaml`` only."""
    import difflib

    table = _by_name()
    key = _norm(ref)
    if not key or key in table:
        return []
    spelled: dict[str, str] = {}
    for mid, row in _index().items():
        spelled.setdefault(_norm(mid), mid)
        for vid in row.variants:
            spelled.setdefault(_norm(vid), vid)
    name = key.rsplit("/", 1)[-1]
    by_name: dict[str, list[str]] = {}
    for norm in sorted(spelled):
        by_name.setdefault(norm.rsplit("/", 1)[-1], []).append(norm)
    found = list(by_name.get(name, []))
    if not found and len(name) >= 4:
        found = [n for nm, ids in sorted(by_name.items()) if nm.startswith(name) for n in ids]
        found.sort(key=lambda n: (len(n.rsplit("/", 1)[-1]), n))
    if not found:
        found = difflib.get_close_matches(key, list(spelled), n=limit, cutoff=0.8)
    if not found:
        names = difflib.get_close_matches(name, list(by_name), n=limit, cutoff=0.8)
        found = [n for nm in names for n in by_name[nm]]
    return [spelled[n] for n in found[:limit]]


def lookup(ref: str) -> CatalogueEntry | None:
    """The catalogue entry for a hub id, or None.

    Case-insensitive on ``org/name`` (the Hugging Face Hub resolves repository ids case-insensitively);
    ``org--name`` (the cache/dir spelling) is accepted; variants (e.g.
    ``meta-llama/Meta-Llama-3.1-8B-Instruct``) return an entry with their own ``id``, ``base_id`` pointing
    at the stored config and a note saying why. Does not derive quantized builds (see
    :func:`derive_quantized`), except the quantization of a stored build whose bundled config lacks it
    (:func:`_stored_without_quantization`). Never raises for string input.
    """
    if not isinstance(ref, str) or not ref.strip():
        return None
    hit = _by_name().get(_norm(ref))
    if hit is None:
        return None
    mid, vid = hit
    raw = _raw(mid)
    variant = next((v for v in raw.get("variants") or [] if v["id"] == vid), None) if vid else None
    entry = _make(raw, variant)
    return entry if variant else _stored_without_quantization(entry, raw)


# --------------------------------------------------------------------------------------------------
# name-derived quantized builds


def _ct_group(weights: dict[str, Any], acts: dict[str, Any] | None = None) -> dict[str, Any]:
    """A compressed-tensors ``quantization_config`` with one config group on every Linear but lm_head."""
    return {
        "quant_method": "compressed-tensors",
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights, "input_activations": acts}},
        "ignore": ["lm_head"],
    }


_FP8_CHANNEL = {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}
_FP8_TOKEN = {"num_bits": 8, "type": "float", "strategy": "token", "symmetric": True, "dynamic": True}
_INT8_CHANNEL = {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True, "dynamic": False}
_INT8_TOKEN = {"num_bits": 8, "type": "int", "strategy": "token", "symmetric": True, "dynamic": True}
_INT4_G128 = {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True}
_FP4_G16 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": True}
# compressed-tensors' FP8_BLOCK preset ("deepseekv3-style"): static fp8 weights with one scale per 128x128 block,
# dynamic fp8 activations per 128-element group (vllm-project/compressed-tensors@da3ad9fe
# src/compressed_tensors/quantization/quant_scheme.py::FP8_BLOCK), the scheme of llm-compressor's -FP8-block builds.
_FP8_BLOCK128 = dict(_FP8_CHANNEL, strategy="block", block_structure=[128, 128])
_FP8_GROUP128 = dict(_FP8_TOKEN, strategy="group", group_size=128)

#: Name suffixes a quantized build is recognised by (matched case-insensitively at the end of the repository
#: name, longest first), with the label and the ``quantization_config`` assumed when no catalogued sibling of
#: the same publisher and suffix provides a real one. Group size 128 is also the value
#: :func:`kvlint.models.weights.linear_bytes_per_param` takes when a config omits it.
QUANT_SUFFIXES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (
        "-unsloth-bnb-4bit",
        "bitsandbytes 4-bit nf4",
        {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"},
    ),
    (
        "-bnb-4bit",
        "bitsandbytes 4-bit nf4",
        {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"},
    ),
    ("-bnb-8bit", "bitsandbytes 8-bit", {"quant_method": "bitsandbytes", "load_in_8bit": True}),
    (
        "-AWQ-INT4",
        "AWQ 4-bit g128",
        {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
    ),
    (
        "-AWQ",
        "AWQ 4-bit g128",
        {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
    ),
    ("-GPTQ-Int4", "GPTQ 4-bit g128", {"quant_method": "gptq", "bits": 4, "group_size": 128}),
    ("-GPTQ-Int8", "GPTQ 8-bit g128", {"quant_method": "gptq", "bits": 8, "group_size": 128}),
    ("-GPTQ-4bit", "GPTQ 4-bit g128", {"quant_method": "gptq", "bits": 4, "group_size": 128}),
    ("-GPTQ-8bit", "GPTQ 8-bit g128", {"quant_method": "gptq", "bits": 8, "group_size": 128}),
    ("-GPTQ", "GPTQ 4-bit g128", {"quant_method": "gptq", "bits": 4, "group_size": 128}),
    (
        "-quantized.w4a16",
        "compressed-tensors W4A16 int4 g128",
        _ct_group(_INT4_G128),
    ),
    ("-W4A16", "compressed-tensors W4A16 int4 g128", _ct_group(_INT4_G128)),
    (
        "-quantized.w8a8",
        "compressed-tensors W8A8 int8",
        _ct_group(_INT8_CHANNEL, _INT8_TOKEN),
    ),
    ("-W8A8", "compressed-tensors W8A8 int8", _ct_group(_INT8_CHANNEL, _INT8_TOKEN)),
    ("-quantized.w8a16", "compressed-tensors W8A16 int8", _ct_group(_INT8_CHANNEL)),
    ("-W8A16", "compressed-tensors W8A16 int8", _ct_group(_INT8_CHANNEL)),
    ("-FP8-dynamic", "compressed-tensors FP8 dynamic", _ct_group(_FP8_CHANNEL, _FP8_TOKEN)),
    ("-FP8-block", "compressed-tensors FP8 block 128x128", _ct_group(_FP8_BLOCK128, _FP8_GROUP128)),
    # AMD's -FP8-KV builds (Quark): fp8 weights and activations, plus fp8 scales for the KV cache
    ("-FP8-KV", "FP8 static (AMD Quark FP8-KV)", {"quant_method": "fp8", "activation_scheme": "static"}),
    ("-FP8-Static", "FP8 static", {"quant_method": "fp8", "activation_scheme": "static"}),
    ("-FP8", "FP8", {"quant_method": "fp8", "activation_scheme": "dynamic"}),
    ("-NVFP4", "NVFP4 (fp8 scale per 16)", _ct_group(_FP4_G16, dict(_FP4_G16, dynamic="local"))),
    ("-FP4", "NVFP4 (fp8 scale per 16)", _ct_group(_FP4_G16, dict(_FP4_G16, dynamic="local"))),
)

#: NVIDIA's own -NVFP4/-FP4/-FP8 builds are ModelOpt checkpoints: the settings live in hf_quant_config.json.
_MODELOPT = {
    "-NVFP4": {"quantization": {"quant_algo": "NVFP4", "group_size": 16}},
    "-FP4": {"quantization": {"quant_algo": "NVFP4", "group_size": 16}},
    "-FP8": {"quantization": {"quant_algo": "FP8"}},
}


def _split(ref: str) -> tuple[str, str] | None:
    r = ref.strip().strip("/")
    if "/" not in r and "--" in r:
        r = r.replace("--", "/", 1)
    if r.count("/") != 1:
        return None
    org, name = r.split("/")
    return (org, name) if org and name else None


def _is_quantized(raw: dict[str, Any]) -> bool:
    if raw.get("_hf_quant"):
        return True
    cfg = json.loads((DATA_DIR / raw["_dir"] / "config.json").read_text(encoding="utf-8"))
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
    return bool(
        cfg.get("quantization_config") or text.get("quantization_config") or cfg.get("compression_config")
    )


def _find_base(org: str, base_name: str) -> CatalogueEntry | None:
    """The catalogued model named ``base_name``: ``org/base_name`` itself, else the only catalogued
    configuration (entry or variant of any publisher) whose repository name is ``base_name``."""
    same = lookup(f"{org}/{base_name}")
    if same is not None:
        return same
    want = base_name.lower()
    hits = {
        key: hit for key, hit in _by_name().items() if key.split("/", 1)[-1] == want
    }  # several publishers may re-upload one checkpoint
    dirs = {_index()[mid].dir for mid, _ in hits.values()}
    if len(dirs) != 1:
        return None
    key = sorted(hits)[0]
    return lookup(key)


#: Keys of a quantization config that name layers of one particular model (dropped when a sibling's config
#: is reused for another model): the skip lists, bitsandbytes' ``llm_int8_skip_modules`` and GPTQ's per-module
#: ``dynamic`` rules (both read by :func:`kvlint.models.weights.skipped_params`).
_LAYER_LISTS = (
    "modules_to_not_convert",
    "ignore",
    "ignored_layers",
    "exclude_modules",
    "ignored_modules",
    "llm_int8_skip_modules",
    "dynamic",
)


def _strip_layers(q: dict[str, Any]) -> dict[str, Any]:
    out = {k: copy.deepcopy(v) for k, v in q.items() if k not in _LAYER_LISTS}
    if isinstance(out.get("quantization"), dict):
        out["quantization"] = {k: v for k, v in out["quantization"].items() if k not in _LAYER_LISTS}
    return out


def _sibling_template(
    org: str, suffix: str, model_type: str | None
) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None] | None:
    """A catalogued build of the same publisher with the same suffix: ``(id, quantization_config,
    hf_quant_config)`` read from its stored files (layer lists dropped), or None. Among several, one of the
    same ``model_type`` is preferred, then the shortest config."""
    want_org, want_sfx = org.lower(), suffix.lower()
    found: list[tuple[int, int, str, dict[str, Any] | None, dict[str, Any] | None]] = []
    for mid in _index():
        o, _, name = mid.partition("/")
        if o.lower() != want_org or not name.lower().endswith(want_sfx):
            continue
        d = DATA_DIR / _index()[mid].dir
        cfg = json.loads((d / "config.json").read_text(encoding="utf-8"))
        text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
        qc = cfg.get("quantization_config") or text.get("quantization_config")
        hq_path = d / "hf_quant_config.json"
        hq = json.loads(hq_path.read_text(encoding="utf-8")) if hq_path.exists() else None
        if isinstance(qc, dict) or isinstance(hq, dict):
            same_type = 0 if (cfg.get("model_type") or text.get("model_type")) == model_type else 1
            size = len(json.dumps(qc if isinstance(qc, dict) else hq))
            found.append((same_type, size, mid, qc if isinstance(qc, dict) else None, hq))
    if not found:
        return None
    _, _, mid, qc, hq = min(found, key=lambda t: (t[0], t[1], t[2].lower()))
    return (
        mid,
        (_strip_layers(qc) if qc is not None else None),
        (_strip_layers(hq) if hq is not None else None),
    )


def _quant_from_suffix(
    org: str, suffix: str, label: str, template: dict[str, Any], config: dict[str, Any]
) -> dict[str, Any]:
    """The quantization a build named ``org/...<suffix>`` is taken to have (``CatalogueEntry.derived`` without
    the dtype): the real ``quantization_config`` or ``hf_quant_config.json`` of a catalogued build of the same
    publisher and suffix (layer lists dropped), else NVIDIA's ModelOpt default for its -FP8/-NVFP4/-FP4
    builds, else the suffix's default from :data:`QUANT_SUFFIXES`; ``template`` says which."""
    sib = _sibling_template(org, suffix, config.get("model_type"))
    derived: dict[str, Any] = {"suffix": suffix, "label": label}
    if sib is not None:
        sib_id, qc, hq = sib
        if qc is not None:
            derived["quantization_config"] = copy.deepcopy(qc)
        else:
            derived["hf_quant_config"] = copy.deepcopy(hq)
        derived["template"] = (
            f"copied from the catalogued {sib_id} (same publisher and suffix; its per-layer exclusion "
            "lists dropped)"
        )
    elif org.lower() == "nvidia" and suffix in _MODELOPT:
        derived["hf_quant_config"] = copy.deepcopy(_MODELOPT[suffix])
        derived["template"] = "ModelOpt hf_quant_config.json assumed (NVIDIA's own builds use ModelOpt)"
    else:
        derived["quantization_config"] = copy.deepcopy(template)
        derived["template"] = "kvlint's default for this suffix (docs/models.md)"
    return derived


#: ``source.fidelity`` values of a stored config that is the checkpoint's own config.json (copied, transcribed
#: from its hub page or re-saved whole): its quantization settings, or their absence, are what the engine reads.
_OWN_CONFIG_FIDELITIES = frozenset({"verbatim_copy", "hf_page_transcription", "resaved_copy"})


def _stored_without_quantization(entry: CatalogueEntry, raw: dict[str, Any]) -> CatalogueEntry:
    """``entry`` (a stored config, not a variant) with the quantization its name states when its bundled
    config has none, else ``entry`` unchanged.

    A vendoring project may trim a quantized build's config.json to its architecture keys (ai-dynamo/
    aiconfigurator's ``zai-org--GLM-4.7-FP8_config.json``: fidelity ``abridged``, no ``quantization_config``).
    Read as it is, the FP8 checkpoint would be sized at the model dtype (twice its bytes). Its name's
    :data:`QUANT_SUFFIXES` suffix then sets the quantization as :func:`derive_quantized` does for a build known
    only by name (:func:`_quant_from_suffix`), with an ``ASSUMPTION`` note first; ``derived["abridged"]`` marks
    it for :mod:`kvlint.models.resolve`, which states the assumption (KV505).

    Only a config that is not the checkpoint's own file (:data:`_OWN_CONFIG_FIDELITIES`): a verbatim copy of a
    build's config.json is what the engine reads, and vLLM takes the quantization from that file
    (``quantization_config``/``compression_config``, ``ModelConfig._parse_quant_hf_config``) or from
    ``hf_quant_config.json`` (ModelOpt), never from the repository's name, so a complete config without one is
    served at its dtype whatever the name says."""
    parts = _split(entry.id)
    if parts is None or entry.id != entry.base_id or _is_quantized(raw):
        return entry
    if str((entry.source or {}).get("fidelity") or "") in _OWN_CONFIG_FIDELITIES:
        return entry
    org, name = parts
    for suffix, label, template in QUANT_SUFFIXES:
        if not name.lower().endswith(suffix.lower()) or len(name) <= len(suffix):
            continue
        config = json.loads((DATA_DIR / entry.dir / "config.json").read_text(encoding="utf-8"))
        derived = _quant_from_suffix(org, suffix, label, template, config)
        derived["abridged"] = True
        what = json.dumps(
            derived.get("quantization_config") or derived.get("hf_quant_config"), sort_keys=True
        )
        note = (
            f"ASSUMPTION (quantization from name): the bundled config.json of {entry.id} "
            f"({entry.source_citation}) has no quantization settings; it is taken to be quantized as {label}, inferred from the name suffix '{suffix}'; "
            f"quantization_config {derived['template']}: {what}. The real checkpoint may differ (group size, "
            "layers left unquantized); weights are estimated from the architecture, not read from the checkpoint."
        )
        return dataclasses.replace(
            entry,
            notes=(note, *entry.notes),
            weight_bytes=None,
            weight_bytes_citation=None,
            derived=derived,
        )
    return entry


def derive_quantized(ref: str, why_not_real: str | None = None) -> CatalogueEntry | None:
    """A quantized build known only by name, derived from its catalogued base model, or None.

    ``ref`` must be ``org/<name><suffix>`` with a suffix of :data:`QUANT_SUFFIXES` (case-insensitive) and
    ``<name>`` catalogued — under ``org`` itself, or under exactly one configuration of any publisher
    (``neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8`` -> ``meta-llama/Meta-Llama-3.1-8B-Instruct``). The base
    must itself be unquantized. The quantization is taken from a catalogued build of the same publisher
    with the same suffix when there is one (its real ``quantization_config`` or ``hf_quant_config.json``),
    else from the suffix table (NVIDIA's -FP8/-NVFP4 builds as ModelOpt ``hf_quant_config.json``). The
    entry carries no checkpoint size (the base's is unquantized); weights are estimated from the
    architecture with that method's byte rates. ``why_not_real`` (e.g. "hub access is disabled") is
    quoted in the assumption note.
    """
    parts = _split(ref) if isinstance(ref, str) else None
    if parts is None or lookup(ref) is not None:
        return None
    org, name = parts
    for suffix, label, template in QUANT_SUFFIXES:
        if not name.lower().endswith(suffix.lower()) or len(name) <= len(suffix):
            continue
        base = _find_base(org, name[: -len(suffix)])
        bf16 = ""
        if base is None:
            # the unquantized build the quantizer started from, published with a -BF16 suffix
            # (nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16 for RedHatAI/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8-block)
            base = _find_base(org, name[: -len(suffix)] + "-BF16")
            bf16 = f" (the name without '{suffix}' is catalogued only as its -BF16 build)"
        if base is None:
            return None
        raw = _raw(base.base_id)
        if _is_quantized(raw):
            return None
        base_cfg = json.loads((DATA_DIR / base.dir / "config.json").read_text(encoding="utf-8"))
        derived = _quant_from_suffix(org, suffix, label, template, base_cfg)
        awq = str((derived.get("quantization_config") or {}).get("quant_method", "")).lower() == "awq"
        dtype_note = ""
        from kvlint.models.config import declared_dtype  # (this module imports no other of kvlint's at load)

        base_dtype = declared_dtype(base_cfg)
        if awq and base_dtype not in (None, "float16"):
            derived["torch_dtype"] = "float16"
            dtype_note = (
                f" torch_dtype float16 assumed instead of the base's {base_dtype}: AutoAWQ loads "
                "the model it quantizes as float16 (casper-hansen/AutoAWQ awq/models/base.py "
                "BaseAWQForCausalLM.from_pretrained, torch_dtype default) and saves that dtype, and vLLM's awq "
                "method runs float16 activations only before 0.24.0 (AWQConfig.get_supported_act_dtypes)."
            )
        what = json.dumps(
            derived.get("quantization_config") or derived.get("hf_quant_config"), sort_keys=True
        )
        note = (
            f"ASSUMPTION (derived from name): {ref} is not in the catalogue"
            + (f" and its config.json was not read ({why_not_real})" if why_not_real else "")
            + f"; it is taken to be {base.id}{bf16} (architecture from the catalogue) quantized as {label}, "
            f"inferred from the name suffix '{suffix}'; quantization_config {derived['template']}: {what}. "
            "The real checkpoint may differ (group size, layers left unquantized, dtype); weights are "
            "estimated from the architecture, not read from the checkpoint." + dtype_note
        )
        return CatalogueEntry(
            id=ref.strip().strip("/"),
            base_id=base.base_id,
            dir=base.dir,
            aliases=(),
            source=dict(base.source),
            param_count=None,
            param_count_exact=False,
            param_count_citation=None,
            weight_bytes=None,
            weight_bytes_citation=None,
            notes=(note, *base.notes),
            overrides=dict(base.overrides),
            has_hf_quant_config=False,
            derived=derived,
        )
    return None


def derive_reupload(ref: str, why_not_real: str | None = None) -> CatalogueEntry | None:
    """A checkpoint known only by name that another publisher re-uploaded unchanged, or None.

    ``ref`` is ``org/<name>`` where ``<name>`` carries no quantization suffix (those are
    :func:`derive_quantized`'s), ``org/<name>`` is not catalogued, and exactly one catalogued configuration of
    another publisher has the repository name ``<name>`` (``RedHatAI/Llama-3.1-8B-Instruct`` ->
    ``meta-llama/Llama-3.1-8B-Instruct``: mirrors such as RedHatAI/, unsloth/ or NousResearch/ re-upload
    checkpoints under their original names). Stated as an assumption in the first note; the entry has no
    checkpoint size of its own."""
    parts = _split(ref) if isinstance(ref, str) else None
    if parts is None or lookup(ref) is not None:
        return None
    org, name = parts
    if any(name.lower().endswith(sfx.lower()) for sfx, _, _ in QUANT_SUFFIXES):
        return None
    base = _find_base(org, name)
    if base is None or base.id.split("/", 1)[0].lower() == org.lower():
        return None
    note = (
        f"ASSUMPTION (derived from name): {ref} is not in the catalogue"
        + (f" and its config.json was not read ({why_not_real})" if why_not_real else "")
        + f"; it is taken to be an unchanged re-upload of {base.id}, the only catalogued model with the "
        "repository name "
        + repr(name)
        + ". The real checkpoint may differ (a fine-tune keeps the name but not "
        "always the shapes)." + _reupload_precision(base)
    )
    return CatalogueEntry(
        id=ref.strip().strip("/"),
        base_id=base.base_id,
        dir=base.dir,
        aliases=(),
        source=dict(base.source),
        param_count=base.param_count,
        param_count_exact=base.param_count_exact,
        param_count_citation=base.param_count_citation,
        weight_bytes=None,
        weight_bytes_citation=None,
        notes=(note, *base.notes),
        overrides=dict(base.overrides),
        has_hf_quant_config=base.has_hf_quant_config,
        derived={"suffix": "", "label": "unchanged re-upload"},
    )


def _reupload_precision(base: CatalogueEntry) -> str:
    """The sentence a re-upload's assumption adds when ``base`` is a quantized checkpoint under a plain name: its
    weight precision is assumed too, and said, because publishers differ in how they name precisions (mistralai's
    Ministral 3 Instruct checkpoints are FP8 under the plain name with the bf16 weights under ``-BF16``; unsloth
    publishes the FP8 builds under ``-FP8``), so a same-named repository of another publisher can hold other
    weights. "" for an unquantized base (no sizing fact beyond the architecture is taken)."""
    try:
        config, hf_quant = load_config(base)
    except (OSError, ValueError):
        return ""
    text_config = config.get("text_config")
    text: dict[str, Any] = text_config if isinstance(text_config, dict) else {}
    qc = (
        config.get("quantization_config")
        or text.get("quantization_config")
        or config.get("compression_config")
    )
    method = ""
    if isinstance(qc, dict):
        method = _weight_precision(qc)
    elif isinstance(hf_quant, dict):
        section = hf_quant.get("quantization")
        algo = section.get("quant_algo") if isinstance(section, dict) else None
        method = f"ModelOpt {algo}" if algo else "ModelOpt"
    if not method:
        return ""
    return (
        f" Its weights are assumed the same as {base.id}'s too: {method} (a same-named repository of another "
        "publisher can hold another precision)."
    )


def _weight_precision(qc: dict[str, Any]) -> str:
    """The weights' precision a ``quantization_config`` states, in words: ``quant_method`` where it names one
    (``fp8``, ``mxfp4``); for a ModelOpt config its ``quant_algo`` (``ModelOpt FP8``; ModelOpt's exported
    configs carry ``quant_method: modelopt`` or none); for compressed-tensors, a container format, the weights
    of its ``config_groups`` (``int4 (compressed-tensors, group size 32)``, from ``num_bits`` and ``type``);
    for bitsandbytes its ``load_in_4bit``/``load_in_8bit``."""
    method = str(qc.get("quant_method") or "")
    algo = qc.get("quant_algo")
    if algo and method in ("", "modelopt"):
        return f"ModelOpt {algo}"
    if method == "bitsandbytes":
        if qc.get("load_in_4bit"):
            return f"4-bit {qc.get('bnb_4bit_quant_type') or ''} (bitsandbytes)".replace("  ", " ")
        return "8-bit (bitsandbytes)" if qc.get("load_in_8bit") else "bitsandbytes"
    groups = qc.get("config_groups")
    if method in ("compressed-tensors", "") and isinstance(groups, dict):
        kinds = []
        for group in groups.values():
            w = group.get("weights") if isinstance(group, dict) else None
            if isinstance(w, dict) and w.get("num_bits") and w.get("type"):
                size = f", group size {w['group_size']}" if w.get("group_size") else ""
                kind = f"{w['type']}{w['num_bits']} ({method or 'compressed-tensors'}{size})"
                if kind not in kinds:
                    kinds.append(kind)
        if kinds:
            return " and ".join(kinds)
    return method or str(qc.get("format") or "quantized")


def _loose(name: str) -> str:
    """``name`` lower-cased with ``.`` and ``_`` read as ``-`` (image names cannot hold dots in every place:
    ``granite-3-1-8b-instruct`` for ``granite-3.1-8b-instruct``)."""
    return re.sub(r"[._]", "-", name.strip().lower())


def repository_name_match(name: str, *, loose: bool = False) -> str | None:
    """The catalogued id (or variant id) whose repository name is ``name`` (case-insensitive; with ``loose``
    also ``.``/``_``/``-`` alike), when exactly one catalogued configuration has it; None otherwise. Used for
    paths and OCI images named after their model."""
    norm = _loose if loose else (lambda n: n.strip().lower())
    want = norm(name)
    hits = {key: hit for key, hit in _by_name().items() if norm(key.split("/", 1)[-1]) == want}
    dirs = {_index()[mid].dir for mid, _ in hits.values()}
    if len(dirs) != 1:
        return None
    mid, vid = hits[sorted(hits)[0]]
    return vid or mid


def dots_dropped_match(name: str) -> str | None:
    """The catalogued id (or variant) whose repository name, with its dots dropped, is ``name`` (case and
    ``_``/``-`` aside): ``llama-31-8b-instruct`` for ``Llama-3.1-8B-Instruct``; None unless exactly one
    catalogued configuration has it and ``name`` has no dot of its own (a name with its dots kept is matched by
    :func:`repository_name_match`).

    Only ever offered as a "did you mean" (KV502), never assumed: a dropped dot joins the digits around it,
    so ``qwen2-15b`` would read as a catalogued ``Qwen2-1.5B`` although Qwen2 1.5B and a 15B model of the same
    name are ten times apart, and a unique match in the catalogue says nothing about the hub's other models."""
    want = re.sub(r"[_-]", "-", name.strip().strip("/").rsplit("/", 1)[-1].lower())
    if not want or "." in want or not re.search(r"\d", want):
        return None
    hits = {
        key: hit
        for key, hit in _by_name().items()
        if "." in key.split("/", 1)[-1]
        and re.sub(r"[._-]", "", key.split("/", 1)[-1]) == want.replace("-", "")
        and _digit_runs(key.split("/", 1)[-1].replace(".", "")) == _digit_runs(want)
    }
    dirs = {_index()[mid].dir for mid, _ in hits.values()}
    if len(dirs) != 1:
        return None
    mid, vid = hits[sorted(hits)[0]]
    return vid or mid


def _digit_runs(name: str) -> tuple[str, ...]:
    """The runs of digits of ``name`` in order (``llama-31-8b`` -> ``('31', '8')``)."""
    return tuple(re.findall(r"\d+", name))


def modelcar_maker_tag(repo_id: str) -> str:
    """The image tag jharmison-redhat/modelcar-maker builds for hub id ``repo_id`` when none is given, without
    its ``-modelcar`` suffix: ``/`` becomes ``--``, ``.`` becomes ``_``, all lower-case
    (``src/modelcar_maker/util/helpers.py`` ``normalize``, README "Image tag format"; read at commit
    9a8c68c2). ``RedHatAI/granite-3.1-8b-instruct-quantized.w8a8`` ->
    ``redhatai--granite-3_1-8b-instruct-quantized_w8a8``."""
    return repo_id.replace("/", "--").replace(".", "_").lower()


def modelcar_maker_match(tag: str) -> str | None:
    """The hub id a modelcar-maker tag (``org--name``, :func:`modelcar_maker_tag`, ``-modelcar`` already cut)
    names, or None. The spelling loses case and ``.`` (an ``_`` is ``.`` or ``_``), so the id is read back
    only through the catalogue: the catalogued id (or variant) whose tag is ``tag`` when exactly one
    catalogued configuration has it; else a quantized build (a :data:`QUANT_SUFFIXES` suffix, spelled as the
    tag spells it) of exactly one catalogued model, named under the catalogue's spelling of the tag's org
    and accepted only when :func:`derive_quantized` derives it. Never a guess beyond that."""
    want = tag.strip().lower()
    org, sep, name = want.partition("--")
    if not sep or not org or not name:
        return None
    hits = {key: hit for key, hit in _by_name().items() if modelcar_maker_tag(key) == want}
    if hits:
        if len({_index()[mid].dir for mid, _ in hits.values()}) != 1:
            return None
        mid, vid = hits[sorted(hits)[0]]
        return vid or mid
    spelled = sorted({mid.split("/", 1)[0] for mid in _index() if mid.split("/", 1)[0].lower() == org})
    publisher = spelled[0] if len(spelled) == 1 else org
    for suffix, _, _ in QUANT_SUFFIXES:
        tail = modelcar_maker_tag(suffix)
        if not name.endswith(tail) or len(name) <= len(tail):
            continue
        stem = name[: -len(tail)]
        bases = {
            key: hit for key, hit in _by_name().items() if modelcar_maker_tag(key.split("/", 1)[-1]) == stem
        }
        dirs = {_index()[mid].dir for mid, _ in bases.values()}
        if len(dirs) != 1:
            if dirs:
                return None
            continue
        mid, vid = bases[sorted(bases)[0]]
        candidate = f"{publisher}/{(vid or mid).split('/', 1)[-1]}{suffix}"
        return candidate if derive_quantized(candidate) is not None else None
    return None


@functools.lru_cache(maxsize=64)
def _architecture(dirname: str) -> tuple[str, tuple[str, ...]]:
    """``(model_type, architectures)`` of the config.json stored in catalogue directory ``dirname``."""
    config = json.loads((DATA_DIR / dirname / "config.json").read_text(encoding="utf-8"))
    arch = config.get("architectures") or ()
    return str(config.get("model_type") or ""), tuple(str(a) for a in arch)


def architectures(model_id: str) -> tuple[str, ...] | None:
    """The ``architectures`` of the catalogued config.json of ``model_id`` (a hub id or variant id, as
    :func:`lookup` reads it), or None when it is not catalogued."""
    hit = _by_name().get(_norm(model_id)) if isinstance(model_id, str) else None
    return _architecture(_index()[hit[0]].dir)[1] if hit is not None else None


def _family(repo_name: str) -> str | None:
    """The leading letters of a (lower-case) repository name when at least 3: ``llava-1.5-7b-hf`` -> llava."""
    m = re.match(r"[a-z]+", repo_name)
    return m.group(0) if m is not None and len(m.group(0)) >= 3 else None


def _name_words(repo_name: str) -> tuple[str, ...]:
    """The leading words of a (lower-case) repository name that begin with a letter, up to the first that begins
    with a digit (a size or version): ``gpt-oss-20b`` -> ``(gpt, oss)``, ``gpt2`` -> ``(gpt2,)``,
    ``meta-llama-3-8b`` -> ``(meta, llama)``, ``llava-v1.6-vicuna-7b`` -> ``(llava, v1)``. Words are split at
    ``-``, ``_`` and ``.``."""
    words = []
    for word in re.split(r"[-_.]", repo_name):
        if not word or not word[0].isalpha():
            break
        words.append(word)
    return tuple(words)


#: A parameter count in a (lower-case) model name: ``7b``, ``6.7b``, ``8x7b``, ``1.5b``, ``70b`` (not ``gh200``).
_PARAM_SIZE_RE = re.compile(r"(?<![a-z0-9.])(\d+(?:x\d+)?(?:\.\d+)?[bm])(?![a-z0-9])")


def _param_sizes(repo_name: str) -> frozenset[str]:
    """The parameter counts a (lower-case) repository or path name states (:data:`_PARAM_SIZE_RE`):
    ``deepseek-r1-70b-gh200`` -> ``{70b}``, ``mixtral-8x7b-instruct`` -> ``{8x7b}``, ``gpt2`` -> ``{}``."""
    return frozenset(_PARAM_SIZE_RE.findall(repo_name.lower()))


def _of_family(name_words: tuple[str, ...], repo_name: str) -> bool:
    """Whether catalogued repository name ``repo_name`` (lower case) is of the family of a path whose name has
    the leading words ``name_words`` (:func:`_name_words`): the catalogued name's leading words are the first
    words of the path's (``mixtral`` for ``mixtral-x``; ``llava`` for ``llava-v1.6-vicuna-7b``), never another
    model that merely shares the first letters (``gpt-oss-20b`` for ``gpt2`` or ``gpt-j-6b``)."""
    words = _name_words(repo_name)
    return bool(words) and name_words[: len(words)] == words


def same_family_suggestion(name: str) -> str | None:
    """A catalogued id to offer as the example mapping for an unresolved model named ``name`` (a path's last
    component such as ``llava-1.5-7b-hf``), or None.

    The family is the name's leading words before its first number (``llava``, ``qwen3``, ``smollm2``,
    ``meta-llama``, ``gpt-oss``; :func:`_name_words`), whose leading letters are at least 3: a catalogued model
    is of it when its own leading words begin the name's (:func:`_of_family`). Only when the catalogue holds
    models of that family and their config.json files all have one ``model_type`` and one ``architectures``
    list is the one nearest by name (``difflib`` ratio) returned: kvlint never suggests a model of another
    architecture (e.g. a Llama for a LLaVA path, gpt-oss for a ``gpt2`` directory), nor guesses within a family
    whose catalogued members differ (Qwen3, Qwen3-MoE, Qwen3-VL ...). A name that states its parameter count
    (``deepseek-r1-70b``, :func:`_param_sizes`) is offered only a model whose name states the same (none: None;
    DeepSeek-R1's 671B is no example for a 70B directory). Ties: :func:`_suggestion_rank`.
    """
    want = name.strip().strip("/").rsplit("/", 1)[-1].lower()
    if _family(want) is None:
        return None
    words = _name_words(want)
    hits = {key: hit for key, hit in _by_name().items() if _of_family(words, key.split("/", 1)[-1])}
    if not hits:
        return None
    archs = {_architecture(_index()[mid].dir) for mid, _ in hits.values()}
    if len(archs) != 1:
        return None
    sizes = _param_sizes(want)
    if sizes:
        # a path that names its size is offered a model of that size only: DeepSeek-R1 (671B) is no example
        # for /models/deepseek-r1-70b, DeepSeek-R1-Distill-Llama-70B (a Llama) by its size
        hits = {k: hit for k, hit in hits.items() if sizes <= _param_sizes(k.split("/", 1)[-1])}
        if not hits:
            return None
    key = max(sorted(hits), key=lambda k: _suggestion_rank(want, k, hits[k][1] is None))
    mid, vid = hits[key]
    return vid or mid


def _suggestion_rank(want: str, key: str, stored: bool) -> tuple[float, bool, tuple[int, ...]]:
    """How well catalogued id ``key`` (normalised) answers a path named ``want``, for
    :func:`same_family_suggestion`: the ``difflib`` ratio of the repository names first; among equal ratios a
    stored configuration before a variant mapped onto one (``TinyLlama-1.1B-Chat-v1.0`` before the
    ``-v0.3`` listed on it), then the higher version numbers, compared number by number (``v1.0`` before
    ``v0.3``); the caller breaks full ties alphabetically, so the pick never depends on table order."""
    import difflib

    repo = key.split("/", 1)[-1]
    numbers = tuple(int(n) for n in _digit_runs(repo)[:8])
    return difflib.SequenceMatcher(None, want, repo).ratio(), stored, numbers


def _set_dtype(config: dict[str, Any], dtype: str) -> None:
    """Set ``dtype`` wherever ``config`` (a fresh copy) declares its dtype (``dtype``/``torch_dtype``, top level
    and ``text_config``), else as the top-level ``torch_dtype``."""
    found = False
    for d in (config, config.get("text_config")):
        if isinstance(d, dict):
            for key in ("dtype", "torch_dtype"):
                if key in d:
                    d[key] = dtype
                    found = True
    if not found:
        config["torch_dtype"] = dtype


def load_config(entry: CatalogueEntry) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``(config.json dict with the variant's overrides applied, hf_quant_config.json dict or None)``.

    An ``unquantized`` variant's config has no ``quantization_config`` (top level or ``text_config``).

    For a name-derived build the assumed ``quantization_config`` is set on the config (top level) or the
    assumed ``hf_quant_config.json`` is returned. Raises OSError/ValueError only if the installed package
    data is damaged.
    """
    d = DATA_DIR / entry.dir
    config = json.loads((d / "config.json").read_text(encoding="utf-8"))
    if entry.unquantized:
        config = copy.deepcopy(config)
        config.pop("quantization_config", None)
        if isinstance(config.get("text_config"), dict):
            config["text_config"].pop("quantization_config", None)
    if entry.overrides:
        config = copy.deepcopy(config)
        target = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
        target.update(entry.overrides)
    quant = None
    if entry.has_hf_quant_config:
        quant = json.loads((d / "hf_quant_config.json").read_text(encoding="utf-8"))
    if entry.derived:
        if entry.derived.get("torch_dtype"):
            _set_dtype(config, entry.derived["torch_dtype"])
        if entry.derived.get("quantization_config") is not None:
            config["quantization_config"] = copy.deepcopy(entry.derived["quantization_config"])
        else:
            quant = copy.deepcopy(entry.derived.get("hf_quant_config"))
    return config, quant


def processor_config(ref: str) -> tuple[dict[str, Any], str] | None:
    """The image processor settings bundled beside a catalogued config, with their citation, or None.

    ``<dir>/preprocessor_config.json`` is the checkpoint's file as found in a public source (bytes unchanged);
    ``<dir>/preprocessor_config.source.json`` says where (``repo``, ``path``, ``commit``, ``fidelity``, ``note``).
    vLLM reads ``min_pixels``/``max_pixels`` (or ``size.shortest_edge``/``size.longest_edge``) from it to size the
    Qwen2-VL family's largest dummy image (:func:`kvlint.memory.multimodal.encoder_profile`). A variant or a
    name-derived quantized build answers with its base's file. Returns None when nothing is bundled, the id is not
    catalogued or either file does not parse (never raises for string input).
    """
    entry = lookup(ref) or derive_quantized(ref) or derive_reupload(ref)
    if entry is None:
        return None
    d = DATA_DIR / entry.dir
    try:
        data = json.loads((d / "preprocessor_config.json").read_text(encoding="utf-8"))
        src = json.loads((d / "preprocessor_config.source.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(src, dict):
        return None
    commit = str(src.get("commit") or "")[:12]
    cite = f"{src.get('repo')}@{commit}:{src.get('path')} ({src.get('fidelity')})"
    return data, cite
