#!/usr/bin/env python3
"""Developer tool: copy public config.json files into the catalogue's source lists (not used at runtime).

Each subcommand copies config bytes into ``fixtures/models/catalogue/<org>--<name>/`` and appends one entry
per model to a ``kvlint/models/sources/<list>.yaml`` file (source, sha256, licence, fidelity), which
``python -m kvlint.models.build_catalogue`` then verifies and bundles. Models already catalogued (any
source, compared case-insensitively) and configs kvlint cannot parse are skipped and reported.

  wheel  WHEEL --package P --version V --prefix DIR/ --licence L --list NAME [--also MIRROR REPO DIR/]
         every ``<org>--<name>_config.json`` (and ``_hf_quant_config.json``) under DIR in a downloaded wheel;
         with --also, a byte-identical file under DIR/ at HEAD of a fetched repository snapshot is recorded
         as ``source.also_at`` (repo, path, commit)
  git    MIRROR --repo OWNER/NAME --licence L --list NAME PATH=ID[@COMMIT] ...
         files of a fetched repository snapshot (``git show COMMIT:PATH``, default commit HEAD)
  preset MIRROR --repo OWNER/NAME --module PATH --licence L --list NAME KEY=ID ...
         dict literals of a Python module's ``MODEL_PRESETS`` (mlc-llm), written out as JSON
         (fidelity python_preset_converted)
  litgpt CONFIG_PY --wheel WHEEL --version V
         cited variants (sources/variants-litgpt.yaml, rewritten each run): a hub id that litgpt's ``config.py`` describes with the same
         architecture fields as a catalogued model whose stored config has those values becomes a variant of
         it (context length / rope differences as overrides, from litgpt's own values). CONFIG_PY is
         ``litgpt/config.py`` extracted from the downloaded wheel (imported: it is a data module).
  source-md
         write fixtures/models/catalogue/SOURCE.md from the source lists
  pystr  MIRROR --repo R --module PATH --var NAME --id ID --licence L --list NAME
         a config.json kept as a string literal in a Python module (fidelity serialized_to_dict)
  kaito  MIRROR
         cited variants (sources/variants-kaito.yaml) from a fetched kaito-project/kaito snapshot's
         presets/workspace/models/model_catalog.yaml (baseModel catalogued, listed values equal)
  pydict MIRROR --repo R --module PATH (--var NAME | --func NAME) --id ID --licence L --list NAME [--commit C]
         a config kept as a dict literal in a Python module, written in JSON spelling (``false``/``true``/``null``
         defined as Python names): the literal assigned to module-level NAME (--var), or the one dict literal
         inside function NAME (--func); written out as JSON (fidelity python_preset_converted)
  file   FILE --id ID --repo OWNER/NAME --path PATH --commit SHA --licence L --list NAME [--docstring FUNC]
         one file of a repository too large to fetch (or a commit the fetched snapshot lacks), saved from the
         search tool's read_file text; with --docstring, FILE is a Python module and the config is the JSON
         text of function FUNC's docstring
  page   FILE --id ID --repo ORG/NAME --url URL --revision REV --licence L --list NAME --fidelity-note TEXT
         a config transcribed from a huggingface.co file page (fidelity hf_page_transcription)
  convert CONFIG_PY --wheel WHEEL --version V --list NAME TARGET=TEMPLATE ...
         configs written from litgpt's values for TARGET on the key layout of the catalogued TEMPLATE
         (fidelity litgpt_dims_on_template). TEMPLATE's stored config must have litgpt's values for a
         litgpt model of the same structure (all litgpt fields but the sizes equal), e.g.
         google/gemma-7b=google/gemma-2b-it; TEMPLATE may also be FILE.json|REPO|PATH|COMMIT|LITGPT_ID for
         a public file outside the catalogue whose layout litgpt's LITGPT_ID describes (sizes not checked).
         TARGET=TEMPLATE@PRESET (with --keras KERAS_HUB_MIRROR) keeps a conversion only when its parameter count
         is within 0.05 % of that keras-hub preset's metadata.params (a *_text preset: without the vision tower).

Fidelity of verbatim files: ``verbatim_copy`` when the file has the keys transformers writes
(``architectures``, ``model_type``, ``transformers_version``), else ``curated_subset`` naming what is absent.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "models" / "catalogue"
SOURCES = ROOT / "kvlint" / "models" / "sources"
sys.path.insert(0, str(ROOT))

from kvlint.models.build_catalogue import VARIANTS, load_extra_sources, source_files  # noqa: E402
from kvlint.models.config import parse_config  # noqa: E402

HEADER = (
    "# kvlint catalogue source list (read by kvlint.models.build_catalogue; written by tools/catalogue_import.py).\n"
    "# Each entry names where its config.json was copied from (GitHub repo/path/commit, or PyPI package/version/\n"
    "# path inside the wheel), the source's licence, and the sha256 of the bytes kept in config_dir/<dir>/.\n"
)


def _known_ids(without_litgpt: bool = False) -> set[str]:
    """Ids (lower-case) the catalogue sources already name: the shared corpus and its VARIANTS, every source
    list (entries and their variants) and variants.yaml."""
    ids: set[str] = set()
    corpus = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "models"
    if corpus.is_dir():
        ids.update(p.name.replace("--", "/", 1).lower() for p in corpus.iterdir() if p.is_dir())
    for base, rows in VARIANTS.items():
        ids.add(base.lower())
        ids.update(v["id"].lower() for v in rows)
    for f in source_files():
        for e in load_extra_sources(f):
            ids.add(e["id"].lower())
            ids.update(v["id"].lower() for v in e.get("variants") or [])
    for vfile in sorted(SOURCES.glob("variants*.yaml")):
        if without_litgpt and vfile.name == "variants-litgpt.yaml":
            continue
        for rows in ((yaml.safe_load(vfile.read_text()) or {}).get("variants") or {}).values():
            ids.update(v["id"].lower() for v in rows or [])
    return ids


def classify(cfg: dict[str, Any]) -> tuple[str, str]:
    """``(fidelity level, note)`` of a verbatim JSON copy."""
    missing = [k for k in ("architectures", "model_type", "transformers_version") if k not in cfg]
    if not missing:
        return (
            "verbatim_copy",
            "Copied byte-for-byte; has the keys transformers writes (values believed original).",
        )
    return "curated_subset", (
        f"Copied byte-for-byte, but the file lacks {', '.join(missing)}: the vendoring project may have edited "
        "or trimmed the HF config (architecture values kept as found)."
    )


def _parses(model_id: str, cfg: dict[str, Any], quant: dict[str, Any] | None) -> str | None:
    try:
        parse_config(cfg, model_id=model_id, source="import", quant_config_extra=quant)
    except Exception as e:  # noqa: BLE001 - report and skip
        return f"{type(e).__name__}: {e}"
    return None


def _load_list(name: str) -> tuple[Path, dict[str, Any]]:
    path = SOURCES / f"{name}.yaml"
    if path.exists():
        doc = yaml.safe_load(path.read_text()) or {}
    else:
        doc = {"config_dir": str(FIXTURES.relative_to(ROOT)), "entries": []}
    doc.setdefault("entries", [])
    return path, doc


def _save_list(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + yaml.safe_dump(doc, sort_keys=False, width=110, allow_unicode=True))


def add(
    doc: dict[str, Any],
    known: set[str],
    model_id: str,
    config_bytes: bytes,
    quant_bytes: bytes | None,
    source: dict[str, Any],
    fidelity: tuple[str, str] | None = None,
    notes: list[str] | None = None,
) -> str:
    """Append one entry (writing its fixture files); returns 'added' or why it was skipped."""
    if model_id.lower() in known:
        return "skipped: already catalogued"
    if len(config_bytes) + len(quant_bytes or b"") > 1_000_000:
        return "skipped: over 1 MB (per-layer quantization lists); left out to keep the package small"
    cfg = json.loads(config_bytes)
    quant = json.loads(quant_bytes) if quant_bytes else None
    err = _parses(model_id, cfg, quant)
    if err:
        return f"skipped: kvlint cannot parse it ({err[:120]})"
    d = model_id.replace("/", "--", 1)
    dest = FIXTURES / d
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "config.json").write_bytes(config_bytes)
    level, note = fidelity or classify(cfg)
    entry: dict[str, Any] = {
        "id": model_id,
        "dir": d,
        "config_sha256": hashlib.sha256(config_bytes).hexdigest(),
    }
    if quant_bytes:
        (dest / "hf_quant_config.json").write_bytes(quant_bytes)
        entry["hf_quant_config_sha256"] = hashlib.sha256(quant_bytes).hexdigest()
    entry.update(
        {
            "source": source,
            "fidelity": {"level": level, "note": note},
            "params": {"value": None, "kind": None, "citation": None},
            "weight_bytes": {"value": None, "citation": None},
            "notes": list(notes or []),
            "variants": [],
        }
    )
    doc["entries"].append(entry)
    known.add(model_id.lower())
    return "added"


def cmd_wheel(a: argparse.Namespace) -> None:
    path, doc = _load_list(a.list)
    known = _known_ids()
    wheel = Path(a.wheel)
    wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with zipfile.ZipFile(wheel) as z:
        names = sorted(n for n in z.namelist() if n.startswith(a.prefix) and n.endswith("_config.json"))
        for n in names:
            base = n[len(a.prefix) :]
            if base.endswith("_hf_quant_config.json") or "--" not in base:
                continue
            model_id = base[: -len("_config.json")].replace("--", "/", 1)
            qname = n[: -len("_config.json")] + "_hf_quant_config.json"
            quant = z.read(qname) if qname in names else None
            src = {
                "kind": "pypi",
                "package": a.package,
                "version": a.version,
                "path": n,
                "wheel": wheel.name,
                "wheel_sha256": wheel_sha,
                "url": f"https://pypi.org/project/{a.package}/{a.version}/",
                "licence": a.licence,
            }
            if a.also:
                mirror, repo, gdir = a.also
                gpath = gdir + base
                head = _git(mirror, "rev-parse", "HEAD").decode().strip()
                try:
                    same = _git(mirror, "show", f"{head}:{gpath}") == z.read(n)
                except subprocess.CalledProcessError:
                    same = False
                if same:
                    src["also_at"] = {"repo": repo, "path": gpath, "commit": head}
            print(model_id, add(doc, known, model_id, z.read(n), quant, src))
    _save_list(path, doc)


def _git(mirror: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True).stdout


def cmd_git(a: argparse.Namespace) -> None:
    path, doc = _load_list(a.list)
    known = _known_ids()
    head = _git(a.mirror, "rev-parse", "HEAD").decode().strip()
    for spec in a.files:
        fpath, rest = spec.split("=", 1)
        model_id, _, commit = rest.partition("@")
        commit = _git(a.mirror, "rev-parse", commit or head).decode().strip()
        data = _git(a.mirror, "show", f"{commit}:{fpath}")
        if fpath.endswith("/config.json"):  # <model dir>/config.json beside <model dir>/hf_quant_config.json
            qpath: str | None = fpath[: -len("config.json")] + "hf_quant_config.json"
        elif fpath.endswith("_config.json"):  # aiconfigurator's <org>--<name>_config.json naming
            qpath = fpath[: -len("_config.json")] + "_hf_quant_config.json"
        else:
            qpath = None
        try:
            quant = _git(a.mirror, "show", f"{commit}:{qpath}") if qpath else None
        except subprocess.CalledProcessError:
            quant = None
        src = {
            "kind": "github",
            "repo": a.repo,
            "path": fpath,
            "commit": commit,
            "url": f"https://github.com/{a.repo}/blob/{commit}/{fpath}",
            "licence": a.licence,
        }
        print(model_id, add(doc, known, model_id, data, quant, src, notes=list(a.note or [])))
    _save_list(path, doc)


def cmd_preset(a: argparse.Namespace) -> None:
    path, doc = _load_list(a.list)
    known = _known_ids()
    commit = _git(a.mirror, "rev-parse", a.commit or "HEAD").decode().strip()
    tree = ast.parse(_git(a.mirror, "show", f"{commit}:{a.module}").decode())
    presets: dict[str, Any] = {}
    for node in ast.walk(tree):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "MODEL_PRESETS" and isinstance(node.value, ast.Dict):
            presets = ast.literal_eval(node.value)
    for spec in a.keys:
        key, model_id = spec.split("=", 1)
        data = (json.dumps(presets[key], indent=2) + "\n").encode()
        src = {
            "kind": "github",
            "repo": a.repo,
            "path": f'{a.module} (MODEL_PRESETS["{key}"])',
            "commit": commit,
            "url": f"https://github.com/{a.repo}/blob/{commit}/{a.module}",
            "licence": a.licence,
        }
        fid = (
            "python_preset_converted",
            f'mlc-llm MODEL_PRESETS["{key}"] Python dict (an HF config.json as mlc-llm vendored it) written out as '
            "JSON here; the hub id is the one the preset's _name_or_path or key names (see notes).",
        )
        print(model_id, add(doc, known, model_id, data, None, src, fid, notes=list(a.note or [])))
    _save_list(path, doc)


#: litgpt Config fields that may differ between a variant and its base (carried as overrides) or that only
#: name the checkpoint.
_LITGPT_FREE = {"name", "hf_config", "block_size", "rope_base", "rope_adjustments"}


def _litgpt_signature(cfg: Any) -> tuple[tuple[str, str], ...]:
    import dataclasses

    return tuple(sorted((k, repr(v)) for k, v in dataclasses.asdict(cfg).items() if k not in _LITGPT_FREE))


def _anchor_matches(model_id: str, lc: Any) -> str | None:
    """None when the catalogued config of ``model_id`` has litgpt's values for it, else what differs."""
    from kvlint.models import catalogue

    e = catalogue.lookup(model_id)
    assert e is not None
    cfg, quant = catalogue.load_config(e)
    spec = parse_config(cfg, model_id=model_id, source="anchor", quant_config_extra=quant)
    want = {
        "num_layers": lc.n_layer,
        "hidden_size": lc.n_embd,
        "num_attention_heads": lc.n_head,
        "num_kv_heads": lc.n_query_groups,
        "head_size": lc.head_size,
        "vocab_size": lc.padded_vocab_size,
        "intermediate_size": lc.moe_intermediate_size if lc.n_expert else lc.intermediate_size,
        "num_experts": lc.n_expert,
    }
    if lc.n_expert:
        want["moe_intermediate_size"] = want.pop("intermediate_size")
    got = {k: getattr(spec, k) for k in want}
    bad = {k: (got[k], v) for k, v in want.items() if got[k] != v}
    if spec.quant_method:
        bad["quant_method"] = (spec.quant_method, None)
    return None if not bad else ", ".join(f"{k} {g} != litgpt {w}" for k, (g, w) in bad.items())


def cmd_litgpt(a: argparse.Namespace) -> None:
    import importlib.util

    from kvlint.models import catalogue

    spec = importlib.util.spec_from_file_location("litgpt_config_data", a.config_py)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    wheel = Path(a.wheel)
    wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    lit: dict[str, Any] = {}
    for c in mod.configs:
        hf = c.get("hf_config") or {}
        if hf.get("org") and hf.get("name"):
            lit[f"{hf['org']}/{hf['name']}"] = mod.Config(**c)
    known = _known_ids(without_litgpt=True)
    anchors: dict[tuple[tuple[str, str], ...], list[tuple[str, str, Any]]] = {}
    for hid, lc in lit.items():
        e = catalogue.lookup(hid)
        if e is None or e.overrides:  # a variant without overrides uses its base's stored config as is
            continue
        why_not = _anchor_matches(e.id, lc)
        if why_not:
            print(f"anchor {hid}: catalogued config differs from litgpt ({why_not}); not used")
            continue
        anchors.setdefault(_litgpt_signature(lc), []).append((e.id, e.base_id, lc))
    vpath = SOURCES / "variants-litgpt.yaml"  # written afresh each run
    rows: dict[str, list[dict[str, Any]]] = {}
    vdoc = {"variants": rows}
    src = f"litgpt {a.version} (PyPI {wheel.name}, sha256 {wheel_sha[:16]}..., Apache-2.0) litgpt/config.py"
    for hid, lc in sorted(lit.items(), key=lambda kv: kv[0].lower()):
        if hid.lower() in known:
            continue
        cands = anchors.get(_litgpt_signature(lc)) or []
        if not cands:
            continue
        org = hid.split("/")[0].lower()

        def n_diff(t: tuple[str, str, Any], lc: Any = lc) -> int:
            return sum(
                getattr(lc, f) != getattr(t[2], f) for f in ("rope_adjustments", "block_size", "rope_base")
            )

        anchor_id, base_id, blc = sorted(
            cands, key=lambda t: (n_diff(t), t[0].split("/")[0].lower() != org, t[0] != t[1], t[0].lower())
        )[0]
        overrides: dict[str, Any] = {}
        notes = []
        if lc.block_size != blc.block_size:
            overrides["max_position_embeddings"] = lc.block_size
            notes.append(f"max_position_embeddings {lc.block_size} (litgpt block_size of {hid})")
        if lc.rope_base != blc.rope_base:
            overrides["rope_theta"] = lc.rope_base
            notes.append(f"rope_theta {lc.rope_base} (litgpt rope_base)")
        if lc.rope_adjustments != blc.rope_adjustments:
            if lc.rope_adjustments is None:
                overrides["rope_scaling"] = None
                notes.append("no rope scaling (litgpt lists no rope_adjustments for it)")
            else:
                print(f"{hid}: rope_adjustments differ from {base_id}; not listed")
                continue
        dims = (
            f"{lc.n_layer} layers, hidden {lc.n_embd}, {lc.n_head} heads, {lc.n_query_groups} KV groups, head size "
            f"{lc.head_size}, intermediate {lc.intermediate_size}, vocab {lc.padded_vocab_size}"
            + (f", {lc.n_expert} experts" if lc.n_expert else "")
        )
        why = (
            f"{src} describes {hid} (config name '{lc.name}') and {anchor_id} (config name '{blc.name}') with the "
            f"same architecture fields ({dims}), and the stored config of {base_id}"
            + (f" (which {anchor_id} uses)" if anchor_id != base_id else "")
            + " has those values"
            + (f"; differs only in {'; '.join(notes)}" if notes else "")
        )
        row: dict[str, Any] = {"id": hid, "why": why}
        if overrides:
            row["overrides"] = overrides
        rows.setdefault(base_id, []).append(row)
        known.add(hid.lower())
        print(f"{hid} -> variant of {base_id}" + (f" (overrides {overrides})" if overrides else ""))
    header = (
        "# Cited variants of catalogued models (read by kvlint.models.build_catalogue): base id -> hub ids whose\n"
        "# architecture equals the base's, each with the cited reason (why) and the config values that differ\n"
        "# (overrides). Written by tools/catalogue_import.py (litgpt) or by hand with a citation.\n"
    )
    vpath.write_text(header + yaml.safe_dump(vdoc, sort_keys=False, width=110, allow_unicode=True))


#: litgpt size fields -> the config.json keys they set (first key present in the template wins).
_SIZE_KEYS: dict[str, tuple[str, ...]] = {
    "n_layer": ("num_hidden_layers", "n_layer"),
    "n_embd": ("hidden_size",),
    "n_head": ("num_attention_heads", "n_head"),
    "n_query_groups": ("num_key_value_heads", "num_kv_heads"),
    "head_size": ("head_dim",),
    "intermediate_size": ("intermediate_size",),
    "moe_intermediate_size": ("moe_intermediate_size",),
    "n_expert": ("num_local_experts", "num_experts"),
    "n_expert_per_token": ("num_experts_per_tok",),
    "padded_vocab_size": ("vocab_size",),
    "block_size": ("max_position_embeddings",),
    "rope_base": ("rope_theta",),
    "attention_scores_scalar": ("query_pre_attn_scalar",),
    "sliding_window_size": ("sliding_window", "sliding_window_size"),
}
#: the litgpt field whose value replaces every one of its keys the template has, None included (no window): the
#: converted entry's window is its own, never the template's.
_OWN_WINDOW = "sliding_window_size"
#: size fields that need no key when the template has none and the value follows from others.
_IMPLIED = {
    "head_size": lambda c: c.n_embd // c.n_head,
    "intermediate_size": lambda c: 4 * c.n_embd,
    "block_size": None,  # no max_position_embeddings key in the template (falcon): the model's default applies
    "rope_base": None,  # likewise rope_theta
}


def _structure(cfg: Any) -> dict[str, Any]:
    import dataclasses

    skip = set(_SIZE_KEYS) | {"name", "hf_config", "vocab_size", "padding_multiple"}
    skip |= {"sliding_window_indices", "rope_indices"}  # per-layer lists: compared as layer patterns
    out = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in skip}
    pairs = zip(cfg.sliding_window_indices or [], cfg.rope_indices or [], strict=False)
    out["_window_rope_pairs"] = sorted(set(pairs))
    return out


def _windows_follow(indices: list[int] | None, n_layer: int, pattern: Any) -> bool:
    if not indices:
        return True
    if not isinstance(pattern, int) or pattern <= 0 or len(indices) != n_layer:
        return False
    return all(bool(v) == ((i + 1) % pattern != 0) for i, v in enumerate(indices))


def convert_one(target: Any, tmpl_lc: Any, template_cfg: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """config.json for litgpt Config ``target`` on ``template_cfg``'s layout, or (None, why not)."""
    if _structure(target) != _structure(tmpl_lc):
        diff = sorted(k for k, v in _structure(target).items() if _structure(tmpl_lc).get(k) != v)
        return None, f"litgpt structure differs from the template's ({', '.join(diff)})"
    cfg = json.loads(json.dumps(template_cfg))
    t = cfg["text_config"] if isinstance(cfg.get("text_config"), dict) else cfg
    for drop in ("_name_or_path", "quantization_config"):
        cfg.pop(drop, None)
        t.pop(drop, None)
    for field_name, keys in _SIZE_KEYS.items():
        val = getattr(target, field_name)
        key = next((k for k in keys if k in t), None)
        if field_name == _OWN_WINDOW:
            # litgpt's sliding_window_size is the target's window (None: it has none, as Mistral 7B v0.2, whose
            # config.json has sliding_window null); a template's window (v0.1's 4096) is never carried over
            if val is not None and key is None:
                return None, f"the template has no key for litgpt {field_name}={val}"
            for k in keys:
                if k in t:
                    t[k] = val
            continue
        if key is None and field_name in ("n_expert", "n_expert_per_token") and not val:
            continue
        if key is None:
            implied = _IMPLIED.get(field_name, "no")
            if val is None or (callable(implied) and implied(target) == val) or implied is None:
                continue
            return None, f"the template has no key for litgpt {field_name}={val}"
        if val is None or (field_name in ("n_expert", "n_expert_per_token") and not val):
            continue
        for k in keys:
            if k in t:
                t[k] = val
    if target.rope_adjustments != tmpl_lc.rope_adjustments:
        return None, "rope_adjustments differ from the template's"
    if target.sliding_window_indices is not None:
        if "layer_types" in t:
            t["layer_types"] = [
                "sliding_attention" if v else "full_attention" for v in target.sliding_window_indices
            ]
        elif not _windows_follow(
            target.sliding_window_indices, target.n_layer, t.get("sliding_window_pattern")
        ):
            return None, "sliding-window layer pattern not expressible with the template's keys"
    return cfg, "ok"


def _keras_counts(mirror: str) -> dict[str, tuple[int, str]]:
    """keras-hub preset name -> (metadata.params, 'keras-team/keras-hub@commit:path') from a fetched snapshot."""
    import re

    commit = _git(mirror, "rev-parse", "HEAD").decode().strip()
    files = _git(mirror, "ls-tree", "-r", "--name-only", commit, "keras_hub/src/models").decode().split()
    out: dict[str, tuple[int, str]] = {}
    for f in files:
        if not f.endswith("_presets.py"):
            continue
        text = _git(mirror, "show", f"{commit}:{f}").decode()
        for m in re.finditer(r'"([a-z0-9_.]+)": \{\s*"metadata": \{(.*?)"params": (\d+)', text, re.S):
            out[m.group(1)] = (int(m.group(3)), f"keras-team/keras-hub@{commit[:12]}:{f}")
    return out


def cmd_convert(a: argparse.Namespace) -> None:
    import importlib.util

    from kvlint.models import catalogue

    spec = importlib.util.spec_from_file_location("litgpt_config_data", a.config_py)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    wheel = Path(a.wheel)
    wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    lit = {}
    for c in mod.configs:
        hf = c.get("hf_config") or {}
        if hf.get("org") and hf.get("name"):
            lit[f"{hf['org']}/{hf['name']}".lower()] = mod.Config(**c)
    path, doc = _load_list(a.list)
    known = _known_ids()
    keras_counts = _keras_counts(a.keras) if a.keras else {}
    for spec_s in a.pairs:
        target_id, tmpl = spec_s.split("=", 1)
        tmpl, _, preset = tmpl.partition("@")
        lc = lit.get(target_id.lower())
        if lc is None:
            print(target_id, "skipped: not in litgpt")
            continue
        if "|" in tmpl:
            fpath, repo, tpath, commit, lit_id = tmpl.split("|")
            template_cfg = json.loads(Path(fpath).read_text())
            tmpl_lc = lit[lit_id.lower()]
            tmpl_cite = (
                f"{repo}@{commit}:{tpath} (a config of litgpt's {lit_id} layout; only its keys are used, its sizes "
                "are replaced)"
            )
        else:
            e = catalogue.lookup(tmpl)
            tmpl_lc = lit.get(tmpl.lower())
            if e is None or tmpl_lc is None:
                print(target_id, f"skipped: template {tmpl} not catalogued or not in litgpt")
                continue
            bad = _anchor_matches(tmpl, tmpl_lc)
            if bad:
                print(target_id, f"skipped: template {tmpl} differs from litgpt ({bad})")
                continue
            template_cfg, _ = catalogue.load_config(e)
            tmpl_cite = f"the catalogued {tmpl} ({e.source_citation})"
        cfg, why = convert_one(lc, tmpl_lc, template_cfg)
        if cfg is None:
            print(target_id, "skipped:", why)
            continue
        data = (json.dumps(cfg, indent=2) + "\n").encode()
        check = None
        if preset:
            from kvlint.models.weights import param_breakdown

            parts = param_breakdown(parse_config(cfg, model_id=target_id, source="convert"))
            ours = sum(parts.values()) - (parts["vision"] if preset.endswith("_text") else 0)
            cited, where = keras_counts[preset]
            if abs(ours - cited) > 0.0005 * cited:
                print(
                    target_id, f"skipped: parameter count {ours} vs keras-hub {preset} {cited} (over 0.05 %)"
                )
                continue
            check = (
                f"parameter count from this config{' without the vision tower' if preset.endswith('_text') else ''} "
                f"{ours:,} vs keras-hub preset '{preset}' {cited:,} ({where}): within 0.05 %"
            )
        elif not a.unchecked_ok:
            print(target_id, "skipped: no keras-hub preset to check the parameter count against (@PRESET)")
            continue
        src = {
            "kind": "pypi",
            "package": "litgpt",
            "version": a.version,
            "path": f"litgpt/config.py (Config '{lc.name}', hf_config {target_id})",
            "wheel": wheel.name,
            "wheel_sha256": wheel_sha,
            "url": f"https://pypi.org/project/litgpt/{a.version}/",
            "licence": "Apache-2.0 (wheel METADATA, LICENSE.md)",
            "template": tmpl_cite,
        }
        sizes = {f: getattr(lc, f) for f in _SIZE_KEYS if getattr(lc, f) is not None}
        fid = (
            "litgpt_dims_on_template",
            "Written by tools/catalogue_import.py: the sizes litgpt's config.py gives for this checkpoint "
            f"({json.dumps(sizes)}) set on the key layout of {tmpl_cite}, whose litgpt description has the same "
            "structure (every litgpt field but the sizes equal). Not an HF file: keys litgpt does not model "
            "(token ids, dtype, vision encoder) are the template's.",
        )
        notes = [
            "litgpt describes the language model only: an image/audio encoder the checkpoint may have is "
            "whatever the template carries (none for a text-only template), so its weights may be missing",
        ]
        if check:
            notes.append("checked: " + check)
        res = add(doc, known, target_id, data, None, src, fid, notes)
        if res == "added":
            doc["entries"][-1]["litgpt_sizes"] = sizes
        print(target_id, res)
    _save_list(path, doc)


def source_cell(src: dict[str, Any]) -> str:
    """How SOURCE.md names an entry's source (also what tests/test_catalogue.py looks for)."""
    kind = src.get("kind", "github")
    if kind == "pypi":
        return f"PyPI {src['package']}=={src['version']}: `{src['path']}`"
    if kind == "hf_page":
        return f"{src['url']} (revision {src['revision']})"
    return f"{src['repo']}@{src['commit']}: `{src['path']}`"


def cmd_source_md(a: argparse.Namespace) -> None:
    """Write fixtures/models/catalogue/SOURCE.md: every config kept there, its source, licence and fidelity."""
    lines = [
        "# Model configs of the bundled catalogue (kvlint/models/sources/*.yaml)",
        "",
        "Each directory holds the `config.json` (and `hf_quant_config.json` where the source has one) of one model,",
        "copied from the public source below; `kvlint/models/sources/<list>.yaml` records the same source with the",
        "sha256 of the bytes, and `python -m kvlint.models.build_catalogue` refuses a file whose sha256 differs.",
        "How each kind of source was read and what each fidelity level means: docs/models.md.",
        "Generated by `python tools/catalogue_import.py source-md`.",
        "",
        "| model id | source | licence of the source | fidelity |",
        "|---|---|---|---|",
    ]
    for f in source_files():
        for e in load_extra_sources(f):
            if e["config_path"].parent.parent != FIXTURES:
                continue
            src = e["source"]
            lines.append(
                f"| {e['id']} | {source_cell(src)} | {src['licence']} | {e['fidelity']['level']} ({f.name}) |"
            )
    (FIXTURES / "SOURCE.md").write_text("\n".join(lines) + "\n")
    print(len(lines) - 10, "rows")


def cmd_pystr(a: argparse.Namespace) -> None:
    """A config.json kept as a string literal in a Python module (``NAME = r\'\'\'{...}\'\'\'``)."""
    path, doc = _load_list(a.list)
    known = _known_ids()
    commit = _git(a.mirror, "rev-parse", "HEAD").decode().strip()
    tree = ast.parse(_git(a.mirror, "show", f"{commit}:{a.module}").decode())
    text = next(
        n.value.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == a.var for t in n.targets)
        and isinstance(n.value, ast.Constant)
    )
    src = {
        "kind": "github",
        "repo": a.repo,
        "path": f"{a.module} ({a.var})",
        "commit": commit,
        "url": f"https://github.com/{a.repo}/blob/{commit}/{a.module}",
        "licence": a.licence,
    }
    fid = (
        "serialized_to_dict",
        f"The JSON text of the string {a.var} in {a.module} (a transformers config serialised with its "
        "_name_or_path), written out unchanged.",
    )
    print(a.id, add(doc, known, a.id, text.encode(), None, src, fid, notes=list(a.note or [])))
    _save_list(path, doc)


class _JsonNames(ast.NodeTransformer):
    """``false``/``true``/``null`` (names a module defines so that pasted JSON is Python) as constants."""

    VALUES = {"false": False, "true": True, "null": None}

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.VALUES:
            return ast.copy_location(ast.Constant(self.VALUES[node.id]), node)
        return node


def cmd_pydict(a: argparse.Namespace) -> None:
    """A config kept as a dict literal in a Python module (JSON spelling), written out as JSON."""
    path, doc = _load_list(a.list)
    known = _known_ids()
    commit = _git(a.mirror, "rev-parse", a.commit or "HEAD").decode().strip()
    tree = ast.parse(_git(a.mirror, "show", f"{commit}:{a.module}").decode())
    node: ast.Dict | None = None
    if a.var:
        for n in tree.body:
            if (
                isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == a.var for t in n.targets)
                and isinstance(n.value, ast.Dict)
            ):
                node = n.value
        where = a.var
    else:
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == a.func)
        inner = _nested_dicts(fn)
        dicts = [n for n in ast.walk(fn) if isinstance(n, ast.Dict) and n not in inner]
        if len(dicts) != 1:
            raise SystemExit(f"{a.func}: {len(dicts)} top-level dict literals, expected 1")
        node = dicts[0]
        where = f"{a.func}()"
    if node is None:
        raise SystemExit(f"{a.module}@{commit}: no dict literal assigned to {a.var}")
    value = ast.literal_eval(_JsonNames().visit(node))
    data = (json.dumps(value, indent=2) + "\n").encode()
    src = {
        "kind": "github",
        "repo": a.repo,
        "path": f"{a.module} ({where})",
        "commit": commit,
        "url": f"https://github.com/{a.repo}/blob/{commit}/{a.module}",
        "licence": a.licence,
    }
    fid = (
        "python_preset_converted",
        f"The dict literal of {where} in {a.module} (an HF config.json as {a.repo} vendored it, in JSON spelling) "
        "written out as JSON here; keys and values as found.",
    )
    print(a.id, add(doc, known, a.id, data, None, src, fid, notes=list(a.note or [])))
    _save_list(path, doc)


def _nested_dicts(root: ast.AST) -> set[ast.Dict]:
    """Dict literals that are values inside another dict literal under ``root``."""
    inner: set[ast.Dict] = set()
    for n in ast.walk(root):
        if isinstance(n, ast.Dict):
            for child in ast.walk(n):
                if child is not n and isinstance(child, ast.Dict):
                    inner.add(child)
    return inner


def cmd_kaito(a: argparse.Namespace) -> None:
    """Cited variants from KAITO's model catalogue (sources/variants-kaito.yaml, rewritten each run)."""
    from kvlint.models import catalogue

    commit = _git(a.mirror, "rev-parse", "HEAD").decode().strip()
    rel = "presets/workspace/models/model_catalog.yaml"
    cat = yaml.safe_load(_git(a.mirror, "show", f"{commit}:{rel}"))
    known = {i for i in _known_ids() if i}
    kpath = SOURCES / "variants-kaito.yaml"
    if kpath.exists():  # rewritten: its own ids do not count as known
        for rows in (yaml.safe_load(kpath.read_text()).get("variants") or {}).values():
            known -= {v["id"].lower() for v in rows}
    rows: dict[str, list[dict[str, Any]]] = {}
    where = f"kaito-project/kaito@{commit[:12]}:{rel}"
    for m in cat["models"]:
        mid = m["name"]
        this = catalogue.lookup(mid)
        if this is not None and not this.overrides:
            tcfg, tq = catalogue.load_config(this)
            ts = parse_config(tcfg, model_id=mid, source="kaito", quant_config_extra=tq)
            same = (m["hiddenSize"], m["numHiddenLayers"], m["numAttentionHeads"]) == (
                ts.hidden_size,
                ts.num_layers,
                ts.num_attention_heads,
            ) and (ts.is_mla or m["numKeyValueHeads"] == ts.num_kv_heads)
            if not same:
                print(mid, "reverse link skipped: KAITO's values differ from the stored config")
                this = None
        if this is not None and not this.overrides:
            # the reverse link: a catalogued model's named base (it was fine-tuned from that checkpoint)
            for b in m.get("baseModel") or []:
                if b.lower() in known:
                    continue
                why = (
                    f"{where} (Apache-2.0, generated there from Hugging Face metadata) names {b} as the baseModel "
                    f"of {mid}, i.e. {mid} was fine-tuned from {b}: the same architecture, whose values KAITO lists "
                    f"for {mid} (architecture {m['architectures'][0]}, hiddenSize {m['hiddenSize']}, numHiddenLayers "
                    f"{m['numHiddenLayers']}, numAttentionHeads {m['numAttentionHeads']}, numKeyValueHeads "
                    f"{m['numKeyValueHeads']}) and this stored config has"
                )
                rows.setdefault(this.base_id, []).append({"id": b, "why": why})
                known.add(b.lower())
                print(b, "-> variant of", this.base_id, "(baseModel of", mid + ")")
        if mid.lower() in known:
            continue
        base = next((catalogue.lookup(b) for b in m.get("baseModel") or [] if catalogue.lookup(b)), None)
        if base is None:
            continue
        cfg, quant = catalogue.load_config(base)
        spec = parse_config(cfg, model_id=base.id, source="kaito", quant_config_extra=quant)
        listed = {
            "architecture": (m["architectures"][0], (cfg.get("architectures") or [None])[0]),
            "hiddenSize": (m["hiddenSize"], spec.hidden_size),
            "numHiddenLayers": (m["numHiddenLayers"], spec.num_layers),
            "numAttentionHeads": (m["numAttentionHeads"], spec.num_attention_heads),
            "numKeyValueHeads": (m["numKeyValueHeads"], spec.num_kv_heads),
        }
        if m.get("headDim"):
            listed["headDim"] = (m["headDim"], spec.head_size)
        bad = [k for k, (want, got) in listed.items() if want != got]
        if bad:
            print(mid, f"skipped: KAITO's {', '.join(bad)} differ from {base.id}")
            continue
        overrides: dict[str, Any] = {}
        diffs = []
        if m.get("modelTokenLimit") and m["modelTokenLimit"] != spec.max_position_embeddings:
            overrides["max_position_embeddings"] = m["modelTokenLimit"]
            diffs.append(f"modelTokenLimit {m['modelTokenLimit']}")
        qm = str(m.get("quantMethod") or "").lower()
        if qm and qm != (spec.quant_method or ""):
            if spec.quant_method or qm not in ("awq", "gptq", "fp8"):
                print(mid, f"skipped: quantization {qm} not expressible over {base.id}")
                continue
            qc: dict[str, Any] = {"quant_method": qm}
            if m.get("quantBits"):
                qc["bits"] = m["quantBits"]
            overrides["quantization_config"] = qc
            diffs.append(
                f"quantMethod {qm}" + (f", quantBits {m['quantBits']}" if m.get("quantBits") else "")
            )
        vals = ", ".join(f"{k} {w}" for k, (w, _) in listed.items())
        why = (
            f"{where} (Apache-2.0, generated there from the Hugging Face config.json) gives {mid} baseModel "
            f"{', '.join(m.get('baseModel') or [])} and {vals}, equal to the stored config of {base.base_id}"
            + (f"; differs in {'; '.join(diffs)} (set as overrides)" if diffs else "")
            + (
                "; KAITO records no group size: the weight estimate takes group 128"
                if qm in ("awq", "gptq") and "quantization_config" in overrides
                else ""
            )
        )
        row: dict[str, Any] = {"id": mid, "why": why}
        if overrides:
            row["overrides"] = overrides
        rows.setdefault(base.base_id, []).append(row)
        print(mid, "-> variant of", base.base_id, overrides or "")
    header = (
        "# Cited variants from KAITO's model catalogue (read by kvlint.models.build_catalogue; rewritten by\n"
        "# tools/catalogue_import.py kaito): a model whose KAITO entry names a catalogued baseModel and lists that\n"
        "# model's architecture values; token limit and quantization differences as overrides.\n"
    )
    kpath.write_text(
        header + yaml.safe_dump({"variants": rows}, sort_keys=False, width=110, allow_unicode=True)
    )


def cmd_file(a: argparse.Namespace) -> None:
    """A config.json of a GitHub repository read as one file (the search tool's read_file text, whose length
    equals the stored total_chars), for repositories too large to fetch whole."""
    path, doc = _load_list(a.list)
    known = _known_ids()
    data = Path(a.file).read_bytes()
    src = {
        "kind": "github",
        "repo": a.repo,
        "path": a.path,
        "commit": a.commit,
        "url": f"https://github.com/{a.repo}/blob/{a.commit}/{a.path}",
        "licence": a.licence,
    }
    fid = None
    if a.docstring:
        # FILE is a Python module; the config is the JSON text of one function's docstring (the module's
        # own indentation of the docstring's first and last lines stripped, a final newline added).
        tree = ast.parse(data.decode())
        fn = next(
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == a.docstring
        )
        text = ast.get_docstring(fn, clean=False)
        if text is None:
            raise SystemExit(f"{a.path}: {a.docstring}() has no docstring")
        data = (text.strip() + "\n").encode()
        src["path"] = f"{a.path} (docstring of {a.docstring})"
        level, _ = classify(json.loads(data))
        fid = (
            level,
            f"The JSON text of the docstring of {a.docstring}() in {a.path} (the search tool's read_file text of "
            "the module, whose length equals the stored total_chars), with the docstring's surrounding whitespace "
            "stripped and a final newline added; keys, values and their layout as found.",
        )
    print(a.id, add(doc, known, a.id, data, None, src, fid, notes=list(a.note or [])))
    _save_list(path, doc)


def cmd_page(a: argparse.Namespace) -> None:
    """One config transcribed from a huggingface.co file page (as the search tool's docs corpus stores it)."""
    path, doc = _load_list(a.list)
    known = _known_ids()
    data = Path(a.file).read_bytes()
    src = {
        "kind": "hf_page",
        "repo": a.repo,
        "url": a.url,
        "revision": a.revision,
        "licence": a.licence,
        "retrieved_via": "text of the huggingface.co file page in the search tool's stored copy (docs corpus), "
        "transcribed key by key into JSON",
    }
    level = a.level or "hf_page_transcription"
    print(a.id, add(doc, known, a.id, data, None, src, (level, a.fidelity_note), notes=list(a.note or [])))
    _save_list(path, doc)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(required=True)
    w = sub.add_parser("wheel")
    w.add_argument("wheel")
    for k in ("--package", "--version", "--prefix", "--licence", "--list"):
        w.add_argument(k, required=True)
    w.add_argument("--also", nargs=3, metavar=("MIRROR", "REPO", "DIR"))
    w.set_defaults(fn=cmd_wheel)
    g = sub.add_parser("git")
    g.add_argument("mirror")
    for k in ("--repo", "--licence", "--list"):
        g.add_argument(k, required=True)
    g.add_argument("--note", action="append")
    g.add_argument("files", nargs="+")
    g.set_defaults(fn=cmd_git)
    m = sub.add_parser("preset")
    m.add_argument("mirror")
    for k in ("--repo", "--module", "--licence", "--list"):
        m.add_argument(k, required=True)
    m.add_argument("--note", action="append")
    m.add_argument("--commit")
    m.add_argument("keys", nargs="+")
    m.set_defaults(fn=cmd_preset)
    lg = sub.add_parser("litgpt")
    lg.add_argument("config_py")
    for k in ("--wheel", "--version"):
        lg.add_argument(k, required=True)
    lg.set_defaults(fn=cmd_litgpt)
    cv = sub.add_parser("convert")
    cv.add_argument("config_py")
    for k in ("--wheel", "--version", "--list"):
        cv.add_argument(k, required=True)
    cv.add_argument("--keras", help="fetched keras-team/keras-hub snapshot (TARGET=TEMPLATE@PRESET checks)")
    cv.add_argument("--unchecked-ok", action="store_true", help="accept conversions without @PRESET")
    cv.add_argument("pairs", nargs="+")
    cv.set_defaults(fn=cmd_convert)
    sm = sub.add_parser("source-md")
    sm.set_defaults(fn=cmd_source_md)
    ps = sub.add_parser("pystr")
    ps.add_argument("mirror")
    for k in ("--repo", "--module", "--var", "--id", "--licence", "--list"):
        ps.add_argument(k, required=True)
    ps.add_argument("--note", action="append")
    ps.set_defaults(fn=cmd_pystr)
    pd = sub.add_parser("pydict")
    pd.add_argument("mirror")
    for k in ("--repo", "--module", "--id", "--licence", "--list"):
        pd.add_argument(k, required=True)
    which = pd.add_mutually_exclusive_group(required=True)
    which.add_argument("--var")
    which.add_argument("--func")
    pd.add_argument("--commit")
    pd.add_argument("--note", action="append")
    pd.set_defaults(fn=cmd_pydict)
    kt = sub.add_parser("kaito")
    kt.add_argument("mirror")
    kt.set_defaults(fn=cmd_kaito)
    fl = sub.add_parser("file")
    fl.add_argument("file")
    for k in ("--id", "--repo", "--path", "--commit", "--licence", "--list"):
        fl.add_argument(k, required=True)
    fl.add_argument("--note", action="append")
    fl.add_argument(
        "--docstring", help="FILE is a Python module: take the JSON text of this function's docstring"
    )
    fl.set_defaults(fn=cmd_file)
    pg = sub.add_parser("page")
    pg.add_argument("file")
    for k in ("--id", "--repo", "--url", "--revision", "--licence", "--list", "--fidelity-note"):
        pg.add_argument(k, required=True)
    pg.add_argument("--level")
    pg.add_argument("--note", action="append")
    pg.set_defaults(fn=cmd_page)
    a = p.parse_args(argv)
    a.fn(a)


if __name__ == "__main__":
    main()
