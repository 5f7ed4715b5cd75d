"""Runtimes.select (indexed by name and auto-selected format) against the linear search it replaced."""

from __future__ import annotations

import random
from typing import Any

from kvlint.load import load_text
from kvlint.types import Document
from kvlint.workloads.base import get_in, int_or_none
from kvlint.workloads.kserve import Runtimes


def _reference_select(docs: list[Document], model: dict, namespace: str | None) -> Document | None:
    """The search over every runtime (kserve.Runtimes.select before the index)."""
    name = model.get("runtime")
    if name:
        for kind in ("ServingRuntime", "ClusterServingRuntime"):
            cands = [d for d in docs if d.kind == kind and d.name == str(name)]
            same = [d for d in cands if kind == "ClusterServingRuntime" or d.namespace == namespace]
            same += [
                d for d in cands if kind == "ServingRuntime" and d.namespace is None and namespace is not None
            ]
            if same or cands:
                return (same or cands)[0]
        return None
    fmt = get_in(model, "modelFormat", "name")
    if not fmt:
        return None
    best: tuple[int, Document] | None = None
    for d in docs:
        formats = get_in(d.data, "spec", "supportedModelFormats")
        for f in formats if isinstance(formats, list) else []:
            if (
                isinstance(f, dict)
                and str(f.get("name", "")).lower() == str(fmt).lower()
                and f.get("autoSelect") is True
            ):
                prio = int_or_none(f.get("priority")) or 0
                if best is None or prio > best[0]:
                    best = (prio, d)
    return best[1] if best else None


def _runtime(rng: random.Random, i: int) -> str:
    kind = rng.choice(["ServingRuntime", "ClusterServingRuntime"])
    name = rng.choice(["vllm", "hf", "tgi", "1"])
    ns = rng.choice(["", "  namespace: a\n", "  namespace: b\n"])
    formats = []
    for _ in range(rng.randrange(4)):
        fname = rng.choice(["vLLM", "vllm", "huggingface", "1", "x"])
        auto = rng.choice(["true", "false", "'true'", None])
        prio = rng.choice([None, "1", "2", "'3'", "true", "0"])
        f = f"    - name: {fname}\n"
        f += f"      autoSelect: {auto}\n" if auto is not None else ""
        f += f"      priority: {prio}\n" if prio is not None else ""
        formats.append(f)
    spec = "spec:\n  supportedModelFormats:\n" + "".join(formats) if formats else "spec:\n  containers: []\n"
    if rng.random() < 0.1:
        spec = "spec:\n  supportedModelFormats: {name: vllm}\n"
    return f"kind: {kind}\nmetadata:\n  name: {name}\n{ns}{spec}# {i}\n"


def test_indexed_select_equals_the_linear_search() -> None:
    rng = random.Random(19)
    for trial in range(300):
        text = "---\n".join(_runtime(rng, i) for i in range(rng.randrange(1, 12)))
        docs = load_text(text, "rt.yaml").documents
        runtimes = Runtimes(docs)
        for _ in range(8):
            model: dict[str, Any] = {}
            if rng.random() < 0.4:
                model["runtime"] = rng.choice(["vllm", "hf", "tgi", "none", 1])
            if rng.random() < 0.8:
                model["modelFormat"] = {
                    "name": rng.choice(["vllm", "VLLM", "huggingface", "x", 1, "", "none"])
                }
            namespace = rng.choice([None, "a", "b"])
            assert runtimes.select(model, namespace) is _reference_select(runtimes.docs, model, namespace), (
                trial,
                model,
                namespace,
            )


def test_a_runtime_of_the_namespace_wins_over_one_naming_none() -> None:
    """A ServingRuntime of the service's namespace is taken before one of the same name that names no namespace,
    whichever comes first: a walk puts a rendered kustomization (its runtime given the namespace) after the plain
    files, where another repository's namespace-less runtime of the same name was taken instead."""
    text = (
        "kind: ServingRuntime\nmetadata: {name: vllm}\nspec: {containers: [{name: a}]}\n---\n"
        "kind: ServingRuntime\nmetadata: {name: vllm, namespace: team}\nspec: {containers: [{name: b}]}\n"
    )
    docs = load_text(text, "rt.yaml").documents
    runtimes = Runtimes(docs)
    assert runtimes.select({"runtime": "vllm"}, "team") is docs[1]
    assert runtimes.select({"runtime": "vllm"}, "other") is docs[0]
    assert runtimes.select({"runtime": "vllm"}, None) is docs[0]
