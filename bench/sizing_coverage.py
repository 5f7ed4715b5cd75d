#!/usr/bin/env python3
"""How much of a set of real manifests kvlint sizes offline, with no configuration (issue 15's figures).

For each set (default: ../shared/corpus/manifests and fixtures/collected) it runs ``kvlint check --offline
--no-config --format json --fail-on never SET`` and prints:

* the serving containers with a memory plan or a fleet verdict (the workload entries of the JSON report with
  an ``engine`` and a ``plan`` or ``fleet``), and those sized with their multi-node leader;
* why the others were not sized (the report's ``summary.sizing``);
* the share of the public Hugging Face model ids named in the set that resolve offline
  (:mod:`bench.model_coverage`'s classification).

* the serving objects kvlint saw but did not read (the report's ``summary.sizing.not_read``: an unrendered
  template or values file naming an engine, a chart helm refused, an operator object whose engine settings
  kvlint does not read), which are not among the serving containers above.

With ``--list`` it also lists each serving container not sized, grouped by reason: its file and line, object,
container (and its role, leader or worker, in a multi-node group), the model kvlint looked up (the report's
``model_id``, with the command's argument when that differs), and the KV501/KV502/KV503 findings of
that object that say why (rule, severity, the first line of the message; each once); then each object not read,
grouped by reason, at the file and line ``--require-sizing`` names it (the run's ``kvlint: not read:`` lines).

Usage: python bench/sizing_coverage.py [SET ...] [--json] [--list]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from model_coverage import coverage  # noqa: E402

from kvlint.types import object_ref  # noqa: E402

DEFAULT_SETS = [REPO.parent / "shared" / "corpus" / "manifests", REPO / "fixtures" / "collected"]


def _by_object(diagnostics: list[dict[str, Any]]) -> dict[tuple[Any, Any], list[dict[str, Any]]]:
    """The KV501/KV502/KV503 findings of a report, by their ``(file, object)``, each list in report order (read
    once per set, not once per unsized container)."""
    out: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for d in diagnostics:
        if d["rule"] in ("KV501", "KV502", "KV503"):
            out.setdefault((d.get("file"), d.get("object")), []).append(d)
    return out


def _why(w: dict[str, Any], by_object: dict[tuple[Any, Any], list[dict[str, Any]]]) -> list[str]:
    """The KV501/KV502/KV503 findings of the unsized workload entry ``w`` (its file, its whole object reference
    ``Kind/namespace/name`` as the findings carry it, and its container or none; ``by_object``:
    :func:`_by_object`): rule, severity and the first line of the message, each once, in report order. A finding
    of another object of the same name (a ServingRuntime and a Deployment both called ``vllm``, one name in two
    namespaces) is not its."""
    ref = object_ref(w["kind"], w.get("namespace"), w["name"])
    out: list[str] = []
    for d in by_object.get((w["file"], ref), ()):
        if d.get("container") in (None, "", w["container"]):
            line = f"{d['rule']} {d['severity']}: {d['message'].splitlines()[0]}"
            if line not in out:
                out.append(line)
    return out


def _model_said(u: dict[str, Any]) -> str:
    """``model=ID`` of an unsized entry of :func:`sizing`: the model kvlint looked up (the report's ``model_id``:
    the annotation, an operator's named model, else the command's argument), with the command's argument beside
    it when that is another (``model=BAAI/bge-reranker-v2-m3 (command: $(MODEL_PATH))``); a runtime template whose
    model the service names says so rather than print the placeholder as if it were a model."""
    model, looked_up = u["model"], u.get("model_id")
    if looked_up is None:
        if model is None:
            return "model=none"
        return (
            f"model=the service's (command: {model})"
            if u["reason"] == "runtime template"
            else f"model={model}"
        )
    return f"model={looked_up}" + (f" (command: {model})" if model not in (None, looked_up) else "")


def sizing(path: Path) -> dict[str, Any]:
    """The sizing figures of one set (see the module docstring)."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kvlint",
            "check",
            "--offline",
            "--no-config",
            "--format",
            "json",
            "--fail-on",
            "never",
            # names each object not read on standard error (kvlint.cli: "kvlint: not read: WHERE: WHY (...)")
            "--require-sizing",
            str(path),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    report = json.loads(out.stdout)
    serving = [w for w in report["workloads"] if w.get("engine")]
    planned = sum(1 for w in serving if w.get("plan") or w.get("fleet"))
    models = coverage([str(path)])
    by_object = _by_object(report["diagnostics"])
    unsized = [
        {
            "reason": w["sizing"],
            "file": w["file"],
            "line": w["line"],
            "object": object_ref(w["kind"], w.get("namespace"), w["name"]),
            "container": w["container"],
            "role": w.get("role"),
            "model": w["model"],
            "model_id": w.get("model_id"),
            "why": _why(w, by_object),
        }
        for w in serving
        if w.get("sizing") not in ("plan", "fleet", "leader")
    ]
    unsized.sort(key=lambda u: (u["reason"], u["file"], u["line"] or 0))
    not_read = _not_read(out.stderr)
    return {
        "set": str(path),
        "serving": len(serving),
        "plan_or_fleet": planned,
        "plan_or_fleet_pct": round(100 * planned / len(serving), 1) if serving else 0.0,
        "summary": report["summary"]["sizing"],
        "hub_ids": models["hub_ids"],
        "hub_ids_resolved": models["resolved"],
        "hub_ids_pct": round(100 * models["resolved"] / models["hub_ids"], 1) if models["hub_ids"] else 0.0,
        "unsized": unsized,
        "not_read": not_read,
    }


_NOT_READ = "kvlint: not read: "
_REQUIRED = " (--require-sizing)"


def _not_read(stderr: str) -> list[dict[str, str]]:
    """The objects not read that a ``--require-sizing`` run names on standard error, one line each
    (``kvlint: not read: FILE:LINE: [OBJECT: ]REASON (--require-sizing)``, :mod:`kvlint.cli`): ``where`` (file,
    line and object) and ``reason``, sorted by reason then place."""
    rows = []
    for line in stderr.splitlines():
        if line.startswith(_NOT_READ) and line.endswith(_REQUIRED):
            where, _, reason = line[len(_NOT_READ) : -len(_REQUIRED)].rpartition(": ")
            rows.append({"where": where, "reason": reason})
    rows.sort(key=lambda r: (r["reason"], r["where"]))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", type=Path, default=DEFAULT_SETS)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--list", action="store_true", help="list each serving container not sized, with why")
    args = ap.parse_args(argv)
    rows = [sizing(p) for p in args.sets if p.exists()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        s = r["summary"]
        print(r["set"])
        print(
            f"  sized offline (plan or fleet verdict): {r['plan_or_fleet']} of {r['serving']} serving containers "
            f"({r['plan_or_fleet_pct']} %); with multi-node workers sized with their leader: {s['sized']} "
            f"({round(100 * s['sized'] / max(1, s['serving']), 1)} %)"
        )
        print(f"  not sized: {', '.join(f'{k} {n}' for k, n in s['not_sized'].items()) or 'none'}")
        reasons: dict[str, int] = {}
        for n in r["not_read"]:
            reasons[n["reason"]] = reasons.get(n["reason"], 0) + 1
        print(
            f"  not read (serving objects seen but not read, not counted above): {s.get('not_read', 0)}"
            + (
                ": " + ", ".join(f"{k} {n}" for k, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
                if reasons
                else ""
            )
        )
        print(
            f"  public hub model ids resolved offline: {r['hub_ids_resolved']} of {r['hub_ids']} ({r['hub_ids_pct']} %)"
        )
        if args.list:
            for u in r["unsized"]:
                print(
                    f"    {u['reason']}: {u['file']}:{u['line']} {u['object']} "
                    f"[{u['container']}{', ' + u['role'] if u['role'] else ''}] {_model_said(u)}"
                )
                for why in u["why"]:
                    print(f"      {why}")
            for n in r["not_read"]:
                print(f"    not read, {n['reason']}: {n['where']}")
    if len(rows) > 1:
        pooled = coverage([r["set"] for r in rows])
        print(
            f"all sets: public hub model ids resolved offline: {pooled['resolved']} of {pooled['hub_ids']} "
            f"({pooled['percent']} %, each id counted once)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
