"""Developer tool: (re)build the bundled model catalogue from the reference corpus.

Usage: ``python -m kvlint.models.build_catalogue /work/shared/corpus/models kvlint/data/models
[--extra kvlint/models/extra_sources.yaml]`` (the extra list is read by default when it exists).

For each ``<org>--<name>/`` corpus directory it copies ``config.json`` (and ``hf_quant_config.json``
when present) byte-for-byte and writes ``entry.json`` with the provenance from ``facts.yaml``
(source repo/path/commit, fidelity), the cited parameter count and checkpoint size with their
citations, and the curated variants below. Then it adds the entries of :data:`EXTRA_SOURCES` (configs
found in public repositories but not in the corpus; bytes kept in ``fixtures/plan/models/<dir>/`` and
checked against the sha256 the list records), and writes ``index.yaml`` (id -> directory, variants).
Not used at runtime.
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


def _extra_variants(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Variants of an extra entry: ``qwen25_instruct: true`` takes the Qwen2.5 Instruct overrides and why."""
    out = []
    for v in raw:
        if v.get("qwen25_instruct"):
            why = _QWEN25_INSTRUCT["why"] + ("; " + v["why_extra"] if v.get("why_extra") else "")
            out.append({"id": v["id"], "why": why, "overrides": dict(_QWEN25_INSTRUCT["overrides"])})
        else:
            out.append({k: v[k] for k in ("id", "why", "overrides") if k in v})
    return out


def load_extra_sources(path: Path, config_dir: Path) -> list[dict[str, Any]]:
    """Entries of the extra-sources YAML, each checked.

    Returns dicts with the YAML fields plus ``config_path`` (the verified ``config.json`` under
    ``config_dir/<dir>/``). Raises :class:`CatalogueBuildError` (naming the file and entry) when a
    required key (id, dir, config_sha256, source.repo/path/commit, fidelity.level) is missing, the
    config file is absent, or its sha256 differs from the recorded one.
    """
    import yaml

    doc = yaml.safe_load(path.read_text()) or {}
    entries = []
    for i, e in enumerate(doc.get("entries") or []):
        where = f"{path}: entries[{i}] ({e.get('id', '?')})"
        src, fid = e.get("source") or {}, e.get("fidelity") or {}
        missing = [k for k in ("id", "dir", "config_sha256") if not e.get(k)]
        missing += [f"source.{k}" for k in ("repo", "path", "commit") if not src.get(k)]
        missing += ["fidelity.level"] if not fid.get("level") else []
        if missing:
            raise CatalogueBuildError(f"{where}: missing {', '.join(missing)}")
        cfg = config_dir / e["dir"] / "config.json"
        if not cfg.is_file():
            raise CatalogueBuildError(f"{where}: {cfg} not found")
        digest = hashlib.sha256(cfg.read_bytes()).hexdigest()
        if digest != e["config_sha256"]:
            raise CatalogueBuildError(f"{where}: {cfg} sha256 {digest} != recorded {e['config_sha256']}")
        entries.append({**e, "config_path": cfg})
    return entries


def build(
    corpus: Path, out: Path, extra: Path | None = EXTRA_SOURCES, extra_config_dir: Path | None = None
) -> int:
    """Write the catalogue under ``out`` from ``corpus`` plus the ``extra`` list; returns the entry count.

    ``extra`` (default :data:`EXTRA_SOURCES`; ``None`` or a missing file = corpus only) is read by
    :func:`load_extra_sources` with configs under ``extra_config_dir`` (default :data:`EXTRA_CONFIG_DIR`).
    Raises :class:`CatalogueBuildError` for a bad extra entry or a directory that is both in the corpus and
    in the extra list.
    """
    import yaml

    out.mkdir(parents=True, exist_ok=True)
    index: list[dict[str, Any]] = []
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
                "repo": src.get("repo"),
                "path": src.get("path"),
                "commit": src.get("commit"),
                "url": src.get("url"),
                "fidelity": fid.get("level"),
                "fidelity_note": fid.get("note"),
                "copied_from": f"/work/shared/corpus/models/{d.name} (facts.yaml)",
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
                "abridged config without quantization_config: weights estimate as unquantized bf16 unless "
                "--quantization says otherwise"
            )
        (dest / "entry.json").write_text(json.dumps(entry, indent=1, ensure_ascii=False) + "\n")
        index.append({"id": model_id, "dir": d.name, "variants": [v["id"] for v in entry["variants"]]})
    if extra is not None and extra.exists():
        corpus_dirs = {row["dir"] for row in index}
        for e in load_extra_sources(extra, extra_config_dir or EXTRA_CONFIG_DIR):
            if e["dir"] in corpus_dirs:
                raise CatalogueBuildError(f"{extra}: {e['id']} is already in the corpus ({e['dir']})")
            dest = out / e["dir"]
            dest.mkdir(exist_ok=True)
            shutil.copyfile(e["config_path"], dest / "config.json")
            src, fid = e["source"], e["fidelity"]
            params, wb = e.get("params") or {}, e.get("weight_bytes") or {}
            count, exact = parse_cited_params(params.get("value"))
            entry = {
                "id": e["id"],
                "described_as": e["id"],
                "source": {
                    "repo": src["repo"],
                    "path": src["path"],
                    "commit": src["commit"],
                    "url": src.get("url"),
                    "fidelity": fid["level"],
                    "fidelity_note": fid.get("note"),
                    "copied_from": f"{extra.name} (config bytes: fixtures/plan/models/{e['dir']}/config.json, "
                    f"sha256 {e['config_sha256']})",
                    "also_at_commits": list(src.get("also_at_commits") or []),
                },
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
            (dest / "entry.json").write_text(json.dumps(entry, indent=1, ensure_ascii=False) + "\n")
            index.append({"id": e["id"], "dir": e["dir"], "variants": [v["id"] for v in entry["variants"]]})
    header = (
        "# kvlint bundled model catalogue: id -> directory (config.json, entry.json) and variant ids.\n"
        "# Built by `python -m kvlint.models.build_catalogue` from /work/shared/corpus/models and\n"
        "# kvlint/models/extra_sources.yaml;\n"
        "# provenance of each config is in its entry.json (source repo, commit, fidelity).\n"
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
