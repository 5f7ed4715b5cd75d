#!/usr/bin/env python3
"""How many serving workloads kvlint reads, and why it does not read the others.

Runs ``kvlint check`` (offline, no configuration) through the real pipeline over two sets of real public
manifests and, for every serving workload found, asks three questions:

* **command** -- was the engine's command line read (a model or at least one engine setting parsed; for a
  multi-node worker that joins its leader's engine, the leader was found)?
* **model** -- is the model known (the engine's model argument without an unresolved placeholder, or a
  ``kvlint.io/model`` annotation such as the one kvlint derives from a KServe ``storageUri``)?
* **GPU count** -- does the container request a whole number of GPUs kvlint read (not asked of a CPU, TPU or
  Neuron build of the engine, which needs none)?

A *serving workload* is an object (its ``Kind/namespace/name`` and PodSpec path) with at least one container
kvlint recognised as a vLLM, TGI or SGLang engine, or a document that names an engine (its text mentions
vllm, sglang, text-generation-inference, dynamo, NIM...) of a kind that runs pods but yielded no serving
container (runtimes and presets merged into the service that uses them count with that service; documents
whose pods kvlint decided run no engine, such as a vLLM image that only sleeps, are counted apart). Every
workload that is not fully read must carry a finding on that object naming the reason; the
benchmark lists each one with its findings and flags those whose only explanation is one of the generic
phrases kvlint used to give (``not a recognised engine command``, ``probably injected``, ``cannot tell which
GPU``).

Inputs (each run separately, so cross-file joins see what a user would give together):

* ``../shared/corpus/manifests`` -- the shared corpus, one run over the directory;
* ``fixtures/collected/*.y*ml`` -- the collected set's single manifests, one run;
* each directory under ``fixtures/collected/charts/`` rendered (Helm chart or kustomization), and the
  ``vllm-kserve`` chart a second time with ``--helm-set servingTopology=multiNode``.

Usage: python bench/read_coverage.py [--corpus DIR] [--collected DIR] [--list]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: Documents of these kinds never run an engine themselves (routes, services, storage, RBAC...).
NOT_WORKLOADS = frozenset(
    {
        "",
        "ConfigMap",
        "Secret",
        "Service",
        "ServiceAccount",
        "Namespace",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "Ingress",
        "HTTPRoute",
        "Gateway",
        "GatewayClass",
        "InferencePool",
        "InferenceModel",
        "InferenceObjective",
        "ServiceMonitor",
        "PodMonitor",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "Route",
        "NIMCache",
        "Kustomization",
        "ScaledObject",
        "NodePool",
        "EC2NodeClass",
        "PriorityClass",
        "CustomResourceDefinition",
        "ResourceClaimTemplate",
        "ResourceClaim",
        "DeviceClass",
        "ModelCache",
        "OpenModel",
        "Model",  # a KubeAI Model is read through its own finder; other Model kinds are catalogue entries
    }
)
#: Words that make a document "name an engine".
ENGINE_WORDS = re.compile(
    r"vllm|sglang|text-generation-inference|text-generation-launcher|huggingfaceserver|dynamo\.|"
    r"ai-dynamo|nvcr\.io/nim/|kaito|llm-d",
    re.I,
)
#: Explanations too vague to count as "the precise reason" (what kvlint used to say).
VAGUE = (
    "not a recognised engine command",
    "probably injected",
    "cannot tell which GPU this pod lands on",
)
#: Rules whose findings explain why something was not read.
REASON_RULES = frozenset({"KV002", "KV005", "KV405", "KV409", "KV503", "KV504"})


@dataclass
class Entry:
    """One serving workload: where, what was read, and the findings on its object."""

    unit: str
    file: str
    obj: str
    path: str
    containers: list[str] = field(default_factory=list)
    command: bool = True
    model: bool = True
    gpus: bool = True
    joined: bool = False
    reasons: list[str] = field(default_factory=list)

    @property
    def read(self) -> bool:
        return self.command and self.model and self.gpus


def _units(corpus: Path, collected: Path) -> list[tuple[str, list[str], dict]]:
    units: list[tuple[str, list[str], dict]] = []
    if corpus.is_dir():
        units.append(("shared corpus", [str(corpus)], {}))
    flat = sorted(str(p) for p in collected.glob("*.y*ml"))
    if flat:
        units.append(("collected (single manifests)", flat, {}))
    charts = collected / "charts"
    if charts.is_dir():
        for d in sorted(p for p in charts.iterdir() if p.is_dir()):
            units.append((f"collected charts/{d.name}", [str(d)], {}))
            if d.name == "vllm-kserve":
                units.append(
                    (
                        f"collected charts/{d.name} (servingTopology=multiNode)",
                        [str(d)],
                        {"helm_set": ("servingTopology=multiNode",)},
                    )
                )
    return units


def _model_known(cr) -> bool:
    from kvlint.engines.shell import UNRESOLVED_RE

    if cr.workload.annotations.get("kvlint.io/model"):
        return True
    m = cr.serving.model
    return m is not None and not UNRESOLVED_RE.search(str(m.value))


def _doc_names_engine(data, names: list[str]) -> bool:
    """The document mentions an engine outside its metadata and outside the names of the run's objects (a test
    pod calling the Service ``vllm-kserve`` does not run vLLM)."""
    try:
        text = json.dumps({k: v for k, v in data.items() if k != "metadata"}, default=str)
    except (TypeError, ValueError):
        return False
    for n in names:
        if len(n) > 6 and not ENGINE_WORDS.fullmatch(n):
            text = re.sub(r"(?<![\w.-])" + re.escape(n) + r"(?![\w.-])", "", text)
    return bool(ENGINE_WORDS.search(text))


def _used_ranges(docs, containers) -> set[int]:
    """Ids of the documents a serving container takes values from (a ServingRuntime or
    LLMInferenceServiceConfig merged into the service that uses it)."""
    starts: dict[str, list[tuple[int, object]]] = defaultdict(list)
    for d in docs:
        starts[d.path].append((d.loc.line if d.loc else 1, d))
    for v in starts.values():
        v.sort(key=lambda t: t[0])
    out: set[int] = set()
    for cr in containers:
        for loc in (cr.serving.command_loc, cr.container.loc):
            if loc is None or loc.file not in starts:
                continue
            owner = None
            for line, d in starts[loc.file]:
                if line <= loc.line:
                    owner = d
            if owner is not None:
                out.add(id(owner))
    return out


def _decided_not_serving(doc) -> bool:
    """kvlint found the document's pods and decided that none of their containers runs an engine (a vLLM
    image that only sleeps, a router)."""
    from kvlint.engines import parse_container
    from kvlint.workloads import find_workloads

    ws = find_workloads([doc])
    conts = [c for w in ws for c in (w.pod_spec.get("containers") or []) if isinstance(c, dict)]
    if not conts or any(getattr(w, "findings", ()) for w in ws):
        return False
    return all(
        parse_container(c, pod_spec=w.pod_spec) is None
        for w in ws
        for c in (w.pod_spec.get("containers") or [])
    )


def _object_ref(doc) -> str:
    return "/".join(x for x in (doc.kind, doc.namespace, doc.name) if x)


#: Documents that name an engine but whose pods kvlint decided run none (listed with --list).
not_serving: list[str] = []


def measure(unit: str, paths: list[str], extra: dict) -> tuple[list[Entry], list[str]]:
    """Run the pipeline on ``paths``; return the serving workloads and the errors (renders that failed)."""
    from kvlint.options import Options
    from kvlint.pipeline import run_documents
    from kvlint.render import RenderError, load_inputs
    from kvlint.rules.facts import image_platform

    opts = Options(allow_hub=False, **extra)
    try:
        loaded = load_inputs(
            paths, helm_values=opts.helm_values, helm_set=opts.helm_set, max_file_bytes=opts.max_file_bytes
        )
    except RenderError as exc:
        return [], [f"{unit}: {exc}"]
    result = run_documents(loaded, opts)
    by_obj: dict[str, list] = defaultdict(list)
    for d in result.diagnostics:
        by_obj[d.object].append(d)
    entries: dict[tuple[str, str], Entry] = {}
    for cr in result.containers:
        w = cr.workload
        key = (cr.object_ref, w.path)
        e = entries.get(key)
        if e is None:
            e = entries[key] = Entry(unit, w.doc.path, cr.object_ref, w.path)
        e.containers.append(cr.container_name)
        joins = getattr(cr.serving, "joins", None)
        if joins is not None:
            e.joined = True
            e.command = e.command and joins.leader is not None
            e.model = e.model and joins.leader is not None
        else:
            e.command = e.command and (cr.serving.model is not None or bool(cr.serving.flags))
            e.model = e.model and _model_known(cr)
        e.gpus = e.gpus and (
            (cr.placement is not None and cr.placement.gpus is not None)
            or image_platform(cr.serving.image)
            not in ("cuda", "rocm")  # a CPU/TPU/Neuron build: no GPU count
        )
    seen_objs = {e.obj for e in entries.values()}
    names = sorted({d.name for d in loaded.documents if d.name}, key=len, reverse=True)
    used = _used_ranges(loaded.documents, result.containers)
    # documents that name an engine, of a kind that runs pods, with no serving container
    for doc in loaded.documents:
        if not isinstance(doc.data, dict) or doc.kind in NOT_WORKLOADS:
            continue
        ref = _object_ref(doc)
        if ref in seen_objs or id(doc) in used or not _doc_names_engine(doc.data, names):
            continue
        if _decided_not_serving(doc):
            not_serving.append(f"[{unit}] {os.path.basename(doc.path)} {ref}")
            continue
        e = Entry(unit, doc.path, ref, "(no serving container)", command=False, model=False, gpus=False)
        entries[(ref, e.path)] = e
    for e in entries.values():
        if e.read:
            continue
        for d in by_obj.get(e.obj, []):
            template_note = d.rule == "KV502" and ("is a template" in d.message or "is a preset" in d.message)
            if d.rule in REASON_RULES or template_note or (d.rule == "KV501" and not e.gpus):
                text = f"{d.rule} {d.message}"
                if text not in e.reasons:
                    e.reasons.append(text)
    # unit-level findings (KV001 unreadable files, KV002 unrendered templates) explain documents with no object
    file_reasons: dict[str, list[str]] = defaultdict(list)
    for d in result.diagnostics:
        if d.rule in ("KV001", "KV002") and d.loc:
            file_reasons[os.path.abspath(d.loc.file)].append(f"{d.rule} {d.message}")
    for e in entries.values():
        if not e.read and not e.reasons:
            e.reasons.extend(file_reasons.get(os.path.abspath(e.file), []))
    return list(entries.values()), []


def _precise(reasons: list[str]) -> bool:
    return any(not any(v in r for v in VAGUE) for r in reasons)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus" / "manifests"))
    ap.add_argument("--collected", default=str(REPO / "fixtures" / "collected"))
    ap.add_argument("--list", action="store_true", help="list every workload that is not fully read")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    venv_bin = os.path.dirname(sys.executable)
    os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")

    all_entries: list[Entry] = []
    errors: list[str] = []
    rows = []
    for unit, paths, extra in _units(Path(args.corpus), Path(args.collected)):
        entries, errs = measure(unit, paths, extra)
        errors += errs
        all_entries += entries
        rows.append((unit, entries))

    def line(name: str, es: list[Entry]) -> str:
        n = len(es)
        unread = [e for e in es if not e.read]
        explained = sum(1 for e in unread if _precise(e.reasons))
        return (
            f"{name:<58} {n:>4} {sum(e.command for e in es):>8} {sum(e.model for e in es):>6} "
            f"{sum(e.gpus for e in es):>5} {sum(e.read for e in es):>5} {explained:>4}/{len(unread):<4}"
        )

    print(f"{'input':<58} {'work':>4} {'command':>8} {'model':>6} {'GPUs':>5} {'all':>5} {'explained':>9}")
    for unit, es in rows:
        print(line(unit, es))
    print(line("TOTAL", all_entries))
    unread = [e for e in all_entries if not e.read]
    silent = [e for e in unread if not _precise(e.reasons)]
    print(
        f"\n{len(all_entries)} serving workloads; {sum(e.read for e in all_entries)} read in full "
        f"(command, model and GPU count); {len(unread)} not, of which {len(unread) - len(silent)} carry a "
        f"finding naming the reason and {len(silent)} do not."
    )
    print(
        f"{len(not_serving)} more document(s) name an engine but run none by kvlint's reading (a vLLM image that "
        "only sleeps, a router)" + (": " + "; ".join(not_serving) if args.list and not_serving else "")
    )
    for err in errors:
        print("render error:", err)
    shown = unread if args.list else silent
    if shown:
        print("\nnot read" + (" (all)" if args.list else ", without a precise finding") + ":")
        for e in shown:
            missing = [
                k for k, ok in (("command", e.command), ("model", e.model), ("GPUs", e.gpus)) if not ok
            ]
            print(f"- [{e.unit}] {os.path.basename(e.file)} {e.obj} {e.path}: missing {', '.join(missing)}")
            for r in e.reasons or ["(no finding)"]:
                print(f"    {r[:220]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
