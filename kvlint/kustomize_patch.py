"""A kustomize strategic-merge patch linted alone: the one test, :func:`strategic_merge_patch_finding`, that the
renderer (its KV002) and the loader (no missing-apiVersion KV001 on a patch) both ask, kept apart from
:mod:`kvlint.render` so that :mod:`kvlint.load` need not import the renderer, which imports it."""

from __future__ import annotations

from kvlint.types import Document, Finding, Mark

#: the workload kinds whose pod template a kustomize strategic-merge patch typically overrides
_PATCHED_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet"})


def strategic_merge_patch_finding(doc: Document) -> Finding | None:
    """KV002 for a Deployment, StatefulSet or DaemonSet that is a strategic-merge patch, not an object: it has no
    ``spec.selector`` and none of its pod template's containers has an ``image`` (the API server requires both;
    kustomize takes them from the base the patch applies to). Linted alone it showed no serving container and
    no finding -- a clean pass on a file that sets an engine's flags; what its kustomization builds is what runs.
    None for anything else."""
    data = doc.data
    kind = data.get("kind") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in _PATCHED_KINDS:  # a mapping or list kind is unhashable
        return None
    spec = data.get("spec")
    if not isinstance(spec, dict) or "selector" in spec:
        return None
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    containers = pod.get("containers") if isinstance(pod, dict) else None
    if not isinstance(containers, list) or not containers:
        return None
    if not all(isinstance(c, dict) and "image" not in c for c in containers):
        return None
    return Finding(
        "KV002",
        f"this {data['kind']} has no spec.selector and its containers no image, which the API server requires: it "
        "is a kustomize strategic-merge patch, and kvlint lints what a kustomization builds from it, not the patch "
        "alone",
        doc.loc,
        fix="name the kustomization directory that applies it: kvlint check DIR (built with kubectl kustomize), "
        "or kubectl kustomize DIR | kvlint check -",
        mark=Mark.KUSTOMIZE_PATCH,
    )
