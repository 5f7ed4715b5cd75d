"""The bundled model catalogue: real ``config.json`` files shipped with kvlint for offline use.

Layout (package data ``kvlint/data/models/``): ``index.yaml`` lists each entry's id, directory and
variant ids; ``<org>--<name>/config.json`` is the config as found in the cited public source (bytes
unchanged), ``hf_quant_config.json`` when the checkpoint has one (ModelOpt), and ``entry.json`` the
provenance copied from ``/work/shared/corpus/models/<dir>/facts.yaml`` (source repo, path, commit,
fidelity level), the cited parameter count and checkpoint size with their citations, the curated
variants and notes. Built by :mod:`kvlint.models.build_catalogue`.

Variants are other hub ids whose architecture is identical to an entry (e.g. ``-Instruct`` of a base
model); each states why, and may carry ``overrides`` for config values that differ (the Qwen2.5
Instruct configs' ``max_position_embeddings`` 32768).
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CatalogueEntry", "list_entries", "lookup", "load_config", "DATA_DIR"]

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "models"


@dataclass(frozen=True)
class CatalogueEntry:
    """One catalogue model (or a variant of one).

    Attributes:
        id: the hub id this entry answers to (a variant's own id when found through a variant).
        base_id: the id of the stored config (== ``id`` unless this is a variant).
        dir: directory under ``kvlint/data/models``.
        aliases: ids of the variants of the base entry.
        source: provenance dict (repo, path, commit, url, fidelity, fidelity_note).
        param_count: cited parameter count (elements; rounded unless ``param_count_exact``), or None.
        param_count_citation: where that count is stated.
        weight_bytes: checkpoint ``model.safetensors.index.json`` ``metadata.total_size`` in bytes, or None.
        weight_bytes_citation: where that size comes from.
        notes: caveats (incl. why a variant maps here).
        overrides: config.json values that differ for this variant (applied by :func:`load_config`).
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

    @property
    def source_citation(self) -> str:
        """``repo@commit:path (fidelity)`` of the stored config."""
        s = self.source
        commit = str(s.get("commit") or "")[:12]
        return f"{s.get('repo')}@{commit}:{s.get('path')} ({s.get('fidelity')})"


def _norm(ref: str) -> str:
    r = ref.strip().strip("/").lower()
    if "--" in r and "/" not in r:
        r = r.replace("--", "/", 1)
    return r


@functools.lru_cache(maxsize=1)
def _raw_entries() -> dict[str, dict[str, Any]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    index = yaml.load((DATA_DIR / "index.yaml").read_text(encoding="utf-8"), Loader=loader) or {}
    out: dict[str, dict[str, Any]] = {}
    for item in index.get("models") or []:
        d = DATA_DIR / item["dir"]
        entry = json.loads((d / "entry.json").read_text(encoding="utf-8"))
        entry["_dir"] = item["dir"]
        entry["_hf_quant"] = (d / "hf_quant_config.json").exists()
        out[item["id"]] = entry
    return out


def _make(raw: dict[str, Any], variant: dict[str, Any] | None = None) -> CatalogueEntry:
    pc = raw.get("param_count") or {}
    wb = raw.get("weight_bytes") or {}
    notes = list(raw.get("notes") or [])
    if variant:
        notes.insert(0, f"{variant['id']} uses the config of {raw['id']}: {variant.get('why', '')}")
    return CatalogueEntry(
        id=variant["id"] if variant else raw["id"],
        base_id=raw["id"],
        dir=raw["_dir"],
        aliases=tuple(v["id"] for v in raw.get("variants") or []),
        source=dict(raw.get("source") or {}),
        param_count=pc.get("value"),
        param_count_exact=bool(pc.get("exact")),
        param_count_citation=pc.get("citation"),
        weight_bytes=wb.get("value"),
        weight_bytes_citation=wb.get("citation"),
        notes=tuple(notes),
        overrides=dict((variant or {}).get("overrides") or {}),
        has_hf_quant_config=bool(raw.get("_hf_quant")),
    )


def list_entries() -> list[CatalogueEntry]:
    """All base entries of the bundled catalogue (52 corpus models), sorted by id."""
    return [_make(raw) for _, raw in sorted(_raw_entries().items(), key=lambda kv: kv[0].lower())]


@functools.lru_cache(maxsize=1)
def _by_name() -> dict[str, tuple[str, dict[str, Any] | None]]:
    table: dict[str, tuple[str, dict[str, Any] | None]] = {}
    for mid, raw in _raw_entries().items():
        table[_norm(mid)] = (mid, None)
        for v in raw.get("variants") or []:
            table.setdefault(_norm(v["id"]), (mid, v))
    return table


def lookup(ref: str) -> CatalogueEntry | None:
    """The catalogue entry for a hub id, or None.

    Case-insensitive on ``org/name``; ``org--name`` (the cache/dir spelling) is accepted; variants (e.g.
    ``meta-llama/Meta-Llama-3.1-8B-Instruct``) return an entry with their own ``id``, ``base_id`` pointing
    at the stored config and a note saying why. Never raises for string input.
    """
    if not isinstance(ref, str) or not ref.strip():
        return None
    hit = _by_name().get(_norm(ref))
    if hit is None:
        return None
    mid, variant = hit
    return _make(_raw_entries()[mid], variant)


def load_config(entry: CatalogueEntry) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``(config.json dict with the variant's overrides applied, hf_quant_config.json dict or None)``.

    Raises OSError/ValueError only if the installed package data is damaged.
    """
    d = DATA_DIR / entry.dir
    config = json.loads((d / "config.json").read_text(encoding="utf-8"))
    if entry.overrides:
        config = copy.deepcopy(config)
        target = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
        target.update(entry.overrides)
    quant = None
    if entry.has_hf_quant_config:
        quant = json.loads((d / "hf_quant_config.json").read_text(encoding="utf-8"))
    return config, quant
