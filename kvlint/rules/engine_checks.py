"""Rules for TGI and SGLang containers: KV107, KV201, KV401/KV402, KV501-KV503, KV601-KV604, KV701, KV702.

Each capacity finding carries its arithmetic and a remedy verified by planning again with the remedy
applied (:func:`kvlint.memory.tgi.plan_tgi_detailed` / :func:`kvlint.memory.sglang.plan_sglang_detailed` with
``overrides``); a remedy that does not make the container start is never printed. Messages quote the
engine's own error texts, by version (engine-memory-model.md §2.4, §3.1, §3.3).

Entry points: :func:`check_tgi` and :func:`check_sglang`, each ``(ContainerResult, Options) -> list[Diagnostic]``.
When the container has a model and a GPU and ``cr.plan`` is None, the plan computed here is stored on it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from kvlint.memory.sglang import SglangPlanDetail
from kvlint.memory.stage import replan
from kvlint.memory.tgi import TgiPlanDetail
from kvlint.rules.checks import _Ctx, _valid_tp_values, gib
from kvlint.source import Loc
from kvlint.types import Diagnostic

if TYPE_CHECKING:
    from kvlint.options import Options
    from kvlint.types import ContainerResult


def _model_missing(out: _Ctx) -> None:
    s = out.cr.serving
    out.add(
        "KV502",
        f"config.json for model '{s.model.value if s.model else '?'}' is unavailable: {out.cr.model_error}; "
        f"{s.engine} limits and capacity were not checked",
        s.model.loc if s.model else None,
        fix="give kvlint the config: --model-dir DIR with <org>--<name>/config.json, a .kvlint.yaml model_paths "
        "entry, the kvlint.io/model annotation, or hub access (HF_TOKEN for gated models)",
    )


def _no_gpu(out: _Ctx) -> None:
    out.add(
        "KV501",
        "kvlint cannot tell which GPU this pod lands on, so capacity rules were skipped",
        out.cr.serving.command_loc,
        fix="add a nodeSelector such as nvidia.com/gpu.product or cloud.google.com/gke-accelerator, the "
        "kvlint.io/accelerator annotation, or run with --accelerator ID (kvlint accelerators lists ids)",
    )


def _gpu(cr: ContainerResult) -> tuple[Any, int] | None:
    p = cr.placement
    if p is None or p.accelerator is None or not p.memory_bytes:
        return None
    return p.accelerator, int(p.memory_bytes)


def _fraction_check(out: _Ctx, flag: str, option: str) -> bool:
    s = out.cr.serving
    val = s.get(flag)
    if val is None:
        return True
    try:
        f = float(val)
    except (TypeError, ValueError):
        return True
    if 0 < f <= 1:
        return True
    out.add(
        "KV107",
        f"{option} {f} is outside (0, 1]: it is the fraction of each GPU's memory the engine may use",
        s.loc(flag),
        fix=f"set {option} between 0 and 1 (e.g. 0.9)",
    )
    return False


# ---------------------------------------------------------------------------------------------------------
# TGI


def _tgi_plan(cr: ContainerResult, **ov: Any) -> TgiPlanDetail | None:
    if not ov:
        d = cr.plan_detail
        return d if isinstance(d, TgiPlanDetail) else None
    d = replan(cr, **ov)
    return d if isinstance(d, TgiPlanDetail) else None


def _tgi_starts(d: TgiPlanDetail | None) -> bool:
    if d is None or d.warmup_oom or d.max_input_tokens >= d.max_total_tokens:
        return False
    if d.max_batch_total_tokens <= 0 or d.max_total_tokens > d.max_batch_total_tokens:
        return False
    if not d.has_chunking and d.max_batch_prefill_tokens < d.max_input_tokens:
        return False
    return d.max_batch_prefill_tokens <= d.max_batch_total_tokens or d.has_chunking


def _tgi_input_text(v: tuple[int, int, int], mi: int, mt: int) -> str:
    """Launcher text for max_input >= max_total: ``launcher/src/main.rs::main`` at v2.0.4-v2.3 (no values)
    and v2.4.1+/HEAD (values in parentheses)."""
    if v < (2, 4, 0):
        return "`max_input_tokens must be < `max_total_tokens`"
    return f"`max_input_tokens`({mi}) must be < `max_total_tokens`({mt})"


def check_tgi(cr: ContainerResult, options: Options) -> list[Diagnostic]:
    """TGI checks for one container (replaces ``checks._check_tgi``).

    * KV107 ``--cuda-memory-fraction`` outside (0, 1].
    * KV401/KV402: heads and KV heads divisible by the shard count (model code, e.g. ``flash_llama_modeling.py``:
      "`num_heads` must be divisible by `num_shards` (got `num_heads`: H and `num_shards`: S").
    * KV601: ``max_input_tokens >= max_total_tokens`` (launcher, all versions; router after warmup).
    * KV602: ``max_batch_prefill_tokens < max_input_tokens`` where prompts cannot be chunked (TGI < 3.0).
    * KV603: ``max_total_tokens`` above the warmup's ``max_batch_total_tokens`` ("Not enough memory to handle
      `max_total_tokens=N`", ``backends/v3/src/lib.rs::connect_backend``, v3.x; v2.x router: "`max_total_tokens`
      must be <= `max_batch_total_tokens`").
    * KV604: the warmup prefill batch does not fit ("Not enough memory to handle N prefill tokens. You need to
      decrease `--max-batch-prefill-tokens`", ``flash_causal_lm.py::FlashCausalLM.warmup``).
    * KV501/KV502/KV503 when no GPU, no config or no plan.
    Never raises on user input.
    """
    out = _Ctx(cr, options)
    s = cr.serving
    m = cr.model
    _fraction_check(out, "cuda_memory_fraction", "--cuda-memory-fraction/CUDA_MEMORY_FRACTION")
    # Static KV601 (launcher) on the user's values, even without a model.
    mi, mt = s.get("max_input_tokens"), s.get("max_total_tokens")
    from kvlint.memory.tgi import tgi_version

    v, _ = tgi_version(s.version)
    static601 = False
    if isinstance(mi, int) and isinstance(mt, int) and mi >= mt:
        static601 = True
        out.add(
            "KV601",
            f"TGI requires max_input_tokens < max_total_tokens (the total is prompt + generated tokens), but "
            f"{mi} >= {mt}; the launcher exits with '{_tgi_input_text(v, mi, mt)}' "
            f"(text of TGI {'v2.0-v2.3' if v < (2, 4, 0) else 'v2.4.1 and later'})",
            s.loc("max_input_tokens"),
            fix=f"set MAX_INPUT_TOKENS to at most {mt - 1} and keep MAX_TOTAL_TOKENS {mt}, or raise MAX_TOTAL_TOKENS "
            f"above {mi}",
        )
    if m is None:
        _model_missing(out)
        return out.out
    shards_flag = s.get("num_shard")
    d = _tgi_plan(cr)
    shards = d.num_shard if d else (shards_flag if isinstance(shards_flag, int) else 1)
    heads_ok = True
    if shards > 1 and m.num_attention_heads % shards:
        heads_ok = False
        out.add(
            "KV401",
            f"TGI shards attention heads across {shards} GPUs but {m.id} has {m.num_attention_heads} heads; the "
            f"shards exit with '`num_heads` must be divisible by `num_shards` (got `num_heads`: "
            f"{m.num_attention_heads} and `num_shards`: {shards}'",
            s.loc("num_shard"),
            fix=f"valid NUM_SHARD values: {', '.join(map(str, _valid_tp_values(m.num_attention_heads, max(8, shards))))}",
        )
    kvh = m.num_kv_heads
    if shards > 1 and kvh > 1 and kvh % shards and not m.is_mla:
        heads_ok = False
        out.add(
            "KV402",
            f"TGI splits the {kvh} KV heads of {m.id} across {shards} shards; the shards exit with "
            f"'`num_key_value_heads` must be divisible by `num_shards` (got `num_key_value_heads`: {kvh} and "
            f"`num_shards`: {shards}'",
            s.loc("num_shard"),
            fix=f"valid NUM_SHARD values: {', '.join(str(t) for t in _valid_tp_values(kvh, max(8, shards)) if m.num_attention_heads % t == 0)}",
        )
    if _gpu(cr) is None:
        _no_gpu(out)
        return out.out
    if d is None:
        why = cr.plan_error or "the model or settings could not be sized"
        out.add("KV503", f"kvlint could not plan this TGI container: {why}", s.command_loc)
        return out.out
    if not heads_ok:
        return out.out
    p = d.plan
    if d.warmup_oom:
        fix = _tgi_prefill_remedy(cr, d)
        out.add(
            "KV604",
            f"TGI's warmup prefill of {d.max_batch_prefill_tokens} tokens needs ≈{gib(d.warmup_need_bytes)} per GPU "
            f"(weights {gib(p.weights_bytes)} + activation {gib(p.activation_bytes)} [heuristic] + non-torch "
            f"{gib(p.non_torch_bytes)} + the warmup batch's KV blocks) but cuda_memory_fraction {d.cuda_memory_fraction} "
            f"× {gib(p.total_bytes)} = {gib(d.cuda_memory_fraction * p.total_bytes)}; the shard exits with 'Not "
            f"enough memory to handle {d.max_batch_prefill_tokens} prefill tokens. You need to decrease "
            "`--max-batch-prefill-tokens`' (flash_causal_lm.py::FlashCausalLM.warmup)",
            s.loc("max_batch_prefill_tokens"),
            fix=fix,
        )
        return out.out
    if not static601 and d.max_input_tokens >= d.max_total_tokens:
        out.add(
            "KV601",
            f"with the defaults applied TGI {'.'.join(map(str, d.version))} ends up with max_input_tokens "
            f"{d.max_input_tokens} >= max_total_tokens {d.max_total_tokens}; it exits with "
            f"'{_tgi_input_text(d.version, d.max_input_tokens, d.max_total_tokens)}'",
            s.loc("max_input_tokens") if "max_input_tokens" in s.flags else s.loc("max_total_tokens"),
            fix=f"set MAX_INPUT_TOKENS to at most {d.max_total_tokens - 1}",
        )
    if not d.has_chunking and d.max_batch_prefill_tokens < d.max_input_tokens:
        out.add(
            "KV602",
            f"TGI {'.'.join(map(str, d.version))} cannot chunk prompts, so max_batch_prefill_tokens "
            f"{d.max_batch_prefill_tokens} must hold one max_input_tokens {d.max_input_tokens} prompt; it exits with "
            f"'`max_batch_prefill_tokens` must be >= `max_input_tokens`. Given: {d.max_batch_prefill_tokens} and "
            f"{d.max_input_tokens}' (launcher v2.0-v2.3; router for models without chunking)",
            s.loc("max_batch_prefill_tokens")
            if "max_batch_prefill_tokens" in s.flags
            else s.loc("max_input_tokens"),
            fix=f"set MAX_BATCH_PREFILL_TOKENS to at least {d.max_input_tokens} or lower MAX_INPUT_TOKENS to "
            f"{d.max_batch_prefill_tokens}",
        )
    bt = d.max_batch_total_tokens
    if bt <= 0 or d.max_total_tokens > bt:
        if d.version >= (3, 0, 0):
            text = f"Not enough memory to handle `max_total_tokens={d.max_total_tokens}`"
            cite = "backends/v3/src/lib.rs::connect_backend, TGI 3.x"
        else:
            text = f"`max_total_tokens` must be <= `max_batch_total_tokens`. Given: {d.max_total_tokens} and {bt}"
            cite = "router validation, TGI 2.x"
        out.add(
            "KV603",
            f"TGI's warmup leaves {gib(max(0, p.kv_cache_bytes))} per GPU for the KV cache ({d.cuda_memory_fraction} "
            f"× {d.wiggle} wiggle room × {gib(p.total_bytes)} − weights {gib(p.weights_bytes)} − activation "
            f"{gib(p.activation_bytes)} − non-torch {gib(p.non_torch_bytes)}) = {p.num_blocks} blocks of "
            f"{p.block_size} tokens × {p.kv_bytes_per_token} B/token = max_batch_total_tokens {bt} (band "
            f"{p.num_blocks_low * p.block_size}-{p.num_blocks_high * p.block_size}), below max_total_tokens "
            f"{d.max_total_tokens}; TGI exits with '{text}' ({cite})",
            s.loc("max_total_tokens"),
            fix=_tgi_total_remedy(cr, d),
        )
    return out.out


def _tgi_total_remedy(cr: ContainerResult, d: TgiPlanDetail) -> str:
    fixes: list[str] = []
    bt = d.max_batch_total_tokens
    if bt > 1:
        new_total = bt
        nd = _tgi_plan(cr, max_total_tokens=new_total, max_input_tokens=new_total - 1)
        if nd is not None and nd.max_batch_total_tokens > 1:
            new_total = min(new_total, nd.max_batch_total_tokens)
            nd = _tgi_plan(cr, max_total_tokens=new_total, max_input_tokens=new_total - 1)
        if nd is not None and _tgi_starts(nd):
            fixes.append(
                f"set MAX_TOTAL_TOKENS to {new_total} and MAX_INPUT_TOKENS to {new_total - 1} (re-planned: fits)"
            )
    if d.cuda_memory_fraction < 1.0:
        nd = _tgi_plan(cr, cuda_memory_fraction=1.0)
        if _tgi_starts(nd):
            fixes.append("raise CUDA_MEMORY_FRACTION to 1.0 (re-planned: fits)")
    if cr.model is not None:
        for n in (2, 4, 8):
            if (
                n <= d.num_shard
                or cr.model.num_attention_heads % n
                or (cr.model.num_kv_heads > 1 and cr.model.num_kv_heads % n)
            ):
                continue
            nd = _tgi_plan(cr, num_shard=n)
            if _tgi_starts(nd):
                assert nd is not None
                fixes.append(
                    f"use NUM_SHARD={n} with {n} GPUs (re-planned: max_batch_total_tokens {nd.max_batch_total_tokens})"
                )
                break
    return (
        "; or ".join(fixes)
        or "no single change found that fits; use a larger GPU or a smaller/quantized model"
    )


def _tgi_prefill_remedy(cr: ContainerResult, d: TgiPlanDetail) -> str:
    lo, hi, best = 1, d.max_batch_prefill_tokens - 1, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        nd = _tgi_plan(cr, max_batch_prefill_tokens=mid)
        if nd is not None and not nd.warmup_oom:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    fixes = []
    if best >= 256:
        best = best // 256 * 256
        nd = _tgi_plan(cr, max_batch_prefill_tokens=best)
        if _tgi_starts(nd):
            fixes.append(f"set MAX_BATCH_PREFILL_TOKENS to {best} (re-planned: warmup fits)")
    if cr.model is not None:
        for n in (2, 4, 8):
            if (
                n <= d.num_shard
                or cr.model.num_attention_heads % n
                or (cr.model.num_kv_heads > 1 and cr.model.num_kv_heads % n)
            ):
                continue
            nd = _tgi_plan(cr, num_shard=n)
            if _tgi_starts(nd):
                fixes.append(f"use NUM_SHARD={n} with {n} GPUs (re-planned: warmup fits)")
                break
    return (
        "; or ".join(fixes) or "the weights alone do not fit this GPU: use a larger GPU or a quantized model"
    )


# ---------------------------------------------------------------------------------------------------------
# SGLang


def _sg_plan(cr: ContainerResult, **ov: Any) -> SglangPlanDetail | None:
    if not ov:
        d = cr.plan_detail
        return d if isinstance(d, SglangPlanDetail) else None
    d = replan(cr, **ov)
    return d if isinstance(d, SglangPlanDetail) else None


def _tp_loc(cr: ContainerResult) -> Loc | None:
    return cr.serving.loc("tp_size")


def check_sglang(cr: ContainerResult, options: Options) -> list[Diagnostic]:
    """SGLang checks for one container (replaces ``checks._check_sglang``).

    * KV107 ``--mem-fraction-static`` outside (0, 1].
    * KV201 ``--context-length`` above the derived length without ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN``
      (``sglang@0.5.23:sglang/srt/configs/model_config.py::ModelConfig._derive_context_length``).
    * KV401/KV402 heads and KV heads vs ``--tp-size``.
    * KV701 the weights leave no KV pool (0.5.23: "Loaded weights leave no GPU memory for the KV cache under
      --mem-fraction-static=F. …", ``kv_cache_configurator.py::_profile_available_bytes``; before: "Not enough
      memory. Please try to increase --mem-fraction-static.", ``sglang@0.4.6:model_runner.py::init_memory_pool``).
    * KV702 the pool holds fewer tokens than context_length (0.5.23 warns "KV pool holds N tokens, fewer than
      --context-length L. One full-length request cannot fit, …"; SGLang starts).
    Never raises on user input.
    """
    out = _Ctx(cr, options)
    s = cr.serving
    m = cr.model
    _fraction_check(out, "mem_fraction_static", "--mem-fraction-static")
    if m is None:
        _model_missing(out)
        return out.out
    tp = s.get("tp_size")
    tp = tp if isinstance(tp, int) and tp > 0 else 1
    ok = True
    if tp > 1 and m.num_attention_heads % tp:
        ok = False
        out.add(
            "KV401",
            f"SGLang --tp-size {tp} does not divide the {m.num_attention_heads} attention heads of {m.id}; the "
            "attention layers cannot be split evenly and start-up fails",
            _tp_loc(cr),
            fix=f"valid --tp-size values: {', '.join(map(str, _valid_tp_values(m.num_attention_heads, max(8, tp))))}",
        )
    kvh = m.num_kv_heads
    if tp > 1 and not m.is_mla and kvh > 0 and ((kvh >= tp and kvh % tp) or (kvh < tp and tp % kvh)):
        ok = False
        out.add(
            "KV402",
            f"SGLang --tp-size {tp} and the {kvh} KV heads of {m.id} do not divide one another (each rank must hold "
            "a whole number of KV heads, or replicas of one)",
            _tp_loc(cr),
            fix=f"use a --tp-size that divides or is a multiple of {kvh}",
        )
    if _gpu(cr) is None:
        _no_gpu(out)
        return out.out
    d = _sg_plan(cr)
    if d is None:
        out.add(
            "KV503",
            "kvlint could not plan this SGLang container (the model could not be sized)",
            s.command_loc,
        )
        return out.out
    if d.context_error:
        out.add(
            "KV201",
            f"SGLang raises ValueError: '{d.context_error}' (sglang ModelConfig._derive_context_length, 0.4.6-0.5.23)",
            s.loc("context_length"),
            fix=f"set --context-length to at most {d.derived_context_length}, or set "
            "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 if the model really supports more",
        )
    if not ok:
        return out.out
    p = d.plan
    if d.rest_bytes <= 0 or d.max_total_num_tokens <= 0:
        need = math.ceil((d.minimum_mfs + 0.01) * 100) / 100
        if d.version >= (0, 5, 23):
            text = (
                f"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={d.mem_fraction_static}. "
                f"Raise --mem-fraction-static above {d.minimum_mfs:.3f} (minimum viable = 1 - available/pre = "
                f"{d.minimum_mfs:.3f}). If using speculative decoding, draft weights are now counted."
            )
        else:
            text = "Not enough memory. Please try to increase --mem-fraction-static."
        fixes = []
        if need < 0.96:
            nd = _sg_plan(cr, mem_fraction_static=need)
            if nd is not None and nd.max_total_num_tokens > 0:
                fixes.append(
                    f"set --mem-fraction-static {need} (re-planned: {nd.max_total_num_tokens} tokens)"
                )
        for n in (2, 4, 8):
            if n <= tp or m.num_attention_heads % n:
                continue
            nd = _sg_plan(cr, tp_size=n)
            if nd is not None and nd.max_total_num_tokens > 0:
                fixes.append(
                    f"use --tp-size {n} with {n} GPUs (re-planned: {nd.max_total_num_tokens} tokens)"
                )
                break
        out.add(
            "KV701",
            f"mem_fraction_static {d.mem_fraction_static} × {gib(d.pre_free_bytes)} free before loading = "
            f"{gib(p.budget_bytes)} for weights + KV pool, but the weights take {gib(p.weights_bytes)} per GPU "
            f"(+ {gib(p.non_torch_bytes)} other [heuristic]); SGLang {p.engine_version} exits with '{text}'",
            s.loc("mem_fraction_static"),
            fix="; or ".join(fixes)
            or "the weights do not fit: use more GPUs (--tp-size) or a quantized model",
        )
        return out.out
    if d.max_total_num_tokens < d.context_length:
        fixes = []
        nd = _sg_plan(cr, context_length=d.max_total_num_tokens)
        if nd is not None and nd.max_total_num_tokens >= nd.context_length and not nd.context_error:
            fixes.append(f"set --context-length {d.max_total_num_tokens} (re-planned: fits once)")
        if d.mem_fraction_static < 0.95:
            nd = _sg_plan(cr, mem_fraction_static=0.95)
            if nd is not None and nd.max_total_num_tokens >= nd.context_length:
                fixes.append(
                    "raise --mem-fraction-static to 0.95 (re-planned: fits once; less room for activations)"
                )
        out.add(
            "KV702",
            f"SGLang's KV pool holds max_total_num_tokens {d.max_total_num_tokens} (rest {gib(d.rest_bytes)} ÷ "
            f"{p.kv_bytes_per_token} B/token, page {d.page_size}) but context_length is {d.context_length}: one "
            f"full-length request cannot fit. SGLang {p.engine_version} starts and warns 'KV pool holds "
            f"{d.max_total_num_tokens} tokens, fewer than --context-length {d.context_length}. One full-length "
            "request cannot fit, …' (0.5.23 kv_cache_configurator; older releases silently cap max_req_len)",
            s.loc("context_length") if "context_length" in s.flags else s.command_loc,
            fix="; or ".join(fixes) or "use more GPUs (--tp-size) or --kv-cache-dtype fp8_e4m3",
        )
    return out.out


__all__ = ["check_sglang", "check_tgi"]
