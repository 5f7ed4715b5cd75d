"""Check functions, one per rule id, over a :class:`~kvlint.pipeline.ContainerResult`.

Capacity checks (KV101-KV105) read the :class:`~kvlint.types.MemoryPlan` built by
:mod:`kvlint.memory.vllm`; every remedy they print is verified by planning again with the remedy applied
(a remedy that does not make the workload fit is never printed). Static checks (parallelism, dtype,
shared memory, probes) read the parsed engine flags, the model config and the PodSpec.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kvlint.source import LDict, Loc, loc_of
from kvlint.types import Accelerator, Diagnostic, Finding, MemoryPlan, Severity, Workload
from kvlint.values import as_float, parse_cc, truthy

if TYPE_CHECKING:
    from kvlint.options import Options
    from kvlint.types import ContainerResult

GiB = 2**30

# Default severities, used when the catalogue in rules/ cannot be read (it is the source of truth).
_FALLBACK_SEVERITY: dict[str, Severity] = {
    "KV001": "error",
    "KV002": "warning",
    "KV003": "warning",
    "KV004": "error",
    "KV104": "warning",
    "KV105": "warning",
    "KV202": "warning",
    "KV207": "warning",
    "KV208": "warning",
    "KV405": "warning",
    "KV406": "warning",
    "KV407": "warning",
    "KV501": "warning",
    "KV502": "warning",
    "KV503": "warning",
    "KV702": "warning",
}

#: Rule ids that have a check in this module (or are emitted by the loader / engine parsers).
IMPLEMENTED: frozenset[str] = frozenset(
    {
        "KV001",
        "KV002",
        "KV003",
        "KV004",
        "KV101",
        "KV102",
        "KV103",
        "KV104",
        "KV105",
        "KV106",
        "KV107",
        "KV201",
        "KV202",
        "KV203",
        "KV204",
        "KV205",
        "KV206",
        "KV207",
        "KV208",
        "KV301",
        "KV302",
        "KV304",
        "KV401",
        "KV402",
        "KV403",
        "KV404",
        "KV405",
        "KV406",
        "KV407",
        "KV501",
        "KV502",
        "KV503",
        "KV601",
        "KV602",
        "KV603",
        "KV604",
        "KV701",
        "KV702",
        "KV303",
    }
)


def severity_of(rule: str) -> Severity:
    """Default severity of ``rule`` from the catalogue (``rules/KVxxx.yaml``), with a built-in fallback."""
    try:
        from kvlint.rules.catalog import load_catalog

        info = load_catalog().get(rule)
        if info is not None:
            sev = info.severity
            if sev in ("error", "warning", "info"):
                return sev  # type: ignore[return-value]
    except Exception:
        pass
    return _FALLBACK_SEVERITY.get(rule, "error")


def rule_parameters(rule: str) -> dict[str, Any]:
    """Parameter defaults of ``rule`` from its catalogue file (empty when unavailable)."""
    try:
        from kvlint.rules.catalog import get_rule

        return dict(get_rule(rule).defaults())
    except Exception:
        return {}


def _param(ctx: _Ctx, rule: str, name: str, fallback: Any) -> Any:
    """Parameter ``name`` of ``rule``: the run's options (``.kvlint.yaml`` ``rules.<id>.<name>``,
    ``--min-concurrency``), else the catalogue default, else ``fallback``."""
    getter = getattr(ctx.options, "param", None)
    try:
        if getter is not None:
            return getter(rule, name)
        return rule_parameters(rule).get(name, fallback)
    except Exception:
        return fallback


def finding_to_diagnostic(f: Finding, obj: str = "", container: str = "") -> Diagnostic:
    """Turn a loader/parser :class:`Finding` into a :class:`Diagnostic` with the rule's severity."""
    return Diagnostic(
        rule=f.rule,
        severity=f.severity or severity_of(f.rule),
        message=f.message,
        loc=f.loc,
        fix=f.fix,
        object=obj,
        container=container,
    )


def gib(n: float) -> str:
    """``n`` bytes as GiB with two decimals (GiB = 2**30 bytes, as vLLM prints)."""
    return f"{n / GiB:.2f} GiB"


def _int(v: Any, default: int) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


@dataclass
class _Ctx:
    cr: ContainerResult
    options: Options
    out: list[Diagnostic] = field(default_factory=list)

    @property
    def obj(self) -> str:
        return self.cr.object_ref

    def add(
        self, rule: str, message: str, loc: Loc | None, fix: str = "", severity: Severity | None = None
    ) -> None:
        self.out.append(
            Diagnostic(
                rule=rule,
                severity=severity or severity_of(rule),
                message=message,
                loc=loc or self.cr.serving.command_loc or self.cr.container.loc or self.cr.workload.loc,
                fix=fix,
                object=self.obj,
                container=self.cr.container_name,
            )
        )


# ---------------------------------------------------------------------------------------------------------
# entry points


def check_container(cr: ContainerResult, options: Options) -> list[Diagnostic]:
    """All per-container checks for one serving container; returns its diagnostics (unsorted)."""
    ctx = _Ctx(cr, options)
    worker = cr.workload.role in ("worker", "head") or cr.workload.kind.lower().startswith("ray")
    for f in cr.serving.findings:
        d = finding_to_diagnostic(f, ctx.obj, cr.container_name)
        if f.rule == "KV503" and worker and cr.serving.model is None and d.severity == "warning":
            # Ray / LeaderWorkerSet workers run `ray start`; the engine command lives in the leader/head.
            d = replace(d, severity="info")
        ctx.out.append(d)
    if cr.serving.model is None:
        # The parser explained why (KV503). Checks that need no model still apply to what was read.
        if not any(f.rule == "KV503" for f in cr.serving.findings):
            ctx.add(
                "KV503", "kvlint found a serving engine in this container but no model in its command", None
            )
        _check_version_pinned(ctx)
        if cr.serving.engine == "vllm" and cr.serving.flags:
            tp, pp, dp = _vllm_parallel(ctx)
            _check_gpu_resources(ctx)
            _check_gpu_count(ctx, tp, pp, dp)
            _check_shm(ctx, tp, pp, dp)
            _check_flags_static(ctx)
        return ctx.out
    _check_version_pinned(ctx)
    if cr.serving.engine == "vllm":
        _check_gpu_resources(ctx)
        _check_vllm(ctx)
    elif cr.serving.engine in ("tgi", "sglang"):
        from kvlint.rules.engine_checks import check_sglang, check_tgi

        check = check_tgi if cr.serving.engine == "tgi" else check_sglang
        ctx.out.extend(check(cr, ctx.options))
    return ctx.out


def check_workload_group(w: Workload, group: Sequence[ContainerResult], options: Options) -> list[Diagnostic]:
    """Checks that look at all serving containers of one PodSpec together (KV106 shared GPUs)."""
    out: list[Diagnostic] = []
    for cr in group:
        ctx = _Ctx(cr, options)
        _check_shared_gpu(ctx, w)
        out.extend(ctx.out)
    return out


# ---------------------------------------------------------------------------------------------------------
# engine-independent checks


#: Oldest vLLM release whose sources engine-memory-model.md read (the newest is NEWEST_VLLM).
OLDEST_VLLM = (0, 4, 3)


def _check_version_pinned(ctx: _Ctx) -> None:
    """KV208: the engine version is unpinned (``latest``, no tag) or outside the releases kvlint models."""
    s = ctx.cr.serving
    if s.version is not None and s.engine == "vllm":
        from kvlint.memory.versions import NEWEST_VLLM, parse_version

        v = parse_version(s.version)
        newest = parse_version(NEWEST_VLLM)
        if v > (newest[0], newest[1], 10**6) or v < OLDEST_VLLM:
            side = "newer than" if v > newest else "older than"
            ctx.add(
                "KV208",
                f"vLLM {s.version} is {side} the releases kvlint models (0.4.3 to {NEWEST_VLLM}); it was planned "
                f"with the rules of {'vLLM ' + NEWEST_VLLM if v > newest else 'the oldest modelled release'}, "
                "which may not match",
                ctx.cr.serving.version_loc or loc_of(s.container, "image"),
                fix="check the image tag, or pass --engine-version with the release the image really runs",
            )
        return
    if s.version is not None or "@sha256:" in s.image:
        return
    chooser = ctx.cr.workload.annotations.get("kvlint.io/image-source")
    if chooser:
        from kvlint.memory.versions import NEWEST_VLLM

        ctx.add(
            "KV208",
            f"the {s.engine} image and its version are chosen by {chooser}; kvlint assumed "
            f"{NEWEST_VLLM if s.engine == 'vllm' else 'the newest known version'} and its memory rules, which "
            "change between releases",
            s.command_loc,
            fix="pass --engine-version (or engine_version in .kvlint.yaml) with the release your installation runs",
        )
        return
    from kvlint.engines.images import split_image

    tag = split_image(s.image)[1]
    if tag is None or tag in ("latest", "nightly", "main"):
        from kvlint.memory.versions import NEWEST_VLLM

        assumed = NEWEST_VLLM if s.engine == "vllm" else "the newest known version"
        shown = f"'{s.image}'" if s.image else "(no image)"
        ctx.add(
            "KV208",
            f"image {shown} does not pin the {s.engine} version (tag {tag or 'missing'}); kvlint assumed {assumed} "
            "and its memory rules, which change between releases",
            loc_of(s.container, "image"),
            fix=f"pin the image to a release tag (e.g. {_PIN_EXAMPLE.get(s.engine, 'vllm/vllm-openai:v0.11.0')}) "
            "or pass --engine-version",
        )


_PIN_EXAMPLE = {
    "vllm": "vllm/vllm-openai:v0.11.0",
    "tgi": "ghcr.io/huggingface/text-generation-inference:3.3.6",
    "sglang": "lmsysorg/sglang:v0.5.5",
}

_NON_CUDA_IMAGE_WORDS = ("tpu", "neuron", "gaudi", "hpu", "cpu", "xpu", "openvino")


def _image_platform(image: str) -> str:
    low = image.lower()
    if "rocm" in low or "amd" in low:
        return "rocm"
    for w in _NON_CUDA_IMAGE_WORDS:
        if w in low:
            return w
    return "cuda"


def _check_gpu_resources(ctx: _Ctx) -> None:
    cr = ctx.cr
    p = cr.placement
    platform = _image_platform(cr.serving.image)
    if p is not None and p.accelerator is not None:
        vendor = p.accelerator.vendor
        expected = {"nvidia": "cuda", "amd": "rocm"}.get(vendor, vendor)
        mismatch = (platform == "cuda" and vendor not in ("nvidia",)) or (
            platform == "rocm" and vendor == "nvidia"
        )
        if mismatch:
            ctx.add(
                "KV304",
                f"image '{cr.serving.image}' is a {platform.upper()} build but the pod is placed on "
                f"{p.accelerator.name} ({vendor}; {p.how})",
                p.loc or loc_of(cr.serving.container, "image"),
                fix=f"use the engine's {expected} image for {p.accelerator.name}, or place the pod on a matching GPU",
            )
    if p is not None and p.resource and p.resource.count("/") == 1 and (p.gpus is None or p.gpus < 1):
        raw = _resource_value(cr.serving.container, p.resource)
        if raw is not None and str(raw).strip() in ("0", "0.0"):
            ctx.add(
                "KV405",
                f"GPU limit {p.resource}: {raw!r} gives the container no GPU: the scheduler places it anywhere and "
                f"{cr.serving.engine} finds no device at start-up",
                p.gpus_loc or loc_of(cr.serving.container, "resources"),
                fix=f"set {p.resource} to the number of GPUs the engine uses, e.g. 1",
                severity="error",
            )
            return
        if raw is not None:
            ctx.add(
                "KV405",
                f"GPU limit {p.resource}: {raw!r} is not a positive whole number; the API server rejects "
                "fractional or negative extended-resource quantities, so this pod is never created",
                p.gpus_loc or loc_of(cr.serving.container, "resources"),
                fix=f"set {p.resource} to the number of GPUs the engine uses, e.g. 1",
                severity="error",
            )
            return
    if p is None or p.gpus is None:
        if platform in ("cuda", "rocm") and not _is_runtime_template(cr.workload):
            ctx.add(
                "KV405",
                f"{cr.serving.engine} container '{cr.container_name}' requests no GPU resource; the scheduler may "
                "place it on a node without a GPU, or it may share one it was not given",
                loc_of(cr.serving.container, "resources") or cr.serving.container.loc,
                fix="set resources.limits['nvidia.com/gpu'] to the number of GPUs the engine uses",
            )


# ---------------------------------------------------------------------------------------------------------
# vLLM


#: KServe kinds whose containers are templates: the InferenceService (or LLMInferenceService) that uses
#: them supplies the resources, GPUs included.
_RUNTIME_TEMPLATE_KINDS = frozenset({"ServingRuntime", "ClusterServingRuntime", "LLMInferenceServiceConfig"})


def _is_runtime_template(w: Workload) -> bool:
    """A KServe serving-runtime template (also inside an OpenShift ``Template``'s ``objects``)."""
    if w.kind in _RUNTIME_TEMPLATE_KINDS:
        return True
    if w.kind == "Template" and w.path.startswith("objects["):
        objects = w.doc.data.get("objects") if isinstance(w.doc.data, dict) else None
        try:
            index = int(w.path[len("objects[") : w.path.index("]")])
        except ValueError:
            return False
        if isinstance(objects, list) and 0 <= index < len(objects) and isinstance(objects[index], dict):
            return objects[index].get("kind") in _RUNTIME_TEMPLATE_KINDS
    return False


def _resource_value(container: LDict, resource: str) -> Any:
    """The raw ``resources.limits`` (else ``requests``) value of ``resource``, or None."""
    res = container.get("resources")
    if not isinstance(res, dict):
        return None
    for section in ("limits", "requests"):
        block = res.get(section)
        if isinstance(block, dict) and resource in block:
            return block[resource]
    return None


def _vllm_parallel(ctx: _Ctx) -> tuple[int, int, int]:
    s = ctx.cr.serving
    tp = max(1, _int(s.get("tensor_parallel_size", 1), 1))
    pp = max(1, _int(s.get("pipeline_parallel_size", 1), 1))
    dp = max(1, _int(s.get("data_parallel_size", 1), 1))
    return tp, pp, dp


def _check_vllm(ctx: _Ctx) -> None:
    cr = ctx.cr
    s = cr.serving
    tp, pp, dp = _vllm_parallel(ctx)
    parallel_ok = True
    if cr.model is None and _is_runtime_template(cr.workload):
        ctx.add(
            "KV502",
            f"the model of this serving-runtime template ('{s.model.value if s.model else '?'}') is supplied by "
            "the InferenceService that uses it, so capacity rules were skipped for the template",
            s.model.loc if s.model else None,
            fix="lint the InferenceServices that use this runtime; kvlint.io/model on the runtime would apply to all",
            severity="info",
        )
    elif cr.model is None:
        reason, _, remedy = (cr.model_error or "").partition("; provide it with ")
        ctx.add(
            "KV502",
            f"no config.json for model '{s.model.value if s.model else '?'}', so capacity rules were skipped: "
            f"{reason or 'unknown reason'}",
            s.model.loc if s.model else None,
            fix=("provide it with " + remedy)
            if remedy
            else "give kvlint the config: --model-dir DIR with <org>--<name>/config.json, a .kvlint.yaml "
            "model_paths entry, the kvlint.io/model annotation, or hub access (HF_TOKEN for gated models)",
        )
    else:
        parallel_ok = _check_heads(ctx, tp)
        _check_dtype(ctx)
        _check_fp8_kv(ctx)
    _check_gpu_count(ctx, tp, pp, dp)
    _check_shm(ctx, tp, pp, dp)
    _check_flags_static(ctx)
    _check_max_len_static(ctx)
    _check_host_memory(ctx, tp, pp, dp)
    if cr.model is None:
        return
    p = cr.placement
    platform = _image_platform(s.image)
    if (p is None or p.accelerator is None) and platform not in ("cuda", "rocm"):
        ctx.add(
            "KV501",
            f"capacity rules skipped: image '{s.image}' is a {platform.upper()} build of {s.engine}, and "
            "kvlint's memory model is for CUDA/ROCm GPUs",
            s.command_loc,
            fix="nothing to change if this workload is meant to run without a GPU; otherwise use the engine's "
            "GPU image and request a GPU",
        )
    elif p is None or p.accelerator is None:
        ctx.add(
            "KV501",
            "kvlint cannot tell which GPU this pod lands on, so capacity rules were skipped",
            s.command_loc,
            fix="add a nodeSelector such as nvidia.com/gpu.product or cloud.google.com/gke-accelerator, the "
            "kvlint.io/accelerator annotation, or run with --accelerator ID (kvlint accelerators lists ids)",
        )
    if parallel_ok and not _rejected_before_loading(ctx):
        _check_capacity(ctx)
    _check_probes(ctx, tp, pp)


#: Findings after which vLLM stops before it serves (argument parsing, config validation, or an attention
#: backend that cannot be built): capacity findings would describe a configuration that never runs, so
#: they are not reported.
_REJECTED_BEFORE_LOADING = frozenset({"KV107", "KV203", "KV204", "KV206", "KV302"})


def _rejected_before_loading(ctx: _Ctx) -> bool:
    return any(d.rule in _REJECTED_BEFORE_LOADING and d.severity == "error" for d in ctx.out)


def _valid_tp_values(heads: int, limit: int) -> list[int]:
    return [t for t in range(1, limit + 1) if heads % t == 0]


def _kv_tp_ok(kv_heads: int, tp: int) -> bool:
    if kv_heads <= 0:
        return True
    return kv_heads % tp == 0 if tp < kv_heads else tp % kv_heads == 0


def _check_heads(ctx: _Ctx, tp: int) -> bool:
    """KV401/KV402. Source: vllm ModelConfig.verify_with_parallel_config (heads % TP) and
    QKVParallelLinear via vllm/distributed/utils.py::divide (KV heads vs TP), vllm@0.11.0-0.33.0."""
    m = ctx.cr.model
    assert m is not None
    s = ctx.cr.serving
    ok = True
    loc = s.loc("tensor_parallel_size")
    heads = m.num_attention_heads
    limit = max(8, tp)
    if heads and heads % tp:
        valid = _valid_tp_values(heads, limit)
        both = [t for t in valid if m.is_mla or _kv_tp_ok(m.num_kv_heads, t)]
        extra = ""
        if not m.is_mla and both != valid:
            others = [t for t in valid if t not in both]
            extra = (
                f"; only {', '.join(map(str, both))} also suit its {m.num_kv_heads} KV heads "
                f"({', '.join(map(str, others))} would fail KV402)"
            )
        ctx.add(
            "KV401",
            f"vLLM requires the {heads} attention heads of {m.id} to be divisible by tensor-parallel-size {tp}; "
            f"start-up fails with 'Total number of attention heads ({heads}) must be divisible by tensor "
            f"parallel size ({tp}).'",
            loc,
            fix=f"tensor-parallel-size values up to {limit} that divide the {heads} heads: "
            f"{', '.join(map(str, valid))}{extra}",
        )
        ok = False
    if not m.is_mla and m.num_kv_heads and not _kv_tp_ok(m.num_kv_heads, tp):
        valid_kv = [t for t in range(1, limit + 1) if _kv_tp_ok(m.num_kv_heads, t) and heads % t == 0]
        ctx.add(
            "KV402",
            f"{m.id} has {m.num_kv_heads} KV heads and tensor-parallel-size is {tp}: neither divides the other, "
            f"so vLLM's QKVParallelLinear fails with '{max(m.num_kv_heads, tp)} is not divisible by "
            f"{min(m.num_kv_heads, tp)}'",
            loc,
            fix=f"use a tensor-parallel-size that divides or is a multiple of {m.num_kv_heads}: "
            f"{', '.join(map(str, valid_kv))}",
        )
        ok = False
    return ok


def _check_dtype(ctx: _Ctx) -> None:
    """KV301: bf16 on compute capability < 8.0.

    Source: vllm/platforms/cuda.py::CudaPlatformBase.check_if_supports_dtype (0.33.0) and
    vllm/worker/worker.py::_check_if_gpu_supports_dtype (V0); auto-dtype fallback to fp16 with a
    warning from 0.9.2 (vllm/config/model.py::_resolve_auto_dtype), error before (engine-memory-model §1.7).
    """
    cr = ctx.cr
    m = cr.model
    p = cr.placement
    if m is not None:
        _check_dtype_for_model(ctx)
    if m is None or p is None or p.accelerator is None or p.accelerator.vendor != "nvidia":
        return
    cc = parse_cc(p.accelerator.compute_capability)
    if cc is None or cc >= (8, 0):
        return
    from kvlint.memory.versions import parse_version

    s = cr.serving
    dtype = str(s.get("dtype", "auto")).lower()
    config_dtype = (m.torch_dtype or "").lower()
    name = p.accelerator.name
    cc_s = p.accelerator.compute_capability
    text = (
        f"'Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {name} GPU has "
        f"compute capability {cc_s}.'"
    )
    if dtype in ("bfloat16", "bf16"):
        ctx.add(
            "KV301",
            f"--dtype {dtype} on {name} (compute capability {cc_s}, {p.how}): vLLM refuses to start with {text}",
            s.loc("dtype"),
            fix="use --dtype=half (float16), or schedule onto an Ampere or newer GPU (compute capability >= 8.0)",
        )
        return
    if dtype == "auto" and config_dtype == "bfloat16":
        version = parse_version(s.version)
        if version < (0, 9, 2):
            ctx.add(
                "KV301",
                f"{m.id} is bfloat16 (config.json torch_dtype) and --dtype is auto; vLLM {s.version or '?'} keeps "
                f"bf16 on {name} (compute capability {cc_s}) and fails with {text}",
                s.loc("dtype") if "dtype" in s.flags else (s.model.loc if s.model else None),
                fix="pass --dtype=half, or use vLLM >= 0.9.2, which falls back to float16 with a warning",
            )


#: Model types vLLM refuses to run in float16 ("Numerical instability"): vllm/config/model.py
#: ``_FLOAT16_NOT_SUPPORTED_MODELS`` / ``_check_valid_dtype`` (list as of 0.33.0; the check is in the
#: 0.9-era ``vllm/config.py`` too, engine-memory-model §1.7 item 6).
FLOAT16_NOT_SUPPORTED = ("gemma2", "gemma3", "gemma3_text", "glm4")


def _check_dtype_for_model(ctx: _Ctx) -> None:
    """KV303: an explicit ``--dtype half/float16`` for a model type vLLM refuses in float16 (from 0.9)."""
    from kvlint.memory.versions import parse_version

    cr = ctx.cr
    m = cr.model
    s = cr.serving
    assert m is not None
    dtype = str(s.get("dtype", "auto")).lower()
    mtype = (m.model_type or "").lower()
    if dtype not in ("half", "float16", "fp16") or mtype not in FLOAT16_NOT_SUPPORTED:
        return
    if parse_version(s.version) < (0, 9, 0):
        return
    ctx.add(
        "KV303",
        f"--dtype {dtype} for {m.id} (model_type {mtype}): vLLM refuses with 'The model type '{mtype}' does not "
        "support float16. Reason: Numerical instability. Please use bfloat16 or float32 instead.'",
        s.loc("dtype"),
        fix="use --dtype bfloat16 (compute capability >= 8.0) or --dtype float32; on a T4/V100 --dtype auto "
        "picks float32 for this model, which needs twice the weight memory",
    )


def _check_gpu_count(ctx: _Ctx, tp: int, pp: int, dp: int) -> None:
    """KV403: TP x PP (x local DP) against the GPUs the pod requests.

    Source: vllm/config/parallel.py::ParallelConfig.__post_init__ ("World size (W) is larger than the
    number of available GPUs (G) in this node") and vllm/v1/worker/gpu_worker.py::Worker.init_device
    (local rank bound), engine-memory-model §1.10.
    """
    cr = ctx.cr
    p = cr.placement
    if p is None or p.gpus is None or p.gpus < 1:
        return
    s = cr.serving
    world = tp * pp
    dp_local = max(1, _int(s.get("data_parallel_size_local", dp), dp))
    need = world * dp_local
    w = cr.workload
    nodes = max(1, _int(s.get("nnodes", 1), 1))
    pods = 1
    if w.group_size and w.group_size > 1:
        pods = w.group_size
    elif nodes > 1:
        pods = nodes
    have = p.gpus * pods
    ray = str(s.get("distributed_executor_backend", "")).lower() == "ray" or w.kind.lower().startswith("ray")
    where = f"{p.resource}: {p.gpus}" + (f" x {pods} pods" if pods > 1 else "")
    desc = f"tensor-parallel-size {tp}" + (f" x pipeline-parallel-size {pp}" if pp > 1 else "")
    if dp_local > 1:
        desc += f" x data-parallel-size {dp_local}"
    if need > have:
        if ray:
            return  # a Ray cluster may contribute GPUs from other pods
        ctx.add(
            "KV403",
            f"{desc} needs {need} GPUs but the pod requests {have} ({where}); vLLM fails at start-up "
            f"('World size ({need}) is larger than the number of available GPUs ({have}) in this node')",
            s.loc("tensor_parallel_size") if "tensor_parallel_size" in s.flags else p.gpus_loc,
            fix=(
                f"request {need // pods if need % pods == 0 else need} GPUs per pod ({p.resource}) or lower "
                f"the parallel sizes so their product is {have}"
            )
            if need // pods <= 8
            else (
                f"{need} GPUs do not fit one node (8 GPUs at most on common GPU nodes): keep "
                "tensor-parallel-size within a node (<= 8) and span nodes with --pipeline-parallel-size on a "
                "LeaderWorkerSet (group size = number of nodes) or a Ray cluster"
            ),
        )
    elif need < have and not ray:
        ctx.add(
            "KV403",
            f"the pod requests {have} GPUs ({where}) but {desc} uses only {need}; {have - need} GPU(s) sit idle",
            p.gpus_loc,
            fix=f"request {need} GPU(s), or raise tensor-parallel-size/data-parallel-size to use all {have}",
            severity="warning",
        )


def _check_shm(ctx: _Ctx, tp: int, pp: int, dp: int) -> None:
    """KV404: multi-GPU engines need a memory-backed /dev/shm (NCCL and vLLM's shared-memory
    broadcast); container runtimes give 64 MiB by default. KubeRay adds one to Ray pods itself."""
    cr = ctx.cr
    if tp * pp * dp <= 1:
        return
    w = cr.workload
    if w.kind.lower().startswith("ray") or _has_memory_shm(w.pod_spec, cr.container):
        return
    s = cr.serving
    loc = s.loc("tensor_parallel_size") if tp > 1 else s.loc("pipeline_parallel_size")
    ctx.add(
        "KV404",
        f"{tp * pp * dp} GPU workers (TP {tp}, PP {pp}, DP {dp}) communicate through /dev/shm, but no "
        "memory-backed volume is mounted there; the container runtime default is 64 MiB and NCCL fails or hangs",
        loc,
        fix="add volume {name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}} and mount it at /dev/shm",
    )


def _memory_limit(container: LDict) -> tuple[int, Loc | None] | None:
    """``(bytes, position)`` of the container's ``resources.limits.memory``; None when unset or unreadable."""
    from kvlint.accelerators.quantity import parse_quantity

    res = container.get("resources")
    limits = res.get("limits") if isinstance(res, dict) else None
    if not isinstance(limits, dict) or limits.get("memory") is None:
        return None
    try:
        value = parse_quantity(limits["memory"])
    except (ValueError, TypeError):
        return None
    return (value, loc_of(limits, "memory")) if value > 0 else None


def _model_weight_bytes(cr: ContainerResult) -> int | None:
    """Whole-model weight bytes from :func:`kvlint.models.weights.weight_bytes` at the planned dtype (the
    checkpoint size when known, else kvlint's estimate from config.json); None without a model."""
    if cr.model is None:
        return None
    from kvlint.models.weights import weight_bytes

    dbytes = 4 if cr.plan is not None and cr.plan.dtype in ("float32", "float") else 2
    try:
        quant = cr.serving.get("quantization")
        return int(weight_bytes(cr.model, dtype_bytes=dbytes, quantization=str(quant) if quant else None)[0])
    except Exception:  # an estimate only; never let it break the check
        return None


def _check_host_memory(ctx: _Ctx, tp: int, pp: int, dp: int) -> None:
    """KV406: the container memory limit against the host memory vLLM pins (never reclaimable).

    Pinned host memory per pod, each term from vLLM's source:

    * ``--cpu-offload-gb`` GiB **per GPU** of weights copied to pinned CPU memory, stopping when the
      weights run out (``vllm@0.33.0:vllm/config/offload.py::UVAOffloadConfig.cpu_offload_gb``;
      ``vllm/model_executor/offloader/uva.py``: offloads until ``cpu_offload_max_bytes``, ``pin_memory``).
    * V0 only: ``--swap-space`` GiB per GPU (default 4) of CPU KV blocks, allocated pinned
      (``vllm@0.10.2:vllm/worker/worker.py`` ``num_cpu_blocks = swap_space_bytes // cache_block_size``;
      ``vllm/worker/cache_engine.py`` ``pin_memory``). V1 allocates none (``vllm/v1/engine/core.py``
      ``num_cpu_blocks = 0``).
    * ``--kv-offloading-size`` GiB, the total across TP ranks, with the ``native`` backend
      (``vllm@0.33.0:vllm/config/vllm.py::VllmConfig._post_init_kv_transfer_config``:
      ``cpu_bytes_to_use``); ``lmcache`` keeps it in its own server. Counted once per engine (data-parallel
      rank) in the pod; a split across pipeline stages is not modelled.

    GPUs in the pod: the GPU limit when set, else TP x PP x local DP. Optionally (parameter
    ``min_weights_fraction``, default 0 = off) the limit must also hold that fraction of the weight bytes
    the pod loads: page cache is reclaimable, so this is a heuristic and off by default.
    """
    cr = ctx.cr
    s = cr.serving
    if s.engine != "vllm":
        return
    found = _memory_limit(cr.container)
    if found is None:
        return
    limit, limit_loc = found
    dp_local = max(1, _int(s.get("data_parallel_size_local", dp), dp))
    p = cr.placement
    gpus = p.gpus if p is not None and p.gpus else tp * pp * dp_local
    parts: list[tuple[str, int]] = []
    plan = cr.plan
    offload = as_float(s.get("cpu_offload_gb")) or 0.0
    if offload > 0:
        per_gpu = int(offload * GiB)
        total = _model_weight_bytes(cr)
        if total:  # offloading stops when the GPU's share of the weights runs out
            per_gpu = min(per_gpu, total // max(1, tp * pp))
        shown = (
            f"{offload:g} GiB" if per_gpu == int(offload * GiB) else f"{gib(per_gpu)} (the weights per GPU)"
        )
        parts.append((f"--cpu-offload-gb {shown} x {gpus} GPU(s)", per_gpu * gpus))
    if plan is not None and plan.era == "v0":
        swap = as_float(s.get("swap_space"))
        swap = 4.0 if swap is None else swap
        if swap > 0:
            parts.append((f"--swap-space {swap:g} x {gpus} GPU(s) (V0 engine)", int(swap * GiB) * gpus))
    kv_off = as_float(s.get("kv_offloading_size")) or 0.0
    if kv_off > 0 and str(s.get("kv_offloading_backend") or "native").lower() == "native":
        parts.append(
            (
                f"--kv-offloading-size {kv_off:g}" + (f" x {dp_local} DP ranks" if dp_local > 1 else ""),
                int(kv_off * GiB) * dp_local,
            )
        )
    pinned = sum(b for _, b in parts)
    fraction = float(_param(ctx, "KV406", "min_weights_fraction", 0.0) or 0.0)
    weights = 0
    if fraction > 0 and plan is not None:
        offloaded = sum(b for n, b in parts if n.startswith("--cpu-offload-gb"))
        weights = int(fraction * (plan.weights_bytes * gpus + offloaded))
    need = pinned + weights
    if need <= limit:
        return
    detail = " + ".join(f"{name} = {gib(b)}" for name, b in parts)
    if weights:
        detail += (
            " + " if detail else ""
        ) + f"min_weights_fraction {fraction:g} x the weights it loads = {gib(weights)}"
    what = "host memory vLLM pins" if not weights else "host memory this pod needs"
    lower = "/".join(n.split()[0] for n, _ in parts)
    ctx.add(
        "KV406",
        f"container memory limit {gib(limit)} is below the {gib(need)} of {what} ({detail}); pinned memory "
        "cannot be reclaimed, so the container is OOMKilled (exit code 137) while the engine starts",
        limit_loc or s.command_loc,
        fix=f"raise resources.limits.memory to at least {math.ceil(need / GiB)}Gi plus the engine process itself"
        + (f", or lower {lower}" if lower else ""),
    )


def _has_memory_shm(pod_spec: LDict, container: LDict) -> bool:
    if pod_spec.get("hostIPC") is True:
        return True
    volumes = {}
    raw_volumes = pod_spec.get("volumes")
    for v in raw_volumes if isinstance(raw_volumes, list) else []:
        if isinstance(v, dict) and isinstance(v.get("name"), str):
            volumes[v["name"]] = v
    raw_mounts = container.get("volumeMounts")
    for m in raw_mounts if isinstance(raw_mounts, list) else []:
        if not isinstance(m, dict):
            continue
        if str(m.get("mountPath", "")).rstrip("/") != "/dev/shm":
            continue
        name = m.get("name")
        vol = volumes.get(name) if isinstance(name, str) else None
        if not isinstance(vol, dict):
            continue
        ed = vol.get("emptyDir")
        if isinstance(ed, dict) and str(ed.get("medium", "")).lower() == "memory":
            return True
        hp = vol.get("hostPath")
        if isinstance(hp, dict) and str(hp.get("path", "")).rstrip("/") == "/dev/shm":
            return True
    return False


def _check_flags_static(ctx: _Ctx) -> None:
    """KV107, KV203, KV204: values vLLM's config validation rejects before loading anything.

    Sources: vllm/config/cache.py::CacheConfig.gpu_memory_utilization (0, 1] (pydantic, >=0.11.1; a
    ValueError in _verify_args before); vllm/config/scheduler.py::SchedulerConfig.verify_max_model_len
    (engine-memory-model §1.9, E7).
    """
    s = ctx.cr.serving
    util = s.get("gpu_memory_utilization")
    if util is not None:
        try:
            u = float(util)
        except (TypeError, ValueError):
            u = None
        if u is not None and not (0.0 < u <= 1.0):
            ctx.add(
                "KV107",
                f"--gpu-memory-utilization {util} is outside (0, 1]: it is the fraction of the GPU's memory vLLM "
                "may use, not a percentage or GiB",
                s.loc("gpu_memory_utilization"),
                fix="use a fraction such as 0.90",
            )
    mbt = s.get("max_num_batched_tokens")
    mml = s.get("max_model_len")
    mns = s.get("max_num_seqs")
    chunked = s.get("enable_chunked_prefill")
    if isinstance(mbt, int) and isinstance(mml, int) and mml > 0 and chunked is False and mbt < mml:
        ctx.add(
            "KV203",
            f"chunked prefill is disabled and max_num_batched_tokens ({mbt}) is smaller than max_model_len "
            f"({mml}); vLLM refuses: 'max_num_batched_tokens ({mbt}) is smaller than max_model_len ({mml})'",
            s.loc("max_num_batched_tokens"),
            fix=f"raise --max-num-batched-tokens to at least {mml}, or enable chunked prefill",
        )
    default_mbt = False
    if not isinstance(mbt, int) and isinstance(mns, int) and ctx.cr.plan is not None:
        mbt, default_mbt = ctx.cr.plan.max_num_batched_tokens, True  # the version's default for this GPU
    if isinstance(mbt, int) and isinstance(mns, int) and mbt < mns:
        ctx.add(
            "KV204",
            f"max_num_batched_tokens ({mbt}{', the vLLM default here' if default_mbt else ''}) must be greater "
            f"than or equal to max_num_seqs ({mns}); vLLM refuses to start (SchedulerConfig validation)",
            s.loc("max_num_seqs") if default_mbt else s.loc("max_num_batched_tokens"),
            fix=f"{'set' if default_mbt else 'raise'} --max-num-batched-tokens to at least {mns} or lower "
            f"--max-num-seqs to {mbt}",
        )


def _derived_len(ctx: _Ctx) -> tuple[int | None, int | None, str]:
    """(derived max_model_len, model_max_length key or None, why) as vLLM derives them for this version."""
    cr = ctx.cr
    if cr.model is None:
        return None, None, ""
    from kvlint.memory import defaults
    from kvlint.memory.versions import parse_version

    overrides = getattr(cr.settings, "hf_overrides", None) or None
    try:
        derived, _key, mml_key, why = defaults.derive_max_model_len(
            parse_version(cr.serving.version), cr.model, overrides
        )
    except Exception:
        return None, None, ""
    return int(derived), mml_key, why


def _check_max_len_static(ctx: _Ctx) -> None:
    """KV201/KV202: max-model-len against the length vLLM derives from config.json.

    Source: vllm/config/model.py::_get_and_verify_max_len (0.11.0; 0.33.0 via
    model_arch_config_convertor.derive_max_model_len_and_key), engine-memory-model §1.8, E6.
    """
    cr = ctx.cr
    s = cr.serving
    if cr.model is None:
        return
    mml = s.get("max_model_len")
    derived, mml_key, why = _derived_len(ctx)
    given_but_unreadable = any(
        f.rule in ("KV206", "KV503") and "max-model-len" in f.message.replace("_", "-") for f in s.findings
    )
    if mml is None and given_but_unreadable:
        return  # the parser reported the unreadable value; "unset" would contradict it
    if mml is None:
        need = ""
        if cr.plan is not None and derived:
            need = f"; one such request needs {gib(cr.plan.per_request_bytes)} of KV cache per GPU"
        where = f" ({derived} tokens{need})" if derived else ""
        ctx.add(
            "KV202",
            f"no --max-model-len: vLLM uses the model's full context from config.json{where}, which sizes "
            "admission and the start-up fit check",
            s.command_loc,
            fix="set --max-model-len to the longest prompt + output you serve, e.g. --max-model-len "
            f"{min(derived or 32768, 32768)}",
        )
        return
    if not isinstance(mml, int) or mml <= 0 or not derived:
        return
    allow = str(s.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "")).lower() in ("1", "true")
    if mml > derived and not allow and not (mml_key and mml <= mml_key):
        ctx.add(
            "KV201",
            f"--max-model-len {mml} is greater than the {derived} tokens vLLM {cr.serving.version or ''} derives "
            f"from {cr.model.id}'s config.json ({why}); start-up fails ('User-specified max_model_len ({mml}) is "
            "greater than the derived max_model_len')",
            s.loc("max_model_len"),
            fix=f"use --max-model-len {derived} or less (or set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 only if the "
            "model really supports the longer context, e.g. through rope scaling)",
        )


# ---------------------------------------------------------------------------------------------------------
# capacity (vLLM)


def _replan(ctx: _Ctx, **changes: Any) -> MemoryPlan | None:
    from kvlint.memory.stage import replan

    d = replan(ctx.cr, **changes)
    return d.plan if d is not None else None


def _fits(plan: MemoryPlan | None, min_concurrency: float = 1.0, band: float = 0.05) -> bool:
    """A remedy counts only if the re-planned workload is robustly fine: ``min_concurrency`` requests of
    max-model-len fit at the central estimate, one fits at the low end of the band, and the spare room is
    not within ``band`` (KV105's parameter) of the limit — so applying it never produces KV103 or KV105."""
    if plan is None or plan.kv_cache_bytes <= 0:
        return False
    if plan.max_concurrency < min_concurrency or plan.max_concurrency_low < 1.0:
        return False
    headroom = plan.kv_cache_bytes - plan.per_request_bytes
    return plan.max_concurrency >= 1.25 or headroom >= band * plan.kv_cache_bytes


def _band(ctx: _Ctx) -> float:
    return float(_param(ctx, "KV105", "band", 0.05))


def _tp_remedy(ctx: _Ctx, min_concurrency: float = 1.0) -> str:
    """The smallest valid TP (up to 8) that makes the plan fit, verified by re-planning."""
    m = ctx.cr.model
    plan = ctx.cr.plan
    if m is None or plan is None:
        return ""
    p = ctx.cr.placement
    if p is not None and (p.memory_bytes_override and "mig" in (p.resource or p.how or "").lower()):
        return ""  # MIG slices have no peer-to-peer path between them: vLLM cannot shard across them
    cur = plan.tensor_parallel_size
    for t in (2, 4, 8):
        if t <= cur or (m.num_attention_heads % t) or (not m.is_mla and not _kv_tp_ok(m.num_kv_heads, t)):
            continue
        p2 = _replan(ctx, tensor_parallel_size=t)
        if _fits(p2, min_concurrency, _band(ctx)):
            assert p2 is not None
            return (
                f"--tensor-parallel-size {t} (and {t * plan.pipeline_parallel_size} GPUs per pod) fits: "
                f"{gib(p2.kv_cache_bytes)} KV per GPU, {p2.capacity_tokens:,} tokens, {p2.max_concurrency:.2f}x"
            )
    return ""


def _util_remedy(ctx: _Ctx, min_concurrency: float = 1.0) -> str:
    """The smallest --gpu-memory-utilization (2 decimals, at most 0.98) that makes the plan fit robustly,
    found by bisection over re-plans (the KV budget grows monotonically with utilization)."""
    plan = ctx.cr.plan
    if plan is None:
        return ""
    band = _band(ctx)
    lo = int(math.floor(plan.gpu_memory_utilization * 100 + 1e-9))  # hundredths; known not to fit
    hi = 98
    if lo >= hi:
        return ""
    best = _replan(ctx, gpu_memory_utilization=hi / 100)
    if not _fits(best, min_concurrency, band):
        return ""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        p2 = _replan(ctx, gpu_memory_utilization=mid / 100)
        if _fits(p2, min_concurrency, band):
            hi, best = mid, p2
        else:
            lo = mid
    assert best is not None
    return (
        f"--gpu-memory-utilization {hi / 100:.2f} fits ({gib(best.kv_cache_bytes)} KV per GPU, "
        f"{best.max_concurrency:.2f}x) if nothing else uses the GPU"
    )


def _fp8_support(ctx: _Ctx, kv_cache_dtype: str, acc: Accelerator | None = None) -> Any:
    """:func:`kvlint.memory.fp8kv.fp8_kv_support` for this container with ``kv_cache_dtype`` on ``acc`` (by
    default the GPU the pod lands on); None when the GPU is unknown."""
    from kvlint.memory.fp8kv import forced_backend, fp8_kv_support
    from kvlint.memory.versions import resolve_version

    cr = ctx.cr
    if acc is None:
        acc = cr.placement.accelerator if cr.placement else None
    if acc is None:
        return None
    s = cr.serving
    v, _ = resolve_version(s.version)
    model = cr.model
    return fp8_kv_support(
        v,
        kv_cache_dtype,
        vendor=acc.vendor,
        cc=parse_cc(acc.compute_capability),
        gpu_has_fp8=acc.fp8,
        is_mla=bool(model is not None and model.is_mla),
        head_size=model.head_size if model is not None else None,
        dtype=cr.plan.dtype if cr.plan is not None else "bfloat16",
        architectures=tuple(model.architectures) if model is not None else (),
        use_v1_env=truthy(s.env.get("VLLM_USE_V1")),
        backend=forced_backend(v, s.env.get("VLLM_ATTENTION_BACKEND"), s.get("attention_backend")),
        mla_disabled=bool(truthy(s.env.get("VLLM_MLA_DISABLE"))),
    )


def _check_fp8_kv(ctx: _Ctx) -> None:
    """KV302: an fp8 KV cache this vLLM release cannot run on this GPU (:mod:`kvlint.memory.fp8kv`)."""
    s = ctx.cr.serving
    kvd = str(s.get("kv_cache_dtype") or "auto").lower()
    if not kvd.startswith("fp8"):
        return
    sup = _fp8_support(ctx, kvd)
    if sup is None or sup.outcome not in ("raises", "likely_raises"):
        return
    acc = ctx.cr.placement.accelerator if ctx.cr.placement else None
    gpu = acc.name if acc is not None else "this GPU"
    likely = sup.outcome == "likely_raises"
    ctx.add(
        "KV302",
        f"--kv-cache-dtype {kvd} on {gpu} with vLLM {s.version or 'assumed newest'}: {sup.why}; the engine "
        f"{'most likely fails' if likely else 'fails'} at start-up ({sup.source})",
        s.loc("kv_cache_dtype"),
        fix=(
            "use --kv-cache-dtype fp8 (e4m3, which this release runs here) or auto"
            if kvd == "fp8_e5m2" and getattr(_fp8_support(ctx, "fp8"), "outcome", "") == "ok"
            else "use --kv-cache-dtype auto (the KV cache then takes 2 bytes per element: re-check capacity)"
        )
        + _fp8_alternatives(ctx, kvd),
        severity="warning" if likely else None,
    )


def _fp8_alternatives(ctx: _Ctx, kvd: str) -> str:
    """``, or ...`` naming catalogue GPUs (other than the pod's) on which this vLLM release runs ``kvd``
    for this model, as :mod:`kvlint.memory.fp8kv` decides; empty when none is known."""
    from kvlint.accelerators.registry import lookup
    from kvlint.memory.versions import fmt_version, resolve_version

    cr = ctx.cr
    here = cr.placement.accelerator if cr.placement else None
    v, _ = resolve_version(cr.serving.version)
    names = []
    for gid in ("nvidia-l4", "nvidia-l40s", "nvidia-h100-sxm5-80gb", "nvidia-b200"):
        acc = lookup(gid)
        if acc is None or (here is not None and acc.id == here.id):
            continue
        sup = _fp8_support(ctx, kvd, acc)
        if sup.outcome == "ok":
            names.append(acc.name)
    return f", or a GPU where vLLM {fmt_version(v)} runs it ({', '.join(names)})" if names else ""


def _fp8_remedy(ctx: _Ctx, min_concurrency: float = 1.0) -> str:
    cr = ctx.cr
    plan = cr.plan
    acc = cr.placement.accelerator if cr.placement else None
    if plan is None or acc is None or plan.kv_cache_dtype.startswith("fp8"):
        return ""
    sup = _fp8_support(ctx, "fp8")
    if sup is None or sup.outcome != "ok":  # never suggest what the engine cannot run here
        return ""
    p2 = _replan(ctx, kv_cache_dtype="fp8")
    if _fits(p2, min_concurrency, _band(ctx)):
        assert p2 is not None
        switch = (
            f" (vLLM {p2.engine_version} runs it with its {p2.era.upper()} engine on this GPU, whose memory use "
            "differs)"
            if p2.era != plan.era
            else ""
        )
        return (
            f"--kv-cache-dtype fp8 halves KV per token ({p2.kv_bytes_per_token:,} B): {p2.capacity_tokens:,} tokens, "
            f"{p2.max_concurrency:.2f}x at max-model-len {p2.max_model_len:,}{switch}"
        )
    return ""


def _len_remedy(ctx: _Ctx, min_concurrency: float = 1.0) -> str:
    """The largest max-model-len (below the current one) at which ``min_concurrency`` requests fit robustly
    (see :func:`_fits`), verified by re-planning. vLLM's own estimate
    (:func:`kvlint.memory.vllm.largest_fitting_max_model_len`, the figure its E1 error prints) is quoted
    beside it when the two differ."""
    cr = ctx.cr
    plan = cr.plan
    if plan is None or plan.kv_bytes_per_token <= 0 or plan.num_blocks <= 0:
        return ""
    engine_estimate = 0
    try:
        from kvlint.memory.vllm import largest_fitting_max_model_len

        assert cr.settings is not None and cr.model is not None and cr.placement is not None
        acc = cr.placement.accelerator
        engine_estimate = int(
            largest_fitting_max_model_len(
                cr.settings,
                cr.model,
                cr.placement.memory_bytes or 0,
                gpu_name=acc.name if acc else "",
                compute_capability=acc.compute_capability if acc else None,
            )
        )
    except Exception:
        engine_estimate = 0
    low_tokens = plan.num_blocks_low * plan.block_size if plan.block_size else plan.capacity_tokens
    start = int(min(low_tokens, plan.capacity_tokens / max(min_concurrency, 1e-9)))
    if engine_estimate > 0:
        start = min(start, engine_estimate)
    start = min(start, plan.max_model_len - 1)
    if start >= 2048:
        start = start // 1024 * 1024
    elif plan.block_size:
        start = start // plan.block_size * plan.block_size
    cand = start
    for _ in range(24):
        if cand <= 0:
            break
        p2 = _replan(ctx, max_model_len=cand)
        if _fits(p2, min_concurrency, _band(ctx)):
            assert p2 is not None
            note = ""
            if engine_estimate and engine_estimate != cand:
                note = f"; vLLM's own estimate of the maximum is {engine_estimate:,}"
            return (
                f"--max-model-len {cand} fits ({p2.max_concurrency:.2f}x concurrent requests of that length, "
                f"also at the low end of the band{note})"
            )
        step = max(plan.block_size or 16, cand // 16)
        cand = cand - step
        if cand >= 2048:
            cand = cand // 1024 * 1024
    return ""


def _join_fixes(*fixes: str) -> str:
    parts = [f for f in fixes if f]
    return "; or ".join(parts)


def _kv_bytes_bypass(cr: ContainerResult) -> bool:
    """True when ``--kv-cache-memory-bytes`` fixes the KV size (vLLM >= 0.10.2; utilization is then ignored,
    ``vllm/v1/worker/gpu_worker.py::determine_available_memory``)."""
    from kvlint.memory.versions import has_kv_cache_memory_bytes, parse_version

    if cr.settings is None or getattr(cr.settings, "kv_cache_memory_bytes", None) is None:
        return False
    return bool(has_kv_cache_memory_bytes(parse_version(cr.serving.version)))


def _plan_summary(plan: MemoryPlan) -> str:
    if plan.budget_bytes != math.ceil(
        plan.total_bytes * plan.gpu_memory_utilization
    ) and plan.kv_cache_bytes == (plan.kv_cache_bytes_low):
        return (
            f"per GPU: {gib(plan.weights_bytes)} weights + {gib(plan.activation_bytes)} activation + "
            f"{gib(plan.non_torch_bytes)} non-torch + {gib(plan.cudagraph_bytes)} CUDA graphs + "
            f"{gib(plan.kv_cache_bytes)} KV cache (--kv-cache-memory-bytes) = {gib(plan.budget_bytes)} of "
            f"{gib(plan.total_bytes)}"
        )
    return (
        f"per GPU: {gib(plan.total_bytes)} x {plan.gpu_memory_utilization:.2f} = {gib(plan.budget_bytes)} budget"
        f" - {gib(plan.weights_bytes)} weights - {gib(plan.activation_bytes)} activation"
        f" - {gib(plan.non_torch_bytes)} non-torch"
        + (f" - {gib(plan.cudagraph_bytes)} CUDA graphs" if plan.cudagraph_bytes else "")
        + f" = {gib(plan.kv_cache_bytes)} KV cache (range {gib(plan.kv_cache_bytes_low)} to {gib(plan.kv_cache_bytes_high)})"
    )


def _check_capacity(ctx: _Ctx) -> None:
    """KV101-KV105 from the memory plan (vLLM start-up checks E1/E2, engine-memory-model §1.11).

    Verdicts use the plan's band: KV103 (fail) when even the optimistic bound cannot hold one
    max-model-len request, KV105 (risky) when the band straddles the limit, KV104 below the minimum
    concurrency at the central estimate.
    """
    cr = ctx.cr
    plan = cr.plan
    s = cr.serving
    if plan is None:
        acc0 = cr.placement.accelerator if cr.placement else None
        if cr.plan_error and acc0 is not None:
            if acc0.vendor not in ("nvidia", "amd"):
                ctx.add(
                    "KV501",
                    f"capacity rules skipped: {cr.plan_error} ({cr.placement.how if cr.placement else ''})",
                    cr.placement.loc if cr.placement else None,
                    fix="kvlint models NVIDIA and AMD GPUs; check this workload's memory with the vendor's tools",
                )
            else:
                ctx.add(
                    "KV502",
                    f"kvlint could not size {cr.model.id if cr.model else 'the model'}: {cr.plan_error}",
                    s.model.loc if s.model else s.command_loc,
                    fix="check that config.json describes a decoder LLM; pass --model-dir with a corrected config",
                )
        return
    if not (0.0 < plan.gpu_memory_utilization <= 1.0):
        return  # KV107 reports the value; a plan built on it would mislead
    acc = cr.placement.accelerator if cr.placement else None
    where = f"{acc.name} ({cr.placement.how})" if acc and cr.placement else "the GPU"
    version = f"vLLM {plan.engine_version}"
    summary = _plan_summary(plan)
    len_loc = s.loc("max_model_len") if "max_model_len" in s.flags else s.command_loc
    util_loc = s.loc("gpu_memory_utilization") if "gpu_memory_utilization" in s.flags else s.command_loc
    bypass = _kv_bytes_bypass(cr)
    if bypass and plan.budget_bytes > plan.total_bytes:
        ctx.add(
            "KV101",
            f"with --kv-cache-memory-bytes the engine holds {gib(plan.weights_bytes)} weights + "
            f"{gib(plan.activation_bytes + plan.non_torch_bytes + plan.cudagraph_bytes)} activation and runtime + "
            f"{gib(plan.kv_cache_bytes)} KV cache = {gib(plan.budget_bytes)} per GPU, more than the "
            f"{gib(plan.total_bytes)} of {where}: start-up fails with CUDA out of memory",
            s.loc("kv_cache_memory_bytes"),
            fix=f"--kv-cache-memory-bytes {max(0, plan.total_bytes - (plan.budget_bytes - plan.kv_cache_bytes)) * 9 // 10}"
            " or less (90% of what is left), or more GPUs",
        )
        return
    if not bypass and plan.weights_bytes > plan.budget_bytes:
        ctx.add(
            "KV101",
            f"weights need {gib(plan.weights_bytes)} per GPU but {version} may use only {gib(plan.budget_bytes)} of "
            f"{where} ({gib(plan.total_bytes)} x gpu-memory-utilization {plan.gpu_memory_utilization:.2f}); "
            "loading fails with CUDA out of memory",
            s.loc("tensor_parallel_size")
            if "tensor_parallel_size" in s.flags
            else (s.model.loc if s.model else None),
            fix=_join_fixes(_tp_remedy(ctx), "a quantized checkpoint (FP8/AWQ/GPTQ) of the model"),
        )
        return
    if plan.kv_cache_bytes <= 0:
        ctx.add(
            "KV102",
            f"no memory is left for the KV cache on {where}: {summary}; {version} fails with 'No available memory "
            "for the cache blocks'",
            util_loc,
            fix=_join_fixes(_util_remedy(ctx), _tp_remedy(ctx)) or "use a larger GPU or a quantized model",
        )
        return
    if plan.max_model_len_source == "auto":
        return
    if plan.max_concurrency_high < 1.0:
        ctx.add(
            "KV103",
            f"one request of max-model-len {plan.max_model_len:,} tokens needs {gib(plan.per_request_bytes)} of KV "
            f"cache per GPU ({plan.kv_bytes_per_token:,} B/token), but {version} on {where} has about "
            f"{gib(plan.kv_cache_bytes)} ({summary}); start-up fails with 'To serve at least one request with the "
            "model's max seq len ... KV cache is needed, which is larger than the available KV cache memory'",
            len_loc,
            fix=_join_fixes(_len_remedy(ctx), _fp8_remedy(ctx), _util_remedy(ctx), _tp_remedy(ctx))
            or "use a larger GPU or more GPUs",
        )
        return
    if plan.max_concurrency_low < 1.0:
        central = "fits" if plan.max_concurrency >= 1.0 else "does not fit"
        ctx.add(
            "KV105",
            f"one max-model-len request ({plan.max_model_len:,} tokens, {gib(plan.per_request_bytes)} of KV per GPU) "
            f"{central} the predicted KV cache ({gib(plan.kv_cache_bytes)}), and the verdict flips inside "
            f"kvlint's prediction band ({gib(plan.kv_cache_bytes_low)} to {gib(plan.kv_cache_bytes_high)}): "
            f"start-up may fail on some nodes; {summary}",
            len_loc,
            fix=_join_fixes(_len_remedy(ctx), _fp8_remedy(ctx), _util_remedy(ctx)),
        )
        return
    band = float(_param(ctx, "KV105", "band", 0.05))
    headroom = plan.kv_cache_bytes - plan.per_request_bytes
    if plan.max_concurrency < 1.25 and 0 <= headroom < band * plan.kv_cache_bytes:
        ctx.add(
            "KV105",
            f"one max-model-len request ({plan.max_model_len:,} tokens, {gib(plan.per_request_bytes)} of KV per GPU) "
            f"fits the predicted KV cache ({gib(plan.kv_cache_bytes)}) with only {gib(headroom)} to spare, less "
            f"than the configured band ({band:g} x the KV cache = {gib(band * plan.kv_cache_bytes)}): start-up may "
            f"fail on some nodes; {summary}",
            len_loc,
            fix=_join_fixes(_len_remedy(ctx), _fp8_remedy(ctx), _util_remedy(ctx)),
        )
        return
    min_c = float(_param(ctx, "KV104", "min_concurrency", 2.0))
    if plan.max_concurrency < min_c:
        ctx.add(
            "KV104",
            f"the KV cache holds {plan.capacity_tokens:,} tokens per replica on {where}: only "
            f"{plan.max_concurrency:.2f} requests of max-model-len {plan.max_model_len:,} fit at once (minimum "
            f"{min_c:g}); further long requests queue or are preempted; {summary}",
            len_loc,
            fix=_join_fixes(_len_remedy(ctx, min_c), _fp8_remedy(ctx, min_c), _tp_remedy(ctx, min_c)),
        )


# ---------------------------------------------------------------------------------------------------------
# probes


def _probe_window(probe: Any) -> int | None:
    if not isinstance(probe, dict):
        return None
    delay = _int(probe.get("initialDelaySeconds", 0), 0)
    period = _int(probe.get("periodSeconds", 10), 10)
    failures = _int(probe.get("failureThreshold", 3), 3)
    return delay + period * failures


def _check_probes(ctx: _Ctx, tp: int, pp: int) -> None:
    """KV407: a startup (or, without one, liveness) probe that kills the pod before the weights load.

    Heuristic, stated in the message: start-up = ``startup_overhead_seconds`` (imports, CUDA and NCCL
    init, profiling, CUDA-graph capture) + the pod's weight bytes read at ``min_load_bandwidth_gib_s``
    (both parameters of rules/KV407.yaml; a fast local NVMe or warm page cache does better, a network
    volume or a hub download much worse).
    """
    cr = ctx.cr
    c = cr.container
    probe_name = "startupProbe" if isinstance(c.get("startupProbe"), dict) else "livenessProbe"
    probe = c.get(probe_name)
    window = _probe_window(probe)
    if window is None:
        return
    weights = None
    if cr.plan is not None:
        weights = cr.plan.weights_bytes * cr.plan.tensor_parallel_size * cr.plan.pipeline_parallel_size
    elif cr.model is not None:
        try:
            from kvlint.models.weights import weight_bytes

            weights = weight_bytes(cr.model, dtype_bytes=2)[0]
        except Exception:
            weights = None
    if not weights:
        return
    bw_gib = float(_param(ctx, "KV407", "min_load_bandwidth_gib_s", 1.0)) or 1.0
    fixed = int(_param(ctx, "KV407", "startup_overhead_seconds", 60))
    need = fixed + weights / (bw_gib * GiB)
    if window >= need:
        return
    ctx.add(
        "KV407",
        f"the {probe_name} gives the container {window} s (initialDelaySeconds + periodSeconds x failureThreshold) "
        f"but loading {gib(weights)} of weights takes about {need:.0f} s ({fixed} s start-up + weights at "
        f"{bw_gib:g} GiB/s); "
        "the kubelet will restart the pod before the engine is ready",
        loc_of(c, probe_name),
        fix=f"use a startupProbe with failureThreshold x periodSeconds >= {int(math.ceil(need * 2 / 60) * 60)} s "
        "(about twice the estimate), and keep livenessProbe for after start-up",
    )


# ---------------------------------------------------------------------------------------------------------
# shared GPUs


def _check_shared_gpu(ctx: _Ctx, w: Workload) -> None:
    """KV106: engines sharing one GPU (time-slicing/MPS) that together claim more than all of it.

    vLLM (>=0.9.2) checks at start-up that free memory >= gpu_memory_utilization x total
    (vllm/v1/worker/utils.py::request_memory, engine-memory-model §1.11 E3); two engines at 0.9 on one
    GPU cannot both pass.
    """
    cr = ctx.cr
    p = cr.placement
    if p is None or not p.shared:
        return
    util: float | None = None
    if cr.plan is not None:
        util = cr.plan.gpu_memory_utilization
    else:
        raw = cr.serving.get("gpu_memory_utilization")
        try:
            util = float(raw) if raw is not None else None
        except (TypeError, ValueError):
            util = None
        if util is None and cr.serving.engine == "vllm":
            from kvlint.memory.versions import default_gpu_memory_utilization, parse_version

            util = default_gpu_memory_utilization(parse_version(cr.serving.version))
    if util is None:
        return
    replicas = w.replicas or 1
    sharers = p.max_sharers or replicas
    n = max(2, min(replicas, sharers) if p.max_sharers else replicas)
    if util * n <= 1.0:
        return
    acc = p.accelerator.name if p.accelerator else "the GPU"
    s = cr.serving
    loc = s.loc("gpu_memory_utilization") if "gpu_memory_utilization" in s.flags else (p.gpus_loc or p.loc)
    ctx.add(
        "KV106",
        f"{acc} is shared ({p.how or p.resource}): up to {n} engines may land on one GPU and each claims "
        f"gpu-memory-utilization {util:.2f} ({n} x {util:.2f} = {n * util:.2f} of the device); the second fails "
        "with 'Free memory on device ... is less than desired GPU memory utilization'",
        loc,
        fix=f"set --gpu-memory-utilization {math.floor(100 / n) / 100:.2f} or less, or request a dedicated GPU "
        "(nvidia.com/gpu) instead of a shared one",
    )
