"""Manifests that are templates to render first: placeholders that Kubernetes does not replace.

Kubernetes expands ``$(VAR)`` in a container's ``command``, ``args`` and ``env`` values from the container's
``env`` and nothing else: ``${VAR}`` stays as written everywhere, and no field of a PodSpec is ever
substituted in ``image`` or ``resources``. A PodSpec holding ``${MODEL_NAME}`` in its args (outside a shell script, where the
shell expands it), an ``image`` such as ``${VLLM_IMAGE_NAME}``, ``$(vllm-cuda-image)``, ``V_IMAGE_NAME`` or
``<image-built-from-dockerfile>`` is a template meant for ``envsubst``, ``oc process``, kustomize ``vars`` or a
``sed`` script. kvlint reports it once per workload (KV002, as for Helm templates), naming the placeholders,
and reads the rest as written. The same holds for the place an operator downloads the model from (a KServe
``storageUri`` such as ``s3://${bucket}/models/...``): :func:`_storage_placeholders`.
"""

from __future__ import annotations

import re
from typing import Any

from kvlint.engines.images import ENVSUBST_IMAGE, envsubst_placeholders, image_placeholder
from kvlint.gpu_resources import is_gpu_resource
from kvlint.source import Loc, loc_of
from kvlint.types import Document, Finding, Mark, Workload
from kvlint.values import as_list

__all__ = ["template_findings"]

_SHELLS = ("sh", "bash", "ash", "dash", "zsh", "ksh")
#: process-environment variables an env value extends by shell habit (``LD_LIBRARY_PATH=/x:${LD_LIBRARY_PATH}``):
#: a copy-paste slip that leaves the text literal, not a template parameter someone renders.
_PROCESS_VARS = frozenset(
    ("PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "HOME", "USER", "PWD", "HOSTNAME", "SHELL", "TMPDIR",
     "CUDA_HOME", "CUDA_PATH", "LIBRARY_PATH", "CPATH", "MANPATH", "PKG_CONFIG_PATH", "XDG_CACHE_HOME")
)  # fmt: skip


def _is_shell(command: Any) -> bool:
    if not isinstance(command, list) or not command:
        return False
    return str(command[0]).rsplit("/", 1)[-1] in _SHELLS


#: An engine named in a container's command or args (then the engine's own KV finding says the image is missing)
_ENGINE_IN_COMMAND = re.compile(r"vllm|sglang|text-generation-launcher", re.IGNORECASE)


def _empty_image(c: Any, w: Workload) -> Finding | None:
    """KV002 for a container that requests GPUs (any resource :func:`kvlint.gpu_resources.is_gpu_resource` counts:
    ``nvidia.com/gpu``, a MIG slice, an AMD partition ``amd.com/cpx_nps4``, a TPU) with an ``image`` left empty (``image: ""`` or null) and no engine
    in its command: what a chart renders when its values leave the image for ``helm install --set`` to fill
    (AI-Hypercomputer/gpu-recipes' inference charts: ``image: {{ .Values.workload.image }}`` and
    ``workload.image:`` empty, the engine chosen by a launcher script). The API server refuses a container without
    an image, and kvlint cannot tell which engine it runs, so nothing was sized: the run passed in silence with
    1 workload and 0 serving containers. None otherwise (a kustomize patch's container has no ``image`` key)."""
    if not isinstance(c, dict) or "image" not in c or str(c.get("image") or "").strip():
        return None
    resources = c.get("resources")
    gpus = None
    for section in ("limits", "requests"):
        quantities = resources.get(section) if isinstance(resources, dict) else None
        if isinstance(quantities, dict):
            gpus = gpus or next(
                (
                    f"{g}: {quantities[g]}"
                    for g in quantities
                    if is_gpu_resource(g) and quantities.get(g) not in (None, "", 0, "0")
                ),
                None,
            )
    if gpus is None:
        return None
    words = " ".join(str(x) for part in ("command", "args") for x in as_list(c.get(part)))
    if _ENGINE_IN_COMMAND.search(words):
        return None
    name = str(c.get("name") or "")
    return Finding(
        "KV002",
        f"container {name!r} requests {gpus} but its image is empty: the API server refuses it, and kvlint cannot "
        "tell which engine it runs, so it was not sized; a chart renders this when its values leave the image for "
        "helm install --set to fill",
        loc_of(c, "image") or w.loc,
        fix="set the image (and the engine and model values the chart reads) with the values you deploy with: "
        "kvlint check CHART --helm-values FILE --helm-set KEY=VALUE",
        severity="warning",
    )


def _located_value(node: Any, value: str, depth: int = 0) -> Loc | None:
    """Where the string ``value`` is held in the mapping/list tree ``node`` (the first place, depth-first, at most
    12 levels down), or None."""
    if depth > 12:
        return None
    if isinstance(node, dict):
        for k, v in node.items():
            if v == value:
                return loc_of(node, k)
            found = _located_value(v, value, depth + 1)
            if found is not None:
                return found
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if v == value:
                return loc_of(node, i)
            found = _located_value(v, value, depth + 1)
            if found is not None:
                return found
    return None


def _storage_placeholders(w: Workload) -> Finding | None:
    """KV002 when the place the model is downloaded from (:attr:`~kvlint.types.Workload.model_storage`: a KServe
    ``storageUri`` or ``storage.path``, a Kthena ``modelURI``) holds ``${VAR}`` placeholders: neither Kubernetes
    nor the operator replaces them (KServe's storage initializer is given the URI as written, as an argument of its
    init container), so the download fails and the pod never starts. KServe's fluid sample writes
    ``s3://${bucket}/models/...`` for its README's user to fill in. None otherwise."""
    uri = w.model_storage
    if not uri or "${" not in uri:
        return None
    found = [placeholder for placeholder, _ in envsubst_placeholders(uri)]
    if not found:
        return None
    downloader = (
        "Kthena's model downloader" if w.doc.kind == "ModelBooster" else "KServe's storage initializer"
    )
    shown = ", ".join(dict.fromkeys(found))
    return Finding(
        "KV002",
        f"this manifest is a template: the model's storage location {uri} holds {shown}, a ${{VAR}} placeholder "
        f"that neither Kubernetes nor the operator replaces, so {downloader} would fetch it literally and the "
        "pod would not start; kvlint reads the rest as written",
        _located_value(w.doc.data, uri) or w.loc,
        fix="render it with the values you deploy with, e.g. envsubst < FILE | kvlint check -",
        severity="warning",
        mark=Mark.ENVSUBST_TEMPLATE,
    )


def _flux_object(w: Workload, doc: Document | None) -> bool:
    """Whether ``w`` was built from a Flux object ``doc`` (the document holding ``w``, default ``w.doc``: a
    ``*.toolkit.fluxcd.io`` HelmRelease whose values kvlint built it from): such a file is
    applied by a Flux Kustomization, whose ``spec.postBuild.substitute``/``substituteFrom`` replace ``${VAR}`` and
    ``${VAR:=default}`` in it before it reaches the cluster (fluxcd/kustomize-controller, docs/spec/v1
    kustomizations.md, "Post build variable substitution"), unless the object is annotated
    ``kustomize.toolkit.fluxcd.io/substitute: disabled``."""
    data = (doc or w.doc).data
    api = data.get("apiVersion") if isinstance(data, dict) else None
    if not isinstance(api, str) or ".toolkit.fluxcd.io/" not in api:
        return False
    meta = data.get("metadata")
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    return not (isinstance(notes, dict) and notes.get("kustomize.toolkit.fluxcd.io/substitute") == "disabled")


def template_findings(w: Workload, doc: Document | None = None) -> list[Finding]:
    """KV002 findings for the placeholders in ``w``'s containers (image, non-shell command/args, resource
    quantities, env values).
    In env values a ``${VAR}`` naming the variable being defined or a process-environment variable
    (:data:`_PROCESS_VARS`, e.g. ``LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH}``) is not a
    template parameter and is left alone.
    Empty for an OpenShift ``Template`` (its ``${PARAM}`` values are the template's own, processed by ``oc
    process``, and kvlint reads those objects as written) and for workloads without placeholders. In a Flux
    object (``doc``, see :func:`_flux_object`) the ``${VAR}`` placeholders are an info: Flux post-build
    substitution may replace them."""
    if w.kind == "Template":
        return []
    ps = w.pod_spec
    names: list[str] = []
    seen: set[str] = set()  # the names, looked up in constant time (thousands of distinct placeholders)
    first: Loc | None = None
    images: list[tuple[str, str, Loc | None]] = []
    for key in ("containers", "initContainers"):
        for c in as_list(ps.get(key)):
            if not isinstance(c, dict):
                continue
            image = str(c.get("image") or "")
            how = image_placeholder(image)
            found = list(envsubst_placeholders(image)) if how is not None else []
            if found:
                for placeholder, _ in found:
                    if placeholder not in seen:
                        seen.add(placeholder)
                        names.append(placeholder)
                        first = first or loc_of(c, "image")
            elif how is not None:
                images.append((image, how, loc_of(c, "image")))
            # the values that hold a ``${`` (no other holds a placeholder), with their positions
            values: list[tuple[Any, Loc | None, str | None]] = []
            if not _is_shell(c.get("command")):
                for part in ("command", "args"):
                    seq = c.get(part)
                    if isinstance(seq, list):
                        values += [(v, loc_of(seq, i), None) for i, v in enumerate(seq) if "${" in str(v)]
            resources = c.get("resources")
            for section in ("limits", "requests"):
                quantities = resources.get(section) if isinstance(resources, dict) else None
                if isinstance(quantities, dict):
                    values += [
                        (v, loc_of(quantities, k), None)
                        for k, v in quantities.items()
                        if isinstance(v, str) and "${" in v
                    ]
            env = c.get("env")
            for e in env if isinstance(env, list) else []:
                if isinstance(e, dict) and isinstance(e.get("value"), str) and "${" in e["value"]:
                    values.append((e["value"], loc_of(e, "value"), str(e.get("name") or "")))
            for v, loc, owner in values:
                for placeholder, name in envsubst_placeholders(str(v)):
                    if owner is not None and (name in _PROCESS_VARS or name == owner):
                        continue  # an env value extending itself or the process environment, shell-style
                    if placeholder not in seen:
                        seen.add(placeholder)
                        names.append(placeholder)
                        first = first or loc
    out: list[Finding] = [f for c in as_list(ps.get("containers")) if (f := _empty_image(c, w)) is not None]
    stored = _storage_placeholders(w)
    if stored is not None:
        out.append(stored)
    if names and _flux_object(w, doc):
        shown = ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")
        out.append(
            Finding(
                "KV002",
                f"{shown} {'is a' if len(names) == 1 else 'are'} ${{VAR}} placeholder{'s' if len(names) != 1 else ''} "
                f"in a Flux object: Flux's kustomize-controller replaces {'it' if len(names) == 1 else 'them'} when the Flux Kustomization that "
                "applies this file sets spec.postBuild.substitute or substituteFrom (Kubernetes itself does not); "
                "kvlint cannot see that Kustomization and reads them as written",
                first or w.loc,
                fix="make sure the Kustomization applying this file has spec.postBuild naming these variables, or "
                "lint the substituted output: flux build kustomization NAME --path DIR | kvlint check -",
                severity="info",
                mark=Mark.ENVSUBST_TEMPLATE,
            )
        )
    elif names:
        shown = ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")
        out.append(
            Finding(
                "KV002",
                f"this manifest is a template: {shown} are ${{VAR}} placeholders, which Kubernetes does not replace "
                "(it expands only $(VAR) from the container's env), so the engine would receive them literally; "
                "kvlint reads the rest as written",
                first or w.loc,
                fix="render it with the values you deploy with, e.g. envsubst < FILE | kvlint check -",
                severity="warning",
                mark=Mark.ENVSUBST_TEMPLATE,
            )
        )
    for image, how, loc in images:
        out.append(
            Finding(
                "KV002",
                f"image '{image}' is {how}, not an image reference: the manifest is a template to render before "
                "it is applied, and the engine version cannot be read from it",
                loc or w.loc,
                fix="render the manifest (or fill in the image) and lint the result",
                severity="warning",
                mark=Mark.ENVSUBST_TEMPLATE if how == ENVSUBST_IMAGE else None,
            )
        )
    return out
