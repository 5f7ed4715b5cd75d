"""SGLang's hybrid (Mamba / linear-attention) state pool: how much of the KV budget it takes and how it caps requests.

SGLang serves hybrid models (Qwen3-Next / Qwen3.5 Gated DeltaNet, Nemotron-H and Granite 4 Mamba-2, Falcon-H1's
parallel Mamba-2, Kimi Linear KDA) with two pools: the token KV pool of the attention layers and a pool of
per-request recurrent states (``MambaPool``, "Mamba Cache is allocated. max_mamba_cache_size: N, conv_state size:
…GB, ssm_state size: …GB"). The state pool is carved out of the profiled ``rest`` memory before the KV pool is
sized from what is left, and its slot count caps ``max_running_requests``.

Read in the PyPI wheels' ``sglang/srt``: 0.5.5 ``model_executor/model_runner.py::ModelRunner.handle_max_mamba_cache``
/ ``::init_memory_pool``; 0.5.13 and 0.5.15 ``model_executor/model_runner_kv_cache_mixin.py::
handle_max_mamba_cache`` / ``::_calculate_mamba_ratio``; 0.5.16, 0.5.18, 0.5.21, 0.5.22, 0.5.23
``mem_cache/kv_cache_configurator.py::KVCacheConfigurator._handle_max_mamba_cache`` / ``::_calculate_mamba_ratio``
/ ``::resolve_max_num_reqs``; ``configs/mamba_utils.py`` (``Mamba2StateShape.create``, ``KimiLinearStateShape.
create``, ``BaseLinearStateParams.mamba_cache_per_req``, ``mamba2_state_dtype``); ``arg_groups/overrides.py::
_mamba_radix_cache_resolution`` (0.5.15 on); 0.5.14 ``model_executor/model_runner_kv_cache_mixin.py`` and
``ServerArgs._handle_mamba_radix_cache`` (``extra_buffer`` by default already, no padding slot) and 0.5.17
``mem_cache/kv_cache_configurator.py`` (the padding slot already; before branch sglang29 kvlint took 0.5.14 as 0.5.13
and 0.5.17 as 0.5.16).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kvlint.memory.refusal import PlanError, PlanRefusal
from kvlint.types import ModelSpec

SgVersion = tuple[int, int, int]

#: ``--mamba-full-memory-ratio`` default: state memory / KV memory (0.5.5 ``ServerArgs``; 0.5.23 ``fields/
#: schedule.py``, ``fallback=0.9``; only Inkling models override it)
DEFAULT_FULL_MEMORY_RATIO = 0.9
#: How :func:`pool_slots`' refusal of a ``--mamba-full-memory-ratio`` begins (its
#: :attr:`~kvlint.memory.refusal.PlanRefusal.SGLANG_MAMBA_RATIO`, which KV502 reports at the flag)
RATIO_REFUSED = "--mamba-full-memory-ratio"
#: SGLang's refusal (0.5.13+) when the state pool's slot count is not positive (``_handle_max_mamba_cache``, in
#: the files named above), which KV701 quotes with the computed ``max_mamba_cache_size``
NO_STATE_POOL = "Not enough GPU memory for hybrid (mamba/linear-attention) state cache"
#: SGLang's refusal (0.5.13+) when the state pool has slots but fewer than one running request takes
#: (``resolve_max_num_reqs``, ``kv_cache_configurator.py`` 0.5.16 - 0.5.23; ``model_runner_kv_cache_mixin.py``
#: 0.5.13 - 0.5.15), which KV701 quotes with ``max_mamba_cache_size`` and ``mamba_ratio``
STATE_POOL_TOO_SMALL = "Hybrid (mamba/linear-attention) state cache is too small to serve any requests"
#: ``MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO``: state slots per running request with the radix cache on
BASE_RATIO = 3

_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

#: Architectures whose ``--mamba-radix-cache-strategy auto`` becomes ``extra_buffer`` (two more state slots per
#: request with the overlap schedule), with the first release that lists each: ``ServerArgs.
#: _support_mamba_cache_extra_buffer``'s list in 0.5.14, ``_MAMBA_EXTRA_BUFFER_ARCHS`` (``arg_groups/overrides.py``)
#: from 0.5.15, read in every wheel 0.5.14 - 0.5.23 (no entry leaves the list; SGLang tests ``architectures[0]``
#: and, with the default triton linear-attention backend, turns it on); 0.5.13 and before resolve ``auto`` to
#: ``no_buffer`` for every model. Before branch sglang44 the table missed the 0.5.14 InternS2-Preview, MiniCPM-V
#: 4.6 and Bailing 2.5 entries and later ones, and dated KimiK3 (0.5.17), the text-only Qwen3.5 (0.5.19) and
#: NemotronH_Omni_Reasoning_V3 (0.5.20) a release or two late.
_EXTRA_BUFFER_SINCE: dict[str, SgVersion] = {
    **dict.fromkeys(
        (
            "Qwen3_5ForConditionalGeneration",
            "Qwen3_5MoeForConditionalGeneration",
            "Qwen3NextForCausalLM",
            "InternS2PreviewForConditionalGeneration",
            "MiniCPMV4_6ForConditionalGeneration",
            "BailingMoeV2_5ForCausalLM",
            "FalconH1ForCausalLM",
            "GraniteMoeHybridForCausalLM",
            "NemotronHForCausalLM",
            "NemotronHPuzzleForCausalLM",
        ),
        (0, 5, 14),
    ),
    "KimiLinearForCausalLM": (0, 5, 16),
    "KimiK3ForConditionalGeneration": (0, 5, 17),
    **dict.fromkeys(("BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"), (0, 5, 19)),
    **dict.fromkeys(
        (
            "Glm5NextForConditionalGeneration",
            "NemotronH_Omni_Reasoning_V3",
            "Qwen4ExpForConditionalGeneration",
        ),
        (0, 5, 20),
    ),
    **dict.fromkeys(
        (
            "BailingMoeV3VLForConditionalGeneration",
            "InklingForConditionalGeneration",
            "InklingForConditionalGenerationMTP",
        ),
        (0, 5, 21),
    ),
    "MiniCPMV4_7ForConditionalGeneration": (0, 5, 23),
}


#: From this release the ratio split keeps one padding slot (``(budget − per_slot) // per_slot``, "the pool's +1
#: padding slot"): read in the 0.5.17 (``kv_cache_configurator.py``) and 0.5.18 wheels; 0.5.16's has none
PAD_SLOT_FROM: SgVersion = (0, 5, 17)


@dataclass(frozen=True)
class StateShape:
    """One request's recurrent state on one rank, as SGLang allocates it: ``conv`` and ``ssm`` elements per layer,
    ``layers`` state layers on the rank's pipeline stage, ``conv_bytes`` / ``ssm_bytes`` per element."""

    family: str
    conv: int
    ssm: int
    layers: int
    conv_bytes: int
    ssm_bytes: int
    ssm_dtype: str

    @property
    def per_request(self) -> int:
        """``mamba_cache_per_req`` on this rank, bytes: ``(conv × conv_bytes + ssm × ssm_bytes) × layers``."""
        return (self.conv * self.conv_bytes + self.ssm * self.ssm_bytes) * self.layers


def _int(v: Any, default: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        return default
    return int(v)


def _mamba2(
    tp: int, inter: int, groups: int, heads: int, head_dim: int, state: int, kernel: int
) -> tuple[int, int]:
    """``Mamba2StateShape.create``: groups not divisible by ``tp`` are extended to ``tp``
    (``extra_groups_for_head_shards``); conv ``(inter + 2 × groups × state) / tp × (kernel − 1)``, SSM
    ``heads / tp × head_dim × state`` elements."""
    if groups % tp:
        groups += tp - groups
    conv_dim = inter + 2 * groups * state
    return conv_dim // tp * (kernel - 1), heads // tp * head_dim * state


def _mamba2_prefixed(c: Mapping[str, Any], tp: int, inter: int) -> tuple[int, int]:
    """:func:`_mamba2` of a config spelling its Mamba-2 mixer with ``mamba_`` keys (Falcon-H1, Granite 4 hybrids):
    ``mamba_n_heads`` (default 128), ``mamba_d_head`` (default ``inter / heads``, FalconH1Config's ``auto``),
    ``mamba_n_groups`` (1), ``mamba_d_state`` (256), ``mamba_d_conv`` (4), with ``inter`` the mixer's width."""
    heads = _int(c.get("mamba_n_heads"), 128)
    return _mamba2(
        tp,
        inter,
        _int(c.get("mamba_n_groups"), 1),
        heads,
        _int(c.get("mamba_d_head"), max(1, inter // heads)),
        _int(c.get("mamba_d_state"), 256),
        _int(c.get("mamba_d_conv"), 4),
    )


def state_layer_indices(model: ModelSpec) -> list[int]:
    """The decoder layers that keep a recurrent state: ``mamba`` layers, and Falcon-H1's parallel-hybrid layers
    (attention layers with ``state_bytes``)."""
    return [
        i for i, ly in enumerate(model.layers) if ly.kind == "mamba" or (ly.state_bytes and ly.kind != "none")
    ]


def stage_layers(
    indices: list[int], num_layers: int, pp: int, v: SgVersion, split: Sequence[int] | None = None
) -> int:
    """State layers SGLang charges one rank for. From 0.5.17 the largest pipeline stage's share of the state layers
    ``indices``, over the stages ``get_pp_indices`` gives (``kv_cache_configurator.py::_handle_max_mamba_cache``:
    ``max_stage_mamba_layers`` over ``get_pp_indices(num_hidden_layers, rank, pp_size)``, which reads
    ``SGLANG_PP_LAYER_PARTITION``; 0.5.17 - 0.5.23, absent from 0.5.16; the same release as :data:`PAD_SLOT_FROM`);
    before, every layer. ``split``: the stages'
    layer counts (:func:`kvlint.memory.sglang.pp_stage_layers`, the partition variable included); None (or counts
    that do not cover ``num_layers`` in ``pp`` stages): ``num_layers // pp`` per stage, the last ``num_layers % pp``
    stages one more, as ``get_pp_indices`` splits without the variable."""
    if pp <= 1 or v < PAD_SLOT_FROM:
        return len(indices)
    if split is None or len(split) != pp or sum(split) != num_layers or min(split) < 0:
        base, rem = divmod(num_layers, pp)
        split = [base + (1 if rank >= pp - rem else 0) for rank in range(pp)]
    best, start = 0, 0
    for size in split:
        best = max(best, sum(1 for i in indices if start <= i < start + size))
        start += size
    return best


def ssm_dtype(
    model: ModelSpec, v: SgVersion, flag: Any, env: Mapping[str, str], *, reads_config: bool
) -> tuple[str, str]:
    """The SSM (temporal) state dtype and where it comes from.

    ``SGLANG_MAMBA_SSM_DTYPE`` (which ``--mamba-ssm-dtype`` sets) wins, then the config's ``mamba_ssm_dtype`` (the
    text config's for VL models) when the model's cache params pass the config (``mamba2_state_dtype(self)``: GDN,
    Nemotron-H, Falcon-H1; Granite 4 and Kimi Linear pass none), else float32. 0.5.5 sets the environment variable
    from ``--mamba-ssm-dtype``'s default ``float32`` at every start, so the config is never read there."""
    env_v = str(env.get("SGLANG_MAMBA_SSM_DTYPE") or "").strip()
    flag_v = str(flag).strip() if flag else ""
    if flag_v in _DTYPE_BYTES:
        return flag_v, "--mamba-ssm-dtype"
    if env_v in _DTYPE_BYTES:
        return env_v, "SGLANG_MAMBA_SSM_DTYPE"
    if v < (0, 5, 13):
        return "float32", "--mamba-ssm-dtype default float32 (SGLang < 0.5.13)"
    c = model.text_config or model.config or {}
    cfg = c.get("mamba_ssm_dtype")
    if reads_config and isinstance(cfg, str) and cfg in _DTYPE_BYTES:
        return cfg, "config.json mamba_ssm_dtype"
    return "float32", "SGLang default float32"


def state_shape(
    model: ModelSpec,
    tp: int,
    pp: int,
    v: SgVersion,
    flag_ssm: Any,
    env: Mapping[str, str],
    split: Sequence[int] | None = None,
) -> StateShape | None:
    """One request's state on one rank as SGLang builds it (``mamba2_cache_params`` of the model's SGLang config),
    or None for a model with no state layer or one kvlint does not size for SGLang (Jamba, MiniMax lightning
    attention, Zamba2).

    * Gated DeltaNet (``linear_num_value_heads``: Qwen3-Next, Qwen3.5/3.6/3.8; ``configs/qwen3_next.py``):
      Mamba-2 shape with ``inter = value_heads × value_dim``, groups = key heads, heads = value heads, head_dim =
      value_dim, state = key_dim, kernel ``linear_conv_kernel_dim``.
    * Nemotron-H (``mamba_num_heads``; ``configs/nemotron_h.py``): ``inter = mamba_num_heads × mamba_head_dim``,
      ``n_groups``, ``ssm_state_size``, ``conv_kernel``.
    * Falcon-H1 (``configs/falcon_h1.py``): ``inter = mamba_d_ssm`` (else ``mamba_expand × hidden``), heads
      ``mamba_n_heads``, head_dim ``mamba_d_head`` (``auto``: inter / heads), ``mamba_n_groups``, ``mamba_d_state``,
      ``mamba_d_conv``; every layer.
    * Granite 4 hybrid (``configs/granitemoehybrid.py``): ``inter = mamba_expand × hidden``, ``mamba_n_heads``,
      ``mamba_d_head``, ``mamba_n_groups``, ``mamba_d_state``, ``mamba_d_conv``.
    * Kimi Linear KDA (``linear_attn_config``; ``KimiLinearStateShape.create``): conv ``3 × heads × head_dim / tp ×
      (kernel − 1)``, recurrent ``heads / tp × head_dim × head_dim``.
    Conv state at bfloat16 (``SGLANG_MAMBA_CONV_DTYPE``, default bfloat16, not the model dtype); SSM state at
    :func:`ssm_dtype`. With ``pp`` stages, the state layers of the largest stage's share (:func:`stage_layers`,
    ``split`` the stages' layer counts).
    """
    idx = state_layer_indices(model)
    if not idx:
        return None
    c = model.text_config or model.config or {}
    tp = max(1, tp)
    reads_config = True
    lac = c.get("linear_attn_config")
    if isinstance(lac, dict) and model.model_type.startswith("kimi"):
        h, d, k = (
            _int(lac.get("num_heads"), 32),
            _int(lac.get("head_dim"), 128),
            _int(lac.get("short_conv_kernel_size"), 4),
        )
        conv, ssm = 3 * h * d // tp * (k - 1), h // tp * d * d
        family, reads_config = "KDA", False
    elif "linear_num_value_heads" in c:
        kh, vh = _int(c.get("linear_num_key_heads"), 16), _int(c.get("linear_num_value_heads"), 32)
        kd, vd = _int(c.get("linear_key_head_dim"), 128), _int(c.get("linear_value_head_dim"), 128)
        conv, ssm = _mamba2(tp, vh * vd, kh, vh, vd, kd, _int(c.get("linear_conv_kernel_dim"), 4))
        family = "Gated DeltaNet"
    elif model.model_type == "falcon_h1":
        hidden = _int(c.get("hidden_size"), model.hidden_size)
        inter = _int(c.get("mamba_d_ssm"), _int(c.get("mamba_expand"), 2) * hidden)
        conv, ssm = _mamba2_prefixed(c, tp, inter)
        family = "Falcon-H1 Mamba-2"
    elif "mamba_num_heads" in c:
        heads, hd = _int(c.get("mamba_num_heads"), 128), _int(c.get("mamba_head_dim"), 64)
        conv, ssm = _mamba2(
            tp,
            heads * hd,
            _int(c.get("n_groups"), 8),
            heads,
            hd,
            _int(c.get("ssm_state_size"), 128),
            _int(c.get("conv_kernel"), 4),
        )
        family = "Nemotron-H Mamba-2"
    elif model.model_type == "granitemoehybrid":
        hidden = _int(c.get("hidden_size"), model.hidden_size)
        conv, ssm = _mamba2_prefixed(c, tp, _int(c.get("mamba_expand"), 2) * hidden)
        family, reads_config = "Granite 4 Mamba-2", False
    else:
        return None
    dt, _ = ssm_dtype(model, v, flag_ssm, env, reads_config=reads_config)
    conv_dt = str(env.get("SGLANG_MAMBA_CONV_DTYPE") or "").strip()
    return StateShape(
        family=family,
        conv=conv,
        ssm=ssm,
        layers=stage_layers(idx, len(model.layers), pp, v, split),
        conv_bytes=_DTYPE_BYTES.get(conv_dt, 2) if v >= (0, 5, 13) else 2,
        ssm_bytes=_DTYPE_BYTES[dt],
        ssm_dtype=dt,
    )


def request_ratio(
    v: SgVersion,
    architectures: tuple[str, ...],
    *,
    disable_radix_cache: bool,
    disable_overlap_schedule: bool,
    page_size: int,
    strategy: Any,
) -> tuple[int, str]:
    """State slots per running request (``_calculate_mamba_ratio``) and the radix-cache strategy behind it.

    Radix cache off: 1. Else ``MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO`` 3, plus, with the ``extra_buffer``
    strategy, its tracking slots (2 with the overlap schedule, 1 without; ``extra_buffer_lazy`` 1). ``auto``
    (``--mamba-radix-cache-strategy``, 0.5.13's ``--mamba-scheduler-strategy``) is ``no_buffer`` up to 0.5.13
    (``ServerArgs.__post_init__``) and from 0.5.14 ``extra_buffer`` when the overlap schedule is on or
    ``page_size > 1`` and the architecture supports it (:data:`_EXTRA_BUFFER_SINCE`; the default triton linear
    attention backend), else ``no_buffer`` (which turns the overlap schedule off)."""
    if disable_radix_cache:
        return 1, "radix cache off"
    s = str(strategy or "auto")
    if s == "auto":
        # SGLang looks at ``hf_config.architectures[0]`` only (``_support_mamba_cache_extra_buffer``)
        since = _EXTRA_BUFFER_SINCE.get(architectures[0]) if architectures else None
        wants = not disable_overlap_schedule or page_size > 1
        s = "extra_buffer" if since is not None and v >= (0, 5, 14) and v >= since and wants else "no_buffer"
    if s == "extra_buffer_lazy":
        return BASE_RATIO + 1, s
    if s == "extra_buffer":
        return BASE_RATIO + (2 if not disable_overlap_schedule else 1), s
    return BASE_RATIO, s


def pool_slots(
    rest_bytes: int,
    per_req: int,
    v: SgVersion,
    *,
    full_memory_ratio: float,
    max_mamba_cache_size: int | None,
    disable_radix_cache: bool,
    max_running_requests: int | None,
    dp_attention_size: int = 1,
) -> tuple[int, int]:
    """``(max_mamba_cache_size, state pool bytes)`` for ``rest_bytes`` of profiled memory (``_handle_max_mamba_cache``,
    no speculative decoding).

    The slot count: ``--max-mamba-cache-size`` (divided by the DP-attention size); else, radix cache off with
    ``--max-running-requests``, that many per DP-attention replica (0.5.5: radix cache off always takes
    ``--max-running-requests``, else 512); else the ratio split, state : KV = ``r`` : 1 with ``r`` =
    ``--mamba-full-memory-ratio``: ``budget = rest × r / (1 + r)``, slots ``budget // per_req`` up to 0.5.16, and
    from 0.5.17 (:data:`PAD_SLOT_FROM`) ``(budget − per_req) // per_req`` with one padding slot more allocated. Pool
    bytes: slots (+ 1 from 0.5.17) × ``per_req``.

    Raises:
        PlanError: (a ValueError) of :attr:`~kvlint.memory.refusal.PlanRefusal.SGLANG_MAMBA_RATIO`: the ratio split
            with a ``full_memory_ratio`` that is not positive and finite (SGLang's slot count is then not positive,
            its division fails, or it is not a number: it does not start).
    """
    pad = 1 if v >= PAD_SLOT_FROM else 0
    dp = max(1, dp_attention_size)
    if max_mamba_cache_size is not None:
        k = max_mamba_cache_size // dp
    elif disable_radix_cache and (max_running_requests is not None or v < (0, 5, 13)):
        k = (max_running_requests if max_running_requests is not None else 512) // (
            dp if v >= (0, 5, 13) else 1
        )
    else:
        if not (math.isfinite(full_memory_ratio) and full_memory_ratio > 0):
            raise PlanError(
                f"{RATIO_REFUSED} {full_memory_ratio:g} is not a positive finite number: SGLang sizes the "
                "hybrid state pool as rest x r / (1 + r) from it, which is then not a positive size (or not a "
                "number), and does not start",
                PlanRefusal.SGLANG_MAMBA_RATIO,
            )
        budget = rest_bytes * full_memory_ratio / (1 + full_memory_ratio)  # negative when nothing is left
        k = int((budget - per_req * pad) // per_req) if per_req > 0 else 0
    return k, (k + pad) * per_req if k > 0 else 0


__all__ = [
    "BASE_RATIO",
    "DEFAULT_FULL_MEMORY_RATIO",
    "NO_STATE_POOL",
    "PAD_SLOT_FROM",
    "RATIO_REFUSED",
    "STATE_POOL_TOO_SMALL",
    "StateShape",
    "pool_slots",
    "request_ratio",
    "ssm_dtype",
    "stage_layers",
    "state_layer_indices",
    "state_shape",
]
