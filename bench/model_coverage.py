#!/usr/bin/env python3
"""How many of the Hugging Face model ids named in real manifests resolve offline from the bundled catalogue.

Collects every workload's model from kvlint's own pipeline (``kvlint check --offline --no-config
--format json --fail-on never DIR...``): the model kvlint looked up (the report's ``model_id``: the
``kvlint.io/model`` annotation, the model an operator object names -- an OME runtime's ``--served-model-name``,
a KAITO preset's model, an InferenceService's ``storageUri`` --, else the command's argument), else the
command's argument (``model``). It keeps the public hub ids (``org/name``, not a path, not a template
placeholder, not a KAITO preset name), resolves each with ``resolve_model(id, allow_hub=False)`` and prints
how many resolve and how: ``catalogue`` (a stored config), ``variant`` (a cited variant of one),
``derived`` (a quantized build derived from its name, an assumption) or ``unresolved`` (with kvlint's
reason).

Usage: python bench/model_coverage.py [DIR ...] [--json] [--min PCT]
  DIR   manifest directories or files (default: ../shared/corpus/manifests beside the repository; give
        more, e.g. fixtures/collected, to measure another set: ids are pooled and counted once each)
  --min fail (exit 1) when fewer than PCT % of the hub ids resolve
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "manifests"
sys.path.insert(0, str(REPO))

#: ``org/name`` with the characters the Hub allows in repository ids (no path, no placeholder).
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def is_hub_id(model: Any) -> bool:
    """True for a public hub id ``org/name``; False for paths (``/models/x``, ``./x``, ``a/b/c``), template
    placeholders (``$(MODEL)``, ``{{ .Values.model }}``), ``kaito-preset:...`` names and empty values."""
    return isinstance(model, str) and bool(HUB_ID.match(model.strip())) and not model.startswith(".")


def workload_models(paths: list[str]) -> list[dict[str, Any]]:
    """Workloads (``file``, ``name``, ``model``, ``model_id``) of ``kvlint check`` over ``paths`` (JSON report)."""
    cmd = [sys.executable, "-m", "kvlint", "check", "--offline", "--no-config", "--format", "json"]
    cmd += ["--fail-on", "never", *paths]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    if out.returncode != 0 or not out.stdout.strip():
        raise SystemExit(f"kvlint check failed ({out.returncode}): {out.stderr.strip()[:500]}")
    report = json.loads(out.stdout)
    return [
        {"file": w.get("file"), "name": w.get("name"), "model": w.get("model"), "model_id": w.get("model_id")}
        for w in report.get("workloads", [])
    ]


def classify(model_id: str) -> tuple[str, str]:
    """``(status, detail)`` of one hub id resolved offline: catalogue / variant / derived / unresolved."""
    from kvlint.models import clear_cache, resolve_model
    from kvlint.types import ModelUnavailable

    clear_cache()
    try:
        spec = resolve_model(model_id, allow_hub=False)
    except ModelUnavailable as e:
        return "unresolved", str(e).split("; ", 1)[0]
    if "derived from name" in spec.source:
        return "derived", spec.source
    if spec.notes and " uses the config of " in spec.notes[0]:
        return "variant", spec.notes[0].split(":", 1)[0]
    return "catalogue", spec.source


def coverage(paths: list[str]) -> dict[str, Any]:
    """Per-id status and counts for the hub ids named in ``paths``' workloads."""
    ids: dict[str, list[str]] = {}
    for w in workload_models(paths):
        # the model kvlint looked up when that is a hub id (a runtime whose command says $(MODEL_PATH) but that
        # names its model, a KAITO preset), else the command's own argument
        m = w.get("model_id") if is_hub_id(w.get("model_id")) else w["model"]
        if is_hub_id(m):
            ids.setdefault(m.strip(), []).append(f"{w['file']} ({w['name']})")
    rows = []
    for mid in sorted(ids, key=str.lower):
        status, detail = classify(mid)
        rows.append({"id": mid, "status": status, "detail": detail, "workloads": ids[mid]})
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    resolved = sum(v for k, v in counts.items() if k != "unresolved")
    return {
        "paths": paths,
        "hub_ids": len(rows),
        "resolved": resolved,
        "percent": round(100.0 * resolved / len(rows), 1) if rows else 100.0,
        "counts": counts,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--min", type=float, default=None)
    a = ap.parse_args(argv)
    paths = a.paths or [str(DEFAULT_CORPUS)]
    res = coverage(paths)
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print(f"hub ids named in workloads of {', '.join(paths)}: {res['hub_ids']}")
        print(
            f"resolved offline: {res['resolved']} ({res['percent']} %)  "
            + ", ".join(f"{k} {v}" for k, v in sorted(res["counts"].items()))
        )
        for r in res["rows"]:
            print(f"  {r['status']:<10} {r['id']}")
        missing = [r for r in res["rows"] if r["status"] == "unresolved"]
        if missing:
            print("unresolved:")
            for r in missing:
                print(f"  {r['id']}: {r['detail'][:200]}  [{r['workloads'][0]}]")
    if a.min is not None and res["percent"] < a.min:
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
