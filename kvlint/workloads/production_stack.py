"""vLLM production-stack ``VLLMRuntime`` (production-stack.vllm.ai): the pod its operator creates."""

from __future__ import annotations

from typing import Any

from kvlint.gpu_resources import NVIDIA_GPU
from kvlint.source import Loc, loc_of
from kvlint.types import Document, Workload
from kvlint.values import digits
from kvlint.workloads.base import (
    get_in,
    int_or_none,
    ldict,
    llist,
    synthetic_workload,
)


def vllm_runtime_workloads(doc: Document) -> list[Workload]:
    """production-stack ``VLLMRuntime`` (production-stack.vllm.ai/v1alpha1) -> the Deployment's pod.

    Source: vllm-project/production-stack operator/internal/controller/vllmruntime_controller.go
    ``deploymentForVLLMRuntime`` (@0f1e82954972d01e57f4c7293bec6c39b517eb79): container ``vllm``, image
    ``deploymentConfig.image.registry + "/" + .name``, command ``/opt/venv/bin/vllm serve``, args
    ``<model.modelURL> --host 0.0.0.0 --port <vllmConfig.port>``, then ``--enable-lora`` (model.enableLoRA),
    ``--enable-chunked-prefill``/``--no-enable-chunked-prefill`` and the prefix-caching pair (always one of
    each), ``--max-model-len`` (model.maxModelLen > 0), ``--dtype``, ``--tensor-parallel-size`` (> 0),
    ``--max-num-seqs``, ``--gpu_memory_utilization`` (string), ``--max_loras``, ``vllmConfig.extraArgs``;
    ``deploymentConfig.resources.gpu`` as requests and limits of ``gpuType`` (default ``nvidia.com/gpu``);
    ``deploymentConfig.nodeSelectorTerms`` as required node affinity. Each generated arg is located at the
    CRD field it comes from.
    """
    spec = get_in(doc.data, "spec")
    model = get_in(spec, "model")
    vcfg = get_in(spec, "vllmConfig")
    dcfg = get_in(spec, "deploymentConfig")
    if not isinstance(model, dict) or not model.get("modelURL"):
        return []
    vcfg = vcfg if isinstance(vcfg, dict) else {}
    dcfg = dcfg if isinstance(dcfg, dict) else {}
    args: list[tuple[Any, Loc | None]] = [(str(model["modelURL"]), loc_of(model, "modelURL"))]
    port = vcfg.get("port", 8000)
    args += [("--host", loc_of(model, "modelURL")), ("0.0.0.0", loc_of(model, "modelURL"))]
    args += [("--port", loc_of(vcfg, "port")), (str(port), loc_of(vcfg, "port"))]
    if model.get("enableLoRA") is True:
        args.append(("--enable-lora", loc_of(model, "enableLoRA")))
    if model.get("enableTool") is True:
        args.append(("--enable-auto-tool-choice", loc_of(model, "enableTool")))
    if model.get("toolCallParser"):
        tl = loc_of(model, "toolCallParser")
        args += [("--tool-call-parser", tl), (str(model["toolCallParser"]), tl)]
    for key, flag in (("enableChunkedPrefill", "chunked-prefill"), ("enablePrefixCaching", "prefix-caching")):
        on = vcfg.get(key) is True
        args.append((f"--enable-{flag}" if on else f"--no-enable-{flag}", loc_of(vcfg, key) or loc_of(vcfg)))
    numeric = (
        (model, "maxModelLen", "--max-model-len"),
        (vcfg, "tensorParallelSize", "--tensor-parallel-size"),
        (model, "maxNumSeqs", "--max-num-seqs"),
    )
    if int_or_none(model.get("maxModelLen")):
        ml = loc_of(model, "maxModelLen")
        args += [("--max-model-len", ml), (str(model["maxModelLen"]), ml)]
    if model.get("dtype"):
        dl = loc_of(model, "dtype")
        args += [("--dtype", dl), (str(model["dtype"]), dl)]
    for holder, key, flag in numeric[1:]:
        v = int_or_none(holder.get(key))
        if v and v > 0:
            fl = loc_of(holder, key)
            args += [(flag, fl), (str(v), fl)]
    if vcfg.get("gpuMemoryUtilization") not in (None, ""):
        gl = loc_of(vcfg, "gpuMemoryUtilization")
        args += [("--gpu_memory_utilization", gl), (str(vcfg["gpuMemoryUtilization"]), gl)]
    if int_or_none(vcfg.get("maxLoras")):
        ll = loc_of(vcfg, "maxLoras")
        args += [("--max_loras", ll), (str(vcfg["maxLoras"]), ll)]
    extra_args = vcfg.get("extraArgs")
    if isinstance(extra_args, list):
        args += [(str(a), loc_of(extra_args, i)) for i, a in enumerate(extra_args)]
    img = get_in(dcfg, "image")
    iloc = loc_of(img, "name") if isinstance(img, dict) else loc_of(dcfg)
    image = f"{get_in(img, 'registry') or ''}/{get_in(img, 'name') or ''}" if isinstance(img, dict) else ""
    mloc = loc_of(model, "modelURL")
    container_items: list[tuple[str, Any, Loc | None]] = [
        ("name", "vllm", mloc),
        ("image", image.lstrip("/"), iloc),
        ("command", llist(mloc, [("/opt/venv/bin/vllm", mloc), ("serve", mloc)]), mloc),
        ("args", llist(mloc, args), mloc),
    ]
    env = vcfg.get("env")
    if isinstance(env, list):
        container_items.append(("env", env, loc_of(vcfg, "env")))
    res = get_in(dcfg, "resources")
    if isinstance(res, dict) and res.get("gpu") not in (None, ""):
        gtype = str(res.get("gpuType") or NVIDIA_GPU)
        gl = loc_of(res, "gpu")
        gpu = res.get("gpu")
        gval = digits(gpu) if isinstance(gpu, str) and digits(gpu) is not None else gpu
        container_items.append(
            (
                "resources",
                ldict(
                    gl,
                    [
                        ("limits", ldict(gl, [(gtype, gval, gl)]), gl),
                        ("requests", ldict(gl, [(gtype, gval, gl)]), gl),
                    ],
                ),
                gl,
            )
        )
    container = ldict(mloc, container_items)
    pod_items: list[tuple[str, Any, Loc | None]] = [
        ("containers", llist(mloc, [(container, mloc)]), mloc),
    ]
    terms = dcfg.get("nodeSelectorTerms")
    if isinstance(terms, list):
        tl = loc_of(dcfg, "nodeSelectorTerms")
        req = ldict(tl, [("nodeSelectorTerms", terms, tl)])
        na = ldict(tl, [("requiredDuringSchedulingIgnoredDuringExecution", req, tl)])
        pod_items.append(("affinity", ldict(tl, [("nodeAffinity", na, tl)]), tl))
    if isinstance(dcfg.get("toleration"), list):
        pod_items.append(("tolerations", dcfg["toleration"], loc_of(dcfg, "toleration")))
    ps = ldict(loc_of(spec) or doc.loc, pod_items)
    why = (
        "VLLMRuntime has no deploymentConfig.nodeSelectorTerms, and deploymentConfig.resources.gpuType names "
        "the device-plugin resource, not the GPU model"
    )
    return [
        synthetic_workload(
            doc,
            ps,
            "spec",
            replicas=int_or_none(dcfg.get("replicas")),
            accelerator_why=None if isinstance(terms, list) else why,
        )
    ]
