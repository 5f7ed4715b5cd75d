"""Readable per-GPU text rendering of a :class:`~kvlint.types.MemoryPlan` (``kvlint plan`` output)."""

from __future__ import annotations

import re

from kvlint.numbers import fraction, times
from kvlint.report.escape import printable
from kvlint.types import ENGINE_NAMES, MemoryPlan
from kvlint.wording import count

GiB = 1 << 30
_COLORS = {
    "weights": "\x1b[34m",
    "activation": "\x1b[33m",
    "non-torch": "\x1b[35m",
    "CUDA graphs": "\x1b[36m",
    "state pool": "\x1b[31m",
    "KV cache": "\x1b[32m",
    "unused": "\x1b[90m",
}
_CHARS = {
    "weights": "W",
    "activation": "A",
    "non-torch": "N",
    "CUDA graphs": "G",
    "state pool": "S",
    "KV cache": "K",
    "unused": ".",
}
_RESET = "\x1b[0m"


def _gib(b: int) -> str:
    """``b`` bytes as GiB, two decimals and thousands separators (``1,234.57``)."""
    return f"{b / GiB:,.2f}"


def kv_band_text(plan: MemoryPlan) -> str:
    """The KV-cache band of ``plan`` in words, GiB per GPU: ``2.90 to 4.16 GiB``. The ends are the plan's signed
    figures (budget minus the other terms, as the budget equation and rule KV105 print them); an end at or below
    zero is said to leave no KV cache at all, for every engine (vLLM refuses to start, TGI's warmup fails,
    SGLang exits before allocating its pool), instead of a bare negative GiB figure."""
    low, high = plan.kv_cache_bytes_low, plan.kv_cache_bytes_high
    none = "the other terms exceed the budget: no KV cache at all"
    if high <= 0:
        return f"{_gib(low)} to {_gib(high)} GiB ({none}, across the whole band)"
    if low <= 0:
        return f"{_gib(low)} GiB ({none}) to {_gib(high)} GiB"
    return f"{_gib(low)} to {_gib(high)} GiB"


#: The row label of :func:`kept_free_bytes` in the memory tables (``kvlint plan`` Markdown, ``kvlint simulate``); the
#: text table writes ``kept free`` and this in parentheses after the figures.
KEPT_FREE_WHY = "extensible KV cache margin, CUDA context"
KEPT_FREE_LABEL = f"kept free ({KEPT_FREE_WHY})"


def kept_free_bytes(plan: MemoryPlan) -> int:
    """Bytes of the budget that are neither weights, activation, non-torch, CUDA graphs nor KV cache: what vLLM
    >= 0.34.0's extensible KV cache keeps free (its margin for transient activations and the CUDA context, when
    the device rather than the budget bounds the pool, docs/engine-memory-model.md §1.2.5). 0 for every other
    plan (the terms then add up to the budget); never negative."""
    if plan.engine != "vllm":
        return 0
    rest = (
        plan.budget_bytes
        - plan.weights_bytes
        - plan.activation_bytes
        - plan.non_torch_bytes
        - plan.cudagraph_bytes
        - plan.kv_cache_bytes
    )
    return max(0, rest) if plan.kv_cache_bytes > 0 else 0


def length_source(plan: MemoryPlan) -> str:
    """Where the plan's request length comes from, for the line that names it with the engine's setting
    (:attr:`~kvlint.types.MemoryPlan.setting_names`): ``max_model_len_source`` (``user``, ``derived``,
    ``inferred``, a config.json key), ``user`` where that is the setting's own name (TGI's ``max_total_tokens``,
    SGLang's ``context_length`` as set), then the model's derived length when it differs."""
    src = plan.max_model_len_source
    if src == plan.setting_names[0]:
        src = "user"
    if plan.derived_max_model_len is not None and plan.derived_max_model_len != plan.max_model_len:
        src += f"; derived {plan.derived_max_model_len:,}"
    return src


def _version_tuple(version: str) -> tuple[int, int] | None:
    """``(major, minor)`` parsed from an engine version string such as ``"0.11.0"`` or ``"v0.28.1"``; None when
    the string does not start with ``MAJOR.MINOR`` (e.g. ``"latest"``)."""
    m = re.match(r"v?(\d+)\.(\d+)", version.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def capacity_log_lines(plan: MemoryPlan) -> list[str]:
    """The start-up log line(s) the engine prints for this plan's capacity, formatted as that engine version does.

    vLLM (docs/engine-memory-model.md §1.1 "Start-up log lines" table):

    * V0 (``plan.era == "v0"``): ``# GPU blocks: N`` then ``Maximum concurrency for L tokens per request: X.XXx``
      (``vllm@0.6.6.post1:vllm/executor/gpu_executor.py::GPUExecutor.initialize_cache``; the engine appends
      ``, # CPU blocks: M``, which depends on ``--swap-space`` and is not planned, so it is left off);
    * V1 0.8.0 - 0.27.x: two lines ``GPU KV cache size: N tokens`` and ``Maximum concurrency for L tokens per
      request: X.XXx`` (``vllm/v1/core/kv_cache_utils.py``);
    * 0.28.0 - 0.29.x: one line ``GPU KV cache size: N tokens, Maximum concurrency for L tokens per request: X.XXx``
      (``vllm@0.28.0:vllm/v1/core/kv_cache_utils.py::update_kv_cache_capacity``);
    * >= 0.30.0: the same single line with a device prefix (``GPU`` for CUDA, which kvlint plans for)
      (``vllm@0.33.0:vllm/v1/core/kv_cache_utils.py::update_kv_cache_capacity``).

    TGI (§2.3 step 7): the router's ``Setting max batch total tokens to N`` (N = ``capacity_tokens``, deployment
    total). SGLang (§3.3, groundtruth/README.md): ``KV Cache is allocated. #tokens: N`` (N = max_total_num_tokens).
    An unparsable vLLM version (``latest``) gets the newest format. Numbers use thousands separators as vLLM does.
    Returns a list of 1-2 strings; never raises."""
    if plan.engine == "tgi":
        return [f"Setting max batch total tokens to {plan.capacity_tokens}"]
    if plan.engine == "sglang":
        return [f"KV Cache is allocated. #tokens: {plan.capacity_tokens}"]
    conc = f"Maximum concurrency for {plan.max_model_len:,} tokens per request: {plan.max_concurrency:.2f}x"
    if plan.era == "v0":
        return [f"# GPU blocks: {plan.num_blocks}", conc]
    size = f"KV cache size: {plan.capacity_tokens:,} tokens"
    v = _version_tuple(plan.engine_version)
    if v is not None and v < (0, 28):
        return [f"GPU {size}", conc]
    # 0.28-0.29 print "GPU KV cache size: ..., Maximum ..."; >= 0.30 print the device name in front, which is
    # "GPU" on CUDA (the only device kvlint plans for), so the text is the same.
    return [f"GPU {size}, {conc}"]


def data_parallel_line(plan: MemoryPlan) -> str | None:
    """With vLLM data parallelism (``--data-parallel-size`` > 1), what the per-engine figures add up to: every
    data-parallel rank runs its own engine core with its own KV cache, scheduler and ``max_num_seqs``, sized
    as this plan (``vllm@0.11.0:vllm/v1/engine/core.py::DPEngineCoreProc``; each prints its own "GPU KV cache
    size"), so the replica holds ``data_parallel_size x capacity_tokens`` tokens on ``DP x TP x PP`` GPUs, but
    one request is served by one engine. None for DP 1 and for TGI and SGLang."""
    dp = int(plan.data_parallel_size or 1)
    if plan.engine != "vllm" or dp <= 1:
        return None
    gpus = int(plan.tensor_parallel_size) * int(plan.pipeline_parallel_size)
    return (
        f"data parallel {dp}: {dp} engines of {count(gpus, 'GPU')}, each with the KV cache above (its own scheduler "
        f"and max_num_seqs); {dp * plan.capacity_tokens:,} KV tokens on the replica's {dp * gpus} GPUs"
    )


def _engine_label(plan: MemoryPlan) -> str:
    """Header label: ``vLLM 0.11.0 (V1)``, ``TGI 3.3.0 (tgi-3.3)`` or ``SGLang 0.5.2 (sglang-0.5.x)``."""
    name = ENGINE_NAMES.get(plan.engine, "vLLM")
    era = plan.era.upper() if name == "vLLM" else plan.era
    return f"{name} {plan.engine_version} ({era})"


def budget_note(plan: MemoryPlan, knob: str | None = None) -> str:
    """What the budget row is made of, in the engine's own knob names (§1.2 vLLM, §2.3 TGI, §3.2 SGLang).

    ``knob``: the fraction setting and its value as the report spells it (``--mem-fraction-static 0.8``,
    ``CUDA_MEMORY_FRACTION=1.0``); default the engine's field name and value (``mem_fraction_static 0.8``)."""
    if plan.engine == "tgi":
        wiggle = (
            plan.budget_bytes / (plan.total_bytes * plan.gpu_memory_utilization)
            if (plan.total_bytes and plan.gpu_memory_utilization)
            else 0.0
        )
        left = plan.budget_bytes - plan.weights_bytes - plan.activation_bytes - plan.non_torch_bytes
        multiplies = plan.era in ("tgi-2.3", "tgi-2.4") or (
            plan.era in ("tgi-1.x", "tgi-2.0") and 0 < plan.kv_cache_bytes < left
        )
        if multiplies and left > 0 and plan.kv_cache_bytes > 0:
            # 1.4.1 - 2.4 multiply what is left after the warmup by the wiggle room (§2.3; 1.4.1 - 2.2 by a
            # hard-coded 0.95, 2.3 on by TGI_WIGGLE_ROOM): the KV row is that share of budget - weights -
            # activation - non-torch, not the remainder itself
            return (
                f"{knob or 'cuda_memory_fraction ' + fraction(plan.gpu_memory_utilization)}; KV cache = wiggle "
                f"room {plan.kv_cache_bytes / left:.2f} x what is left"
            )
        return f"{knob or 'cuda_memory_fraction ' + fraction(plan.gpu_memory_utilization)} x wiggle room {wiggle:.2f}"
    if plan.engine == "sglang":
        return knob or f"mem_fraction_static {fraction(plan.gpu_memory_utilization)}"
    return knob or f"gpu_memory_utilization {fraction(plan.gpu_memory_utilization)}"


def _bar(parts: list[tuple[str, int]], total: int, width: int, color: bool) -> str:
    """Proportional bar of exactly ``max(0, width)`` visible characters for ``parts`` (name, bytes) against
    ``total`` bytes. Segments are drawn in order and each is capped at the characters left, so parts that exceed
    the total (weights bigger than the GPU) fill the bar and are cut off rather than growing it; a bar that comes
    out short (all parts zero) is padded with ``.`` (unused)."""
    width = max(0, width)
    out = []
    acc = 0.0
    drawn = 0
    for name, b in parts:
        acc += max(0, b) / max(1, total) * width
        n = min(int(round(min(acc, float(width)))), width) - drawn
        if n > 0:
            seg = _CHARS[name] * n
            out.append(f"{_COLORS[name]}{seg}{_RESET}" if color else seg)
            drawn += n
    if drawn < width:
        seg = _CHARS["unused"] * (width - drawn)
        out.append(f"{_COLORS['unused']}{seg}{_RESET}" if color else seg)
    return "".join(out)


def render_plan_text(plan: MemoryPlan, *, width: int = 60, color: bool = False) -> str:
    """Text breakdown of one GPU's memory: table (GiB with 2 decimals and % of total), a proportional bar of
    ``width`` characters (W weights, A activation, N non-torch, G CUDA graphs, S state pool when there is one, K KV
    cache, . unused), then the KV
    block arithmetic, the engine's capacity log line(s) as its version prints them (:func:`capacity_log_lines`), the
    uncertainty band, the request length and scheduler limits under the engine's own setting names
    (:attr:`~kvlint.types.MemoryPlan.setting_names`: vLLM's max_model_len, TGI's max_total_tokens, SGLang's
    context_length...) and the assumptions. ``color`` adds ANSI colours.
    Never raises for a well-formed plan."""
    total = max(1, plan.total_bytes)
    kv = max(0, plan.kv_cache_bytes)
    parts = [
        ("weights", plan.weights_bytes),
        ("activation", plan.activation_bytes),
        ("non-torch", plan.non_torch_bytes),
        ("CUDA graphs", plan.cudagraph_bytes),
        *([("state pool", plan.state_pool_bytes)] if plan.state_pool_bytes else []),
        ("KV cache", kv),
    ]
    used = sum(max(0, b) for _, b in parts)
    parts_bar = parts + [("unused", max(0, total - used))]
    lines = [
        f"{_engine_label(plan)}, TP={plan.tensor_parallel_size} PP={plan.pipeline_parallel_size}"
        f" DP={plan.data_parallel_size}, dtype {plan.dtype}, KV dtype {plan.kv_cache_dtype} -- per GPU",
        f"{'':14}{'GiB':>9}{'% total':>9}",
        f"{'total':14}{_gib(plan.total_bytes):>9}{100.0:>8.1f}%",
        f"{'budget':14}{_gib(plan.budget_bytes):>9}{plan.budget_bytes / total * 100:>8.1f}%"
        f"  ({budget_note(plan)})",
    ]
    for name, b in parts:
        lines.append(f"{name:14}{_gib(b):>9}{b / total * 100:>8.1f}%")
    kept = kept_free_bytes(plan)
    if kept:  # the extensible KV cache's margin: without it the rows do not add up to the budget
        lines.append(f"{'kept free':14}{_gib(kept):>9}{kept / total * 100:>8.1f}%  ({KEPT_FREE_WHY})")
    if plan.kv_cache_bytes < 0:
        lines.append(f"{'(KV shortfall)':14}{_gib(plan.kv_cache_bytes):>9}")
    lines.append(f"[{_bar(parts_bar, total, width, color)}]")
    if used > plan.total_bytes:
        lines.append(
            f"(parts add up to {_gib(used)} GiB, over the device total of {_gib(plan.total_bytes)} GiB;"
            " bar truncated at the total)"
        )
    lines.append(
        "W weights  A activation  N non-torch  G CUDA graphs  "
        + ("S state pool  " if plan.state_pool_bytes else "")
        + "K KV cache  . unused"
    )
    lines.append("")
    lines.append(
        f"KV bytes/token {plan.kv_bytes_per_token:,}, block size {plan.block_size}, bytes/block {plan.bytes_per_block:,},"
        f" blocks {plan.num_blocks:,}"
    )
    lines.extend(capacity_log_lines(plan))
    dp_line = data_parallel_line(plan)
    if dp_line:
        lines.append(dp_line)
    lines.append(
        f"band: KV {kv_band_text(plan)}, blocks "
        f"{plan.num_blocks_low:,} to {plan.num_blocks_high:,}, concurrency {times(plan.max_concurrency_low)} to "
        f"{times(plan.max_concurrency_high)}x"
    )
    length, seqs, batched = plan.setting_names
    lines.append(
        f"{length} {plan.max_model_len:,} ({length_source(plan)}),"
        f" {seqs} {plan.max_num_seqs:,}, {batched} {plan.max_num_batched_tokens:,}"
    )
    # what the command line carries into the notes (a speculative method, a model id) is shown as printable text
    lines.append(f"weights: {printable(plan.weights_source)}")
    if plan.assumptions:
        lines.append("assumptions:")
        lines.extend(f"  - {printable(a)}" for a in plan.assumptions)
    return "\n".join(lines)
