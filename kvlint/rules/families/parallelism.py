"""Parallelism and pod family (KV401-KV411): the engine's GPU workers against the model and the PodSpec.

The engine's workers come from :func:`kvlint.engines.layout.parallelism` (vLLM TP x PP x DP, TGI shards,
SGLang TP x PP x DP); the PodSpec gives the GPU limit (and its resource name), ``/dev/shm``, the memory limit and
the probes (their timing and their port).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Literal

from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import GFD_COUNT, GKE_GPU_COUNT, node_gpu_capacity, node_partition_capacity
from kvlint.accelerators.quantity import parse_quantity
from kvlint.accelerators.sharing import HAMI_CORES, HAMI_MEMORY, HAMI_MEMORY_PERCENTAGE, SHARING_RESOURCES
from kvlint.engines.images import (
    engine_of_image,
    envsubst_placeholders,
    gpu_build_on_other_accelerator,
    image_platform,
    platform_of,
    unexpanded_reference,
)
from kvlint.engines.multinode import ONE_POD_KINDS, node_address, vllm_nodes_per_dp_group
from kvlint.engines.options import version_tuple
from kvlint.engines.tgi import tgi_option
from kvlint.gpu_resources import (
    AMD_GPU,
    ASCEND_NPU_RESOURCES,
    GAUDI_RESOURCE,
    GPU_RESOURCES,
    MIG_RESOURCE_PREFIX,
    NEURON_CORE_RESOURCE,
    NEURON_DEVICE_RESOURCES,
    NVIDIA_GPU,
    NVIDIA_GPU_SHARED,
    TPU_RESOURCE,
    WHOLE_GPUS,
    amd_partition_of,
    is_gpu_resource,
)
from kvlint.rules.context import GiB, RuleContext, gib
from kvlint.rules.facts import (
    has_memory_shm,
    is_runtime_template,
    memory_limit,
    model_weight_bytes,
    resource_value,
    to_int,
    undefined_shm_volume,
)
from kvlint.rules.registry import check
from kvlint.source import LDict, Loc, loc_of
from kvlint.types import ENGINE_NAMES, Diagnostic, ModelSpec, Placement, ServingConfig, Severity
from kvlint.values import as_float, as_int, as_list, digits
from kvlint.wording import count, idle, shell_word
from kvlint.workloads.base import engine_containers
from kvlint.workloads.hardwareprofile import PROFILE_FIX, profile_clause
from kvlint.workloads.rayserve import SERVE_PATH

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
    valid = [t for t in valid_tp_values(m.num_attention_heads, max(8, shards)) if _tgi_kv_ok(m, t)]
    yield ctx.finding(
        f"TGI shards attention heads across {shards} GPUs but {m.id} has {m.num_attention_heads} heads; the "
        f"shards exit with '`num_heads` must be divisible by `num_shards` (got `num_heads`: "
        f"{m.num_attention_heads} and `num_shards`: {shards}'",
        ctx.serving.loc("num_shard"),
        fix=f"valid {tgi_option(ctx.serving, 'num_shard')} values (they divide the {m.num_attention_heads} heads"
        + ("" if m.is_mla or m.num_kv_heads <= 1 else f" and the {m.num_kv_heads} KV heads")
        + f"): {', '.join(map(str, valid))}",
    )


def _tgi_kv_ok(m: ModelSpec, shards: int) -> bool:
    """TGI's KV-head split (KV402, TGI variant): the shard count divides the KV heads; a single KV head is
    replicated."""
    return m.is_mla or m.num_kv_heads <= 1 or m.num_kv_heads % shards == 0


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
        fix=f"valid {tgi_option(ctx.serving, 'num_shard')} values: {', '.join(map(str, valid))}",
    )


def _sglang_attn_tp(ctx: RuleContext) -> tuple[int, int]:
    """``(attention-TP size, attention-DP width)`` over which SGLang splits the model's attention heads: with DP
    attention (``--enable-dp-attention`` with ``--dp-size``, or 0.5.22+'s ``--attn-dp-size``) and an architecture
    that builds its attention over the attention-TP group (:func:`kvlint.memory.sglang.attention_over_attn_tp`),
    ``tp // width`` (sglang@0.5.5 ``layers/dp_attention.py::compute_dp_attention_world_info``, ``attn_tp_size =
    tp_size // dp_size``; ``models/deepseek_v2.py::DeepseekV2AttentionMLA.__init__`` asserts ``num_heads %
    attn_tp_size == 0``); else the whole ``--tp-size`` and 1 (``models/llama.py::LlamaAttention`` asserts
    ``total_num_heads % tp_size == 0`` whatever the DP attention)."""
    from kvlint.memory.sglang import attention_over_attn_tp, sglang_version

    m, tp, s = ctx.model, ctx.layout.tp, ctx.serving
    if m is None or not _sglang_attention_dp(ctx):
        return tp, 1
    width = max(as_int(s.get("attn_dp_size")) or 1, as_int(s.get("attention_data_parallel_size")) or 1)
    if width == 1 and s.get("enable_dp_attention"):
        width = max(1, ctx.layout.dp)
    if width <= 1 or tp % width or not attention_over_attn_tp(m, sglang_version(s.version)[0]):
        return tp, 1
    return tp // width, width


#: The first release read that refuses a --tp-size not divisible by the attention DP size: 0.4.3 and 0.4.4 set
#: ``dp_size = tp_size`` with ``--enable-dp-attention`` (``server_args.py::ServerArgs.__post_init__``); 0.4.5 not read
_SG_DP_DIVIDES_TP_FROM = (0, 4, 6)


def _sglang_dp_width_refused(ctx: RuleContext) -> int:
    """The attention DP size SGLang refuses to start with because it does not divide ``--tp-size``, else 0. With DP
    attention ``ServerArgs`` asserts ``tp_size % dp_size == 0`` (``server_args.py::ServerArgs.__post_init__`` in the
    0.4.6 and 0.4.10 wheels, ``_handle_data_parallelism`` in 0.5.5, 0.5.9, 0.5.13, 0.5.16, 0.5.19 and 0.5.21) or
    ``tp_size % attn_dp_size == 0`` (``arg_groups/parallel_hook.py::handle_data_parallelism``, 0.5.22 and 0.5.23,
    where ``--dp-size N --enable-dp-attention`` resolves to ``attn_dp_size = N``); 0.5.5 turns DP attention off for
    ``--dp-size 1``. Not for a DeepSeek sparse-attention model on 0.5.3 - 0.5.5, whose ``dp_size`` SGLang sets to
    ``tp_size`` first (``_handle_model_specific_adjustments``, :func:`kvlint.memory.sglang.is_sglang_dsa`)."""
    from kvlint.memory.sglang import DSA_FROM, is_sglang_dsa, sglang_version

    m, tp, s = ctx.model, ctx.layout.tp, ctx.serving
    if m is None or not _sglang_attention_dp(ctx) or tp < 1:
        return 0
    width = max(as_int(s.get("attn_dp_size")) or 1, as_int(s.get("attention_data_parallel_size")) or 1)
    if width == 1 and s.get("enable_dp_attention"):
        width = max(1, ctx.layout.dp)
    v = sglang_version(s.version)[0]
    if width <= 1 or tp % width == 0 or v < _SG_DP_DIVIDES_TP_FROM:
        return 0
    if is_sglang_dsa(m) and DSA_FROM <= v <= (0, 5, 5):
        return 0
    return width


def _sglang_tp_described(tp: int, attn_tp: int, width: int) -> str:
    """How KV401/KV402 name the size SGLang divides the heads by: ``--tp-size 8``, or with DP attention
    ``attention TP 3 (--tp-size 48 / attention DP 16)``."""
    if width <= 1:
        return f"--tp-size {tp}"
    return f"attention TP {attn_tp} (--tp-size {tp} / attention DP {width})"


@check("KV401", engine="sglang")
def heads_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV401 (SGLang): ``assert self.total_num_heads % tp_size == 0`` when the attention layers are built; with DP
    attention, over the attention-TP group for the architectures that build their attention on it
    (:func:`_sglang_attn_tp`)."""
    m, tp = ctx.model, ctx.layout.tp
    assert m is not None
    width = _sglang_dp_width_refused(ctx)
    if width:
        s = ctx.serving
        flag = (
            "--attn-dp-size"
            if s.flags.get("attn_dp_size") or s.flags.get("attention_data_parallel_size")
            else ""
        )
        given = f"{flag} {width}" if flag else f"--dp-size {width} with --enable-dp-attention"
        multiples = ", ".join(str(width * k) for k in range(1, 5))
        yield ctx.finding(
            f"SGLang --tp-size {tp} is not a multiple of the attention DP size ({given}): DP attention splits the "
            f"--tp-size ranks into {width} attention-TP groups, and SGLang asserts tp_size % dp_size == 0 at start-up "
            "(a bare AssertionError) and does not start",
            s.loc("tp_size") or s.loc("attn_dp_size") or s.loc("dp_size"),
            fix=f"give --tp-size a multiple of {width} ({multiples}) or the attention DP size a divisor of {tp}",
        )
        return
    attn_tp, width = _sglang_attn_tp(ctx)
    if attn_tp <= 1 or m.num_attention_heads % attn_tp == 0:
        return
    valid = [
        t
        for t in valid_tp_values(m.num_attention_heads, max(8, attn_tp))
        if m.is_mla or kv_heads_tp_ok(m.num_kv_heads, t)
    ]
    what = (
        "--tp-size values (they"
        if width <= 1
        else f"attention TP sizes (--tp-size / attention DP {width}; they"
    )
    yield ctx.finding(
        f"SGLang {_sglang_tp_described(tp, attn_tp, width)} does not divide the {m.num_attention_heads} attention "
        f"heads of {m.id}; the attention layers cannot be split evenly and start-up fails",
        ctx.serving.loc("tp_size"),
        fix=f"valid {what} divide the {m.num_attention_heads} heads"
        + ("" if m.is_mla or m.num_kv_heads <= 0 else f" and suit the {m.num_kv_heads} KV heads")
        + f"): {', '.join(map(str, valid))}",
    )


@check("KV402", engine="sglang")
def kv_heads_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV402 (SGLang): each rank must hold a whole number of KV heads, or replicas of one (over the attention-TP
    group with DP attention, :func:`_sglang_attn_tp`)."""
    m = ctx.model
    assert m is not None
    attn_tp, width = _sglang_attn_tp(ctx)
    kvh = m.num_kv_heads
    if attn_tp <= 1 or m.is_mla or kvh <= 0 or kv_heads_tp_ok(kvh, attn_tp):
        return
    valid = [t for t in valid_tp_values(m.num_attention_heads, max(8, attn_tp)) if kv_heads_tp_ok(kvh, t)]
    what = "--tp-size" if width <= 1 else f"attention TP size (--tp-size / attention DP {width})"
    yield ctx.finding(
        f"SGLang {_sglang_tp_described(ctx.layout.tp, attn_tp, width)} and the {kvh} KV heads of {m.id} do not "
        "divide one another (each rank must hold a whole number of KV heads, or replicas of one)",
        ctx.serving.loc("tp_size"),
        fix=f"use a {what} that divides or is a multiple of {kvh} and divides the {m.num_attention_heads} "
        f"attention heads: {', '.join(map(str, valid))}",
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
    "sglang": "lower {tp}/{dp} so that tp x pp x dp is {have}",
}
_TP_DP_FLAGS = {
    "vllm": ("--tensor-parallel-size", "--data-parallel-size"),
    "sglang": ("--tp-size", "--dp-size"),
}
#: The settings :data:`_TP_DP_FLAGS` names, by the engine's flag key (:attr:`kvlint.types.ServingConfig.written`).
_TP_DP_KEYS = {"vllm": ("tensor_parallel_size", "data_parallel_size"), "sglang": ("tp_size", "dp_size")}


def _tp_dp_flags(ctx: RuleContext) -> tuple[str, str]:
    """The tensor- and data-parallel options of :data:`_TP_DP_FLAGS` as the command wrote them (``--tp 2``,
    ``-tp 2``, ``--tensor-parallel-size=2``: :attr:`kvlint.types.ServingConfig.written`), else their names there,
    so a remedy names the option the manifest has (as :attr:`kvlint.engines.layout.Parallelism.described` does)."""
    said = ctx.serving.written
    keys, names = _TP_DP_KEYS[ctx.engine], _TP_DP_FLAGS[ctx.engine]
    return said.get(keys[0], names[0]), said.get(keys[1], names[1])


def _lower(ctx: RuleContext, have: int) -> str:
    """KV403's remedy of fewer workers (:data:`_LOWER`), naming SGLang's options as the command wrote them."""
    if ctx.engine == "sglang":
        tp, dp = _tp_dp_flags(ctx)
        return _LOWER["sglang"].format(tp=tp, dp=dp, have=have)
    return _LOWER.get(ctx.engine, "").format(have=have)


def _lower_fails(ctx: RuleContext, have: int) -> str | None:
    """Why KV403's second remedy (:data:`_LOWER`: the engine on the ``have`` GPUs the pod requests) would not
    start, by kvlint's re-plan at that size (:func:`kvlint.rules.remedies.replanned`), or None when it starts or
    cannot be re-planned (then the remedy stands as the engine's own arithmetic has it). Re-planned where one
    size decides: TGI's shard count, and the tensor-parallel size of a vLLM or SGLang engine without pipeline or
    data parallelism. The tests are the rules' own: vLLM's plan fails across kvlint's band (KV101-KV103), TGI
    does not start (:func:`kvlint.memory.tgi.tgi_starts`), SGLang's pool is empty (KV701)."""
    from kvlint.memory.sglang import SglangPlanDetail
    from kvlint.memory.tgi import TgiPlanDetail, tgi_starts
    from kvlint.memory.vllm import VllmPlanDetail
    from kvlint.rules.remedies import replanned

    lay = ctx.layout
    if ctx.engine == "tgi":
        d = replanned(ctx.cr, num_shard=have)
        fails = isinstance(d, TgiPlanDetail) and not tgi_starts(d)
    elif lay.pp != 1 or lay.dp_local != 1 or _heads_allow(ctx, have) is False:
        return None
    elif ctx.engine == "vllm":
        d = replanned(ctx.cr, tensor_parallel_size=have)
        fails = isinstance(d, VllmPlanDetail) and d.verdict == "fail"
    elif ctx.engine == "sglang":
        d = replanned(ctx.cr, tp_size=have)
        fails = isinstance(d, SglangPlanDetail) and d.rest_bytes <= 0
    else:
        return None
    if not fails or d is None:
        return None
    p = d.plan
    kv = f"{gib(p.kv_cache_bytes)} of KV cache" if p.kv_cache_bytes > 0 else "no KV cache"
    return f"kvlint's re-plan on {count(have, 'GPU')} has {gib(p.weights_bytes)} of weights per GPU of {gib(p.total_bytes)} and {kv}"


def _heads_allow(ctx: RuleContext, tp: int) -> bool | None:
    """Whether the model's heads allow tensor-parallel size ``tp`` in this engine's arithmetic (KV401/KV402:
    vLLM and SGLang need the attention heads divisible by it and the KV heads split or replicated; TGI's shards
    the KV heads divisible, one KV head replicated); None when the model is not known."""
    m = ctx.model
    if m is None or not m.num_attention_heads:
        return None
    if m.num_attention_heads % tp:
        return False
    if ctx.engine == "tgi":
        return _tgi_kv_ok(m, tp)
    return m.is_mla or kv_heads_tp_ok(m.num_kv_heads, tp)


def _use_all(ctx: RuleContext, have: int, unit: str = "GPU") -> str | None:
    """KV403's second remedy when the engine uses fewer GPUs than the pod requests: the parallel sizes that use
    all ``have`` of them and that the engine accepts, or None when there are none. A larger tensor-parallel size
    must divide the model's heads (KV401/KV402; unchecked, with a caveat, when the model is not known: a
    ``--tensor-parallel-size 3`` for 64 heads stops vLLM at start-up); a larger data-parallel size runs more
    replicas of the same per-GPU plan. TGI starts one shard per visible GPU when NUM_SHARD is unset. ``unit``:
    the device the workers run on, as :func:`shm_note` names them (``NPU`` on Ascend)."""
    lay = ctx.layout
    if ctx.engine == "tgi":
        ok = _heads_allow(ctx, have)
        if ok is False:
            return None
        return (
            f"leave {tgi_option(ctx.serving, 'num_shard')} unset (TGI then starts one shard per visible GPU)"
        )
    tp_flag, dp_flag = _tp_dp_flags(ctx)
    if ctx.engine == "vllm" and lay.dp_local != lay.dp:
        dp_flag = ctx.serving.written.get("data_parallel_size_local", "--data-parallel-size-local")
    options = []
    if have % (lay.pp * lay.dp_local) == 0:
        tp = have // (lay.pp * lay.dp_local)
        ok = _heads_allow(ctx, tp)
        if ok:
            options.append(f"{tp_flag} {tp}")
        elif ok is None:
            options.append(f"{tp_flag} {tp} (if it divides the model's attention heads)")
    if have % (lay.tp * lay.pp) == 0 and not _sglang_attention_dp(ctx) and _dp_accepted(ctx):
        options.append(f"{dp_flag} {have // (lay.tp * lay.pp)}")
    if not options:
        return None
    return f"set {' or '.join(options)} to use all {have}{shm_note(ctx, unit)}"


def _dp_accepted(ctx: RuleContext) -> bool:
    """Whether the engine release the container runs takes a data-parallel size, so KV403 may offer one: vLLM's
    ``--data-parallel-size`` (and ``--data-parallel-size-local``) came with 0.8 (first in kvlint's sampled option
    tables at 0.8.5, :mod:`kvlint.engines.vllm_flags_data`; ``vllm@0.8.5`` ``vllm/engine/arg_utils.py::
    EngineArgs.add_cli_args``); a ``vllm/vllm-openai:v0.4.1`` pod of 10 GPUs at tensor-parallel size 1 was told
    to "set data-parallel-size 10", which that release refuses ("unrecognized arguments"). Read with the option
    table of :func:`kvlint.engines.vllm.known_options` for the release (the union of all releases when it is not
    known, as KV205 reads it). SGLang's ``--dp-size`` and the other engines: True."""
    if ctx.engine != "vllm":
        return True
    from kvlint.engines.vllm import known_options

    return "--data-parallel-size" in known_options(ctx.serving.version)


def _sglang_attention_dp(ctx: RuleContext) -> bool:
    """Whether SGLang runs attention DP (``--enable-dp-attention``, or 0.5.22+'s ``--attn-dp-size`` above 1): its DP
    ranks then share the tensor-parallel GPUs, so a larger ``--dp-size`` uses no more GPUs (and next to
    ``--attn-dp-size`` SGLang refuses it: ``arg_groups/parallel_hook.py::handle_data_parallelism``, 0.5.22 on)."""
    if ctx.engine != "sglang":
        return False
    s = ctx.serving
    width = max(as_int(s.get("attn_dp_size")) or 1, as_int(s.get("attention_data_parallel_size")) or 1)
    return bool(s.get("enable_dp_attention")) or width > 1


_LONE_RAY = (
    "the Ray executor finds no Ray cluster to join (nothing in the object starts one or names its address), so "
    "vLLM starts a local one-node Ray instance holding this pod's GPUs only, and its placement group, one GPU "
    "bundle per worker, cannot be placed: vLLM reports 'The number of required GPUs exceeds the total number of "
    "available GPUs in the ...' and start-up fails, at once or when the wait for the group times out"
)
#: What in an object starts a Ray cluster or names one to join (lower case): ``ray start`` (LeaderWorkerSet
#: leaders and workers, KServe multi-node), Ray's address (``RAY_ADDRESS``, ``ray://``), vLLM's
#: ``multi-node-serving.sh``, LWS's ``ray_init.sh`` helper, KubeRay's ``rayStartParams``.
_RAY_CLUSTER_WORDS = (
    "ray start",
    "ray.init",
    "ray_address",
    "ray://",
    "multi-node-serving",
    "ray_init",
    "raystartparams",
)


def _lone_node(ctx: RuleContext) -> bool:
    """Whether a multi-node engine (``--nnodes`` N > 1) runs node rank 0 in the only pod of its object: a Pod, or a
    Deployment / StatefulSet / ReplicaSet of one replica, no LeaderWorkerSet group, no Ray, no leader or follower
    kvlint joined it to (a node of another such object: :func:`kvlint.engines.multinode.pair_node_objects`),
    ``--node-rank`` unset or 0 (not a variable kvlint cannot resolve: ``--node-rank $(RANK)`` is set per pod by what
    kvlint does not see, an operator or a pod index).

    SGLang starts this node's ``tp_size * pp_size / nnodes`` schedulers and each calls ``init_distributed_environment``
    with the world size of all N nodes (sglang@0.5.5 ``srt/model_executor/model_runner.py::ModelRunner.
    init_torch_distributed``; ``_launch_subprocesses`` in ``srt/entrypoints/engine.py`` gives each node its rank
    range), so the rendezvous waits for ranks no pod runs. vLLM (0.11.1 on, the multiprocessing executor; not
    ``--headless``, not Ray, one data-parallel rank) starts its ``world_size / nnodes`` local workers and joins them at
    ``tcp://master_addr:master_port`` with the world size of all nodes (vllm@0.19.0 ``vllm/distributed/
    parallel_state.py::init_distributed_environment``, ``vllm/v1/executor/multiproc_executor.py``), as long."""
    w, s, lay = ctx.workload, ctx.serving, ctx.layout
    if ctx.engine not in ("sglang", "vllm") or lay.nnodes < 2 or lay.ray:
        return False
    if s.joins is not None or s.apart_from is not None:
        return False
    if ctx.engine == "vllm" and (
        s.get("headless") is True
        or lay.dp > 1
        or str(s.get("distributed_executor_backend") or "mp") not in ("mp",)
    ):
        return False
    if w.leader is not None or w.role is not None or (w.group_size or 0) > 1:
        return False
    if w.kind not in ONE_POD_KINDS or (w.replicas if w.replicas is not None else 1) != 1:
        return False
    if "node_rank" in s.unresolved:
        return (
            False  # --node-rank $(RANK): set per pod by something kvlint does not see (an operator, an index)
        )
    rank = s.get("node_rank")
    return rank is None or (isinstance(rank, int) and not isinstance(rank, bool) and rank == 0)


def _lone_node_finding(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV403 for :func:`_lone_node`: an error without the meeting address (SGLang's ``--dist-init-addr``, vLLM's
    ``--master-addr``: each node's ranks then meet at ``127.0.0.1`` of their own pod, so no other node could ever
    join), a warning with one (a node of rank 1 started by another object with the same address would join; kvlint
    joins such objects when all ranks are among its inputs)."""
    lay, s, w = ctx.layout, ctx.serving, ctx.workload
    sglang = ctx.engine == "sglang"
    flag = "--dist-init-addr" if sglang else "--master-addr"
    raw = s.get("dist_init_addr" if sglang else "master_addr")
    addr = node_address(s) or (None if raw is None else str(raw))
    name = "SGLang" if sglang else "vLLM"
    ranks = "schedulers" if sglang else "GPU workers"
    where = f"the only pod of this {w.kind}" if w.kind != "Pod" else "this Pod"
    waits = (
        f"{name} --nnodes {lay.nnodes} runs node rank 0 in {where} and nothing here starts the other "
        f"{'node' if lay.nnodes == 2 else f'{lay.nnodes - 1} nodes'} (no LeaderWorkerSet group, no Ray, no object of the other node ranks with the same "
        f"{flag}): its {ranks} wait in torch.distributed's rendezvous for ranks of {lay.described} that no pod runs, "
        "until "
        + ("--dist-timeout (or torch's default)" if sglang else "torch's timeout")
        + " expires, and the server never answers"
    )
    follower = (
        "node rank from the LWS worker index"
        if sglang
        else "the workers `vllm serve --headless --node-rank` from the LWS worker index"
    )
    fix = (
        f"run the {lay.nnodes} nodes as a LeaderWorkerSet of size {lay.nnodes} ({follower}, {flag} the leader's "
        f"address), or drop --nnodes and fit {lay.described} in one pod"
    )
    if addr is None:
        yield ctx.finding(
            waits
            + f"; without {flag} each node meets at 127.0.0.1 of its own pod, so no other node could join it",
            lay.loc or s.loc("nnodes") or s.command_loc,
            fix=fix,
        )
    else:
        yield ctx.finding(
            waits
            + ", unless another object starts node rank "
            + ("1" if lay.nnodes == 2 else f"1 to {lay.nnodes - 1}")
            + f" with {flag} {addr}",
            lay.loc or s.loc("nnodes") or s.command_loc,
            fix=fix,
            severity="warning",
        )


#: The vLLM release from which more workers than the node's GPUs is refused unless ``--distributed-executor-backend
#: ray`` (or ``--nnodes``) is given: "World size (W) is larger than the number of available GPUs (G) in this node.
#: If this is intentional and you are using: - ray, set '--distributed-executor-backend ray'" (vllm@0.13.0:
#: vllm/config/parallel.py::ParallelConfig.__post_init__); through 0.12.0 the same check chose the Ray executor
#: itself (``backend = "ray"``), which joins the Ray cluster the pod started or joined.
_VLLM_WORLD_SIZE_REFUSED = (0, 13)


def _vllm_ray_cluster(ctx: RuleContext) -> bool:
    """Whether a vLLM engine not told to use Ray (no ``--distributed-executor-backend ray``, not a Ray object) runs
    in an object that starts or joins a Ray cluster (:data:`_RAY_CLUSTER_WORDS`: zhaotyer/lws_usage's k8s_vllm.yaml
    runs ``ray start --address='ray-head:6379'`` then ``vllm serve ... -tp 16`` on 8 GPUs, beside a Ray head of 8):
    the workers beyond the pod's GPUs can run on the cluster's once vLLM is told to use Ray (0.13.0 on) or, before
    0.13.0, as vLLM chooses itself (:data:`_VLLM_WORLD_SIZE_REFUSED`)."""
    if ctx.engine != "vllm" or ctx.layout.ray or ctx.layout.nnodes > 1:
        return False
    text = json.dumps(ctx.workload.doc.data, default=str).lower()
    return any(word in text for word in _RAY_CLUSTER_WORDS)


def _lone_ray(ctx: RuleContext) -> bool:
    """Whether a vLLM engine on the Ray executor (``--distributed-executor-backend ray``) has no Ray cluster to
    join: not a Ray object (RayCluster, RayService, RayJob, AIBrix RayClusterFleet), no LeaderWorkerSet group, and
    nothing in the object starts a cluster or names its address (:data:`_RAY_CLUSTER_WORDS`). vLLM then calls
    ``ray.init()`` without an address, which starts a local instance with the pod's GPUs only
    (vllm@0.8.4:vllm/executor/ray_utils.py::initialize_ray_cluster, the warning and ``_wait_until_pg_ready``)."""
    w = ctx.workload
    if ctx.engine != "vllm" or w.kind.lower().startswith("ray") or "fleet" in w.kind.lower():
        return False
    if w.leader is not None or w.role is not None or (w.group_size or 0) > 1:
        return False
    text = json.dumps(w.doc.data, default=str).lower()
    return not any(word in text for word in _RAY_CLUSTER_WORDS)


#: NeuronCores per Neuron device, by EC2 instance family (AWS Neuron architecture documentation: an Inferentia
#: chip has four NeuronCore-v1, an Inferentia2 or Trainium chip two NeuronCore-v2). Trainium2 is left out: its
#: logical NeuronCores per chip depend on the logical-core setting.
NEURON_CORES_PER_DEVICE = {"inf1": 4, "inf2": 2, "trn1": 2, "trn1n": 2}
_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _neuron_family(ctx: RuleContext) -> str | None:
    """The EC2 instance family (``inf2``) the pod's ``nodeSelector`` names with an instance-type label."""
    sel = ctx.workload.pod_spec.get("nodeSelector")
    if not isinstance(sel, dict):
        return None
    for label in _INSTANCE_TYPE_LABELS:
        value = sel.get(label)
        if isinstance(value, str) and "." in value:
            return value.split(".", 1)[0].lower()
    return None


def _neuron_cores(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV403 on AWS Neuron (``aws.amazon.com/neuroncore``, or Neuron devices on a known instance family):
    vLLM on Neuron passes tensor-parallel-size to the Neuron model as the number of NeuronCores it shards the
    model over (``tp_degree``: vllm@0.8.0:vllm/model_executor/model_loader/neuron.py::get_neuron_model), so
    it is compared with the NeuronCores the pod gets, in NeuronCores, not GPUs. Devices on an unknown instance
    family are not compared (two to four NeuronCores a device); other engines are not read on Neuron.

    One pod's NeuronCores, also for a Ray object's engine (a RayService's Ray Serve LLM one among them, whose
    GPU engine is held to its worker group's GPUs): vLLM's Neuron platform runs every worker in one process
    whatever executor is asked (vllm-project/vllm ``vllm/platforms/neuron.py::NeuronPlatform.
    check_and_update_config``: ``world_size > 1`` -> ``distributed_executor_backend = "uni"``), and Ray Serve
    LLM's default bundles ask for ``GPU`` or ``CPU``, never Ray's ``neuron_cores`` (ray@2.56.0
    ``VLLMEngineConfig.placement_bundles`` and ``use_gpu``; a ``placement_group_config`` is not modelled, KV504),
    so no NeuronCore of another pod is used."""
    p, lay = ctx.placement, ctx.layout
    assert p is not None and p.gpus is not None and p.resource is not None
    if ctx.engine != "vllm":
        return
    need = lay.workers
    if p.resource == NEURON_CORE_RESOURCE:
        have, per, where = p.gpus, 1, f"{p.resource}: {p.gpus}"
    else:
        family = _neuron_family(ctx)
        per_device = NEURON_CORES_PER_DEVICE.get(family or "")
        if per_device is None:
            return
        have, per = p.gpus * per_device, per_device
        where = f"{p.resource}: {p.gpus}, {per_device} NeuronCores per {family} device"
    how = (
        "vLLM on Neuron shards the model over tensor-parallel-size NeuronCores (the Neuron model's tp_degree)"
    )
    request = count(-(-need // per), "device" if per > 1 else "NeuronCore")
    # with pipeline or data parallelism as well, tensor-parallel-size alone is not the count to lower or raise
    tp_only = lay.pp * lay.dp_local == 1
    if need > have:
        lower = (
            f"tensor-parallel-size to {have}" if tp_only else f"the parallel sizes so their product is {have}"
        )
        yield ctx.finding(
            f"{lay.described} needs {need} NeuronCores but the pod gets {have} ({where}); {how}, more than the "
            "pod is given",
            lay.loc or p.gpus_loc or ctx.serving.command_loc,
            fix=f"request {request} ({p.resource}) or lower {lower}",
        )
    elif need < have and have - need >= per:
        yield ctx.finding(
            f"the pod gets {have} NeuronCores ({where}) but {lay.described} uses only {need}; {how}, so "
            f"{idle(have - need, 'NeuronCore')}",
            p.gpus_loc,
            fix=f"request {request} ({p.resource})"
            + {
                True: f", or raise tensor-parallel-size to {have}",
                None: f", or raise tensor-parallel-size to {have} (if it divides the model's attention heads)",
                False: "",
            }[_heads_allow(ctx, have) if tp_only else False],
            severity="warning",
        )


#: JAX devices per TPU chip by ``cloud.google.com/gke-tpu-accelerator`` value (the ``google.com/tpu`` resource
#: counts chips). vLLM on TPU shards the model over JAX devices: one per chip on v5e and v6e (one TensorCore a
#: chip) and on v4 and v5p (two TensorCores fused into one megacore device), two on TPU7x (Ironwood: "Each TPU7x
#: chip contains two TensorCores", https://docs.cloud.google.com/tpu/docs/tpu7x; AI-Hypercomputer/tpu-recipes
#: runs tensor-parallel-size 8 on a 4-chip tpu7x-standard-4t node, "4 TPU v7x chips, 8 TensorCores",
#: inference/ironwood/vLLM/Qwen3.5-397B/README.md@c8cfe2f68908). A generation not listed is not compared.
TPU_DEVICES_PER_CHIP = {
    "tpu-v4-podslice": 1,
    "tpu-v5-lite-podslice": 1,
    "tpu-v5p-slice": 1,
    "tpu-v6e-slice": 1,
    "tpu7x": 2,
}
_TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
_TPU_CATALOGUE_DEVICES = {"google-tpu-v4": 1, "google-tpu-v5e": 1, "google-tpu-v5p": 1, "google-tpu-v6e": 1}


def _tpu_generation(ctx: RuleContext) -> tuple[str, int] | None:
    """``(name, JAX devices per chip)`` of the TPU the pod lands on: the pod's
    ``cloud.google.com/gke-tpu-accelerator`` nodeSelector value, else the catalogued TPU the placement found
    (a KubeAI resource profile); None when neither says (:data:`TPU_DEVICES_PER_CHIP`)."""
    sel = ctx.workload.pod_spec.get("nodeSelector")
    value = sel.get(_TPU_ACCELERATOR_LABEL) if isinstance(sel, dict) else None
    if isinstance(value, str) and value in TPU_DEVICES_PER_CHIP:
        return value, TPU_DEVICES_PER_CHIP[value]
    acc = ctx.placement.accelerator if ctx.placement is not None else None
    if acc is not None and acc.id in _TPU_CATALOGUE_DEVICES:
        return acc.name, _TPU_CATALOGUE_DEVICES[acc.id]
    return None


def _chips(n: int) -> str:
    """``n`` TPU chips in words: "1 chip", "4 chips"."""
    return f"{n} chip" if n == 1 else f"{n} chips"


def _tpu_devices(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV403 on Google TPU (``google.com/tpu``, which counts chips): vLLM's workers (TP x PP x local DP)
    against the JAX devices the pod's chips give, :data:`TPU_DEVICES_PER_CHIP` a chip, so that a TPU7x pod of 4
    chips runs tensor-parallel-size 8. Only vLLM is compared. Where the pod names no TPU generation kvlint
    knows, only more workers than two devices a chip (the most any generation gives) is reported."""
    p, lay = ctx.placement, ctx.layout
    assert p is not None and p.gpus is not None
    if ctx.engine != "vllm" or lay.ray:
        return
    gen = _tpu_generation(ctx)
    name, per = gen if gen is not None else (None, max(TPU_DEVICES_PER_CHIP.values()))
    need, pods, have = _gpus_counted(ctx, p.gpus * per)
    where = f"{TPU_RESOURCE}: {_chips(p.gpus)}" + (f" x {pods} pods" if pods > 1 else "")
    if name is None:
        where += f", at most {per} JAX devices a chip (TPU7x; the pod names no TPU generation kvlint knows)"
    elif per > 1:
        where += f", {per} TensorCores (JAX devices) per {name} chip"
    else:
        where += f" of {name}"
    how = "vLLM on TPU places one worker on each JAX device"
    if need > have:
        yield ctx.finding(
            f"{lay.described} needs {need} TPU devices but the pod gets {'at most ' if name is None else ''}{have} "
            f"({where}); {how}, so the engine does not start",
            lay.loc or p.gpus_loc or ctx.serving.command_loc,
            fix=f"request {_chips(-(-need // (per * pods)))} per pod ({TPU_RESOURCE}) on a node that has them, or "
            + _LOWER["vllm"].format(have=have),
        )
    elif name is not None and need < have and have - need >= per:
        yield ctx.finding(
            f"the pod gets {have} TPU devices ({where}) but {lay.described} uses only {need}; "
            f"{idle(have - need, 'device')}",
            p.gpus_loc,
            fix=f"request {_chips(-(-need // (per * pods)))} per pod ({TPU_RESOURCE})"
            + (f", or {use_all}" if (use_all := _use_all(ctx, have)) else ""),
            severity="warning",
        )


@check("KV403")
def gpu_count(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV403: the engine's GPU workers (TP x PP x local DP, TGI shards) against the GPUs the pod requests; on
    AWS Neuron resources, tensor-parallel-size against NeuronCores (:func:`_neuron_cores`); on Google TPU, the
    workers against the chips' JAX devices (:func:`_tpu_devices`).

    Sources: vLLM ``vllm/config/parallel.py::ParallelConfig.__post_init__`` (world size against the node's
    GPUs, 0.11.0) and ``vllm/v1/worker/gpu_worker.py::Worker.init_device`` (local rank bound); TGI and SGLang as
    :data:`_TOO_FEW` names them. TGI's default shard count is the number of visible GPUs
    (``launcher/src/main.rs::find_num_shards``), so only an explicit ``--num-shard`` can disagree.

    A Ray object's engine may take GPUs of other pods, so more workers than the pod's GPUs is not reported,
    except for a RayService's Ray Serve LLM engine (:mod:`kvlint.workloads.rayserve`, ``group_size`` = the
    worker group's pods): one ``{"GPU": 1}`` bundle per TP x PP device, ray@2.56.0
    ``python/ray/llm/_internal/serve/engines/vllm/vllm_models.py::VLLMEngineConfig.placement_bundles``, and a
    placement group larger than the group's GPUs is never placed.
    """
    p, lay, w, s = ctx.placement, ctx.layout, ctx.workload, ctx.serving
    assert p is not None and p.gpus is not None
    if s.joins is not None:
        yield from _joined_worker_gpus(ctx)
        return
    if _lone_node(ctx):
        yield from _lone_node_finding(ctx)
        return
    if s.apart_from is not None:  # a follower sized on its own GPU: still one engine with its leader's
        leader_p = _leader_placement(ctx)
        if leader_p is not None:
            yield from _group_gpu_type(ctx, leader_p)
    counted = _counted_as(ctx)
    if counted is None and _tgi_shards_on_mig(ctx):
        # TGI without --num-shard: one shard per device the container's visible-devices variable lists, which on
        # MIG slices are the slices (_mig_slices)
        assert p.gpus is not None
        yield from _mig_slices(ctx, p.gpus, f"{p.resource}: {p.gpus}", default_shards=True)
        return
    if counted == "neuron":
        yield from _neuron_cores(ctx)  # NeuronCores, not GPUs
    elif counted == "tpu":
        yield from _tpu_devices(ctx)  # JAX devices of the chips, not GPUs
    elif counted == "npus":
        yield from _ascend_npus(ctx)  # Ascend NPUs, one a worker as vllm-ascend binds them
    if counted != "gpus":
        return
    need, pods, have = _gpus_counted(ctx, p.gpus)
    # Intel Gaudi's device plugin counts HPUs, one engine worker each (as GPUs are), named as such
    unit = "Gaudi HPU" if p.resource == GAUDI_RESOURCE else "GPU"
    where = f"{p.resource}: {p.gpus}" + (f" x {pods} pods" if pods > 1 else "")
    kaito = _kaito_gpus(ctx)
    if kaito is not None:
        where = kaito[0] + (f" x {pods} pods" if pods > 1 else "")
    # MIG slices: the mixed strategy's nvidia.com/mig-<profile>, or nvidia.com/gpu on nodes whose labels say the
    # GPUs are slices (the single strategy's GFD product label, GKE's partition size: Placement.mig_profile)
    on_mig = _on_mig(p)
    if on_mig and -(-need // pods) > 1 and not lay.ray:
        yield from _mig_slices(ctx, -(-need // pods), where)
        return
    if need > have:
        if lay.ray and w.path.startswith(SERVE_PATH) and w.group_size:
            # Ray Serve LLM: one GPU bundle per TP x PP device, placed on the worker group's pods; more bundles
            # than the group's GPUs are never placed
            yield ctx.finding(
                f"{lay.described} is a Ray placement group of {need} GPU bundles, but the worker group has {have} "
                f"GPUs ({where}); Ray never places the group, so the Ray Serve LLM replica stays pending and the "
                "engine does not start",
                lay.loc or p.gpus_loc or s.command_loc,
                fix=f"give the worker group {-(-need // p.gpus)} pods (maxReplicas) of {p.gpus} GPUs, or lower "
                "tensor_parallel_size/pipeline_parallel_size",
            )
            return
        lone = lay.ray and _lone_ray(ctx)
        if lay.ray and not lone:
            return  # a Ray cluster may contribute GPUs from other pods
        joined = _vllm_ray_cluster(ctx)
        if joined and (v := version_tuple(s.version)) is not None and v[:2] < _VLLM_WORLD_SIZE_REFUSED:
            return  # before 0.13.0 vLLM chooses Ray itself for more workers than the node's GPUs
        per_pod = need // pods if need % pods == 0 else need
        # a lone Ray executor's workers never start here, so KV404 is left to this remedy (_lone_ray_short)
        shm = shm_note(ctx) if lone and per_pod > 1 else ""
        if per_pod <= 8:
            then = f"{shm}, or " if shm else " or "
            lower = (
                f"set {tgi_option(s, 'num_shard')} to {have}" if ctx.engine == "tgi" else _lower(ctx, have)
            )
            more: str | None = f"request {count(per_pod, unit)} per pod ({p.resource})"
            if kaito is not None:
                # a KAITO Workspace has no resource request to raise: KAITO requests its instanceType's GPUs
                more = kaito[1](per_pod)
            if more is None:
                # no VM size of this GPU runs the engine on per_pod GPUs (KAITO's data-parallel tier): not offered
                fix = lower + (
                    f"; on KAITO's VM sizes with {per_pod} of these GPUs it runs this preset data-parallel "
                    "(under half a GPU each), which the inference config's tensor-parallel-size multiplies"
                )
            elif (why := _lower_fails(ctx, have)) is not None:
                # the other remedy (fewer workers) re-planned does not start: not offered, and said why
                fix = f"{more}{shm}; fewer GPUs would not start: {why}"
            else:
                fix = f"{more}{then}{lower}"
        elif (spread := _sglang_nodes(ctx, need)) is not None:
            fix = spread
        elif joined:
            fix = (
                f"{need} GPUs do not fit one node (8 GPUs at most on common GPU nodes), but the object starts or "
                "joins a Ray cluster (ray start): add --distributed-executor-backend ray and vLLM places its "
                f"{need} workers on the cluster's GPUs, or keep tensor parallelism within a node (<= 8) and span "
                "nodes with pipeline parallelism"
            )
        else:
            fix = (
                f"{need} GPUs do not fit one node (8 GPUs at most on common GPU nodes): keep "
                "tensor parallelism within a node (<= 8) and span nodes with pipeline parallelism on a "
                "LeaderWorkerSet (group size = number of nodes) or a Ray cluster"
            )
        if lone:
            fix += (
                ", or run it in a Ray cluster (a RayCluster or RayService, a LeaderWorkerSet that starts one)"
            )
            if shm and per_pod > 8:
                # the node-spanning remedies still run several GPU workers in each pod: KV404 (left to this
                # remedy) would report those pods without a memory-backed /dev/shm
                fix += f"; {_SHM_PER_POD}"
        yield ctx.finding(
            f"{lay.described} needs {count(need, unit)} but the pod requests {have} ({where}); "
            + (_LONE_RAY if lone else _TOO_FEW[ctx.engine].format(need=need, have=have)),
            lay.loc or p.gpus_loc or s.command_loc,
            fix=fix,
        )
    elif need < have and not lay.ray:
        yield ctx.finding(
            f"the pod requests {count(have, unit)} ({where}) but {lay.described} uses only {need}; {idle(have - need, unit)}",
            p.gpus_loc,
            fix=((kaito[1](need) if kaito is not None else None) or f"request {count(need, unit)}")
            + (f", or {use_all}" if (use_all := _use_all(ctx, have)) else ""),
            severity="warning",
        )


def _on_mig(p: Placement) -> bool:
    """Whether the pod's GPUs are MIG slices: the device plugin's mixed strategy (``nvidia.com/mig-<profile>``), or
    ``nvidia.com/gpu`` on nodes whose labels name slices (:attr:`kvlint.types.Placement.mig_slices`, kept under
    ``--gpu-memory``, which gives the slice's memory, not another device, and for a profile whose memory kvlint
    does not know)."""
    return (
        (p.resource or "").startswith(MIG_RESOURCE_PREFIX)
        or p.mig_profile is not None
        or p.mig_slices is not None
    )


def _tgi_shards_on_mig(ctx: RuleContext) -> bool:
    """A TGI engine left at its default shard count on more than one MIG slice: the launcher starts one shard per
    entry of ``CUDA_VISIBLE_DEVICES``, else of ``NVIDIA_VISIBLE_DEVICES`` (``launcher/src/main.rs::num_cuda_devices``,
    ``find_num_shards``: ``(None, None) => num_cuda_devices().unwrap_or(1)``, TGI v3.3.6), and the NVIDIA device
    plugin's default ``envvar`` device-list strategy sets ``NVIDIA_VISIBLE_DEVICES`` to the allocated devices' IDs,
    one entry a slice (``NVIDIA/k8s-device-plugin@1b826acc6``: ``cmd/nvidia-device-plugin/main.go``, default
    ``envvar``; ``internal/plugin/server.go``, ``response.Envs[deviceListEnvVar] = strings.Join(deviceIDs, ",")``), so it
    starts as many shards as the pod has slices: the same start as ``--num-shard`` of that count. A container that
    sets either variable itself, or the plugin's ``volume-mounts`` strategy (one path entry), is not this case; the
    first is read here, the second is not visible in a manifest."""
    p, lay, s = ctx.placement, ctx.layout, ctx.serving
    if ctx.engine != "tgi" or lay.explicit or lay.ray or p is None or p.gpus is None or p.gpus < 2:
        return False
    if any(k in s.env for k in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")):
        return False
    return _on_mig(p)


def _mig_slices(
    ctx: RuleContext, per_pod: int, where: str, default_shards: bool = False
) -> Iterator[Diagnostic]:
    """KV403 for an engine of ``per_pod`` > 1 GPU workers a pod on MIG slices (:func:`_on_mig`: ``nvidia.com/
    mig-<profile>``, the device plugin's mixed strategy; ``nvidia.com/gpu`` where the node labels name slices: the
    single strategy's GFD product label ``<GPU>-MIG-<profile>``, GKE's ``cloud.google.com/gke-gpu-partition-size``;
    under ``--gpu-memory`` too, which sizes the slice, and TGI at its default shard count, :func:`_tgi_shards_on_mig`,
    ``default_shards``): however
    many slices the pod gets, CUDA enumerates one MIG device per process (NVIDIA's MIG User Guide, "CUDA Device
    Enumeration", https://docs.nvidia.com/datacenter/tesla/mig-user-guide/mig-device-names.html#cuda-device-
    enumeration: "With CUDA 11/R450 and CUDA 12/R525, only enumeration of a single MIG instance is supported",
    whatever number of them is made available to the container; quoted by PyTorch's maintainer in
    pytorch/pytorch#130181 for two 3g.40gb slices; NVIDIA/k8s-device-plugin#446 for several slices in one
    container). The guide says nothing of later drivers, and one report (kubernetes-sigs/dra-driver-nvidia-gpu#1364,
    vLLM 0.19.1 at TP 2) has two slices of two different H100s both enumerated and the engine start, while two slices
    of one GPU enumerate as one; the rule reports both, as the pod cannot choose which slices it gets. So the engine
    counts one GPU and its workers beyond it fail as on a pod with one GPU (:data:`_TOO_FEW`: vLLM's
    ``vllm@0.19.0:vllm/config/parallel.py::ParallelConfig.__post_init__`` world-size check against
    ``cuda_device_count_stateless()``). Nor would MIG instances join one tensor-parallel group: the guide lists no
    GPU-to-GPU P2P (NVLink or PCIe) between MIG devices ("Application Considerations", https://docs.nvidia.com/
    datacenter/tesla/mig-user-guide/deployment-considerations.html). Remedies: whole GPUs (``nvidia.com/gpu``) on
    nodes without MIG, or the engine on one slice when kvlint's re-plan on one device starts (:func:`_lower_fails`).
    """
    p, lay, s = ctx.placement, ctx.layout, ctx.serving
    assert p is not None
    fix = f"request {per_pod} whole GPUs per pod ({NVIDIA_GPU}: {per_pod}, on nodes without MIG)"
    if ctx.engine == "tgi":
        lower: str | None = f"set {tgi_option(s, 'num_shard')} to 1"
    else:
        lower = _lower(ctx, 1) or None
    if lower is not None and _lower_fails(ctx, 1) is None and _heads_allow(ctx, 1) is not False:
        fix += f", or run it on one slice: {lower}"
    what = (
        f"TGI without {tgi_option(s, 'num_shard')} starts one shard per device NVIDIA_VISIBLE_DEVICES lists (the "
        f"device plugin lists each MIG slice), so it needs {per_pod} GPUs in the pod"
        if default_shards
        else f"{lay.described} needs {per_pod} GPUs in the pod"
    )
    yield ctx.finding(
        f"{what}, but its {where} are MIG slices and CUDA enumerates one MIG device per process (NVIDIA MIG User "
        "Guide; later drivers still enumerate the slices of one GPU as one, and the pod cannot choose its slices), "
        "so the engine sees 1 GPU; " + _TOO_FEW[ctx.engine].format(need=per_pod, have=1),
        lay.loc or p.gpus_loc or s.command_loc,
        fix=fix,
    )


def _sglang_nodes(ctx: RuleContext, need: int) -> str | None:
    """KV403's remedy for an SGLang engine whose tensor parallelism needs more GPUs than one node has, when it
    spreads evenly over pods of the GPUs this pod requests: SGLang spans tensor parallelism over nodes itself
    (each of ``--nnodes`` runs ``tp_size // nnodes`` of the ranks, its ``--node-rank``-th share, joined at
    ``--dist-init-addr``: sglang@0.5.23:python/sglang/srt/entrypoints/engine.py::_calculate_rank_ranges, with
    ``pp_size`` 1), so the multi-node form of its own launch is the remedy, not pipeline parallelism. A command
    that already names ``--dist-init-addr`` (a multi-node launch missing ``--nnodes``) is told so. None when the
    engine is not SGLang, runs pipeline or data parallelism on its own GPUs, or the ranks do not divide into pods
    of at most 8 GPUs of the pod's count."""
    p, lay, s = ctx.placement, ctx.layout, ctx.serving
    if ctx.engine != "sglang" or p is None or p.gpus is None or not 1 <= p.gpus <= 8:
        return None
    if lay.pp != 1 or lay.workers != lay.tp or lay.nnodes > 1 or need % p.gpus or lay.tp % (need // p.gpus):
        return None
    n = need // p.gpus
    named = "dist_init_addr" in s.flags
    return (
        f"{need} GPUs do not fit one node (8 GPUs at most on common GPU nodes): SGLang spans tensor parallelism "
        f"over nodes, {p.gpus} ranks on each of {n} pods of {p.gpus} GPUs; "
        + (
            f"the command names --dist-init-addr but no --nnodes (1 by default): add --nnodes {n} and "
            f"--node-rank 0 to {n - 1}, each pod its own (0 on the pod --dist-init-addr names)"
            if named
            else f"start it on each with --nnodes {n}, --node-rank 0 to {n - 1} (each pod its own) and "
            "--dist-init-addr ADDRESS:PORT of rank 0"
        )
        + f" (a LeaderWorkerSet of size {n}: --node-rank $(LWS_WORKER_INDEX), --dist-init-addr "
        "$(LWS_LEADER_ADDRESS):PORT)"
    )


def _kaito_gpus(ctx: RuleContext) -> tuple[str, Callable[[int], str | None]] | None:
    """For a KAITO Workspace or InferenceSet, whose pod's GPU request KAITO writes from ``resource.instanceType``
    (the VM size's GPU count, :data:`kvlint.workloads.kaito.KAITO_AZURE_SKUS`) or ``resource.partition.count``
    (pkg/workspace/inference/preset_inferences.go ``GenerateInferencePodSpec``, kaito-project/kaito v0.12.0):
    ``(where, more)``, what KV403 says the GPUs come from and its remedy for ``n`` GPUs a pod, the field the user
    edits (the manifest has no ``nvidia.com/gpu`` to raise), None when no VM size of KAITO's table with this GPU
    runs the engine on ``n`` GPUs (KAITO runs the preset data-parallel on each); None for any other workload."""
    w, p = ctx.workload, ctx.placement
    keys = {c.key for c in w.chart_args}
    if p is None or p.gpus is None:
        return None
    if "resource.partition.count" in keys:
        return (
            f"resource.partition.count: {p.gpus}",
            lambda n: f"set resource.partition.count to {n} (on nodes with that many GPUs)",
        )
    if "resource.instanceType" not in keys:
        return None
    selector = w.pod_spec.get("nodeSelector") if isinstance(w.pod_spec, dict) else None
    name = selector.get("node.kubernetes.io/instance-type") if isinstance(selector, dict) else None
    if not isinstance(name, str) or not name:
        return None
    from kvlint.accelerators import instance_type
    from kvlint.workloads.kaito import KAITO_AZURE_SKUS, kaito_data_parallel

    it = instance_type(name)
    acc = it.accelerator if it is not None else None

    # KAITO runs a preset under half a GPU data-parallel over a multi-GPU VM (its tier 1, kaito_data_parallel),
    # which multiplies the config's tensor-parallel-size: such a VM size is not named
    size = model_weight_bytes(ctx.cr, dtype_bytes=2)

    def more(n: int) -> str | None:
        same = [
            sku
            for sku, (count, mem) in KAITO_AZURE_SKUS.items()
            if count == n
            and acc is not None
            and (other := instance_type(sku)) is not None
            and other.accelerator is not None
            and other.accelerator.id == acc.id
            and size is not None
            and not kaito_data_parallel(count, mem, size)
        ]
        gpus = f"{n} GPU{'s' if n != 1 else ''}"
        if same:
            return f"choose a resource.instanceType with {gpus} ({', '.join(same)}, KAITO's VM sizes with {gpus} of this kind)"
        if (
            acc is not None
            and size is not None
            and any(
                count == n
                and (other := instance_type(sku)) is not None
                and other.accelerator is not None
                and other.accelerator.id == acc.id
                for sku, (count, _mem) in KAITO_AZURE_SKUS.items()
            )
        ):
            return None  # each VM size of this GPU with n GPUs runs the preset data-parallel
        return f"choose a resource.instanceType with {gpus}"

    return f"resource.instanceType {name}: {p.gpus} GPU{'s' if p.gpus != 1 else ''}", more


def _gpus_counted(ctx: RuleContext, gpus: int) -> tuple[int, int, int]:
    """``(need, pods, have)`` as KV403 counts them for a container given ``gpus`` GPUs: the engine's GPU workers,
    the pods of its group (a LeaderWorkerSet or Ray group, ``--nnodes``; 1 when data parallelism runs per pod)
    and the GPUs of those pods."""
    lay, w, s = ctx.layout, ctx.workload, ctx.serving
    need = lay.workers
    pods = w.group_size if w.group_size and w.group_size > 1 else max(1, lay.nnodes)
    if ctx.engine == "vllm" and (lay.dp_local != lay.dp or "data_parallel_size_local" in s.flags):
        # data parallelism across pods: each pod runs its own --data-parallel-size-local ranks on its own GPUs
        # (vllm/v1/engine/utils.py launches dp_local engine cores per node), so the comparison is per pod.
        # Not SGLang's attention DP (its dp_local is 1 too): those ranks are the tensor-parallel workers, which
        # --nnodes spreads over the group's pods (sglang@0.5.5 server_args.py::ServerArgs.check_server_args,
        # "tp_size must be divisible by number of nodes")
        pods = 1
    return need, pods, gpus * pods


def idle_gpus(ctx: RuleContext) -> tuple[int, int, int] | None:
    """``(need, pods, have)`` when KV403 says the engine leaves GPUs of its pod(s) idle (:func:`gpu_count`: it uses
    ``need`` of the ``have`` GPUs of ``pods`` pods, not a Ray engine's, nor one joining a leader's), else None; for
    other rules' wording (KV501 plans the engine on its ``need`` GPUs, not on the pod's)."""
    p, s = ctx.placement, ctx.serving
    if p is None or p.gpus is None or s.joins is not None or ctx.layout.ray or _counted_as(ctx) != "gpus":
        return None
    need, pods, have = _gpus_counted(ctx, p.gpus)
    return (need, pods, have) if need < have else None


def _counted_as(ctx: RuleContext) -> Literal["gpus", "neuron", "tpu", "npus"] | None:
    """What KV403 (:func:`gpu_count`) counts the pod's accelerators in for an engine that does not join a
    leader's: ``"neuron"`` (NeuronCores, :func:`_neuron_cores`), ``"tpu"`` (JAX devices, :func:`_tpu_devices`),
    ``"npus"`` (Ascend NPUs of a vLLM engine, :func:`_ascend_npus`), ``"gpus"`` (:func:`_gpus_counted`), or None
    when it does not count them (no accelerator requested, the parallel layout not known, TGI's shard count left
    to its default of one per visible GPU, TGI on Ascend NPUs: it has no Ascend build)."""
    p, lay = ctx.placement, ctx.layout
    if (
        p is None
        or p.gpus is None
        or p.gpus < 1
        or not lay.known
        or (ctx.engine == "tgi" and not lay.explicit)
    ):
        return None
    if p.resource == NEURON_CORE_RESOURCE or p.resource in NEURON_DEVICE_RESOURCES:
        return "neuron"
    if p.resource == TPU_RESOURCE:
        return "tpu"
    if p.resource in ASCEND_NPU_RESOURCES:
        return "npus" if ctx.engine in ("vllm", "sglang") else None
    return "gpus"


def _ascend_npus(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV403 on Huawei Ascend NPUs (:data:`kvlint.gpu_resources.ASCEND_NPU_RESOURCES`, counted in NPU chips):
    vLLM's workers (TP x PP x local DP) against the pod's NPUs, one NPU a worker, as on CUDA. vllm-ascend's
    worker binds local rank r to ``npu:r`` (vllm-project/vllm-ascend v0.11.0rc1
    ``vllm_ascend/worker/worker_v1.py::NPUWorker._init_device``: ``torch.device(f"npu:{self.local_rank}")``,
    ``NPUPlatform.set_device``), so the worker of a rank past the visible NPUs cannot set its device; later
    releases assert it first (``vllm_ascend/worker/worker.py::NPUWorker._init_device``, "DP adjusted local rank
    ... is out of bounds for ... devices."). A Ray engine (its NPUs may be other pods') is not compared.

    SGLang on NPUs (``--device npu``, or detected when ``torch_npu`` is there) likewise: each scheduler process sets
    its device to ``gpu_id = base_gpu_id + rank × gpu_id_step`` (sglang@0.5.5 ``srt/entrypoints/engine.py::
    _launch_subprocesses``; ``ModelRunner.init_torch_distributed``: ``torch.get_device_module(self.device).
    set_device(self.gpu_id)``, ``hccl`` the backend for ``npu``), so a scheduler past the pod's NPUs finds no
    device, as on CUDA (:data:`_TOO_FEW`); TP × PP (× DP without DP attention) counted as for GPUs."""
    p, lay = ctx.placement, ctx.layout
    assert p is not None and p.gpus is not None
    if lay.ray:
        return
    need, pods, have = _gpus_counted(ctx, p.gpus)
    where = f"{p.resource}: {p.gpus}" + (f" x {pods} pods" if pods > 1 else "")
    if need > have:
        binds = (
            f"vllm-ascend binds each worker to one NPU (local rank r on npu:r), so the worker of local rank {p.gpus} "
            "finds no NPU"
            if ctx.engine == "vllm"
            else f"SGLang sets each scheduler's device to its own NPU (ModelRunner.init_torch_distributed), so the "
            f"scheduler for NPU #{p.gpus} finds none"
        )
        yield ctx.finding(
            f"{lay.described} needs {need} NPUs but the pod requests {have} ({where}); {binds} and the engine does "
            "not start",
            lay.loc or p.gpus_loc or ctx.serving.command_loc,
            fix=f"request {-(-need // pods)} NPUs per pod ({p.resource}) or " + _lower(ctx, have),
        )
    elif need < have:
        yield ctx.finding(
            f"the pod requests {have} NPUs ({where}) but {lay.described} uses only {need}; {idle(have - need, 'NPU')}",
            p.gpus_loc,
            fix=f"request {count(need, 'NPU')}"
            + (f", or {use_all}" if (use_all := _use_all(ctx, have, "NPU")) else ""),
            severity="warning",
        )


#: KV403's remedy when a lone Ray executor's engine needs more than one node and the pod has no memory-backed
#: /dev/shm (:func:`shm_note` for the node-spanning remedies).
_SHM_PER_POD = (
    "each pod that runs more than one GPU worker also needs an emptyDir {medium: Memory} mounted at /dev/shm, "
    "which KV404 requires (KubeRay adds one to the pods of a RayCluster or RayService)"
)


def _lone_ray_short(ctx: RuleContext) -> bool:
    """Whether KV403 reports a vLLM engine on a lone Ray executor (:func:`_lone_ray`) with fewer GPUs than its
    workers: its placement group is never placed, so its GPU workers never start in this pod, and KV404's
    /dev/shm, needed only once they do, is in KV403's remedy instead (:func:`shm_note`, or
    :data:`_SHM_PER_POD` when the workers need more than one node)."""
    p, lay, s = ctx.placement, ctx.layout, ctx.serving
    if not lay.ray or s.joins is not None or _counted_as(ctx) != "gpus":
        return False
    assert p is not None and p.gpus is not None
    if ctx.workload.path.startswith(SERVE_PATH) and ctx.workload.group_size:
        return False
    need, _, have = _gpus_counted(ctx, p.gpus)
    return need > have and _lone_ray(ctx)


def _joined_worker_gpus(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV403 for a worker that joins its leader's engine: the group's GPUs (the leader pod's plus this
    template's times the other pods of the group) against the leader's TP x PP (x local DP): Ray places the
    engine's workers on any GPU of the cluster, so only the total matters."""
    p, lay, w, s = ctx.placement, ctx.layout, ctx.workload, ctx.serving
    joins = s.joins
    assert p is not None and p.gpus is not None and joins is not None and joins.leader is not None
    leader_p = _leader_placement(ctx)
    if leader_p is not None:
        yield from _group_gpu_type(ctx, leader_p)
    if joins.follower:
        yield from _follower_gpus(ctx)
        return
    if not lay.known or not w.group_size or w.group_size < 2 or w.leader is None or leader_p is None:
        return
    leader_gpus = leader_p.gpus or 0
    workers = w.group_size - 1
    have = leader_gpus + p.gpus * workers
    need = lay.tp * lay.pp * lay.dp
    where = f"{leader_gpus} on the leader + {p.gpus} x {count(workers, 'worker pod')} of the group of {w.group_size}"
    if need > have:
        yield ctx.finding(
            f"the leader's engine ({joins.leader_container}: {lay.described}) needs {need} GPUs across the group, "
            f"but the group has {have} ({where}); the Ray placement group for its workers is never satisfied "
            "and vLLM does not start",
            p.gpus_loc or s.command_loc,
            fix=f"give each worker pod {count(max(1, -(-(need - leader_gpus) // workers)), 'GPU')}, or lower the leader's "
            "parallel sizes",
        )
    elif need < have:
        yield ctx.finding(
            f"the group has {have} GPUs ({where}) but the leader's engine ({joins.leader_container}: "
            f"{lay.described}) uses {need}; {idle(have - need, 'GPU')}",
            p.gpus_loc or s.command_loc,
            fix="request fewer GPUs per worker pod, or raise the leader's tensor- or pipeline-parallel size",
            severity="warning",
        )


def _leader_placement(ctx: RuleContext) -> Placement | None:
    """Where the leader pod of a joined worker's group lands (its engine container's placement, as the leader's own
    analysis resolves it from its PodSpec, the user's annotation, the site's tables and the default accelerator),
    or None when the object holds no leader."""
    w, joins = ctx.workload, ctx.serving.joins or ctx.serving.apart_from
    if w.leader is None or joins is None:
        return None
    from kvlint.accelerators import workload_placement

    leader_c = next(
        (
            c
            for c in as_list(w.leader.pod_spec.get("containers"))
            if isinstance(c, dict) and c.get("name") == joins.leader_container
        ),
        None,
    )
    o = ctx.options
    return workload_placement(
        w.leader,
        leader_c or {},
        override=o.accelerator,
        gpu_memory_bytes=o.gpu_memory_bytes,
        default=o.default_accelerator,
        site=o.site,
        annotation_decides=o.exemptions_allowed,
    )


def _group_gpu_type(ctx: RuleContext, leader_p: Placement) -> Iterator[Diagnostic]:
    """KV403 for a worker pod of a multi-node engine (a follower node or a Ray worker joining the leader's
    cluster) that lands on another GPU type than its leader: the engine is one, sized by its smallest GPU --
    vLLM's engine core gives every worker the fewest KV blocks any worker's memory holds
    (``vllm/v1/core/kv_cache_utils.py::get_kv_cache_configs``, called from ``vllm/v1/engine/core.py::EngineCore
    ._initialize_kv_caches`` with each worker's available memory), SGLang's ``ModelRunner`` the least free memory
    over all ranks (``get_available_gpu_memory(..., distributed=True)``) -- while kvlint plans the group at the
    leader, on the leader's GPU. A warning when the worker's GPU has less memory (the leader's plan overstates the
    KV cache, or the worker's share of the weights may not fit at all), info otherwise. Not compared when either
    GPU is unknown, ``--accelerator`` names one for every pod, or the pods are placed from a live cluster."""
    p, s = ctx.placement, ctx.serving
    joins = s.joins or s.apart_from
    assert p is not None and joins is not None
    mine, theirs = p.accelerator, leader_p.accelerator
    if mine is None or theirs is None or mine.id == theirs.id or ctx.options.accelerator:
        return
    if ctx.options.cluster_inventory is not None:
        return  # the worker placed from the live cluster's nodes, the leader from its PodSpec: not comparable
    my_mem, their_mem = p.memory_bytes or mine.memory_bytes, leader_p.memory_bytes or theirs.memory_bytes
    smaller = my_mem < their_mem
    leader = joins.leader_container or "the leader"
    apart = (
        s.joins is None
    )  # a follower node sized on its own GPU as well (kvlint.pipeline._other_gpu_than_leader)
    planned = (
        f"while kvlint plans the leader on its {theirs.name} and this node on its own GPU"
        if apart
        else f"while kvlint plans the group at the leader, on its {theirs.name}"
    )
    yield ctx.finding(
        f"this worker pod lands on {mine.name} ({p.how}) but its leader ({leader}) on {theirs.name} "
        f"({leader_p.how}); the multi-node engine is one, and {ENGINE_NAMES[ctx.engine]} sizes the KV cache of "
        f"every rank by the smallest GPU's memory, {planned}"
        + (
            f": with {gib(my_mem)} here against {gib(their_mem)} there, the leader's plan "
            + (
                "overstates the KV cache (this node's own plan is the engine's)"
                if apart
                else "overstates the KV cache (or this node's share of the weights does not fit)"
            )
            if smaller
            else f" ({gib(their_mem)}, the smaller: the leader's plan holds)"
        ),
        p.loc or p.gpus_loc or s.command_loc,
        fix="schedule the worker template on the leader's GPU type (the same node selector or affinity), or "
        "plan the group with --accelerator for the smaller GPU",
        severity="warning" if smaller else "info",
    )


def _follower_share(ctx: RuleContext) -> int | None:
    """The GPU workers a follower node of a multi-node engine starts in its own pod (:func:`_follower_gpus`), or
    None when the group's layout does not say.

    vLLM (``vllm/config/parallel.py::ParallelConfig``, vllm@00a5fdd): a data-parallel group spans
    ``nnodes_within_dp = nnodes // (data_parallel_size // data_parallel_size_local)`` nodes
    (:func:`kvlint.engines.multinode.vllm_nodes_per_dp_group`) and each of its nodes
    starts ``local_world_size = world_size // nnodes_within_dp`` workers (``world_size`` = TP x PP), times the
    data-parallel ranks it runs (``--data-parallel-size-local``, this node's own setting). SGLang
    (``python/sglang/srt/entrypoints/engine.py::_launch_subprocesses``): each node of ``--nnodes`` starts
    ``tp_size * pp_size // nnodes`` schedulers, one GPU each, times the data-parallel ranks when DP attention
    is off and data parallelism runs whole engines per node."""
    assert ctx.serving.joins is not None and ctx.serving.joins.leader is not None
    return node_workers(ctx)


def node_workers(ctx: RuleContext) -> int | None:
    """The GPU workers one node (pod) of a multi-node engine (``--nnodes`` 2 or more) starts, as
    :func:`_follower_share` counts them, for the leader node as for a follower; None for a one-node engine or
    when the layout does not say."""
    lay, s = ctx.layout, ctx.serving
    nnodes = lay.nnodes
    if not lay.known or nnodes < 2:
        return None
    if ctx.engine == "vllm":
        dp_local = s.get("data_parallel_size_local")
        dp_local = dp_local if isinstance(dp_local, int) and dp_local > 0 else lay.dp_local
        within = vllm_nodes_per_dp_group(nnodes, lay.dp, lay.dp_local)
        world = lay.tp * lay.pp
        if within < 1 or world % within:
            return None
        return world // within * dp_local
    if lay.workers % nnodes:
        return None
    return lay.workers // nnodes


def _request_gpus_fix(ctx: RuleContext, resource: str) -> str:
    """KV405's remedy: the resource request for the GPUs the engine's layout uses (:func:`pod_gpus_needed`), else
    for "the number of GPUs the engine uses"."""
    need = pod_gpus_needed(ctx)
    if need is None:
        return f"set resources.limits['{resource}'] to the number of GPUs the engine uses"
    n, how = need
    return f"set resources.limits['{resource}']: {n}, the GPUs the engine uses ({how})"


def pod_gpus_needed(ctx: RuleContext) -> tuple[int, str] | None:
    """The GPUs the engine's workers use in this pod (``tensor x pipeline x local data-parallel`` workers, one GPU
    each, :attr:`kvlint.engines.layout.Parallelism.workers`; a node's share of a multi-node engine,
    :func:`node_workers`) and the flags that say so (``--tensor-parallel-size 4``; "vLLM's default
    tensor-parallel-size 1" when none is set), for a remedy that requests them; None when the layout does not say:
    a size kvlint cannot resolve, Ray placing the workers on other pods, TGI's default shard count (the GPUs the
    container sees, whatever it requests)."""
    lay = ctx.layout
    if not lay.known or lay.ray or (ctx.engine == "tgi" and not lay.explicit):
        return None
    n = node_workers(ctx) if lay.nnodes > 1 else lay.workers
    if n is None or n < 1:
        return None
    names = {"vllm": "vLLM's default tensor-parallel-size 1", "sglang": "SGLang's default --tp-size 1"}
    how = (
        lay.described
        if lay.explicit and lay.described
        else names.get(ctx.engine, "the engine's default layout")
    )
    if lay.nnodes > 1:
        how += f", this node's share of {lay.nnodes} nodes"
    return n, how


#: What a follower node with fewer GPUs than its workers does (:func:`_follower_gpus`).
_FOLLOWER_TOO_FEW = {
    "vllm": "the worker whose local rank has no GPU stops ('local rank is out of bounds', vllm/v1/worker/"
    "gpu_worker.py::Worker.init_device) and the leader's engine never starts",
    "sglang": "the schedulers past the node's GPUs fail with 'CUDA error: invalid device ordinal' and the "
    "leader's engine never starts",
    "tgi": "",
}


def _follower_gpus(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV403 for a follower node that runs its leader's engine (vLLM ``--headless``, SGLang ``--node-rank``):
    its pod's GPUs against the workers it starts (:func:`_follower_share`). Too few: vLLM's worker whose local
    rank has no device stops ("DP adjusted local rank R is out of bounds", ``Worker.init_device``), SGLang's
    scheduler on a GPU id past the visible ones fails to start; too many sit idle."""
    p, lay, s = ctx.placement, ctx.layout, ctx.serving
    joins = s.joins
    assert p is not None and p.gpus is not None and joins is not None
    share = _follower_share(ctx)
    if share is None:
        return
    have = p.gpus
    what = (
        f"the leader's engine ({joins.leader_container}: {lay.described}) over {lay.nnodes} nodes starts "
        f"{count(share, 'GPU worker')} on this node (`{joins.how}`)"
    )
    if share > have:
        yield ctx.finding(
            f"{what}, but its pod requests {have} ({p.resource}: {have}); " + _FOLLOWER_TOO_FEW[ctx.engine],
            p.gpus_loc or s.command_loc,
            fix=f"request {share} GPUs per pod ({p.resource}) on every node of the group, or lower the "
            "parallel sizes on every node",
        )
    elif share < have:
        yield ctx.finding(
            f"the pod requests {have} GPUs ({p.resource}: {have}) but {what}; {idle(have - share, 'GPU')}",
            p.gpus_loc or s.command_loc,
            fix=f"request {count(share, 'GPU')} per pod on every node of the group, or raise the parallel sizes on every "
            "node",
            severity="warning",
        )


#: Kinds whose pod an operator writes from a few fields (the manifest does not show its volumes).
OPERATOR_BUILT_PODS = frozenset({"InferenceEndpointConfig"})


def shm_missing(ctx: RuleContext) -> bool:
    """Whether KV404 would report this pod once it runs more than one GPU worker: no memory-backed ``/dev/shm``
    (:func:`kvlint.rules.facts.has_memory_shm`), not a Ray pod (KubeRay adds one itself) and not a pod an
    operator writes (its volumes are not in the manifest). Capacity remedies that raise the GPU count use it."""
    w = ctx.workload
    if w.kind.lower().startswith("ray") or w.kind in OPERATOR_BUILT_PODS:
        return False
    return not has_memory_shm(w.pod_spec, ctx.container)


#: :func:`shm_note` for a bare command line (``kvlint plan``): no pod to mount a volume in, and KV404 (a pod rule)
#: does not run, so the note says what any runtime needs: NCCL's shared-memory transport and vLLM's shared-memory
#: broadcast between the workers live in /dev/shm, which docker sizes at 64 MiB unless ``--ipc=host`` or
#: ``--shm-size`` (the docker invocations of vLLM's, TGI's and SGLang's quick starts).
SHM_NOTE_COMMAND = (
    ", plus a memory-backed /dev/shm for its GPU workers: docker --ipc=host or --shm-size, a pod's emptyDir "
    "{medium: Memory}"
)


def pod_known(ctx: RuleContext) -> bool:
    """Whether the container comes from a Kubernetes object (not ``kvlint plan``'s bare command line, whose
    workload has no kind): remedies name pod fields only then."""
    return bool(ctx.workload.kind)


def shm_note(ctx: RuleContext, unit: str = "GPU") -> str:
    """What a remedy that moves the pod to more than one GPU worker must add so that it does not trade its
    finding for KV404: a memory-backed ``/dev/shm`` (emptyDir ``medium: Memory``), unless the pod already has one,
    is a Ray pod (KubeRay adds it) or is written by an operator (KV404's own exemptions). For a bare command line
    (no pod): :data:`SHM_NOTE_COMMAND`. ``unit`` names the workers' device (``NPU`` for vllm-ascend's, whose
    multiprocessing executor keeps vLLM's shared-memory queues: the note said "GPU worker" of NPUs)."""
    if not pod_known(ctx):
        return SHM_NOTE_COMMAND.replace("GPU workers", f"{unit} workers")
    if not shm_missing(ctx):
        return ""
    return (
        f", plus an emptyDir {{medium: Memory}} mounted at /dev/shm, which KV404 requires for more than one {unit} "
        "worker"
    )


#: The first vLLM release whose TPU platform is tpu-inference's only: v0.14.0 removed vLLM's own torch_xla TPU
#: path ("[Refactor][TPU] Remove torch_xla path and use tpu-inference", vllm-project/vllm#30808). Before it,
#: vllm/platforms/tpu.py (vllm-project/vllm@00678d93) used tpu_commons/tpu_inference only when installed, else
#: its own torch_xla ``TPUWorker`` (``dist_backend = "gloo"``, no executor override, so vLLM's default
#: multiprocess executor and its shared-memory broadcast queue), which a manifest does not show.
_TPU_INFERENCE_ONLY = (0, 14)


def _tpu_single_process(ctx: RuleContext) -> bool:
    """Whether vLLM on this Google TPU pod runs its model in one process, so no worker processes communicate
    through ``/dev/shm`` (KV404 does not apply). tpu-inference's ``TpuPlatform.check_and_update_config``
    (vllm-project/tpu-inference@0021b4ac, tpu_inference/platforms/tpu_platform.py) forces the ``uni`` executor
    on a single host (``TPU_MULTIHOST_BACKEND`` unset) when ``pipeline_parallel_size`` is 1: JAX shards the
    model over all the chips' devices from that one process, with no NCCL (there is none on TPU) and no
    shared-memory broadcast queue between workers. Pipeline parallelism (its own ``MultiprocExecutor``), the
    Ray multi-host backend, and a vLLM release known to be older than v0.14.0 (:data:`_TPU_INFERENCE_ONLY`,
    whose torch_xla path runs a process a chip) are still reported."""
    p = ctx.placement
    if p is None or p.resource != TPU_RESOURCE or ctx.layout.pp != 1:
        return False
    if ctx.serving.env.get("TPU_MULTIHOST_BACKEND"):
        return False
    v = version_tuple(ctx.serving.version)
    return v is None or v[:2] >= _TPU_INFERENCE_ONLY


@check("KV404")
def shm_too_small(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV404: more than one GPU worker without a memory-backed ``/dev/shm``. NCCL (all three engines; RCCL, its
    ROCm fork, on a ROCm build) and
    vLLM's shared-memory broadcast use it; container runtimes give 64 MiB by default. KubeRay adds one to Ray
    pods itself. vLLM on AWS Neuron runs one process for all its NeuronCores, and so does vLLM on a single-host
    Google TPU pod without pipeline parallelism (:func:`_tpu_single_process`), so neither is reported. Nor is a
    CUDA/ROCm build on another accelerator's node (KV304: it never starts). SGLang on an Ascend NPU (Gaudi, Intel
    GPU, CPU) build has no NCCL but keeps its tensor-parallel message queue in ``/dev/shm``
    (:func:`_sglang_shm_use`): a warning that says so, not "GPU workers ... NCCL"."""
    lay, s = ctx.layout, ctx.serving
    # SGLang's attention-DP ranks are the tensor-parallel workers (Parallelism.dp_local 1): tp x pp processes,
    # not tp x pp x dp (data_parallel_controller.py::launch_dp_attention_schedulers); vLLM's count is unchanged
    workers = lay.workers if ctx.engine == "sglang" else lay.tp * lay.pp * lay.dp
    if workers <= 1 or not lay.known:
        return
    if not shm_missing(ctx):
        return
    if _lone_ray_short(ctx):
        return  # KV403: the workers never start in this pod; its remedy names the /dev/shm
    resource = ctx.placement.resource if ctx.placement is not None else None
    if gpu_build_on_other_accelerator(s, ctx.placement) is not None:
        # a CUDA/ROCm build on a TPU, Gaudi, Neuron or Ascend node finds no GPU and never starts its workers
        # (KV304); NCCL and a /dev/shm for them are beside the point there
        return
    if ctx.engine == "vllm" and platform_of(s, resource) == "neuron":
        # one process drives all the NeuronCores: vLLM sets the "uni" executor on Neuron whatever the world
        # size (vllm@0.8.0:vllm/platforms/neuron.py::NeuronPlatform.check_and_update_config); no NCCL workers
        return
    if ctx.engine == "vllm" and _tpu_single_process(ctx):
        return
    if ctx.engine == "vllm":
        loc = s.loc("tensor_parallel_size") if lay.tp > 1 else s.loc("pipeline_parallel_size")
        # the sizes whose product is the workers, each under the option word the command wrote (-tp 2,
        # --tensor-parallel-size 2), as the other engines' (Parallelism.described); the data-parallel size whole
        said = s.written
        sizes = [
            ("tensor_parallel_size", lay.tp),
            ("pipeline_parallel_size", lay.pp),
            ("data_parallel_size", lay.dp),
        ]
        what = (
            " x ".join(
                f"{said.get(key, key.replace('_', '-'))} {n}" for key, n in sizes if n > 1 or key in said
            )
            or f"tensor-parallel-size {lay.tp}"
        )
    elif s.joins is not None:
        # a follower node: its own --tp (its settings are its leader's), not the leader's (ctx.layout), which is
        # in the leader's object and, for a leader.yaml/worker.yaml pair, in another file
        loc = next((s.loc(k) for k in ("tp_size", "pp_size", "dp_size") if k in s.flags), s.command_loc)
        what = lay.described
    else:
        loc = lay.loc or s.command_loc
        what = lay.described
    here = ""
    local = node_workers(ctx)
    if local is not None and local < workers:
        # /dev/shm is the pod's own and so is the need: NCCL's segments are files /dev/shm/nccl-XXXXXX
        # (NVIDIA/nccl src/misc/shmutils.cc::ncclShmOpen, for the shm transport src/transport/shm.cc and the
        # proxy's buffers) opened by path by the ranks of one host, and vLLM's shm_broadcast MessageQueue links
        # the processes of one node; the workers on the other nodes use their own pods' /dev/shm
        here = " of this pod"
        what = f"{what}: {workers} over {lay.nnodes} nodes"
        workers = local
    s_, verb = ("s", "communicate") if workers != 1 else ("", "communicates")
    who, fails = f"{workers} GPU worker{s_}{here}", "NCCL fails or hangs"
    if ctx.engine == "vllm" and platform_of(s, resource) not in ("cuda", "rocm"):
        # an Ascend, Gaudi, Intel GPU or CPU build: its ranks talk over the platform's own collectives (HCCL,
        # oneCCL, gloo), not NCCL, but vLLM's multiprocessing executor still hands the work to its worker processes
        # through shared-memory message queues in /dev/shm (vllm@0.17.0 v1/executor/multiproc_executor.py::
        # MultiprocExecutor._init_executor, distributed/device_communicators/shm_broadcast.py::MessageQueue: a
        # ring of 10 chunks of up to 24 MiB)
        who = f"{workers} vLLM worker process{'es' if workers != 1 else ''}{here}"
        fails = "vLLM's shared-memory message queues to its worker processes do not fit there"
    if (_sglang_platform(s, resource) if ctx.engine == "sglang" else platform_of(s, resource)) == "rocm":
        # a ROCm build: torch.distributed's "nccl" backend is RCCL there (ROCm's fork of NCCL, which keeps its
        # segments in /dev/shm as NCCL does); vLLM's pynccl loads librccl.so.1 under torch.version.hip
        # (vLLM's find_nccl_library, vllm/utils), SGLang's ranks take the same "nccl" backend, TGI's shards take
        # backend="nccl" on CUDA and ROCm alike (huggingface/text-generation-inference@db931fcf
        # server/text_generation_server/utils/dist.py::initialize_torch_distributed) and its AMD guide runs the
        # container with --ipc=host --shm-size 256g (docs/source/installation_amd.md)
        fails = "RCCL (ROCm's NCCL) fails or hangs"
    tgi_use = _tgi_shm_use(platform_of(s, resource)) if ctx.engine == "tgi" else None
    if tgi_use is not None:
        # TGI's Gaudi, Intel GPU or Intel CPU build: its shards run their collectives over HCCL or oneCCL, not NCCL
        # (_TGI_COLLECTIVES); the message names the library of the build, and the /dev/shm its guide gives it
        who = f"{workers} TGI shard{s_}{here}"
        fails = tgi_use
    severity: Severity | None = None
    platform = _sglang_platform(s, resource) if ctx.engine == "sglang" else "cuda"
    if platform not in ("cuda", "rocm"):
        # SGLang on an Ascend NPU (or Gaudi, Intel GPU, CPU) build: no NCCL (model_runner.py init_torch_distributed
        # takes HCCL, XCCL or gloo), but the tensor-parallel group's shared-memory message queue lives in /dev/shm;
        # a warning: its 24 MiB ring fits the 64 MiB default, which SGLang's own Ascend guide does not rely on
        who = f"{workers} SGLang worker process{'es' if workers != 1 else ''}{here}"
        fails = _sglang_shm_use(platform)
        severity = "warning"
    undefined = undefined_shm_volume(ctx.workload.pod_spec, ctx.container)
    if undefined is not None:
        name, mount_loc = undefined
        yield ctx.finding(
            f"{who} ({what}) {verb} through /dev/shm, which the container "
            f"mounts from volume '{name}', but this pod defines no volume of that name: the API server rejects the "
            "pod unless an operator or admission webhook adds it, and without it /dev/shm is the container "
            f"runtime's 64 MiB default, where {fails}",
            mount_loc or loc,
            fix=f"define the volume in this pod's volumes: {{name: {name}, emptyDir: {{medium: Memory, "
            "sizeLimit: 16Gi}}",
            severity=severity,
        )
        return
    yield ctx.finding(
        f"{who} ({what}) {verb} through /dev/shm, but no memory-backed volume "
        f"is mounted there; the container runtime default is 64 MiB and {fails}",
        loc,
        fix="add volume {name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}} and mount it at /dev/shm",
        severity=severity,
    )


#: SGLang's ``--device`` values that are not a CUDA/ROCm GPU and the platform word of each (sglang@0.5.5
#: ``srt/server_args.py`` ``--device``; ``model_runner.py::ModelRunner.init_torch_distributed``).
_SGLANG_DEVICES = {"npu": "ascend", "hpu": "gaudi", "xpu": "xpu", "cpu": "cpu"}
#: The collective library SGLang's ranks use on each platform instead of NCCL: sglang@0.5.5
#: ``srt/model_executor/model_runner.py::ModelRunner.init_torch_distributed`` sets the torch.distributed backend
#: ``hccl`` for ``npu`` (Huawei's HCCL, through torch_npu) and ``hpu`` (Habana's), ``xccl`` for ``xpu`` and
#: ``gloo`` for ``cpu``.
_SGLANG_COLLECTIVES = {"ascend": "HCCL", "gaudi": "Habana's HCCL", "xpu": "XCCL (oneCCL)", "cpu": "gloo"}


#: The collective library TGI's shards run over on each of its builds without NCCL, and the shared memory TGI's own
#: guide for that build gives the container: the Gaudi builds (``ghcr.io/huggingface/tgi-gaudi``, TGI's ``-gaudi``
#: tags) take ``backend="hccl"``, Habana's HCCL (huggingface/text-generation-inference@db931fcf
#: ``backends/gaudi/server/text_generation_server/utils/dist.py::initialize_torch_distributed``; huggingface/tgi-gaudi
#: v2.0.5 ``server/text_generation_server/utils/dist.py``), and its Gaudi guide (``docs/source/backends/gaudi.mdx``)
#: requires ``--ipc=host``; the Intel builds (``SYSTEM == "ipex"``, the ``-intel-xpu``/``-intel-cpu`` tags) take
#: ``xccl`` on an Intel GPU and IPEX's ``ccl`` on a CPU, both oneCCL (``server/text_generation_server/utils/
#: dist.py``), and its Intel guide (``docs/source/installation_intel.md``) runs both with ``--ipc=host --shm-size
#: 1g``. ``hpu`` is the image word of a Gaudi build (:func:`kvlint.engines.images.image_platform`).
_TGI_COLLECTIVES = {
    "gaudi": ("Habana's HCCL", "Gaudi", "--ipc=host (the host's /dev/shm)"),
    "hpu": ("Habana's HCCL", "Gaudi", "--ipc=host (the host's /dev/shm)"),
    "xpu": ("oneCCL (torch's xccl backend)", "Intel GPU", "--ipc=host --shm-size 1g"),
    "cpu": ("oneCCL (IPEX's ccl backend)", "Intel CPU", "--ipc=host --shm-size 1g"),
}


def _tgi_shm_use(platform: str) -> str | None:
    """KV404's reason for TGI on a build whose shards do not run NCCL (:data:`_TGI_COLLECTIVES`): the library they
    run their collectives over and the shared memory TGI's guide for that build runs the container with; None for
    its CUDA and ROCm builds (NCCL, RCCL on ROCm), whose reason is NCCL's."""
    found = _TGI_COLLECTIVES.get(platform)
    if found is None:
        return None
    library, build, guide = found
    return (
        f"TGI's {build} guide does not run it so: it gives the container {guide}; {library}, not NCCL, runs the "
        "shards' collectives on this build"
    )


def _sglang_platform(s: ServingConfig, resource: str | None) -> str:
    """The platform SGLang runs on: its ``--device`` when not a GPU (:data:`_SGLANG_DEVICES`), else
    :func:`kvlint.engines.images.platform_of` (the image, ``lmsysorg/sglang:v0.5.5-cann8.3.rc1-910b`` ->
    ``ascend``, or the accelerator resource of an image that is not SGLang's own)."""
    device = s.get("device")
    if isinstance(device, str) and device.strip().lower() in _SGLANG_DEVICES:
        return _SGLANG_DEVICES[device.strip().lower()]
    platform = platform_of(s, resource)
    return {"npu": "ascend", "hpu": "gaudi"}.get(platform, platform)  # an image word ``npu``/``hpu``


def _sglang_shm_use(platform: str) -> str:
    """What SGLang keeps in ``/dev/shm`` on a platform without NCCL (KV404's reason there): its ranks run their
    collectives over :data:`_SGLANG_COLLECTIVES`, but the tensor-parallel group is built with
    ``use_message_queue_broadcaster`` (``SGLANG_USE_MESSAGE_QUEUE_BROADCASTER``, default true) whatever the device,
    a shared-memory ``MessageQueue`` ring of 6 chunks of 4 MiB through which rank 0 hands each batch's requests to
    the others (sglang@0.5.5 ``srt/distributed/parallel_state.py::initialize_model_parallel`` and
    ``GroupCoordinator.__init__``: ``MessageQueue.create_from_process_group(self.cpu_group, 1 << 22, 6)``), and
    SGLang's Ascend NPU guide (docs/platforms/ascend_npu.md at 0175ceec) runs its container with ``--ipc=host
    --shm-size=16g``."""
    coll = _SGLANG_COLLECTIVES.get(platform, "the platform's own collective library")
    guide = (
        "; SGLang's Ascend NPU guide runs the container with --shm-size=16g" if platform == "ascend" else ""
    )
    return (
        "SGLang's tensor-parallel group passes each batch's requests to them through a shared-memory message queue "
        f"there (6 chunks of 4 MiB; {coll}, not NCCL, runs their collectives on this build){guide}"
    )


def _gpu_request_problem(container: LDict, resource: str) -> tuple[str, Loc | None, Severity] | None:
    """``(message, position, severity)`` when the container's ``resources`` give the GPU resource in a way the API
    server rejects (kube-apiserver ``pkg/apis/core/validation/validation.go``, ``ValidateResourceRequirements``:
    an extended resource is not overcommitable, so a request needs a limit, "Limit must be set for non
    overcommitable resources", and must equal it, "must be equal to <resource> limit of N"); None otherwise.
    A request without a limit is a warning: a mutating admission webhook in the cluster may set the limit first."""
    res = container.get("resources")
    if not isinstance(res, dict):
        return None
    requests, limits = res.get("requests"), res.get("limits")
    req = requests.get(resource) if isinstance(requests, dict) else None
    lim = limits.get(resource) if isinstance(limits, dict) else None
    if req is None:
        return None
    if lim is None:
        return (
            f"{resource}: {req} is in resources.requests only; the API server rejects a request of an extended "
            'resource without a limit ("Limit must be set for non overcommitable resources"), so the pod is '
            "never created unless an admission webhook in the cluster adds the limit",
            loc_of(requests, resource),
            "warning",
        )
    if type(req) is type(lim) and req == lim:
        return None  # the same value written twice: equal quantities (or the same unreadable one)
    try:
        same = parse_quantity(req) == parse_quantity(lim)
    except (TypeError, ValueError):
        return None  # an unreadable quantity is the other branch's finding
    if same:
        return None
    return (
        f'{resource} request {req} differs from its limit {lim}; the API server rejects it ("must be equal to '
        f'{resource} limit of {lim}"): GPUs cannot be overcommitted, so the pod is never created',
        loc_of(requests, resource),
        "error",
    )


#: an OpenShift Template's non-string parameter reference, ``${{NAME}}`` (substituted by ``oc process`` as a
#: YAML value, e.g. a number; parameter names are letters, digits and ``_``)
_OPENSHIFT_PARAMETER = re.compile(r"\$\{\{[A-Za-z0-9_]+\}\}")


def _template_quantity(text: str) -> tuple[str, str] | None:
    """``(what it is, how to render it)`` when a resource quantity is a template's parameter rather than a
    value: an envsubst ``${VAR}`` placeholder (KV002 names it), an OpenShift Template's ``${{NAME}}``
    non-string parameter, or a Helm/Go template action ``{{ ... }}`` left in a quoted value (KV002's
    unrendered template syntax); None for anything else (a literal quantity, good or bad)."""
    if next(envsubst_placeholders(text), None) is not None:
        return "a ${VAR} placeholder", "envsubst < FILE | kvlint check -"
    if _OPENSHIFT_PARAMETER.search(text) is not None:
        return "an OpenShift template parameter", "oc process -f FILE -p NAME=VALUE | kvlint check -"
    start = text.find("{{")
    if start >= 0 and text.find("}}", start + 2) >= 0:
        return "a Helm/Go template action", "helm template, or kvlint check CHART_DIR"
    return None


@check("KV405")
def gpu_limit_missing(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV405: a CUDA/ROCm engine container without a usable GPU limit: none at all (warning), zero, or not a
    positive whole number (the API server rejects fractional extended-resource quantities)."""
    p, s = ctx.placement, ctx.serving
    if p is not None and p.resource and p.resource.count("/") == 1 and (p.gpus is None or p.gpus < 1):
        raw = resource_value(s.container, p.resource)
        if raw is not None:
            loc = p.gpus_loc or loc_of(s.container, "resources")
            fix = f"set {p.resource} to the number of GPUs the engine uses, e.g. 1"
            template = _template_quantity(str(raw))
            if template is not None:
                # a template's parameter: what it counts is known once the file is rendered
                what, render = template
                yield ctx.finding(
                    f"GPU limit {p.resource}: {raw!r} is {what}, not a quantity: kvlint cannot "
                    "count the GPUs until the template is rendered (as written, the API server rejects the pod)",
                    loc,
                    fix=f"render the manifest with the values you deploy with (e.g. {render})",
                    severity="warning",
                )
            elif str(raw).strip() in ("0", "0.0"):
                gpu_build = engine_of_image(s.image) is not None and image_platform(s.image) in (
                    "cuda",
                    "rocm",
                )
                if platform_of(s, p.resource) not in ("cuda", "rocm") and not gpu_build:
                    # a CPU (or TPU, Neuron ...) build told it gets no GPU of this resource: what it is built for
                    # (KV501 says it is not sized); StackHPC's Azimuth chart renders ``nvidia.com/gpu: 0`` with
                    # its vllm-cpu image when api.gpus is 0. Not the engine's own CUDA or ROCm image started with
                    # vLLM's --device cpu: vLLM picks its platform from the build, not that flag
                    # (vllm/platforms/__init__.py: is_cpu = "cpu" in version("vllm"), in the releases that have
                    # --device), and a GPU build with no GPU visible finds no platform
                    return
                device = s.get("device") if s.engine == "vllm" else None
                ignored = (
                    f" (--device {device} does not make the image's {image_platform(s.image).upper()} build run "
                    "without one: vLLM picks its platform from the build)"
                    if gpu_build and isinstance(device, str) and device not in ("cuda", "auto", "")
                    else ""
                )
                yield ctx.finding(
                    f"GPU limit {p.resource}: {raw!r} gives the container no GPU: the scheduler places it anywhere "
                    f"and {s.engine} finds no device at start-up{ignored}",
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
    if p is not None and p.resource and p.gpus is not None and not is_runtime_template(ctx.workload):
        problem = _gpu_request_problem(s.container, p.resource)
        if problem is not None:
            yield ctx.finding(
                problem[0],
                problem[1] or p.gpus_loc or loc_of(s.container, "resources"),
                fix=f"set the GPUs in resources.limits ({p.resource}: N); a request is then not needed (it takes "
                "the limit's value) and, if written, must be equal",
                severity=problem[2],
            )
            return
    platform = platform_of(s, p.resource if p is not None else None)
    if (
        (p is None or p.gpus is None)
        and platform in ("cuda", "rocm")
        and not is_runtime_template(ctx.workload)
        and not invalid_gpu_resources(s.container)  # KV409 names the misspelt resource
    ):
        if p is not None and p.gpu_slice is not None and p.gpu_slice.count_missing:
            return  # HAMi slice keys without nvidia.com/gpu: KV409 says what HAMi's webhook does
        if p is not None and p.gpus_elsewhere is not None:
            return  # a DRA claim or the operator requests the GPUs (KV501 plans the engine's own GPU workers)
        sharing = _sharing_resource(s.container)
        if sharing is not None:
            key, what = sharing
            yield ctx.finding(
                f"{s.engine} container '{ctx.cr.container_name}' requests its GPU through {key}, {what}; kvlint "
                "reads no GPU count from it and plans the engine's own GPU count on whole cards",
                loc_of(s.container, "resources") or s.container.loc,
                fix="pass --accelerator and --gpu-memory (the memory the engine sees) to size it",
            )
            return
        w = ctx.workload
        profile = profile_clause(w.kind, w.annotations, w.namespace)
        if profile is not None:
            # not a mistake in the manifest: OpenShift AI fills the resources in from the profile
            yield ctx.finding(
                f"{s.engine} container '{ctx.cr.container_name}' requests no GPU resource in this manifest; "
                f"{profile}",
                loc_of(s.container, "resources") or s.container.loc,
                fix=PROFILE_FIX,
                severity="info",
            )
            return
        at = loc_of(s.container, "resources") or s.container.loc
        nim = _nim_gpu_fix(w) or _llmaz_gpu_fix(w)
        runtime = _nvidia_runtime_class(w.pod_spec)
        # a ROCm build runs on AMD GPUs, which AMD's device plugin advertises as amd.com/gpu
        gpu = AMD_GPU if platform == "rocm" else NVIDIA_GPU
        yield ctx.finding(
            f"{s.engine} container '{ctx.cr.container_name}' requests no GPU resource; the scheduler may place it on "
            "a node without a GPU, or it may share one it was not given"
            + (
                f"; the pod's runtimeClassName {runtime} names NVIDIA's container runtime, which in its legacy "
                "mode gives a container that requests no GPU the devices its NVIDIA_VISIBLE_DEVICES names (all of "
                "the node's in the CUDA base images the engines are built on) unless the node sets "
                "accept-nvidia-visible-devices-envvar-when-unprivileged = false: then every GPU of the node, of "
                "which the scheduler counts none for this pod; on a node where GPUs are injected through CDI (the "
                "GPU Operator's default since v25.10.0) only a GPU request gets the container a device"
                if runtime is not None
                else ""
            ),
            at,
            # the vendor's resource of the build the container runs (a ROCm image takes amd.com/gpu, as KV501 says)
            fix=nim or _request_gpus_fix(ctx, gpu) + _kustomize_base_fix(at.file if at is not None else None),
        )


def _nvidia_runtime_class(pod_spec: object) -> str | None:
    """The pod's ``runtimeClassName`` when it names NVIDIA's container runtime (``nvidia``, and the GPU Operator's
    ``nvidia-cdi`` and ``nvidia-legacy``: a name starting ``nvidia``), else None. That runtime's hook exposes the
    devices a container's ``NVIDIA_VISIBLE_DEVICES`` names whether or not the pod requested GPUs
    (NVIDIA/nvidia-container-toolkit@v1.20.0 ``api/config/v1/config.go::GetDefault``:
    ``AcceptEnvvarUnprivileged: true``, the ``accept-nvidia-visible-devices-envvar-when-unprivileged`` setting),
    and the CUDA base images set it to ``all``; the device plugin overrides it only for a container that requests
    ``nvidia.com/gpu``. That is the runtime's legacy (hook) injection: the GPU Operator injects GPUs through the
    container runtime's native CDI support by default since v25.10.0 ("we are no longer using the nvidia runtime to
    inject GPU support into workload containers", NVIDIA/gpu-operator#1119, 2025-11-15; its CDI specs set
    ``NVIDIA_VISIBLE_DEVICES=void``), where a container without a GPU request gets none, so KV405 says both."""
    name = pod_spec.get("runtimeClassName") if isinstance(pod_spec, Mapping) else None
    if isinstance(name, str) and name.strip().lower().startswith("nvidia"):
        return name.strip()
    return None


def _nim_gpu_fix(w: object) -> str | None:
    """KV405's "no GPU" fix for the pod of an NVIDIA NIM Operator ``NIMService`` (or a service of a
    ``NIMPipeline``) whose ``command`` replaces the NIM launcher, naming where that custom resource sets the GPUs;
    None for other workloads. The operator passes the service's ``spec.resources`` to the container as they are
    (k8s-nim-operator api/apps/v1alpha1 nimservice_types.go ``NIMServiceSpec.Resources``) and adds
    ``nvidia.com/gpu`` itself only for a profile ``storage.nimCache.profile`` names that an NGC NIMCache has cached,
    and only when neither ``spec.resources`` nor ``spec.draResources`` requests GPUs (internal/controller/platform/
    standalone/nimservice.go ``addGPUResources``: the profile's tensor parallel size, else 1, at main of 2026-08);
    ``spec.draResources`` requests them through DRA claims instead (``DRAResource``)."""
    kind = getattr(w, "kind", None)
    path = getattr(w, "path", "")
    if kind not in ("NIMService", "NIMPipeline") or not isinstance(path, str) or not path:
        return None
    return (
        f"set {path}.resources.limits['nvidia.com/gpu'] of the {kind} to the number of GPUs the engine uses (the "
        "NIM operator passes spec.resources to the container as they are; it adds nvidia.com/gpu itself only "
        "for a storage.nimCache.profile cached by an NGC NIMCache), or request them through "
        f"{path}.draResources"
    )


def _llmaz_gpu_fix(w: object) -> str | None:
    """KV405's "no GPU" fix for the model-runner pod kvlint builds from an llmaz ``Playground``
    (:mod:`kvlint.workloads.llmaz`), naming where llmaz takes the GPUs from: the limits of the OpenModel's flavor,
    which llmaz writes over the container's requests and limits (InftyAI/llmaz pkg/controller/inference/
    service_controller.go ``injectModelFlavor``), or the Playground's ``backendRuntimeConfig.resources`` (merged
    over the BackendRuntime's, playground_controller.go ``buildTemplate``); None for other workloads."""
    if getattr(w, "kind", None) != "Playground":
        return None
    return (
        "give the OpenModel's flavor the GPUs the engine uses (spec.inferenceConfig.flavors[].limits: "
        "nvidia.com/gpu: N, which llmaz writes into the model-runner's requests and limits), or set "
        "spec.backendRuntimeConfig.resources.limits['nvidia.com/gpu'] on the Playground"
    )


def _kustomize_base_fix(path: str | None) -> str:
    """The rest of KV405's "no GPU" fix for a container in a kustomize base (:func:`kvlint.render.
    kustomize_overlays_of`): a base often leaves the GPUs to the overlays that patch it per GPU type, so the base
    built or read alone has none; the fix names the overlays beside it and says to lint the one deployed. Empty
    for a file of no kustomization."""
    from kvlint.render import kustomize_overlays_of

    found = kustomize_overlays_of(path) if path else None
    if found is None:
        return ""
    base, overlays = found
    if not overlays:
        return (
            f" (in the kustomize base {base}, or a patch of the overlay that builds on it; if an overlay sets it, "
            "lint the overlay: kvlint check OVERLAY_DIR)"
        )
    import os

    parent = os.path.dirname(os.path.normpath(base)) or "."
    names = [os.path.relpath(o, parent) for o in overlays[:4]]
    shown = ", ".join(names) + (f" and {len(overlays) - 4} more" if len(overlays) > 4 else "")
    return (
        f" (in the kustomize base {base}, or a patch of the overlays beside it that build on it: {shown}); if the "
        f"overlay you deploy sets it, lint that overlay: kvlint check {shell_word(overlays[0])}"
    )


#: What a GPU-sharing plugin's resource means for the memory the engine sees (kvlint.accelerators.sharing).
_SHARING_PLUGINS = {
    "volcano.sh/": "Volcano's vGPU (HAMi-core: the engine sees the volcano.sh/vgpu-memory slice as the device total)",
    "aliyun.com/": "Alibaba's gpushare (memory is scheduled, not isolated: the engine sees the whole card)",
    "nvidia.com/": "HAMi's vGPU",
}


def _sharing_resource(container: object) -> tuple[str, str] | None:
    """``(resource, what the plugin does)`` for the first GPU-sharing plugin resource of the container's limits,
    else requests (:data:`kvlint.accelerators.sharing.SHARING_RESOURCES`); None when it has none."""
    res = container.get("resources") if isinstance(container, dict) else None
    for section in ("limits", "requests"):
        block = res.get(section) if isinstance(res, dict) else None
        for key in block if isinstance(block, dict) else []:
            if key in SHARING_RESOURCES:
                prefix = key.split("/", 1)[0] + "/"
                return key, _SHARING_PLUGINS.get(prefix, "a GPU-sharing device plugin's resource")
    return None


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
        parts.append((f"--cpu-offload-gb {shown} x {count(gpus, 'GPU')}", per_gpu * gpus))
    if plan is not None and plan.era == "v0":
        swap = as_float(s.get("swap_space"))
        swap = 4.0 if swap is None else swap
        if swap > 0:
            parts.append(
                (f"--swap-space {swap:g} x {count(gpus, 'GPU')} (V0 engine)", int(swap * GiB) * gpus)
            )
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
    if need <= 0:
        return  # nothing pinned: any memory limit holds it (the limit is read below only when it matters)
    found = memory_limit(cr.container)
    if found is None:
        return
    limit, limit_loc = found
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


# ---------------------------------------------------------------------------------------------------------
# KV408: probes on a port the engine does not listen on

#: The port each engine listens on when its command does not say (docs/engine-memory-model.md §2.1 for TGI; vLLM
#: ``FrontendArgs.port``; SGLang ``ServerArgs.port``).
DEFAULT_PORTS = {"vllm": 8000, "sglang": 30000, "tgi": 3000}
#: The TGI images whose Dockerfile sets ``PORT=80`` (docs/engine-memory-model.md §2.1).
_TGI_PORT_80_IMAGES = ("huggingface/text-generation-inference",)
#: KServe's Hugging Face server: ``--http_port`` (model_server.py), default 8080.
_KSERVE_HTTP_PORT = 8080


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def engine_port(ctx: RuleContext) -> tuple[int | None, str]:
    """The port the engine listens on and what says so, or ``(None, why unknown)``."""
    s, c = ctx.serving, ctx.container
    words = [str(x) for key in ("command", "args") for x in _list(c.get(key))]
    text = " ".join(words)
    if "dynamo." in text:
        return None, "a Dynamo worker serves no HTTP itself (Dynamo's frontend does)"
    if "huggingfaceserver" in text or "huggingfaceserver" in s.image:
        for i, w in enumerate(words):
            if w.startswith(("--http_port", "--http-port")):
                raw = w.split("=", 1)[1] if "=" in w else (words[i + 1] if i + 1 < len(words) else "")
                port = digits(raw)
                return (port, f"--http_port {raw}") if port is not None else (None, "unresolved --http_port")
        return _KSERVE_HTTP_PORT, "KServe's Hugging Face server default --http_port 8080"
    if "port" in s.unresolved:
        return None, "--port comes from a variable"
    v = s.flags.get("port")
    if v is not None:
        if not isinstance(v.value, int):
            return None, "--port is not a number"
        how = f"PORT={v.raw or v.value} in its env" if v.source == "env" else f"--port {v.raw or v.value}"
        return v.value, how
    if any(f.rule == "KV504" for f in s.findings):
        return None, "the image's entrypoint is assumed"
    if s.engine == "tgi":
        from kvlint.engines.images import split_image

        repo = split_image(s.image)[0].lower()
        if any(repo.endswith(r) for r in _TGI_PORT_80_IMAGES):
            return 80, "the TGI image's PORT=80"
        if "text-generation-launcher" in text:
            return DEFAULT_PORTS["tgi"], "TGI's default --port 3000"
        return None, "this image's default port is not known"
    return DEFAULT_PORTS[s.engine], f"{ENGINE_NAMES[s.engine]}'s default --port {DEFAULT_PORTS[s.engine]}"


def _declared_ports(container: object) -> dict[str, int]:
    ports = container.get("ports") if isinstance(container, dict) else None
    out: dict[str, int] = {}
    for p in ports if isinstance(ports, list) else []:
        if isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("containerPort"), int):
            out[p["name"]] = p["containerPort"]
    return out


def _other_containers_serve(ctx: RuleContext, port: int) -> bool:
    """Another container of the pod (or a sidecar init container) declares ``port``: the probe may be meant
    for it (probes run against the pod's IP)."""
    ps = ctx.workload.pod_spec
    for key in ("containers", "initContainers"):
        for c in as_list(ps.get(key)):
            if not isinstance(c, dict) or c is ctx.container:
                continue
            for p in c.get("ports") or []:
                if isinstance(p, dict) and p.get("containerPort") == port:
                    return True
    return False


def _probe_failure_effect(probe: str) -> str:
    """What a failing ``probe`` (``readinessProbe``, ``livenessProbe``, ``startupProbe``) does to the pod."""
    if probe == "readinessProbe":
        return "the pod never becomes Ready, so its Service sends it no traffic"
    return "the kubelet restarts the container again and again once the probe's failure threshold is reached"


@check("KV408")
def probe_port_not_served(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV408: an ``httpGet``/``tcpSocket``/``grpc`` probe on a port the engine does not listen on (or on a named
    port the container does not declare).

    A follower node of a multi-node engine (:attr:`kvlint.types.JoinedEngine.follower`) is checked too: SGLang's
    (``--node-rank`` 1 or more) serves a stand-in ``/health`` on its own ``--host``/``--port``
    (``launch_dummy_health_check_server`` in sglang ``python/sglang/srt/entrypoints/engine.py::_launch_subprocesses``,
    0.4.x - 0.5.x), so its port is compared as the leader's is; vLLM's ``--headless`` node serves no HTTP at all
    (``vllm/entrypoints/cli/serve.py::run_headless`` starts the engine cores and GPU workers only, no API server), so
    a probe on any port of its container never succeeds. A worker that joins a Ray cluster (``ray start``) runs no
    engine server either, but Ray's own ports are not the engine's: not checked."""
    c = ctx.container
    joins = ctx.serving.joins
    if joins is not None and not joins.follower:
        return
    headless = joins is not None and ctx.engine == "vllm"
    probed = [
        (probe, a)
        for probe in ("readinessProbe", "livenessProbe", "startupProbe")
        if isinstance(p := c.get(probe), dict)
        for a in (p.get("httpGet"), p.get("tcpSocket"), p.get("grpc"))
        if isinstance(a, dict) and a.get("port") is not None
    ]
    if not probed:
        return  # no probe names a port: the engine's port is not needed
    port, how = engine_port(ctx)
    named = _declared_ports(c)
    for probe, a in probed:
        raw = a.get("port")
        # (the probe's position and what its failure does are worked out for a finding only)
        if isinstance(raw, str) and not raw.isdigit():
            if "$" in raw or "{{" in raw:
                continue
            if raw not in named:
                yield ctx.finding(
                    f"the {probe} uses the named port '{raw}', which container '{ctx.cr.container_name}' does not "
                    f"declare in its ports: the probe cannot be run and fails; {_probe_failure_effect(probe)}",
                    loc_of(a, "port"),
                    fix=f"declare ports: [{{name: {raw}, containerPort: {port or '<engine port>'}}}] or use "
                    "the port number",
                )
                continue
            target, shown = named[raw], f"'{raw}' ({named[raw]})"
        elif isinstance(raw, (int, str)) and not isinstance(raw, bool):
            # a number Kubernetes accepts as a port (1-65535; the API server rejects any other). A string is read
            # by digits() after its leading zeros (ASCII digits, at most 19): str.isdigit() is also true of "²",
            # and int() refuses a 5,000-digit string; both raised ValueError
            number = digits(raw.lstrip("0") or "0") if isinstance(raw, str) else raw
            if number is None or not 0 < number < 65536:
                continue
            target, shown = number, str(number)
        else:
            continue
        if headless and joins is not None:
            if _other_containers_serve(ctx, target):
                continue
            yield ctx.finding(
                f"the {probe} checks port {shown} but this follower node runs `{joins.how}`, which serves no HTTP "
                f"(the leader's API server does, in {joins.leader_container or 'the leader pod'}): the probe never "
                f"succeeds and {_probe_failure_effect(probe)}",
                loc_of(a, "port"),
                fix=f"remove the {probe} from the worker template (or make it an exec probe) and probe the leader",
            )
            continue
        if port is None or target == port or _other_containers_serve(ctx, target):
            continue
        yield ctx.finding(
            f"the {probe} checks port {shown} but {ctx.serving.engine} listens on {port} ({how}): the probe "
            f"never succeeds and {_probe_failure_effect(probe)}",
            loc_of(a, "port"),
            fix=f"probe port {port}, or start the engine with --port {target}",
        )


# ---------------------------------------------------------------------------------------------------------
# KV409: GPU resource names

#: Resource names every node has (not extended resources).
_STANDARD_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage", "storage", "pods"})


#: Names a misspelt GPU resource is compared with: the GPU counts and HAMi's slice resources. Not the Ascend
#: NPUs': their device plugins advertise many more names close to them (HAMi's ``huawei.com/Ascend910B-memory``,
#: MindCluster's virtual ``huawei.com/Ascend910-4c``), none of them a misspelling.
_CLOSE_CANDIDATES = [
    *(r for r in GPU_RESOURCES if r not in ASCEND_NPU_RESOURCES),
    HAMI_MEMORY,
    HAMI_MEMORY_PERCENTAGE,
    HAMI_CORES,
]


@functools.lru_cache(maxsize=2**16)
def _close_gpu_resource(name: str) -> str | None:
    """The GPU resource name closest to ``name`` (lower case) by ``difflib.get_close_matches`` with cutoff
    0.8 among :data:`_CLOSE_CANDIDATES`, or None. Memoised by the name: a pure function of one short string, and
    the same few non-GPU extended resources (``rdma/...``, ``vpc.amazonaws.com/efa``) come back in pod after
    pod. The memo holds 65,536 names: with 512, an OpenShift AI hardware profile of 1,000 identifiers applied to
    200 InferenceServices (each container then holds them all) cycled through it and compared every name again
    in every container (400,000 comparisons, 100 s of CPU for a 128 KB manifest)."""
    import difflib

    close = difflib.get_close_matches(name, _CLOSE_CANDIDATES, n=1, cutoff=0.8)
    return close[0] if close else None


#: The resource names of one container compared with :data:`_CLOSE_CANDIDATES` by difflib (about 0.5 ms a
#: name): the first 64 that need it get a suggestion, the rest are judged without one (a GPU-looking name is
#: still reported). A real container requests a handful of extended resources; 100,000 names in one hostile
#: container cost 22 s of difflib in the webhook before this bound.
MAX_CLOSE_COMPARISONS = 64


#: apimachinery ``pkg/util/validation/validation.go``: a qualified name's name part (``qualifiedNameFmt``, at most
#: 63 characters) and the DNS-1123 subdomain its optional prefix must be (``dns1123SubdomainFmt``, at most 253).
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

#: The domains of the accelerator resources device plugins advertise (``nvidia.com``, ``amd.com``, ``habana.ai``,
#: ``gpu.intel.com``, ...): a resource key that is not a qualified name but carries one of them was meant as that
#: vendor's accelerator (AnticipatedD/AMD_Instinct's ``://amd.com: "1"``).
_ACCELERATOR_DOMAINS = tuple(dict.fromkeys(r.split("/", 1)[0] for r in GPU_RESOURCES))


def is_qualified_name(key: str) -> bool:
    """Whether ``key`` is a Kubernetes qualified name, as the API server validates an extended resource's name
    (kubernetes ``pkg/apis/core/validation/validation.go`` ``validateResourceName`` calls apimachinery
    ``IsQualifiedName``): ``[prefix/]name``, the prefix a DNS-1123 subdomain of at most 253 characters, the name
    alphanumeric characters, ``-``, ``_`` or ``.``, starting and ending alphanumeric, at most 63 characters; more
    than one ``/`` is not a qualified name."""
    parts = key.split("/")
    if len(parts) > 2:
        return False
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix or len(prefix) > 253 or _DNS1123_SUBDOMAIN.fullmatch(prefix) is None:
            return False
    return 0 < len(name) <= 63 and _QUALIFIED_NAME.fullmatch(name) is not None


#: The prefix a ResourceQuota gives an extended resource's name (kubernetes ``pkg/apis/core/types.go``
#: ``DefaultResourceRequestsPrefix``); a container's resource name may not start with it.
_REQUESTS_PREFIX = "requests."


def is_extended_resource_name(key: str) -> bool:
    """Whether the API server accepts ``key`` (a qualified name with a ``/``) as a container's extended resource
    name (kubernetes ``pkg/apis/core/helper/helpers.go`` ``IsExtendedResourceName``, called by
    ``validateContainerResourceName`` in ``pkg/apis/core/validation/validation.go`` for a name with a domain that
    is not in ``kubernetes.io/``): it refuses a name starting with ``requests.`` and one whose ``requests.``-prefixed
    form (the ResourceQuota name) is not a qualified name (a domain over 244 characters); a name in the
    ``kubernetes.io/`` namespace is a native resource it does not judge here (True). A pod naming a refused one is
    rejected with "doesn't follow extended resource name standard"."""
    if "/" not in key or "kubernetes.io/" in key:
        return True
    return not key.startswith(_REQUESTS_PREFIX) and is_qualified_name(_REQUESTS_PREFIX + key)


#: A character no qualified name holds (apimachinery ``qualifiedNameFmt``, ``dns1123SubdomainFmt``): a look-alike
#: letter (Cyrillic ``і``), a zero-width or no-break space, which a report shows as nothing or as the letter it
#: resembles.
_ODD_CHAR = re.compile(r"[^A-Za-z0-9._/-]")
#: Of those, the ones a report does not show as themselves: outside printable ASCII (spaces, controls, any
#: non-ASCII letter or space); a visible ``:`` or ``*`` needs no naming.
_UNSEEN_CHAR = re.compile(r"[^\x21-\x7e]")


def odd_character(key: str) -> str:
    """``" (its character N is U+XXXX NAME)"`` for the first character of ``key`` outside printable ASCII
    (:data:`_UNSEEN_CHAR`, none of which a qualified name holds), N 1-based; ``""`` when there is none. A report
    quoting ``'nvidіa.com/gpu'`` or ``'nvidia.com/gpu\u200b'`` shows a name that looks valid; this says what the
    API server refuses."""
    import unicodedata

    m = _UNSEEN_CHAR.search(key)
    if m is None:
        return ""
    ch = m.group()
    return f" (its character {m.start() + 1} is U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')})"


def _meant_gpu_resource(low: str) -> str | None:
    """The accelerator resource whose vendor domain ``low`` (a lower-case resource key) contains, the vendor's GPU
    first (``amd.com/gpu`` for ``://amd.com``), or None."""
    for domain in _ACCELERATOR_DOMAINS:
        if domain in low:
            return next(r for r in GPU_RESOURCES if r.startswith(domain + "/"))
    return None


def invalid_gpu_resources(container: object) -> list[tuple[str, str, str | None]]:
    """``(resource name, section, suggested name)`` for each accelerator-looking resource of the container that
    is not a valid extended-resource name or not one a device plugin advertises. GPU-sharing plugins' resources
    (:data:`kvlint.accelerators.sharing.SHARING_RESOURCES`: HAMi's ``nvidia.com/gpumem``, ``gpumem-percentage``,
    ``gpucores``, ``priority``, Volcano vGPU's, Alibaba gpushare's) are advertised names. A key holding a placeholder
    (``${VAR}``, ``$VAR``, ``$(var)``: :func:`kvlint.engines.images.unexpanded_reference`; a Helm ``{{ }}`` action)
    is not judged: the name the API server sees is the one it is rendered to. At most
    :data:`MAX_CLOSE_COMPARISONS` names of the container are compared with the GPU resource names for a
    suggestion; names beyond it are reported only when they look like a GPU, without one."""
    res = container.get("resources") if isinstance(container, dict) else None
    out: list[tuple[str, str, str | None]] = []
    compared = 0
    for section in ("limits", "requests"):
        block = res.get(section) if isinstance(res, dict) else None
        for key in block if isinstance(block, dict) else []:
            if not isinstance(key, str) or key in _STANDARD_RESOURCES or key.startswith("hugepages-"):
                continue
            if (is_gpu_resource(key) or key in SHARING_RESOURCES) and is_qualified_name(key):
                # (a MIG slice is matched by its prefix alone: ``nvidia.com/mig-1g.10gb`` with a no-break space
                # after it was taken as the slice, though the API server refuses the name)
                continue
            if "{{" in key or unexpanded_reference(key) is not None:
                # a placeholder to fill in (${GPU_RESOURCE:-nvidia.com/gpu}, nvidia.com/$(KIND), a Helm action
                # left unrendered): the API server sees the name it is replaced by, which is not known here
                continue
            low = key.lower()
            close = None
            if compared < MAX_CLOSE_COMPARISONS:
                compared += 1
                close = _close_gpu_resource(low)
            gpuish = any(w in low for w in ("gpu", "tpu", "gaudi", "neuron", "accelerator"))
            meant = _meant_gpu_resource(low)
            if not is_qualified_name(key) and (gpuish or close or meant):
                # not a name the API server accepts at all (more than one '/', an empty or invalid domain)
                bare = _ODD_CHAR.sub("", key)
                same = bare if bare != key and (is_gpu_resource(bare) or bare in SHARING_RESOURCES) else None
                out.append((key, section, same or close or meant or NVIDIA_GPU))
                continue
            if "/" not in key:
                if gpuish or close:
                    out.append((key, section, close or NVIDIA_GPU))
                continue
            if not is_extended_resource_name(key):
                bare = key.removeprefix(_REQUESTS_PREFIX)
                same = bare if is_gpu_resource(bare) or bare in SHARING_RESOURCES else None
                if same or gpuish or close or meant:
                    out.append((key, section, same or close or meant or NVIDIA_GPU))
                continue
            if close or (gpuish and low.split("/", 1)[0] in ("nvidia.com", "amd.com", "nvidia", "amd")):
                out.append((key, section, close))
    return out


@check("KV409")
def gpu_resource_name_invalid(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV409: a GPU requested under a resource name the API server rejects (no domain) or that no device plugin
    advertises (a misspelt vendor resource); and a HAMi memory slice HAMi rejects, clamps, ignores or cannot
    place (Project-HAMi/HAMi ``pkg/device/nvidia/device.go`` ``GenerateResourceRequests``, ``Fit``,
    ``mutateContainerResource``; :mod:`kvlint.accelerators.sharing`)."""
    yield from _hami_slice_findings(ctx)
    res = ctx.container.get("resources")
    for key, section, guess in invalid_gpu_resources(ctx.container):
        loc = loc_of(res.get(section), key) if isinstance(res, dict) else None
        hint = f"; did you mean {guess}?" if guess else ""
        if not is_qualified_name(key):
            msg = (
                f"resources.{section} '{key}' is not a valid resource name{odd_character(key)}: the API server "
                f"rejects the pod, a resource name must be a qualified name, a DNS subdomain, '/' and a name of "
                f"letters, digits, '-', '_' or '.'{hint}"
            )
        elif not is_extended_resource_name(key):
            why = (
                f"an extended resource name may not start with '{_REQUESTS_PREFIX}'"
                if key.startswith(_REQUESTS_PREFIX)
                else f"its quota name '{_REQUESTS_PREFIX}{key}' is not a qualified name"
            )
            msg = (
                f"resources.{section} '{key}' is not a valid extended resource name ({why}, kubernetes "
                f"IsExtendedResourceName): the API server rejects the pod ('doesn't follow extended resource name "
                f"standard'){hint}"
            )
        elif "/" not in key:
            msg = (
                f"resources.{section} '{key}' is not a valid resource name (an extended resource needs a domain, "
                f"like nvidia.com/gpu): the API server rejects the pod ('must be a standard resource type or fully "
                f"qualified'){hint}"
            )
        else:
            msg = (
                f"resources.{section} '{key}' is not a resource any GPU device plugin advertises: the pod is "
                f"accepted but stays Pending ('Insufficient {key}') and the engine never gets a GPU{hint}"
            )
        yield ctx.finding(msg, loc, fix=f"request the GPU as {guess or NVIDIA_GPU}")


def _hami_slice_findings(ctx: RuleContext) -> Iterator[Diagnostic]:
    """The HAMi slice's quantities HAMi rejects, clamps or ignores (their own severity), and a ``gpumem`` slice
    larger than the card the pod is placed on (an error: ``Fit`` skips every card, ``CardInsufficientMemory``)."""
    p = ctx.placement
    gslice = p.gpu_slice if p is not None else None
    if gslice is None:
        return
    for severity, message in gslice.issues:
        yield ctx.finding(
            message,
            gslice.loc,
            fix=f"set {HAMI_MEMORY} to the MiB per vGPU (1-{2**31 - 1}) or {HAMI_MEMORY_PERCENTAGE} to 1-100, "
            f"beside {gslice.key.split('/')[0]}/gpu",
            severity="error" if severity == "error" else "warning",
        )
    acc = p.accelerator if p is not None else None
    if acc is not None and acc.id != "generic" and gslice.mib is not None:
        card = acc.memory_bytes // (1024 * 1024)
        if gslice.mib > card:
            yield ctx.finding(
                f"{HAMI_MEMORY}: {gslice.mib} MiB per vGPU is more than the {card} MiB of {acc.name}: HAMi's "
                "scheduler skips every card with less free memory than the request (CardInsufficientMemory) and "
                "the pod stays Pending",
                gslice.loc,
                fix=f"ask for at most {card} MiB, or {HAMI_MEMORY_PERCENTAGE}: 100 for the whole card",
            )


# ---------------------------------------------------------------------------------------------------------
# KV410: more GPUs than any node the pod may land on has


def _gpu_request(c: LDict, resource: str) -> int:
    """The container's ``resource`` count (limits, else requests: an extended resource's request defaults to, and
    must equal, its limit); 0 when absent, not a whole number, negative or absurd (2^63 and more)."""
    n = to_int(resource_value(c, resource), 0)
    return n if 0 < n < 2**63 else 0


def _pod_gpu_request(pod_spec: LDict, resource: str) -> tuple[int, str, Loc | None]:
    """(the pod's effective request of ``resource``, that request and its parts in words, where it is written: the
    request of the init container that makes the peak when one does, else the first container asking it), as the scheduler's NodeResourcesFit computes it (``k8s.io/component-helpers/resource/helpers.go``
    ``AggregateContainerRequests``, Kubernetes v1.34): the app containers' requests summed, plus every sidecar init
    container's (``restartPolicy: Always``, which keeps running beside them); and not less than what any other init
    container needs while it runs (its own request plus the sidecars started before it)."""
    parts: list[str] = []
    first: Loc | None = None
    steady = 0
    containers = pod_spec.get("containers")
    for c in containers if isinstance(containers, list) else []:
        if isinstance(c, LDict) and (n := _gpu_request(c, resource)):
            steady += n
            parts.append(f"{c.get('name', '?')}: {n}")
            first = first or _resource_loc(c, resource)
    sidecars, peak, peak_text, peak_loc = 0, 0, "", None
    inits = pod_spec.get("initContainers")
    for c in inits if isinstance(inits, list) else []:
        if not isinstance(c, LDict):
            continue
        n = _gpu_request(c, resource)
        if c.get("restartPolicy") == "Always":
            sidecars += n
            if n:
                parts.append(f"sidecar {c.get('name', '?')}: {n}")
                first = first or _resource_loc(c, resource)
        elif n and n + sidecars > peak:
            peak = n + sidecars
            name = c.get("name", "?")
            with_sidecars = f", plus {sidecars} of the sidecars started before it" if sidecars else ""
            peak_text = f"the pod asks {peak} {resource} while its init container {name} runs ({name}: {n}{with_sidecars})"
            peak_loc = _resource_loc(c, resource)
    steady += sidecars
    if peak > steady:  # the init container's own request makes the peak: said where it writes it
        return peak, peak_text, peak_loc or first
    return steady, f"the pod's containers ask {steady} {resource} together ({', '.join(parts)})", first


def _resource_loc(c: LDict, resource: str) -> Loc | None:
    """Where the container writes its ``resource`` count (limits, else requests)."""
    res = c.get("resources")
    for section in ("limits", "requests"):
        block = res.get(section) if isinstance(res, dict) else None
        if isinstance(block, dict) and resource in block:
            return loc_of(block, resource)
    return None


#: GFD's sharing-strategy node label (:data:`kvlint.accelerators.placement.GFD_SHARING`)
_GFD_SHARING = "nvidia.com/gpu.sharing-strategy"


def mps_one_replica(ctx: RuleContext) -> bool:
    """Whether the container's ``nvidia.com/gpu`` (or ``nvidia.com/gpu.shared``) lands on GPUs NVIDIA's device plugin
    shares through MPS, as its ``nodeSelector`` selects them (GFD's ``nvidia.com/gpu.sharing-strategy: mps``): the
    plugin then gives a container at most one replica (:func:`gpu_limit_exceeds_node`'s docstring has the source),
    so no remedy may ask for more GPUs per pod there (KV410 would refuse it)."""
    p = ctx.placement
    if p is None or p.resource not in (NVIDIA_GPU, NVIDIA_GPU_SHARED):
        return False
    sel = ctx.workload.pod_spec.get("nodeSelector")
    said = sel.get(_GFD_SHARING) if isinstance(sel, dict) else None
    return isinstance(said, str) and said.strip().lower() == "mps"


def _mps_request(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV410 for a container asking more than one ``nvidia.com/gpu`` (or ``nvidia.com/gpu.shared``) on nodes its
    ``nodeSelector`` selects by GFD's ``nvidia.com/gpu.sharing-strategy: mps`` (:func:`gpu_limit_exceeds_node`'s
    docstring has the device plugin's source). GKE's MPS labels are not read here."""
    p = ctx.placement
    assert p is not None and p.gpus is not None
    if not mps_one_replica(ctx):
        return
    sel = ctx.workload.pod_spec.get("nodeSelector")
    yield ctx.finding(
        f"{p.resource}: {p.gpus} on GPUs shared through MPS ({_GFD_SHARING}=mps): NVIDIA's device plugin gives a "
        "container at most one MPS replica (under MPS it refuses more whatever failRequestsGreaterThanOne says), so "
        f'the kubelet fails the pod with UnexpectedAdmissionError: \'invalid allocation request for "{p.resource}": '
        f"invalid request: maximum request size for shared resources is 1; found {p.gpus}' (older plugins: "
        f"\"request for '{p.resource}: {p.gpus}' too large: ...\"); the engine never starts, and the pod is not "
        "retried",
        p.gpus_loc or loc_of(sel, _GFD_SHARING),
        fix=f"run engines of more than one GPU on nodes without MPS sharing (drop the {_GFD_SHARING} selector); on "
        f"MPS nodes request 1 {p.resource} and a single GPU worker (tensor x pipeline parallel size 1)",
    )


def _mps_on_mig(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV410 for a MIG device (a ``nvidia.com/mig-<profile>`` resource, or ``nvidia.com/gpu`` on nodes of GFD's single
    strategy) asked on nodes its ``nodeSelector`` selects by GFD's ``nvidia.com/gpu.sharing-strategy: mps``: NVIDIA's
    device plugin does not share MIG devices through MPS (NVIDIA/k8s-device-plugin ``internal/plugin/mps.go``
    ``getMPSOptions`` returns "sharing using MPS is not supported for MIG devices" when any device of the resource
    is a MIG device, and the plugin for that resource does not start), so no such node offers the resource and the
    pod stays Pending. GKE's MPS labels are not read here."""
    p = ctx.placement
    if p is None or not p.mig_profile or p.accelerator is None or p.accelerator.vendor != "nvidia":
        return
    sel = ctx.workload.pod_spec.get("nodeSelector")
    said = sel.get(_GFD_SHARING) if isinstance(sel, dict) else None
    if not (isinstance(said, str) and said.strip().lower() == "mps"):
        return
    yield ctx.finding(
        f"{p.resource} (a MIG {p.mig_profile} device) on nodes shared through MPS ({_GFD_SHARING}=mps): NVIDIA's "
        "device plugin does not share MIG devices through MPS (it stops with 'sharing using MPS is not supported "
        f"for MIG devices' and serves no {p.resource}), so no node offers it and the pod stays Pending",
        loc_of(sel, _GFD_SHARING),
        fix=f"drop the {_GFD_SHARING}: mps selector (a MIG slice is already a device of its own), or use MPS "
        "sharing on nodes without MIG",
    )


@check("KV410")
def gpu_limit_exceeds_node(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV410: the container's GPU limit (or its pod's request, :func:`_pod_gpu_request`) is more than any node its required
    scheduling allows has: the instance type it pins (``node.kubernetes.io/instance-type``, the catalogue's GPU
    count of that type, e.g. ``p4d.24xlarge``: 8), GFD's ``nvidia.com/gpu.count`` or Karpenter's
    ``karpenter.k8s.aws/instance-gpu-count``. No node offers more ``nvidia.com/gpu`` than it has GPUs (without
    time-slicing/MPS replicas, which are not checked): the scheduler's NodeResourcesFit filter rejects every node
    ("Insufficient nvidia.com/gpu"; ``kubernetes@v1.34.0:pkg/scheduler/framework/plugins/noderesources/fit.go::
    fitsRequest``) and the pod stays Pending.

    On GPUs NVIDIA's device plugin shares through MPS (the ``nvidia.com/gpu.sharing-strategy: mps`` GFD writes, in
    the ``nodeSelector``), a container gets at most one replica: the plugin's ``ValidateRequest`` refuses a request of
    more under MPS whatever ``failRequestsGreaterThanOne`` says (NVIDIA/k8s-device-plugin ``internal/rm/rm.go``:
    "maximum request size for shared resources is 1; found 2", wrapped by ``Allocate`` in
    ``internal/plugin/server.go`` as ``invalid allocation request for "nvidia.com/gpu": invalid request: ...``;
    releases before it forced ``failRequestsGreaterThanOne`` on under MPS, ``api/config/v1/config.go``, and said
    "request for 'nvidia.com/gpu: 2' too large: ..."): the kubelet fails the pod with UnexpectedAdmissionError
    (:func:`_mps_request`). A MIG device asked there is not served at all (:func:`_mps_on_mig`)."""
    p = ctx.placement
    if p is not None and p.mig_profile and p.sharing_strategy == "mps":
        found = list(_mps_on_mig(ctx))
        if found:
            yield from found
            return
    if p is not None and p.gpus is not None and p.gpus > 1 and p.sharing_strategy == "mps":
        yield from _mps_request(ctx)
        return
    if p is None or p.gpus is None or p.shared or p.gpu_slice is not None or p.resource is None:
        return
    partitioned = amd_partition_of(p.resource) is not None
    if p.resource not in WHOLE_GPUS and not partitioned:
        return
    if is_runtime_template(ctx.workload):
        return
    pod_spec = ctx.workload.pod_spec
    cap = node_gpu_capacity(pod_spec)
    if partitioned or (p.resource == AMD_GPU and cap is None):
        # AMD compute partitions: the node's GPUs times the partitions of each (amd.com/cpx_nps4, or amd.com/gpu
        # on a node the partition label selects)
        cap = node_partition_capacity(pod_spec, p.resource, p.accelerator)
    if cap is None:
        return
    units = "partition" if cap.partitions > 1 else "GPU"
    vendor = "amd" if p.resource == AMD_GPU or partitioned else "nvidia"
    if cap.accelerator is not None and cap.accelerator.vendor != vendor:
        return  # another vendor's node: KV304 / KV501's concern, not a count
    if cap.key in (GFD_COUNT, GKE_GPU_COUNT) and vendor != "nvidia":
        return  # GFD and GKE count NVIDIA GPUs
    own = p.gpus
    if own > cap.gpus:
        asked, at = f"GPU limit {p.resource}: {own}", p.gpus_loc or cap.loc
        total = max(own, _pod_gpu_request(ctx.workload.pod_spec, p.resource)[0])
    else:
        total, asked, first = _pod_gpu_request(ctx.workload.pod_spec, p.resource)
        if total <= cap.gpus:
            return
        if any(
            _gpu_request(c, p.resource) > cap.gpus
            for c in engine_containers(ctx.workload.pod_spec)
            if c is not ctx.container
        ):
            return  # that container's own limit is reported, on it
        # said of the pod, the same from each of its serving containers (kept once: pipeline._POD_WIDE_RULES)
        at = first or cap.loc
    # an instance type gives the node's count, except of a mixed-naming partition resource: a node whose GPUs are
    # in several modes offers each mode's own ("5 GPU's are following SPX-NPS1 and 3 GPU's are following CPX-NPS1
    # will report ... amd.com/spx_nps1: 5, amd.com/cpx_nps1: 24", ROCm/k8s-device-plugin
    # docs/user-guide/configuration.md), so its GPUs times the mode's partitions is the most it has
    exact = cap.instance_type and not partitioned
    where = (
        f"{cap.what}: a node has {cap.gpus} {units}{'s' if cap.gpus != 1 else ''}"
        if exact
        else f"{cap.what}: a node has at most {cap.gpus} {units}{'s' if cap.gpus != 1 else ''}"
    )
    fixes = [f"ask at most {cap.gpus} {p.resource} per pod (the engine's TP x PP x local DP within one node)"]
    if cap.instance_type and cap.accelerator is not None and units == "GPU":
        it = cat.instance_type(cap.instance_type)
        bigger = cat.instance_types_with(cap.accelerator.id, it.provider, total) if it else []
        if bigger:
            fixes.append(
                f"select an instance type with that many, e.g. {bigger[0].name} ({bigger[0].gpus} GPUs)"
            )
    fixes.append("or run the model across nodes (LeaderWorkerSet or Ray, one pod per node)")
    yield ctx.finding(
        f"{asked}, more {units}s than any node this pod may land on has ({where}; source: {cap.source}): the scheduler "
        f'finds no node with that many allocatable {p.resource} ("Insufficient {p.resource}") and the pod stays '
        "Pending",
        at,
        fix="; ".join(fixes[:-1]) + "; " + fixes[-1],
    )


# ---------------------------------------------------------------------------------------------------------
# KV411: a tensor-parallel partition of a block-quantized FP8 linear layer that is not a whole number of blocks

#: The first vLLM release whose ``ColumnParallelLinear`` lets a merged layer (a dense MLP's gate_up_proj, the
#: QKV projection) hold output partitions that are not multiples of ``block_n``
#: (``_maybe_allow_fp8_block_shape_mismatch`` sets ``allow_fp8_block_shape_mismatch``, which
#: ``validate_fp8_block_shape`` honours; present in the 0.14.0, 0.15.0 and 0.19.0 wheels, absent in 0.13.0's
#: ``vllm/model_executor/layers/linear.py``). The row-parallel down_proj after it is still checked.
MERGED_BLOCK_MISMATCH_ALLOWED = (0, 14, 0)


#: The first vLLM release read whose compressed-tensors FP8 schemes take a ``strategy: block`` weight
#: (``block_structure``) and check its partitions as ``fp8`` does (``compressed_tensors_w8a8_fp8.py`` calls
#: ``validate_fp8_block_shape``, ``compressed_tensors_moe.py::CompressedTensorsW8A8Fp8MoEMethod.create_weights``
#: raises the same messages; in the 0.13.0 and 0.19.0 wheels, not in 0.10.1's; 0.11 and 0.12 not read, so not
#: checked there).
CT_BLOCK_FP8_FROM = (0, 13, 0)


def _block_pair(bs: object) -> tuple[int, int] | None:
    """``(block_n, block_k)`` from a two-element list of JSON integers from 1 to 2^20 - 1, else None (a fraction,
    a string, 0 or a 400-digit number is not a block vLLM sizes)."""
    if not isinstance(bs, list) or len(bs) != 2:
        return None
    n, k = bs
    if not all(isinstance(x, int) and not isinstance(x, bool) and 0 < x < 1 << 20 for x in (n, k)):
        return None
    return n, k


def fp8_weight_blocks(model: ModelSpec, version: tuple[int, int, int]) -> tuple[int, int] | None:
    """``(block_n, block_k)`` of a block-quantized FP8 checkpoint as vLLM ``version`` reads it, else None:
    ``quant_method: fp8`` with ``weight_block_size: [block_n, block_k]`` (``Fp8Config.from_config``,
    ``vllm@0.19.0:vllm/model_executor/layers/quantization/fp8.py``), or from :data:`CT_BLOCK_FP8_FROM` a
    ``compressed-tensors`` config group of 8-bit float weights with ``strategy: block`` and its ``block_structure``
    (llm-compressor's FP8_BLOCK scheme, the ``-FP8-block`` builds). Malformed values read as no blocks."""
    method = str(model.quant_method or "").lower()
    qc = model.quant_config if isinstance(model.quant_config, dict) else {}
    if method == "fp8":
        return _block_pair(qc.get("weight_block_size"))
    if method != "compressed-tensors" or version < CT_BLOCK_FP8_FROM:
        return None
    groups = qc.get("config_groups")
    for grp in groups.values() if isinstance(groups, dict) else ():
        w = grp.get("weights") if isinstance(grp, dict) else None
        if (
            isinstance(w, dict)
            and str(w.get("type")) == "float"
            and w.get("num_bits") == 8
            and str(w.get("strategy")) == "block"
        ):
            return _block_pair(w.get("block_structure"))
    return None


def _dense_mlp_widths(model: ModelSpec) -> list[tuple[str, int]]:
    """``(what, width)`` of the dense (tensor-parallel, merged gate_up + row-parallel down) MLPs of ``model``, in
    the order vLLM builds them: a dense model's ``intermediate_size``; in an MoE model, the dense layers'
    ``intermediate_size`` when some layers are dense (DeepSeek/GLM/Kimi ``first_k_dense_replace``, Qwen MoE
    ``mlp_only_layers`` or ``decoder_sparse_step`` > 1), then the shared experts' MLP
    (``n_shared_experts x moe_intermediate_size``, DeepSeek V2/V3 ``DeepseekV2MoE``; Qwen2-MoE
    ``shared_expert_intermediate_size``). Widths in elements (the whole layer, before any split)."""
    c = model.text_config or model.config or {}
    out: list[tuple[str, int]] = []
    inter = as_int(c.get("intermediate_size")) or 0
    kept = _mlps_kept_unquantized(model)
    if not model.num_experts:
        if inter > 0 and "dense" not in kept:
            out.append(("intermediate_size", inter))
        return out
    dense_layers = (as_int(c.get("first_k_dense_replace")) or 0) > 0
    only = c.get("mlp_only_layers")
    dense_layers = dense_layers or (isinstance(only, list) and bool(only))
    dense_layers = dense_layers or (as_int(c.get("decoder_sparse_step")) or 1) > 1
    if dense_layers and inter > 0 and "dense" not in kept:
        out.append(("intermediate_size (the dense layers)", inter))
    if "shared" in kept:
        return out
    shared = as_int(c.get("n_shared_experts")) or 0
    moe = model.moe_intermediate_size
    if shared > 0 and moe > 0:
        out.append(
            (
                f"n_shared_experts x moe_intermediate_size = {shared} x {moe} (the shared experts)",
                shared * moe,
            )
        )
    elif (as_int(c.get("shared_expert_intermediate_size")) or 0) > 0:
        out.append(("shared_expert_intermediate_size", as_int(c.get("shared_expert_intermediate_size")) or 0))
    return out


#: The MLP projections a checkpoint's skip list names (``model.layers.0.mlp.down_proj``,
#: ``model.layers.3.mlp.shared_expert.gate_proj``), at most this many entries read (GLM-5-FP8 lists 712).
_MLP_PROJ = re.compile(r"(?:^|\.)mlp\.(?:(shared_experts?)\.)?(?:gate_up_proj|gate_proj|up_proj|down_proj)$")
_MAX_SKIP_ENTRIES = 10_000


def _mlps_kept_unquantized(model: ModelSpec) -> set[str]:
    """``{"dense", "shared"}``: which of the dense MLPs and the shared experts the checkpoint keeps unquantized (its
    ``ignored_layers`` or ``modules_to_not_convert`` names their projections, as Qwen3.8's FP8 build does for
    every ``mlp.shared_expert``): ``Fp8Config.get_quant_method`` gives them ``UnquantizedLinearMethod``, which
    checks no block. One layer named counts for all (an [assumed] simplification)."""
    qc = model.quant_config if isinstance(model.quant_config, dict) else {}
    skip = qc.get("ignored_layers") or qc.get("modules_to_not_convert") or []
    out: set[str] = set()
    for entry in skip[:_MAX_SKIP_ENTRIES] if isinstance(skip, list) else ():
        mt = _MLP_PROJ.search(str(entry)[:300])
        if mt:
            out.add("shared" if mt.group(1) else "dense")
    return out


def _experts_block_quantized(model: ModelSpec) -> bool:
    """Whether the routed experts are FP8 blocks too: not when the config names another expert dtype (DeepSeek
    V4's ``expert_dtype: fp4``, whose experts vLLM loads as MXFP4)."""
    c = model.text_config or model.config or {}
    dt = c.get("expert_dtype")
    return dt is None or str(dt).lower() in ("fp8", "float8", "float8_e4m3fn")


def block_partition_refusal(
    model: ModelSpec, tp: int, dp: int, ep: bool, version: tuple[int, int, int]
) -> tuple[str, str] | None:
    """The first layer shape vLLM refuses when it builds ``model``'s layers at tensor-parallel size ``tp``,
    data-parallel size ``dp`` and expert parallelism ``ep`` (``--enable-expert-parallel``) in release
    ``version``: ``(arithmetic, the engine's message)``, or None when every partition is whole.

    Restates, in the order the layers are built (a dense first layer before the experts):

    * ``FusedMoE.__init__``: ``assert intermediate_size % self.tp_size == 0`` (a bare AssertionError), the MoE's
      ``tp_size`` being ``tp x dp`` without expert parallelism from 0.8.0, 1 with it
      (:func:`kvlint.memory.vllm.moe_tp_size`; ``vllm@0.10.1``/``0.13.0``/``0.19.0:vllm/model_executor/layers/
      fused_moe/layer.py``).
    * ``Fp8MoEMethod.create_weights`` (block quantization): the partition ``moe_intermediate_size // tp_size``
      must be a multiple of ``block_n`` ("The output_size of gate's and up's weight = N is not divisible by
      weight quantization block_n = B."), and at attention TP > 1 of ``block_k`` ("The input_size of down's
      weight = ..."); ``vllm@0.10.1``/``0.13.0``/``0.19.0:vllm/model_executor/layers/quantization/fp8.py``.
    * Dense MLPs (:func:`_dense_mlp_widths`) at TP > 1: ``Fp8LinearMethod.create_weights`` on the merged
      gate_up_proj ("Weight output_partition_size = N is not divisible by weight quantization block_n = B.";
      ``vllm@0.10.1`` inline, ``vllm@0.13.0:.../utils/fp8_utils.py::validate_fp8_block_shape``), allowed from
      :data:`MERGED_BLOCK_MISMATCH_ALLOWED`, after which the row-parallel down_proj refuses it ("Weight
      input_size_per_partition = N is not divisible by weight quantization block_k = B."). A width the TP size
      does not divide is left to the linear layer's own ``divide`` assertion (not reported here).

    Attention projections are not checked. Sizes in elements per rank. Raises nothing."""
    from kvlint.memory.versions import moe_shards_experts_across_dp

    blocks = fp8_weight_blocks(model, version)
    bn, bk = blocks if blocks else (0, 0)
    tp, dp = max(1, tp), max(1, dp)
    if blocks and tp > 1:
        for what, width in _dense_mlp_widths(model):
            if width % tp:
                continue
            part = width // tp
            if version < MERGED_BLOCK_MISMATCH_ALLOWED and part % bn:
                return (
                    f"{what} {width:,} / tensor-parallel-size {tp} = {part:,} per rank, not a multiple of "
                    f"block_n {bn}",
                    f"Weight output_partition_size = {part} is not divisible by weight quantization block_n = {bn}.",
                )
            if part % bk:
                return (
                    f"{what} {width:,} / tensor-parallel-size {tp} = {part:,} per rank (down_proj's input), not "
                    f"a multiple of block_k {bk}",
                    f"Weight input_size_per_partition = {part} is not divisible by weight quantization block_k = {bk}.",
                )
    inter = model.moe_intermediate_size or (model.intermediate_size if model.num_experts else 0)
    if not model.num_experts or inter <= 0:
        return None
    if ep and tp * dp > 1:
        moe_tp, how = 1, "whole on each rank (--enable-expert-parallel)"
    elif dp > 1 and moe_shards_experts_across_dp(version):
        moe_tp, how = (
            tp * dp,
            f"split over tensor-parallel-size {tp} x data-parallel-size {dp} = {tp * dp} ranks",
        )
    else:
        moe_tp, how = tp, f"split over tensor-parallel-size {tp}"
    if inter % moe_tp:
        return (
            f"moe_intermediate_size {inter:,} {how}: {inter:,} is not divisible by {moe_tp}",
            "assert intermediate_size % self.tp_size == 0 (AssertionError)",
        )
    if not blocks or not _experts_block_quantized(model):
        return None
    part = inter // moe_tp
    shown = f"{inter:,} / {moe_tp} = {part:,}" if moe_tp > 1 else f"{part:,}"
    if part % bn:
        return (
            f"each expert's moe_intermediate_size {how}: {shown} per rank, not a multiple of block_n {bn}",
            f"The output_size of gate's and up's weight = {part} is not divisible by weight quantization "
            f"block_n = {bn}.",
        )
    if tp > 1 and part % bk:
        return (
            f"each expert's moe_intermediate_size {how}: {shown} per rank, not a multiple of block_k {bk}",
            f"The input_size of down's weight = {part} is not divisible by weight quantization block_k = {bk}.",
        )
    return None


def _fits_one_request(d: object) -> bool:
    """A re-planned remedy counts when the KV cache holds one request of max-model-len at the low end of the
    band (as KV101/KV103 read it)."""
    plan = getattr(d, "plan", None)
    return plan is not None and plan.kv_cache_bytes > 0 and plan.max_concurrency_low >= 1.0


@check("KV411", engine="vllm")
def block_quant_partition(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV411 (vLLM): a tensor-parallel partition of a block-quantized FP8 checkpoint's MLP or experts that is not a
    whole number of weight blocks (or an MoE width the MoE's ranks do not divide), which vLLM refuses while it
    builds the model's layers, before loading any weight (:func:`block_partition_refusal`:
    ``vllm@0.19.0:vllm/model_executor/layers/quantization/fp8.py::Fp8MoEMethod.create_weights``,
    ``.../utils/fp8_utils.py::validate_fp8_block_shape``, ``.../fused_moe/layer.py::FusedMoE.__init__``).

    The remedy is re-checked: the tensor-parallel sizes up to ``max(8, TP)`` whose partitions are whole and
    whose heads KV401/KV402 accept, each re-planned (:func:`kvlint.rules.remedies.replanned`) when the
    container can be sized and kept only if one request of max-model-len then fits; and
    ``--enable-expert-parallel`` (when the release has the flag) where keeping the experts whole avoids the
    split, re-planned the same way. Only on CUDA and ROCm builds (:func:`kvlint.engines.images.platform_of`): the
    TPU, Neuron, Gaudi and CPU platforms quantize in their own code, not read."""
    from kvlint.engines.vllm import known_options
    from kvlint.memory.versions import parse_version
    from kvlint.rules.remedies import replanned

    m, s, lay = ctx.model, ctx.serving, ctx.layout
    assert m is not None
    if not lay.known:
        return
    p = ctx.placement
    if platform_of(s, p.resource if p is not None else None) not in ("cuda", "rocm"):
        return  # vLLM on TPU, Neuron, Gaudi, CPU...: other quantization code, not read
    v = parse_version(s.version)
    ep = bool(s.get("enable_expert_parallel"))
    found = block_partition_refusal(m, lay.tp, lay.dp, ep, v)
    if found is None:
        return
    why, said = found
    sizable = ctx.cr.placement is not None and ctx.cr.settings is not None

    def works(**change: int | bool) -> bool | None:
        """True when the changed container re-plans and fits, False when it does not, None when not sized."""
        if not sizable:
            return None
        return _fits_one_request(replanned(ctx.cr, None, **change))

    limit = max(8, lay.tp)
    # candidates: the sizes that divide the heads (at most the head count, whatever a manifest's TP), else the
    # powers of two up to 64: a --tensor-parallel-size of 10**12 must not size the loop or its re-plans
    heads = m.num_attention_heads
    cands = valid_tp_values(heads, limit) if heads > 0 else [1 << i for i in range(7) if 1 << i <= limit]
    sizes = [
        t
        for t in cands
        if t != lay.tp
        and _heads_allow(ctx, t) is not False
        and block_partition_refusal(m, t, lay.dp, ep, v) is None
        and works(tensor_parallel_size=t) is not False
    ]
    fixes = []
    if sizes:
        gpus = ", ".join(f"{t} ({count(t * lay.pp * lay.dp_local, 'GPU')})" for t in sizes)
        checked = " (each re-planned: one request of max-model-len fits)" if sizable else ""
        fixes.append(f"--tensor-parallel-size {gpus}{checked}")
    if (
        not ep
        and m.num_experts
        and lay.tp * lay.dp > 1
        and "--enable-expert-parallel" in known_options(s.version)
        and block_partition_refusal(m, lay.tp, lay.dp, True, v) is None
        and works(enable_expert_parallel=True) is not False
    ):
        fixes.append(
            f"add --enable-expert-parallel: the {lay.tp * lay.dp} ranks then hold whole experts "
            f"({m.moe_intermediate_size or m.intermediate_size:,} wide) at the same sizes"
            + (" (re-planned: one request of max-model-len fits)" if sizable else "")
        )
    # the data-parallel size is the setting to name when the tensor-parallel size alone splits whole blocks
    by_dp = lay.dp > 1 and block_partition_refusal(m, lay.tp, 1, ep, v) is None
    loc = (s.loc("data_parallel_size") if by_dp else None) or s.loc("tensor_parallel_size") or lay.loc
    blocks = fp8_weight_blocks(m, v)
    ckpt = f" (weight_block_size [{blocks[0]}, {blocks[1]}])" if blocks else ""
    yield ctx.finding(
        f"vLLM cannot build {m.id}{ckpt} at {lay.described}: {why}; start-up fails while the layers are "
        f"created, before any weight loads, with '{said}'",
        loc,
        fix="; or ".join(fixes)
        if fixes
        else "no tensor-parallel size up to "
        f"{limit} splits {m.id} into whole blocks; serve it with pipeline parallelism instead",
    )
