"""Hardware family (KV301-KV305): dtypes, builds and quantization methods the GPU cannot run.

Sources: vLLM ``vllm/platforms/cuda.py::CudaPlatformBase.check_if_supports_dtype`` (0.33.0) and
``vllm/worker/worker.py::_check_if_gpu_supports_dtype`` (V0), the auto-dtype fallback to float16 from 0.9.2
(``vllm/config/model.py::_resolve_auto_dtype``, docs/engine-memory-model.md §1.7); fp8 KV-cache support by attention
backend and release (:mod:`kvlint.memory.fp8kv`); ``_FLOAT16_NOT_SUPPORTED_MODELS`` in ``vllm/config/model.py``;
the quantization methods' minimum compute capability (``vllm/config/vllm.py::VllmConfig._get_quantization_config``,
:data:`kvlint.memory.compat.QUANT_MIN_CC_STEPS`).
The GPU tests of KV301, KV302, KV304 and KV305 are :mod:`kvlint.memory.compat`, shared with the fleet verdict and
``kvlint plan --compare``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from kvlint.accelerators.registry import llvm_target
from kvlint.engines.images import (
    VLLM_ROCM_INDEX,
    VLLM_ROCM_WHEELS,
    accelerator_build,
    gpu_build_on_other_accelerator,
    gpu_vendor_of_resource,
    is_known_cuda_build,
    pip_source_build,
    platform_of,
    pypi_cuda_wheel,
    repository_path,
    rocm_build_tag,
    rocm_build_target,
    rocm_index_outbid,
    split_image,
    uv_best_match,
)
from kvlint.gpu_resources import AMD_GPU, GAUDI_RESOURCE, NON_GPU_RESOURCES, NVIDIA_GPU, TPU_RESOURCE
from kvlint.memory.compat import (
    bf16_refusal,
    build_target_mismatch,
    compressed_tensors_scheme,
    fp8_kv_support_on,
    image_platform_mismatch,
    quant_min_cc,
    quant_min_cc_range,
    quantization_refusal,
)
from kvlint.memory.versions import ReleaseVersion, fmt_version, parse_version, release_shown, resolve_version
from kvlint.rules.context import RuleContext
from kvlint.rules.registry import check
from kvlint.source import loc_of
from kvlint.types import ENGINE_NAMES, Accelerator, ContainerResult, Diagnostic
from kvlint.values import parse_cc
from kvlint.wording import platform_name, with_article

#: Model types vLLM refuses to run in float16 ("Numerical instability"): vllm/config/model.py
#: ``_FLOAT16_NOT_SUPPORTED_MODELS`` / ``_check_valid_dtype`` (list as of 0.33.0; the check is in the
#: 0.9-era ``vllm/config.py`` too, docs/engine-memory-model.md §1.7 item 6).
FLOAT16_NOT_SUPPORTED = ("gemma2", "gemma3", "gemma3_text", "glm4")

#: Catalogue GPUs named as places where an fp8 KV cache runs (Ada, Ada data-centre, Hopper, Blackwell).
_FP8_SHOWCASE = ("nvidia-l4", "nvidia-l40s", "nvidia-h100-sxm5-80gb", "nvidia-b200")


@check("KV301")
def bf16_unsupported(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV301 (vLLM): bfloat16 on an NVIDIA GPU of compute capability < 8.0, explicitly, or through
    ``--dtype auto`` before 0.9.2 (which kept a bf16 config's dtype): :func:`kvlint.memory.compat.bf16_refusal`."""
    m, p, s = ctx.model, ctx.placement, ctx.serving
    if m is None or p is None or p.accelerator is None:
        return
    how = bf16_refusal(s, m, p.accelerator)
    if how is None:
        return
    dtype = str(s.get("dtype", "auto")).lower()
    name, cc_s = p.accelerator.name, p.accelerator.compute_capability
    text = (
        f"'Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {name} GPU has "
        f"compute capability {cc_s}.'"
    )
    if how == "explicit":
        yield ctx.finding(
            f"--dtype {dtype} on {name} (compute capability {cc_s}, {p.how}): vLLM refuses to start with {text}",
            s.loc("dtype"),
            fix="use --dtype=half (float16), or schedule onto an Ampere or newer GPU (compute capability >= 8.0)",
        )
    else:
        yield ctx.finding(
            f"{m.id} is bfloat16 (config.json torch_dtype) and --dtype is auto; vLLM {release_shown(s.version)} keeps "
            f"bf16 on {name} (compute capability {cc_s}) and fails with {text}",
            s.loc("dtype") if "dtype" in s.flags else (s.model.loc if s.model else None),
            fix="pass --dtype=half, or use vLLM >= 0.9.2, which falls back to float16 with a warning",
        )


def fp8_support(cr: ContainerResult, kv_cache_dtype: str, acc: Accelerator | None = None) -> Any:
    """:func:`kvlint.memory.compat.fp8_kv_support_on` for this container with ``kv_cache_dtype`` on ``acc`` (by
    default the GPU the pod lands on); None when the GPU is unknown."""
    if acc is None:
        acc = cr.placement.accelerator if cr.placement else None
    if acc is None:
        return None
    dtype = cr.plan.dtype if cr.plan is not None else "bfloat16"
    return fp8_kv_support_on(cr.serving, cr.model, acc, kv_cache_dtype, dtype)


def _fp8_alternatives(ctx: RuleContext, kvd: str) -> str:
    """``, or ...`` naming catalogue GPUs (other than the pod's) on which this vLLM release runs ``kvd``
    for this model, as :mod:`kvlint.memory.fp8kv` decides; empty when none is known."""
    from kvlint.accelerators.registry import lookup

    here = ctx.placement.accelerator if ctx.placement else None
    v, _ = resolve_version(ctx.serving.version)
    names = []
    for gid in _FP8_SHOWCASE:
        acc = lookup(gid)
        if acc is None or (here is not None and acc.id == here.id):
            continue
        sup = fp8_support(ctx.cr, kvd, acc)
        if sup is not None and sup.outcome == "ok":
            names.append(acc.name)
    return f", or a GPU where vLLM {fmt_version(v)} runs it ({', '.join(names)})" if names else ""


@check("KV302")
def fp8_kv_unsupported(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV302 (vLLM): an fp8 KV cache this vLLM release cannot run on this GPU (:mod:`kvlint.memory.fp8kv`)."""
    s = ctx.serving
    kvd = str(s.get("kv_cache_dtype") or "auto").lower()
    if not kvd.startswith("fp8"):
        return
    sup = fp8_support(ctx.cr, kvd)
    if sup is None or sup.outcome not in ("raises", "likely_raises"):
        return
    gpu = ctx.placement.accelerator.name if ctx.placement and ctx.placement.accelerator else "this GPU"
    likely = sup.outcome == "likely_raises"
    e4m3 = fp8_support(ctx.cr, "fp8") if kvd == "fp8_e5m2" else None
    yield ctx.finding(
        f"--kv-cache-dtype {kvd} on {gpu} with vLLM {release_shown(s.version)}: {sup.why}; the engine "
        f"{'most likely fails' if likely else 'fails'} at start-up ({sup.source})",
        s.loc("kv_cache_dtype"),
        fix=(
            "use --kv-cache-dtype fp8 (e4m3, which this release runs here) or auto"
            if getattr(e4m3, "outcome", "") == "ok"
            else "use --kv-cache-dtype auto (the KV cache then takes 2 bytes per element: re-check capacity)"
        )
        + _fp8_alternatives(ctx, kvd),
        severity="warning" if likely else None,
    )


@check("KV303")
def dtype_refused_by_model(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV303 (vLLM >= 0.9): an explicit ``--dtype half/float16`` for a model type vLLM refuses in float16."""
    m, s = ctx.model, ctx.serving
    assert m is not None
    dtype = str(s.get("dtype", "auto")).lower()
    mtype = (m.model_type or "").lower()
    if dtype not in ("half", "float16", "fp16") or mtype not in FLOAT16_NOT_SUPPORTED:
        return
    if parse_version(s.version) < (0, 9, 0):
        return
    yield ctx.finding(
        f"--dtype {dtype} for {m.id} (model_type {mtype}): vLLM refuses with 'The model type '{mtype}' does not "
        "support float16. Reason: Numerical instability. Please use bfloat16 or float32 instead.'",
        s.loc("dtype"),
        fix="use --dtype bfloat16 (compute capability >= 8.0) or --dtype float32; on a T4/V100 --dtype auto "
        "picks float32 for this model, which needs twice the weight memory",
    )


#: The device-plugin resource a build for another accelerator than an NVIDIA or AMD GPU runs on
#: (:data:`kvlint.gpu_resources.NON_GPU_RESOURCES`), for KV304's remedy.
_BUILD_RESOURCES = {
    "ascend": "huawei.com/Ascend910 or the NPU resource of the cluster's Ascend device plugin",
    "tpu": TPU_RESOURCE,
    "gaudi": GAUDI_RESOURCE,
    "neuron": "aws.amazon.com/neuron or aws.amazon.com/neuroncore",
    "xpu": "gpu.intel.com/i915 or gpu.intel.com/xe",
    # the Spyre device plugin's card (vllm-project/vllm-spyre docs/deploying/k8s.md@59c86c02, ibm.com/aiu_pf)
    "spyre": "ibm.com/aiu_pf",
}


def _pypi_wheel_finding(ctx: RuleContext, where: str) -> Diagnostic:
    """KV304 for vLLM that the container's script installs from PyPI on a plain image
    (:func:`kvlint.engines.images.pypi_cuda_wheel`) placed on an AMD GPU (``where``: the resource it requests or the
    GPU it is placed on): PyPI's wheel is vLLM's CUDA build, and its ROCm wheels are on vLLM's own index
    (:data:`kvlint.engines.images.VLLM_ROCM_WHEELS`); the remedy names the release the script pins when that index
    has it, else the newest it lists, and a Python 3.12 image when the image is Docker's ``python`` of another
    Python (:func:`_image_python`: the wheels are cp312 only)."""
    s = ctx.serving
    variant, first, last = VLLM_ROCM_WHEELS
    pinned = s.version if s.installed_by and not s.install_upgrades and not s.install_range else None
    pinned_v = parse_version(pinned) if pinned is not None else None
    on_index = pinned_v is not None and parse_version(first) <= pinned_v <= parse_version(last)
    release, label = last, variant  # the remedy's release and its wheel's variant
    if pinned is not None and pinned_v is not None and on_index:
        # the index's directories are named by the release's three components (.../rocm/0.18.0/rocm700): a pin
        # written shorter (vllm==0.15, PEP 440's 0.15.0) is named as that release, not as .../rocm/0.15/
        release = f"{pinned_v[0]}.{pinned_v[1]}.{pinned_v[2]}" if type(pinned_v) is ReleaseVersion else pinned
    outbid = rocm_index_outbid(s)
    if outbid is not None and pinned is None:
        # the release the script meant: pinning it with its label makes pip take that wheel, the label of the
        # directory the script named (.../rocm/0.30.0/rocm723 holds 0.30.0+rocm723), not necessarily rocm700
        release, label = outbid[1], outbid[2]
    line = f" at line {s.pip_loc.line}" if s.pip_loc is not None else ""
    missing = f" (vLLM {pinned} has no ROCm wheel there)" if pinned is not None and not on_index else ""
    # the ROCm wheels are built for CPython 3.12 only (cp312): on Docker's python image of another Python the
    # remedy's pip finds no wheel for it ("No matching distribution found"), so it names the image to use too
    python = _image_python(s.image)
    on_image = (
        f"on a Python 3.12 image (python:3.12, not Python {python})" if python not in (None, "3.12") else ""
    )
    source = pip_source_build(s.pip_args)
    how = (
        f"builds vLLM from PyPI's source distribution ('{s.pip_text}'{line}: --no-binary) on image '{s.image}', "
        "which carries none"
        if source
        else f"installs vLLM from PyPI ('{s.pip_text}'{line}) on image '{s.image}', which carries none"
        if outbid is None
        else f"installs vLLM ('{s.pip_text}'{line}) on image '{s.image}', which carries none, naming no version: "
        + (
            "uv under --index-strategy unsafe-best-match weighs every index alike and takes the highest version "
            f"among them, and PyPI's later releases outrank {outbid[1]}+{outbid[2]}, the one release on "
            f"{outbid[0]}, so uv installs PyPI's newest wheel"
            if uv_best_match(s)
            else "pip gives its indexes no priority and takes the highest version among them, and PyPI's later "
            f"releases outrank {outbid[1]}+{outbid[2]}, the one release on {outbid[0]}, so pip installs PyPI's "
            "newest wheel"
        )
    )
    built = (
        "vLLM's setup.py builds it for VLLM_TARGET_DEVICE, 'cuda' when unset, against the torch of pip's isolated "
        "build, PyPI's CUDA build that pyproject.toml pins (PyTorch's ROCm builds are not on PyPI): a CUDA build "
        "(which needs the CUDA toolkit to compile)"
        if source
        else "PyPI's vllm wheel is vLLM's CUDA build (vLLM publishes its ROCm wheels on its own index, not on PyPI)"
    )
    return ctx.finding(
        f"the container's script {how}: {built}, but {where}; on that GPU's node vLLM finds no CUDA runtime (libcudart.so: cannot open shared "
        "object file) and does not start, so kvlint does not size it",
        s.pip_loc or s.command_loc,
        fix=f"install vLLM's ROCm wheel from {VLLM_ROCM_INDEX} (Python 3.12 and glibc 2.35 or newer; {variant} for vLLM "
        f"{first} to {last}{missing}){' ' + on_image if on_image else ''}: pip install vllm=={release}+{label} "
        f"--extra-index-url {VLLM_ROCM_INDEX}{release}/{label}; "
        "or run a "
        "ROCm image of vLLM (rocm/vllm, vllm/vllm-openai-rocm) instead of installing it",
    )


def _image_python(image: str) -> str | None:
    """The Python ``X.Y`` of Docker's official ``python`` image as its tag names it (``python:3.11-slim`` ->
    ``3.11``); None for another image or a tag that names no minor release (``latest``, ``3``, ``slim``)."""
    if repository_path(image).removeprefix("library/") != "python":
        return None
    m = re.match(r"(\d+)\.(\d+)(?![0-9])", split_image(image)[1] or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


@check("KV304")
def image_accelerator_mismatch(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV304: the image is a build for another platform than the GPU the pod is placed on (a CUDA build on
    AMD/TPU/Gaudi nodes, a ROCm build on NVIDIA nodes), or, with no GPU model named, than the nodes its GPU or
    accelerator resource is advertised on (:func:`kvlint.engines.images.gpu_build_on_other_accelerator`: a ROCm
    build requesting ``nvidia.com/gpu``, an engine's CUDA image requesting ``amd.com/gpu`` or ``google.com/tpu``)."""
    p, s = ctx.placement, ctx.serving
    resource = gpu_build_on_other_accelerator(s, p)
    pypi_wheel = pypi_cuda_wheel(s) and not is_known_cuda_build(s.image)
    if p is not None and resource == AMD_GPU and pypi_wheel:
        yield _pypi_wheel_finding(ctx, f"the container requests {resource} (an AMD GPU)")
        return
    if p is not None and resource is not None and resource not in NON_GPU_RESOURCES:
        # no GPU named, but the GPU resource names the vendor: nvidia.com/gpu is advertised by NVIDIA's device
        # plugin on NVIDIA nodes only, amd.com/gpu by AMD's on AMD nodes, where a build for another device finds
        # none of its own (a ROCm PyTorch no AMD GPU) and the engine does not start
        vendor = gpu_vendor_of_resource(resource) or ""
        gpu = {"nvidia": "an NVIDIA GPU", "amd": "an AMD GPU"}.get(vendor, "a GPU")
        build = accelerator_build(s) or platform_of(s, resource)
        name = platform_name(build)
        device = {"cuda": "an NVIDIA GPU", "rocm": "an AMD GPU"}.get(build, f"{with_article(name)} device")
        expected = {"nvidia": "cuda", "amd": "rocm"}.get(vendor, "cuda")
        other = {"nvidia": AMD_GPU, "amd": NVIDIA_GPU}.get(vendor, "")
        remedy = (
            f"request the {name} accelerator the image is built for ({_BUILD_RESOURCES[build]})"
            if build in _BUILD_RESOURCES
            else f"request {other} (the GPU this image is built for)"
        )
        yield ctx.finding(
            f"image '{s.image}' is {with_article(name)} build of {s.engine} but the container requests {resource} "
            f"({gpu}); on that GPU's node it looks for {device}, finds none and does not start, so kvlint "
            "does not size it",
            p.gpus_loc or loc_of(s.container, "image"),
            fix=f"use {s.engine}'s {platform_name(expected)} image for {resource}, or {remedy} instead",
        )
        return
    if p is not None and resource is not None:
        # no GPU named, only another accelerator's resource: the pod lands on that accelerator's nodes
        name = platform_name(NON_GPU_RESOURCES[resource])
        build = platform_name(platform_of(s, resource))
        yield ctx.finding(
            f"image '{s.image}' is {with_article(build)} build of {s.engine} but the container requests "
            f"{resource} ({with_article(name)} accelerator) and no GPU; on that accelerator's node it finds no "
            f"{build} GPU and does not start, so kvlint does not size it",
            p.gpus_loc or loc_of(s.container, "image"),
            fix=f"use {s.engine}'s {name} build for {resource}, or request the GPU this image is built for "
            "(nvidia.com/gpu or amd.com/gpu) instead",
        )
        return
    if p is None or p.accelerator is None:
        return
    platform = image_platform_mismatch(s, p.accelerator, p.resource)
    if platform is None:
        if build_target_mismatch(s, p.accelerator) is not None:
            # an image built for one AMD architecture (SGLang's -mi30x tags) on an AMD GPU of another
            built, word = rocm_build_target(s.image) or ("", "")
            target = llvm_target(p.accelerator.id) or ""
            family = rocm_build_tag(target)
            yield ctx.finding(
                f"image '{s.image}' is SGLang's {built} build but the pod is placed on {p.accelerator.name} "
                f"({target}; {p.how}); the {word} tag's sgl-kernel and AITER kernels are compiled for {built} "
                f"alone and hold no code for {target}",
                p.loc or loc_of(s.container, "image"),
                fix=(
                    f"use the SGLang image built for {p.accelerator.name} (the -{family} tag of the same release)"
                    if family
                    else f"place the pod on a {built} GPU"
                ),
            )
        return
    vendor = p.accelerator.vendor
    if vendor == "amd" and platform == "cuda" and pypi_wheel:
        yield _pypi_wheel_finding(ctx, f"the pod is placed on {p.accelerator.name} (amd; {p.how})")
        return
    expected = {"nvidia": "cuda", "amd": "rocm"}.get(vendor, vendor)
    if vendor in ("nvidia", "amd") and platform not in ("cuda", "rocm"):
        # a build for another accelerator (kvlint.engines.images.accelerator_build) on an NVIDIA or AMD GPU
        name = platform_name(platform)
        yield ctx.finding(
            f"image '{s.image}' is {with_article(name)} build of {s.engine} but the pod is placed on "
            f"{p.accelerator.name} ({vendor}; {p.how}); it looks for {with_article(name)} device, finds none on "
            "that node and does not start, so kvlint does not size it on that GPU",
            p.loc or loc_of(s.container, "image"),
            fix=f"request the {name} accelerator the image is built for ({_BUILD_RESOURCES[platform]}) and drop "
            f"the {p.accelerator.name} placement, or use the engine's {platform_name(expected)} image for "
            f"{p.accelerator.name}",
        )
        return
    yield ctx.finding(
        f"image '{s.image}' is {with_article(platform_name(platform))} build but the pod is placed on {p.accelerator.name} "
        f"({vendor}; {p.how})",
        p.loc or loc_of(s.container, "image"),
        fix=f"use the engine's {expected} image for {p.accelerator.name}, or place the pod on a matching GPU",
    )


#: Example NVIDIA GPUs named in KV305's fix for a minimum compute capability (NVIDIA's compute capability table).
_CC_EXAMPLES = {
    (7, 5): "T4, L4, A10G, A100, H100",
    (8, 0): "A10G, L4, A100, H100",
    (8, 9): "L4, L40S, H100, H200",
    (10, 0): "B200, GB200",
}

#: Checkpoint formats KV305's fix offers instead of a refused one: (words, vLLM method) in the order named.
_KV305_ALTERNATIVES = (
    ("a GPTQ one", "gptq"),
    ("an AWQ one", "awq"),
    ("an FP8 one", "fp8"),
)


def _kv305_fix(
    method: str, version: str | None, cc: tuple[int, int], minimum: tuple[int, int], engine: str = "vllm"
) -> str:
    """KV305's fix: a GPU that meets ``minimum`` (the minimum of ``engine`` release ``version``; when the version is
    unknown, the highest minimum older releases had is named too), and only the checkpoint formats that release
    runs on a GPU of compute capability ``cc`` (:func:`kvlint.memory.compat.quant_min_cc`; vLLM's ``gptq`` 6.0 in
    every release; SGLang's ``gptq`` is not offered: from 0.5.20 its CUDA method table has no ``gptq``)."""
    name = ENGINE_NAMES.get(engine, engine)
    need = f"{minimum[0]}.{minimum[1]}"
    examples = _CC_EXAMPLES.get(minimum)
    gpu = f"an NVIDIA GPU of compute capability {need} or newer" + (f" ({examples})" if examples else "")
    span = quant_min_cc_range(method, engine)
    _, assumed = resolve_version(version)
    older = (
        f" (the {name} release is unknown: older releases need up to {span[1][0]}.{span[1][1]} for {method})"
        if assumed and span is not None and span[1] > minimum
        else ""
    )
    if method == "mxfp4":
        return f"schedule onto {gpu}; {name} runs MXFP4 checkpoints on no older GPU"
    if method == "gptq_marlin" and engine == "vllm":
        return (
            f"schedule onto {gpu}{older}, or use --quantization gptq (GPTQ's own kernels, minimum 6.0) or leave "
            "--quantization out: vLLM picks gptq_marlin for a GPTQ checkpoint only on a GPU that runs it"
        )
    half = (
        ("with --dtype half, KV301; " if engine == "vllm" else "with --dtype half; ") if cc < (8, 0) else ""
    )
    options = [f"an unquantized one ({half}larger weights: re-run kvlint)"]
    for words, alt in _KV305_ALTERNATIVES:
        if alt == "gptq":
            alt_min: tuple[int, int] | None = (6, 0) if engine == "vllm" else None
        else:
            alt_min = quant_min_cc(alt, version, engine)
        if alt != method.removesuffix("_marlin") and alt_min is not None and cc >= alt_min:
            options.append(f"{words} (quant_method {alt}, minimum {alt_min[0]}.{alt_min[1]})")
    listed = options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
    return f"schedule onto {gpu}{older}, or serve a checkpoint this GPU runs: {listed}"


#: The last vLLM wheels read before the method names ``_get_quantization_config`` prints changed: from 0.24.0 an
#: AWQ checkpoint (``--quantization awq``/``awq_marlin`` or none) is ``auto_awq`` (``AutoAWQConfig``; ``AWQConfig``
#: in 0.23.0), from 0.20.0 a gpt-oss MXFP4 checkpoint is ``gpt_oss_mxfp4`` (``GptOssMxfp4Config``, a subclass of
#: ``Mxfp4Config`` of the same minimum; absent in 0.19.0): ``override_quantization_method`` in
#: vllm/model_executor/layers/quantization/{auto_awq,mxfp4}.py.
_AWQ_NAMED_AWQ_UNTIL = "0.23.0"
_GPT_OSS_NAMED_MXFP4_UNTIL = "0.19.0"


def _method_printed(method: str, model: Any, version: str | None, engine: str = "vllm") -> str:
    """The method name ``engine`` release ``version`` prints in its minimum-capability error
    (``model_config.quantization`` after ``ModelConfig._verify_quantization``'s overrides; SGLang's as tested)."""
    v, _ = resolve_version(version)
    if engine != "vllm":
        return method
    if method in ("awq", "awq_marlin") and v > ReleaseVersion(_AWQ_NAMED_AWQ_UNTIL):
        return "auto_awq"
    if (
        method == "mxfp4"
        and getattr(model, "model_type", None) == "gpt_oss"
        and v > ReleaseVersion(_GPT_OSS_NAMED_MXFP4_UNTIL)
    ):
        return "gpt_oss_mxfp4"
    return method


@check("KV305")
def quantization_unsupported_by_gpu(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV305 (vLLM, SGLang): the quantization method (``--quantization``, else the checkpoint's ``quant_method``)
    needs a higher compute capability than the NVIDIA GPU the pod lands on, in the engine release the container
    runs (in every release when it is unknown) (:func:`kvlint.memory.compat.quantization_refusal`,
    :data:`kvlint.memory.compat.QUANT_MIN_CC_STEPS`, :data:`kvlint.memory.compat.SGLANG_QUANT_MIN_CC_STEPS`); vLLM
    raises before loading weights (vllm@0.34.0:vllm/config/vllm.py::VllmConfig._get_quantization_config; the model
    loader's ``_get_quantization_config`` in 0.4 - 0.6 releases), SGLang in its model loader
    (sglang@0.5.23:sglang/srt/model_loader/loader.py::_get_quantization_config)."""
    p, s, m = ctx.placement, ctx.serving, ctx.model
    if p is None or p.accelerator is None:
        return
    quant = quantization_refusal(s, m, p.accelerator)
    if quant is None:
        return
    method, source, minimum = quant
    acc = p.accelerator
    need, have = minimum[0] * 10 + minimum[1], acc.compute_capability
    cc = parse_cc(have)
    have_int = cc[0] * 10 + cc[1] if cc is not None else have
    # a ModelOpt export read from hf_quant_config.json has no quant_method there (kvlint.models.config)
    read_from = (
        "hf_quant_config.json"
        if m is not None and isinstance(m.quant_config, dict) and "quant_method" not in m.quant_config
        else "config.json quantization_config"
    )
    # a compressed-tensors checkpoint refused by its layers' scheme, not by the config's own minimum (7.0)
    scheme = (
        compressed_tensors_scheme(m, s.version)
        if method == "compressed-tensors" and s.engine == "vllm"
        else None
    )
    if scheme is not None and scheme[1] != minimum:
        scheme = None
    label = f"{method} {scheme[0]}" if scheme is not None else method
    # --quantization modelopt on a ModelOpt export of another quant_algo: vLLM tests the method its override picks
    flag = str(s.get("quantization") or "").strip().lower() or method
    read_as = (
        f" ({m.id if m is not None else 'the model'}'s quant_algo makes vLLM read it as {method})"
        if source == "flag" and flag != method
        else ""
    )
    where = (
        f"--quantization {flag}"
        + read_as
        + (f" ({m.id if m is not None else 'the model'} is {scheme[0]})" if scheme else "")
        if source == "flag"
        else f"{m.id if m is not None else 'the model'} is {label}-quantized ({read_from})"
    )
    if scheme is not None:
        text = (
            "'Quantization scheme is not supported for the current GPU. "
            f"Min capability: {need}. Current capability: {have_int}.' (the {scheme[0]} layers' scheme)"
        )
    else:
        text = (
            f"'The quantization method {_method_printed(method, m, s.version, s.engine)} is not supported for the "
            f"current GPU. Minimum capability: {need}. "
            f"Current capability: {have_int}.'"
        )
    fix = _kv305_fix(method, s.version, cc or (0, 0), minimum, s.engine)
    if s.engine == "vllm":
        release = f"vLLM {release_shown(s.version)}"
    else:
        _, unknown = resolve_version(s.version)
        release = ENGINE_NAMES.get(s.engine, s.engine) + (
            " (release unknown)" if unknown else f" {s.version}"
        )
    yield ctx.finding(
        f"{where} on {acc.name} (compute capability {have}, {p.how}): {release} refuses to start with {text}",
        s.loc("quantization") if source == "flag" else (s.model.loc if s.model else None),
        fix=fix,
    )
