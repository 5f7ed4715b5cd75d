"""Parallelism and pod family (KV401-KV407): the engine's GPU workers against the model and the PodSpec.

The engine's workers come from :func:`kvlint.engines.layout.parallelism` (vLLM TP x PP x DP, TGI shards,
SGLang TP x PP x DP); the PodSpec gives the GPU limit, ``/dev/shm``, the memory limit and the probes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from kvlint.rules.context import GiB, RuleContext, gib
from kvlint.rules.facts import (
    has_memory_shm,
    image_platform,
    is_runtime_template,
    memory_limit,
    model_weight_bytes,
    resource_value,
    to_int,
)
from kvlint.rules.registry import check
from kvlint.source import loc_of
from kvlint.types import Diagnostic
from kvlint.values import as_float

# ---------------------------------------------------------------------------------------------------------
# KV401/KV402: heads against the tensor-parallel size, in each engine's arithmetic


def valid_tp_values(heads: int, limit: int) -> list[int]:
    """The tensor-parallel sizes from 1 to ``limit`` that divide ``heads``.

    Only sizes up to ``heads`` can divide it, so the work is bounded by the model's head count whatever
    ``limit`` (a TP size or GPU count from the manifest, e.g. ``--tensor-parallel-size 1000000000000``)."""
    return [t for t in range(1, min(limit, heads) + 1) if heads % t == 0]


def kv_heads_tp_ok(kv_heads: int, tp: int) -> bool:
    """vLLM's and SGLang's KV-head split: the TP size divides the KV heads (split) or is a multiple of them
    (replication) (vLLM ``QKVParallelLinear`` via ``vllm/distributed/utils.py::divide``; SGLang
    ``LlamaAttention.__init__`` asserts, 0.5.5)."""
    if kv_heads <= 0:
        return True
    return kv_heads % tp == 0 if tp < kv_heads else tp % kv_heads == 0


@check("KV401", engine="vllm")
def heads_vllm(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV401 (vLLM): ``ModelConfig.verify_with_parallel_config`` (heads % TP), vllm@0.11.0-0.33.0."""
    m, s, tp = ctx.model, ctx.serving, ctx.layout.tp
    assert m is not None
    heads = m.num_attention_heads
    if not heads or heads % tp == 0:
        return
    limit = max(8, tp)
    valid = valid_tp_values(heads, limit)
    both = [t for t in valid if m.is_mla or kv_heads_tp_ok(m.num_kv_heads, t)]
    extra = ""
    if not m.is_mla and both != valid:
        others = [t for t in valid if t not in both]
        extra = (
            f"; only {', '.join(map(str, both))} also suit its {m.num_kv_heads} KV heads "
            f"({', '.join(map(str, others))} would fail KV402)"
        )
    yield ctx.finding(
        f"vLLM requires the {heads} attention heads of {m.id} to be divisible by tensor-parallel-size {tp}; "
        f"start-up fails with 'Total number of attention heads ({heads}) must be divisible by tensor "
        f"parallel size ({tp}).'",
        s.loc("tensor_parallel_size"),
        fix=f"tensor-parallel-size values up to {limit} that divide the {heads} heads: "
        f"{', '.join(map(str, valid))}{extra}",
    )


@check("KV402", engine="vllm")
def kv_heads_vllm(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV402 (vLLM): KV heads and TP that do not divide one another (``QKVParallelLinear``)."""
    m, s, tp = ctx.model, ctx.serving, ctx.layout.tp
    assert m is not None
    if m.is_mla or not m.num_kv_heads or kv_heads_tp_ok(m.num_kv_heads, tp):
        return
    limit = max(8, tp)
    valid_kv = [t for t in valid_tp_values(m.num_attention_heads, limit) if kv_heads_tp_ok(m.num_kv_heads, t)]
    yield ctx.finding(
        f"{m.id} has {m.num_kv_heads} KV heads and tensor-parallel-size is {tp}: neither divides the other, "
        f"so vLLM's QKVParallelLinear fails with '{max(m.num_kv_heads, tp)} is not divisible by "
        f"{min(m.num_kv_heads, tp)}'",
        s.loc("tensor_parallel_size"),
        fix=f"use a tensor-parallel-size that divides or is a multiple of {m.num_kv_heads}: "
        f"{', '.join(map(str, valid_kv))}",
    )


@check("KV401", engine="tgi")
def heads_tgi(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV401 (TGI): the model code (e.g. ``flash_llama_modeling.py``) raises "`num_heads` must be divisible by
    `num_shards` (got `num_heads`: H and `num_shards`: S" when the shards start."""
    m, shards = ctx.model, ctx.layout.tp
    assert m is not None
    if shards <= 1 or m.num_attention_heads % shards == 0:
        return
    valid = valid_tp_values(m.num_attention_heads, max(8, shards))
    yield ctx.finding(
        f"TGI shards attention heads across {shards} GPUs but {m.id} has {m.num_attention_heads} heads; the "
        f"shards exit with '`num_heads` must be divisible by `num_shards` (got `num_heads`: "
        f"{m.num_attention_heads} and `num_shards`: {shards}'",
        ctx.serving.loc("num_shard"),
        fix=f"valid NUM_SHARD values: {', '.join(map(str, valid))}",
    )


@check("KV402", engine="tgi")
def kv_heads_tgi(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV402 (TGI): "`num_key_value_heads` must be divisible by `num_shards`" (single-KV-head models are
    replicated)."""
    m, shards = ctx.model, ctx.layout.tp
    assert m is not None
    kvh = m.num_kv_heads
    if shards <= 1 or kvh <= 1 or kvh % shards == 0 or m.is_mla:
        return
    valid = [t for t in valid_tp_values(kvh, max(8, shards)) if m.num_attention_heads % t == 0]
    yield ctx.finding(
        f"TGI splits the {kvh} KV heads of {m.id} across {shards} shards; the shards exit with "
        f"'`num_key_value_heads` must be divisible by `num_shards` (got `num_key_value_heads`: {kvh} and "
        f"`num_shards`: {shards}'",
        ctx.serving.loc("num_shard"),
        fix=f"valid NUM_SHARD values: {', '.join(map(str, valid))}",
    )


@check("KV401", engine="sglang")
def heads_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV401 (SGLang): ``assert self.total_num_heads % tp_size == 0`` when the attention layers are built."""
    m, tp = ctx.model, ctx.layout.tp
    assert m is not None
    if tp <= 1 or m.num_attention_heads % tp == 0:
        return
    yield ctx.finding(
        f"SGLang --tp-size {tp} does not divide the {m.num_attention_heads} attention heads of {m.id}; the "
        "attention layers cannot be split evenly and start-up fails",
        ctx.serving.loc("tp_size"),
        fix=f"valid --tp-size values: {', '.join(map(str, valid_tp_values(m.num_attention_heads, max(8, tp))))}",
    )


@check("KV402", engine="sglang")
def kv_heads_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV402 (SGLang): each rank must hold a whole number of KV heads, or replicas of one."""
    m, tp = ctx.model, ctx.layout.tp
    assert m is not None
    kvh = m.num_kv_heads
    if tp <= 1 or m.is_mla or kvh <= 0 or kv_heads_tp_ok(kvh, tp):
        return
    yield ctx.finding(
        f"SGLang --tp-size {tp} and the {kvh} KV heads of {m.id} do not divide one another (each rank must hold "
        "a whole number of KV heads, or replicas of one)",
        ctx.serving.loc("tp_size"),
        fix=f"use a --tp-size that divides or is a multiple of {kvh}",
    )


# ---------------------------------------------------------------------------------------------------------
# KV403-KV405: GPUs and /dev/shm of the pod


_TOO_FEW = {
    "vllm": "vLLM fails at start-up ('World size ({need}) is larger than the number of available GPUs ({have}) in "
    "this node')",
    "tgi": "the shards beyond the GPUs stop with 'AssertionError: Each process is one gpu' "
    "(server/text_generation_server/utils/dist.py::initialize_torch_distributed, TGI 1.4-3.3)",
    "sglang": "the scheduler processes for GPU #{have} and above fail with 'CUDA error: invalid device ordinal' "
    "(sglang srt/managers/data_parallel_controller.py places replica r on GPUs r x tp x pp and up)",
}
_LOWER = {
    "vllm": "lower the parallel sizes so their product is {have}",
    "tgi": "set NUM_SHARD (--num-shard) to {have}",
    "sglang": "lower --tp-size/--dp-size so that tp x pp x dp is {have}",
}
_RAISE = {
    "vllm": "raise tensor-parallel-size/data-parallel-size to use all {have}",
    "tgi": "leave NUM_SHARD unset (TGI then starts one shard per visible GPU)",
    "sglang": "raise --tp-size or --dp-size to use all {have}",
}


@check("KV403")
def gpu_count(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV403: the engine's GPU workers (TP x PP x local DP, TGI shards) against the GPUs the pod requests.

    Sources: vLLM ``vllm/config/parallel.py::ParallelConfig.__post_init__`` (world size against the node's
    GPUs, 0.11.0) and ``vllm/v1/worker/gpu_worker.py::Worker.init_device`` (local rank bound); TGI and SGLang as
    :data:`_TOO_FEW` names them. TGI's default shard count is the number of visible GPUs
    (``launcher/src/main.rs::find_num_shards``), so only an explicit ``--num-shard`` can disagree.
    """
    p, lay, w, s = ctx.placement, ctx.layout, ctx.workload, ctx.serving
    assert p is not None and p.gpus is not None
    if p.gpus < 1 or not lay.known or (ctx.engine == "tgi" and not lay.explicit):
        return
    need = lay.workers
    pods = w.group_size if w.group_size and w.group_size > 1 else max(1, lay.nnodes)
    have = p.gpus * pods
    where = f"{p.resource}: {p.gpus}" + (f" x {pods} pods" if pods > 1 else "")
    if need > have:
        if lay.ray:
            return  # a Ray cluster may contribute GPUs from other pods
        per_pod = need // pods if need % pods == 0 else need
        fix = (
            f"request {per_pod} GPUs per pod ({p.resource}) or " + _LOWER[ctx.engine].format(have=have)
            if per_pod <= 8
            else (
                f"{need} GPUs do not fit one node (8 GPUs at most on common GPU nodes): keep "
                "tensor parallelism within a node (<= 8) and span nodes with pipeline parallelism on a "
                "LeaderWorkerSet (group size = number of nodes) or a Ray cluster"
            )
        )
        yield ctx.finding(
            f"{lay.described} needs {need} GPUs but the pod requests {have} ({where}); "
            + _TOO_FEW[ctx.engine].format(need=need, have=have),
            lay.loc or p.gpus_loc or s.command_loc,
            fix=fix,
        )
    elif need < have and not lay.ray:
        yield ctx.finding(
            f"the pod requests {have} GPUs ({where}) but {lay.described} uses only {need}; {have - need} GPU(s) sit "
            "idle",
            p.gpus_loc,
            fix=f"request {need} GPU(s), or " + _RAISE[ctx.engine].format(have=have),
            severity="warning",
        )


@check("KV404")
def shm_too_small(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV404: more than one GPU worker without a memory-backed ``/dev/shm``. NCCL (all three engines) and
    vLLM's shared-memory broadcast use it; container runtimes give 64 MiB by default. KubeRay adds one to Ray
    pods itself."""
    lay, w, s = ctx.layout, ctx.workload, ctx.serving
    if lay.tp * lay.pp * lay.dp <= 1 or not lay.known:
        return
    if w.kind.lower().startswith("ray") or has_memory_shm(w.pod_spec, ctx.container):
        return
    if ctx.engine == "vllm":
        loc = s.loc("tensor_parallel_size") if lay.tp > 1 else s.loc("pipeline_parallel_size")
        what = f"TP {lay.tp}, PP {lay.pp}, DP {lay.dp}"
    else:
        loc = lay.loc or s.command_loc
        what = lay.described
    yield ctx.finding(
        f"{lay.tp * lay.pp * lay.dp} GPU workers ({what}) communicate through /dev/shm, but no memory-backed volume "
        "is mounted there; the container runtime default is 64 MiB and NCCL fails or hangs",
        loc,
        fix="add volume {name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}} and mount it at /dev/shm",
    )


@check("KV405")
def gpu_limit_missing(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV405: a CUDA/ROCm engine container without a usable GPU limit: none at all (warning), zero, or not a
    positive whole number (the API server rejects fractional extended-resource quantities)."""
    p, s = ctx.placement, ctx.serving
    platform = image_platform(s.image)
    if p is not None and p.resource and p.resource.count("/") == 1 and (p.gpus is None or p.gpus < 1):
        raw = resource_value(s.container, p.resource)
        if raw is not None:
            loc = p.gpus_loc or loc_of(s.container, "resources")
            fix = f"set {p.resource} to the number of GPUs the engine uses, e.g. 1"
            if str(raw).strip() in ("0", "0.0"):
                yield ctx.finding(
                    f"GPU limit {p.resource}: {raw!r} gives the container no GPU: the scheduler places it anywhere "
                    f"and {s.engine} finds no device at start-up",
                    loc,
                    fix=fix,
                    severity="error",
                )
            else:
                yield ctx.finding(
                    f"GPU limit {p.resource}: {raw!r} is not a positive whole number; the API server rejects "
                    "fractional or negative extended-resource quantities, so this pod is never created",
                    loc,
                    fix=fix,
                    severity="error",
                )
            return
    if (
        (p is None or p.gpus is None)
        and platform in ("cuda", "rocm")
        and not is_runtime_template(ctx.workload)
    ):
        yield ctx.finding(
            f"{s.engine} container '{ctx.cr.container_name}' requests no GPU resource; the scheduler may place it on "
            "a node without a GPU, or it may share one it was not given",
            loc_of(s.container, "resources") or s.container.loc,
            fix="set resources.limits['nvidia.com/gpu'] to the number of GPUs the engine uses",
        )


# ---------------------------------------------------------------------------------------------------------
# KV406: host memory


@check("KV406")
def host_memory_limit(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV406 (vLLM): the container memory limit against the host memory vLLM pins (never reclaimable).

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
    cr, s, lay = ctx.cr, ctx.serving, ctx.layout
    found = memory_limit(cr.container)
    if found is None:
        return
    limit, limit_loc = found
    tp, pp, dp_local = lay.tp, lay.pp, lay.dp_local
    p = cr.placement
    gpus = p.gpus if p is not None and p.gpus else tp * pp * dp_local
    parts: list[tuple[str, int]] = []
    plan = ctx.plan
    offload = as_float(s.get("cpu_offload_gb")) or 0.0
    if offload > 0:
        per_gpu = int(offload * GiB)
        total = model_weight_bytes(cr)
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
    fraction = float(ctx.param("min_weights_fraction") or 0.0)
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
    yield ctx.finding(
        f"container memory limit {gib(limit)} is below the {gib(need)} of {what} ({detail}); pinned memory "
        "cannot be reclaimed, so the container is OOMKilled (exit code 137) while the engine starts",
        limit_loc or s.command_loc,
        fix=f"raise resources.limits.memory to at least {math.ceil(need / GiB)}Gi plus the engine process itself"
        + (f", or lower {lower}" if lower else ""),
    )


# ---------------------------------------------------------------------------------------------------------
# KV407: probes against the start-up time

#: What each engine does before it reports healthy (the time ``startup_overhead_seconds`` stands for, besides
#: reading the weights).
_LOAD_PATH = {
    "vllm": "loading {w} of weights",
    "tgi": "TGI's start (download-weights, then loading {w} of weights on its shards and the warmup prefill)",
    "sglang": "SGLang's start (loading {w} of weights, memory profiling, CUDA-graph capture)",
}


def _probe_window(probe: object) -> int | None:
    """Seconds a probe allows before the kubelet restarts the container: initialDelaySeconds + periodSeconds
    x failureThreshold (Kubernetes defaults 0, 10, 3)."""
    if not isinstance(probe, dict):
        return None
    delay = to_int(probe.get("initialDelaySeconds", 0), 0)
    period = to_int(probe.get("periodSeconds", 10), 10)
    failures = to_int(probe.get("failureThreshold", 3), 3)
    return delay + period * failures


@check("KV407")
def probe_too_short(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV407: a startup (or, without one, liveness) probe that kills the pod before the engine is ready.

    Heuristic, stated in the message: start-up = ``startup_overhead_seconds`` (imports, CUDA and NCCL
    init, profiling or warmup, CUDA-graph capture) + the pod's weight bytes read at
    ``min_load_bandwidth_gib_s`` (both parameters of rules/KV407.yaml; a fast local NVMe or warm page cache does
    better, a network volume or a hub download much worse).
    """
    cr = ctx.cr
    c = cr.container
    probe_name = "startupProbe" if isinstance(c.get("startupProbe"), dict) else "livenessProbe"
    window = _probe_window(c.get(probe_name))
    if window is None:
        return
    plan = ctx.plan
    if plan is not None:
        weights: int | None = plan.weights_bytes * plan.tensor_parallel_size * plan.pipeline_parallel_size
    else:
        weights = model_weight_bytes(cr, dtype_bytes=2)
    if not weights:
        return
    bw_gib = float(ctx.param("min_load_bandwidth_gib_s")) or 1.0
    fixed = int(ctx.param("startup_overhead_seconds"))
    need = fixed + weights / (bw_gib * GiB)
    if window >= need:
        return
    yield ctx.finding(
        f"the {probe_name} gives the container {window} s (initialDelaySeconds + periodSeconds x failureThreshold) "
        f"but {_LOAD_PATH[ctx.engine].format(w=gib(weights))} takes about {need:.0f} s ({fixed} s start-up + "
        f"weights at {bw_gib:g} GiB/s); the kubelet will restart the pod before the engine is ready",
        loc_of(c, probe_name),
        fix=f"use a startupProbe with failureThreshold x periodSeconds >= {int(math.ceil(need * 2 / 60) * 60)} s "
        "(about twice the estimate), and keep livenessProbe for after start-up",
    )
