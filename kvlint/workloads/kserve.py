"""KServe ``InferenceService``: the predictor's ``model`` (or framework shorthand) as the pod KServe builds,
including the container of the Hugging Face serving runtime for ``modelFormat: huggingface``.
"""

from __future__ import annotations

from typing import Any

from kvlint.source import LDict, Loc, loc_of
from kvlint.types import Document, Workload
from kvlint.workloads.base import (
    IMAGE_SOURCE_ANNOTATION,
    Chain,
    add_memory_shm,
    get_in,
    int_or_none,
    is_pod_spec,
    llist,
    make_workload,
    synthetic_pod_spec,
)

# KServe v1beta1 predictor keys that hold a container-like model spec (``model`` and the older
# per-framework shorthands).
_KSERVE_MODEL_KEYS = (
    "model",
    "huggingface",
    "pytorch",
    "triton",
    "tensorflow",
    "sklearn",
    "xgboost",
    "onnx",
    "lightgbm",
    "paddle",
    "pmml",
)


def predictor_workloads(doc: Document) -> list[Workload]:
    """InferenceService ``spec.predictor``: its ``model`` (or framework shorthand) as a synthetic PodSpec,
    or the predictor itself when it is a plain PodSpec."""
    spec = get_in(doc.data, "spec")
    pred = get_in(spec, "predictor")
    if not isinstance(pred, dict):
        return []
    chain: Chain = [(doc.data, "spec"), (spec, "predictor")]
    for key in _KSERVE_MODEL_KEYS:
        model = pred.get(key)
        if isinstance(model, dict):
            hf = _kserve_hf_runtime(doc, key, model)
            ps = synthetic_pod_spec(pred, hf[0] if hf else model, _KSERVE_MODEL_KEYS)
            if hf:
                add_memory_shm(ps, hf[0])
            w = make_workload(
                doc,
                ps,
                chain,
                path=f"spec.predictor.{key}",
                replicas=int_or_none(pred.get("replicas")),
                extra_meta=pred,
            )
            for k, v in (hf[1] if hf else {}).items():
                w.annotations.setdefault(k, v)
            return [w]
    if is_pod_spec(pred):
        return [
            make_workload(
                doc,
                pred,
                chain,
                path="spec.predictor",
                replicas=int_or_none(pred.get("replicas")),
                extra_meta=pred,
            )
        ]
    return []


#: The container KServe's Hugging Face ClusterServingRuntime (``kserve-huggingfaceserver``, selected for
#: ``modelFormat: huggingface``) contributes when the InferenceService names no image: the
#: ``kserve/huggingfaceserver`` image, whose ENTRYPOINT is ``python -m huggingfaceserver``, args
#: ``--model_name={{.Name}}`` and a memory-backed ``/dev/shm``. Source: kserve/kserve
#: config/runtimes/kserve-huggingfaceserver.yaml@6362f1f08a20d3022758276285aa95544a8aba73 (the image tag is
#: set by the KServe release) and python/huggingfaceserver/Dockerfile.
KSERVE_HF_IMAGE = "kserve/huggingfaceserver"


KSERVE_HF_COMMAND = ("python", "-m", "huggingfaceserver")


def _kserve_hf_runtime(doc: Document, key: str, model: dict) -> tuple[LDict, dict[str, str]] | None:
    """For an InferenceService predictor ``model`` of ``modelFormat: huggingface`` (or the ``huggingface``
    shorthand) without its own image or command: the container the runtime and the model spec make
    together (KServe appends the model's ``args`` to the runtime's), plus annotations: the image source
    (KV208) and, for an ``hf://ORG/NAME`` ``storageUri`` that the server reads from ``/mnt/models``, the
    model (``kvlint.io/model``). None for other shapes, and for ``--backend=huggingface`` (transformers, not
    vLLM)."""
    fmt = model.get("modelFormat")
    fmt_name = fmt.get("name") if isinstance(fmt, dict) else None
    if not (key == "huggingface" or str(fmt_name or "").lower() == "huggingface"):
        return None
    if model.get("image") or model.get("command") or not isinstance(model, LDict):
        return None
    runtime = str(model.get("runtime") or "")
    if runtime and not runtime.startswith("kserve-huggingfaceserver"):
        return None  # a ServingRuntime of the cluster's own: its container is not known here
    from kvlint.engines.kserve import huggingface_backend, model_id_given

    user_args = model.get("args")
    words = [str(a) for a in user_args] if isinstance(user_args, list) else []
    if huggingface_backend(words) not in ("auto", "vllm"):
        return None  # transformers backend: not an engine kvlint sizes; keep the spec as written
    anchor = loc_of(model, "modelFormat") or loc_of(model) or doc.loc
    c = LDict(loc=model.loc)
    for k, v in model.items():
        c[k] = v
        if k in model.locs:
            c.locs[k] = model.locs[k]
        if k in model.key_locs:
            c.key_locs[k] = model.key_locs[k]
    c.setdefault("name", "kserve-container")
    c.locs.setdefault("name", anchor)
    c["image"] = KSERVE_HF_IMAGE
    c.locs["image"] = anchor
    c["command"] = llist(anchor, [(w, anchor) for w in KSERVE_HF_COMMAND])
    c.locs["command"] = anchor
    items: list[tuple[Any, Loc | None]] = [
        (f"--model_name={doc.name}", loc_of(get_in(doc.data, "metadata"), "name"))
    ]
    if isinstance(user_args, list):
        items += [(str(a), loc_of(user_args, i)) for i, a in enumerate(user_args)]
    c["args"] = llist(loc_of(model, "args") or anchor, items)
    c.locs["args"] = loc_of(model, "args") or anchor
    ann = {
        IMAGE_SOURCE_ANNOTATION: "the KServe ClusterServingRuntime kserve-huggingfaceserver (its image tag is set by "
        "the KServe release), not this InferenceService"
    }
    uri = str(model.get("storageUri") or "")
    has_id = any(model_id_given(w) for w in words)
    if uri.startswith("hf://") and uri[5:].count("/") >= 1 and not has_id:
        # hf://ORG/NAME[:REVISION] (KServe's Hugging Face storage URI)
        ann["kvlint.io/model"] = "/".join(uri[5:].split("/")[:2]).split(":", 1)[0]
    return c, ann
