"""SGLang's prefill CUDA graphs (piecewise / breakable) and what the default ``mem_fraction_static`` reserves for them.

SGLang's default fraction (docs/engine-memory-model.md §3.2) reserves memory for prefill CUDA graphs before it
applies the 10 GiB floor of GPUs above 60 GiB: ``8 MiB`` per captured token size, or a flat ``1.5 GiB`` for an MLA
model from 0.5.10 ("For MLA backend the memory overhead is much higher than expected with fa3"). Whether the graphs
are on is decided before the reserve, by release (read in the PyPI wheels' ``sglang/srt``):

* up to 0.5.7: no reserve (0.5.4 – 0.5.7 have an opt-in ``--enable-piecewise-cuda-graph`` but no reserve term).
* 0.5.8, 0.5.9 (``server_args.py::ServerArgs._handle_gpu_memory_settings``): only with
  ``--enable-piecewise-cuda-graph``; 8 MiB per size, MLA included; sizes up to ``--piecewise-cuda-graph-max-tokens``,
  else the chunked-prefill size (2048 for MLA).
* 0.5.10 – 0.5.13 (read: 0.5.10 – 0.5.13):
  on by default (``disable_piecewise_cuda_graph: bool = False``); ``ServerArgs._handle_piecewise_cuda_graph`` turns
  them off for ``--disable-piecewise-cuda-graph`` and, unless ``--enforce-piecewise-cuda-graph``, for an architecture
  of ``piecewise_cuda_graph_disabled_model_archs`` (``configs/model_config.py``; 0.5.12 adds DeepSeek-V4; in 0.5.10
  – 0.5.12 also a DeepSeek sparse-attention config, ``is_deepseek_nsa``), speculative decoding (0.5.10 only),
  DP attention, ``--enable-torch-compile``, pp > 1, a non-CUDA GPU (AMD), an MoE all-to-all backend, LoRA, a
  multimodal model, GGUF, a diffusion LLM, CPU offload or the hierarchical cache, deterministic inference, PD
  disaggregation, symmetric memory, EPLB or the expert-distribution recorder, attention context parallelism (from 0.5.11
  ``--debug-cuda-graph``, from 0.5.13 ``--enable-dsa-prefill-context-parallel``). The default maximum is capped by
  ``--max-total-tokens`` and at 4096 for a model path naming ``llama-2``; from 0.5.13 it is also clamped to a set
  ``--context-length`` (sgl-project/sglang#21112).
* 0.5.14 – 0.5.23 (read: 0.5.14 – 0.5.23; ``server_args.py::ServerArgs._handle_cuda_graph_config``
  to 0.5.18, ``arg_groups/cuda_graph_hook.py`` and ``arg_groups/memory_hook.py::reserve_for_graph_mb`` from 0.5.19;
  ``model_executor/cuda_graph_config.py::default_prefill_backend``): the prefill phase's backend defaults to
  ``breakable`` on CUDA (``tc_piecewise`` elsewhere up to 0.5.21, then ``disabled``, which the non-CUDA rule turns
  off; 0.5.14 read too: the same ``cuda_graph_config`` with a ``tc_piecewise`` default and 0.5.13's rules).
  ``--disable-cuda-graph``, ``--disable-prefill-cuda-graph``, ``--cuda-graph-backend-prefill`` (and its
  deprecated aliases ``--disable-piecewise-cuda-graph`` / ``--enforce-piecewise-cuda-graph``, and
  ``--enable-breakable-cuda-graph`` up to 0.5.19) set it and skip the
  automatic rules; otherwise the breakable rules turn it off: in 0.5.15 – 0.5.16 for MLA, DeepSeek-V4, context
  parallelism, LoRA, any MoE all-to-all backend, DP attention and multimodal models; in 0.5.17 for MLA outside
  DeepSeek sparse attention and Nemotron-H, then as from 0.5.18; from 0.5.18 for DeepSeek-V4,
  context parallelism, two-batch overlap, an all-to-all backend other than ``deepep`` / ``megamoe`` / ``flashinfer``
  and multimodal models outside an allow-list, from 0.5.19 for pp > 1, from 0.5.20 for Kimi-style KDA linear
  attention. From 0.5.17 the breakable graphs with DeepEP add 1 GiB and their sizes are rounded up to multiples of 8
  from a 2048-token maximum (``_apply_deepep_adjustments``, before the memory settings). The maximum is
  ``--cuda-graph-max-bs-prefill`` (alias ``--piecewise-cuda-graph-max-tokens``), else the chunked-prefill size, with
  the caps above (the ``--context-length`` clamp in 0.5.14 – 0.5.16 only). A PD
  ``--disaggregation-mode decode`` node adds no prefill-graph term (``disaggregation_mode != "decode"``).

A user's list of sizes (``--piecewise-cuda-graph-tokens``, ``--cuda-graph-bs-prefill``, ``--cuda-graph-config``'s
``prefill.bs``) replaces the generated one: the reserve counts its entries. Not modelled: NPU / XPU platforms, 0.5.23's
prefill context-parallel exceptions, 0.5.17's DeepSeek trtllm_mla rule (an attention backend chosen by GPU).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kvlint.types import ModelSpec
from kvlint.values import as_int

SgVersion = tuple[int, int, int]

#: The first release whose default fraction has a prefill-graph term (``--enable-piecewise-cuda-graph`` opt-in).
RESERVE_FROM: SgVersion = (0, 5, 8)
#: Prefill graphs on by default (``disable_piecewise_cuda_graph`` replaces the opt-in; read in 0.5.10).
DEFAULT_ON_FROM: SgVersion = (0, 5, 10)
#: ``cuda_graph_config`` decides the prefill phase (``server_args.py::ServerArgs._parse_cuda_graph_config`` /
#: ``_apply_cuda_graph_compatibility``, read in 0.5.14): its default backend is ``tc_piecewise`` in 0.5.14.
GRAPH_CONFIG_FROM: SgVersion = (0, 5, 14)
#: The breakable backend is the CUDA default and the cuda_graph_config flags decide it.
BREAKABLE_FROM: SgVersion = (0, 5, 15)
#: ``--enable-breakable-cuda-graph`` is a deprecated alias of ``--cuda-graph-backend-prefill breakable`` (read in the
#: 0.5.14 - 0.5.19 wheels' ``DeprecatedStoreConstAction``) until this release, which drops it.
BREAKABLE_ALIAS_UNTIL: SgVersion = (0, 5, 20)
#: The largest capture size (requests for decode, tokens for prefill) and the longest capture list kvlint sizes a
#: plan with (:mod:`kvlint.engines.sglang` refuses larger ones, KV206, before they size anything): 2^24 tokens is
#: above every context window kvlint knows; SGLang's own lists hold a few dozen to a few hundred sizes.
MAX_GRAPH_SIZE = 1 << 24
MAX_GRAPH_SIZES = 4096
#: ``model_executor/cuda_graph_config.py::Backend.ALL`` (``tc_piecewise`` refused for prefill from 0.5.22)
_BACKENDS = frozenset({"full", "breakable", "tc_piecewise", "disabled"})
#: Flat MLA reserve (MiB) from 0.5.10; 8 MiB per captured size otherwise.
MLA_RESERVE_MIB = 1536
PER_SIZE_MIB = 8

#: ``piecewise_cuda_graph_disabled_model_archs`` (configs/model_config.py) of 0.5.10 (and 0.5.11), of 0.5.12 (0.5.10's
#: and DeepSeek V4's) and of 0.5.13 (and 0.5.14)
_DISABLED_ARCHS_0510 = frozenset(
    {
        "DeepseekV32ForCausalLM",
        "Qwen3NextForCausalLM",
        "GlmMoeDsaForCausalLM",
        "BailingMoeV2_5ForCausalLM",
        "LLaDAModelLM",
    }
)
_DISABLED_ARCHS_0512 = _DISABLED_ARCHS_0510 | {"DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN"}
_DISABLED_ARCHS_0513 = frozenset(
    {
        "DeepseekV4ForCausalLM",
        "DeepseekV4ForCausalLMNextN",
        "Qwen3NextForCausalLM",
        "BailingMoeV2_5ForCausalLM",
        "LLaDAModelLM",
    }
)
#: ``is_deepseek_nsa`` (configs/model_config.py of 0.5.10): the text config's first architecture among these and
#: ``index_topk`` set; 0.5.10 - 0.5.12 add it to the architecture rule (``is_piecewise_cuda_graph_disabled_model``,
#: read in the 0.5.10, 0.5.11 and 0.5.12 wheels), 0.5.13 no longer does
_NSA_ARCHS_0510 = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "DeepseekV3ForCausalLMNextN",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "GlmMoeDsaForCausalLM",
    }
)


def _deepseek_nsa_0510(model: ModelSpec) -> str | None:
    """0.5.10's ``is_deepseek_nsa(hf_text_config)``: the first architecture of the text config (the config itself
    for a text-only model) when it is in :data:`_NSA_ARCHS_0510` and ``index_topk`` is set, else None."""
    c = model.text_config or model.config or {}
    archs = c.get("architectures") if model.text_config else model.architectures
    first = archs[0] if isinstance(archs, (list, tuple)) and archs else None
    if isinstance(first, str) and first in _NSA_ARCHS_0510 and c.get("index_topk") is not None:
        return first
    return None


#: ``multimodal_breakable_cuda_graph_supported_model_archs``: (first release read with them, names added)
_MM_BREAKABLE_ARCHS: tuple[tuple[SgVersion, frozenset[str]], ...] = (
    ((0, 5, 16), frozenset({"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"})),
    (
        (0, 5, 18),
        frozenset(
            {
                "InternS2MobiusForConditionalGeneration",
                "MuseGlimmerForConditionalGeneration",
                "KimiK3ForConditionalGeneration",
                "KimiK25ForConditionalGeneration",
            }
        ),
    ),
    ((0, 5, 19), frozenset({"Cohere2VisionForConditionalGeneration", "PaddleOCRVLForConditionalGeneration"})),
    ((0, 5, 20), frozenset({"Glm5NextForConditionalGeneration"})),
    (
        (0, 5, 22),
        frozenset(
            {
                "Qwen4ExpForConditionalGeneration",
                "MiniMaxM3SparseForCausalLM",
                "MiniMaxM3SparseForConditionalGeneration",
            }
        ),
    ),
    ((0, 5, 23), frozenset({"MuseSparkForConditionalGeneration"})),
)
#: ``multimodal_piecewise_cuda_graph_supported_model_archs`` of 0.5.14: multimodal models whose tc_piecewise graphs
#: stay on (``configs/model_config.py``)
_MM_PIECEWISE_ARCHS_0514 = frozenset({"Cohere2VisionForConditionalGeneration"})
#: From this release the breakable rules are 0.5.18's (no LoRA, DP-attention or DeepEP rule; two-batch overlap and
#: unvalidated all-to-all backends instead), DeepEP's prefill sizes are aligned to 8 with 1 GiB more, and the
#: ``--context-length`` clamp is gone: read in the 0.5.17 wheel (kvlint took 0.5.17 as 0.5.16 before branch sglang29),
#: whose rules also turn the graphs off for MLA outside DeepSeek sparse attention and for Nemotron-H
BREAKABLE_0517: SgVersion = (0, 5, 17)
#: ``configs/model_config.py::is_deepseek_dsa`` of 0.5.17 (with ``index_topk`` set) and ``is_nemotron_h``
#: (0.5.10's list and three more)
_DSA_ARCHS_0517 = _NSA_ARCHS_0510 | frozenset(
    {"GlmMoeDsaForCausalLMNextN", "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN"}
)
_NEMOTRON_H_0517 = frozenset(
    {"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "NemotronHForCausalLMMTP"}
)
#: all-to-all backends the breakable graphs accept from 0.5.17 ("unvalidated a2a backend" otherwise)
_A2A_VALIDATED = frozenset({"none", "deepep", "megamoe", "flashinfer"})


def capture_sizes(max_tokens: int, v: SgVersion) -> list[int]:
    """Token counts SGLang captures prefill graphs for, up to ``max_tokens``
    (``_generate_piecewise_cuda_graph_tokens`` 0.5.8 – 0.5.14, ``_generate_prefill_cuda_graph_batch_sizes`` /
    ``generate_prefill_cuda_graph_batch_sizes`` from 0.5.15): 4 – 32 by 4, 48 – 256 by 16, 288 – 512 by 32,
    576 (0.5.8: 640) – 1024 by 64, 1280 – 4096 by 256, then 4608 up by 512."""
    sizes = _grid(v) + list(range(_TAIL_FROM, max_tokens + 1, _TAIL_STEP))
    return [s for s in sizes if s <= max_tokens]


#: Where :func:`capture_sizes`' open-ended tail starts, and its step
_TAIL_FROM, _TAIL_STEP = 4608, 512


def _grid(v: SgVersion) -> list[int]:
    """:func:`capture_sizes` up to 4096 tokens (the fixed part of SGLang's list)."""
    start = 640 if v < (0, 5, 9) else 576
    return (
        list(range(4, 33, 4))
        + list(range(48, 257, 16))
        + list(range(288, 513, 32))
        + list(range(start, 1025, 64))
        + list(range(1280, 4097, 256))
    )


def capture_count(max_tokens: int, v: SgVersion, *, aligned: bool = False) -> int:
    """``len(capture_sizes(max_tokens, v))`` without making the list (a ``--piecewise-cuda-graph-max-tokens`` of
    10**20 made one of 2 x 10**17 sizes: a MemoryError; 10**10, 20 million of them), and with ``aligned`` the
    number of distinct sizes once each is rounded up to a multiple of 8 (DeepEP's); the tail's sizes are multiples
    of 512 above the grid's 4096, so they stay distinct."""
    grid = [s for s in _grid(v) if s <= max_tokens]
    fixed = len({(s + 7) // 8 * 8 for s in grid}) if aligned else len(grid)
    return fixed + max(0, (max_tokens - _TAIL_FROM) // _TAIL_STEP + 1)


def read_graph_config(raw: object) -> tuple[dict[str, dict[str, Any]], str]:
    """``(settings, problem)`` of a ``--cuda-graph-config`` value (0.5.14 on): the JSON object of phases
    (``decode``, ``prefill``) to settings SGLang's ``parse_cuda_graph_config_arg`` accepts
    (``model_executor/cuda_graph_config.py``, read in 0.5.14 - 0.5.23), with the settings kvlint reads checked:
    ``backend`` one of :data:`_BACKENDS`, ``max_bs`` an integer and ``bs`` a list of integers between 1 and
    :data:`MAX_GRAPH_SIZE` (at most :data:`MAX_GRAPH_SIZES` of them). ``problem`` says why a value is refused
    (``({}, problem)``; SGLang refuses what is not a JSON object of known phases too), "" when it is readable;
    ``({}, "")`` for None."""
    if raw is None:
        return {}, ""
    try:
        parsed = json.loads(str(raw))
    except (ValueError, RecursionError):
        return {}, "--cuda-graph-config must be JSON"
    if not isinstance(parsed, dict):
        return {}, f"--cuda-graph-config must be a JSON object, not {type(parsed).__name__}"
    out: dict[str, dict[str, Any]] = {}
    for phase, settings in parsed.items():
        if phase not in ("decode", "prefill"):
            return {}, f"unknown phase {str(phase)[:20]!r} (decode, prefill)"
        if not isinstance(settings, dict):
            return {}, f"the {phase} phase must be a JSON object"
        backend = settings.get("backend")
        if "backend" in settings and (not isinstance(backend, str) or backend not in _BACKENDS):
            return {}, f"{phase}.backend must be one of {', '.join(sorted(_BACKENDS))}"
        top = settings.get("max_bs")
        if top is not None and (
            not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= MAX_GRAPH_SIZE
        ):
            return {}, f"{phase}.max_bs must be an integer between 1 and {MAX_GRAPH_SIZE:,}"
        sizes = settings.get("bs")
        if sizes is not None and (
            not isinstance(sizes, list)
            or not sizes
            or len(sizes) > MAX_GRAPH_SIZES
            or any(
                not isinstance(x, int) or isinstance(x, bool) or not 1 <= x <= MAX_GRAPH_SIZE for x in sizes
            )
        ):
            return {}, (
                f"{phase}.bs must be a list of 1 to {MAX_GRAPH_SIZES:,} integers between 1 and {MAX_GRAPH_SIZE:,}"
            )
        out[phase] = dict(settings)
    return out, ""


def user_sizes(value: object) -> tuple[int, ...] | None:
    """A capture list as :mod:`kvlint.engines.sglang` records it (a tuple of ints) or as a ``--cuda-graph-config``
    ``bs`` holds it; None for anything else."""
    if (
        isinstance(value, (tuple, list))
        and value
        and all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    ):
        return tuple(value)
    return None


def phase_setting(get: Callable[[str], Any], phase: str, key: str) -> Any:
    """``--cuda-graph-config``'s ``phase.key`` (JSON wins over every flag in ``_parse_cuda_graph_config``), None
    when the JSON does not set it or cannot be read."""
    return read_graph_config(get("cuda_graph_config"))[0].get(phase, {}).get(key)


def _flag(get: Callable[[str], Any], name: str) -> bool:
    """A switch as the parser gives it (True, or a written true/false value)."""
    value = get(name)
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false", "no", "off")
    return bool(value)


def _configs(model: ModelSpec) -> list[dict[str, Any]]:
    c = model.config or {}
    subs = [c.get(k) for k in ("text_config", "llm_config", "language_config", "thinker_config")]
    return [c, *(s for s in subs if isinstance(s, dict))]


def decode_graphs_on(get: Callable[[str], Any]) -> bool:
    """Whether the decode phase keeps its CUDA graphs from 0.5.15 (``_parse_cuda_graph_config``): off with
    ``--disable-cuda-graph`` or ``--disable-decode-cuda-graph``, unless ``--cuda-graph-backend-decode`` names a
    backend (it wins), off with ``--cuda-graph-backend-decode disabled``; ``--cuda-graph-config``'s
    ``decode.backend`` wins over all of them."""
    on = not (_flag(get, "disable_cuda_graph") or _flag(get, "disable_decode_cuda_graph"))
    chosen = get("cuda_graph_backend_decode")
    if isinstance(chosen, str) and chosen.strip():
        on = chosen.strip().lower() != "disabled"
    js = phase_setting(get, "decode", "backend")
    if isinstance(js, str):
        on = js != "disabled"
    return on


def uses_kda(model: ModelSpec) -> bool:
    """Kimi-style KDA linear attention: a ``linear_attn_config`` with ``kda_layers`` in the config or its text
    config (``configs/model_config.py::uses_kda_attention`` of 0.5.20 – 0.5.23)."""
    for c in _configs(model):
        lac = c.get("linear_attn_config")
        if isinstance(lac, dict) and lac.get("kda_layers"):
            return True
    return False


@dataclass(frozen=True)
class PrefillGraphs:
    """Whether SGLang captures prefill CUDA graphs for a container and what sizes them, before the GPU is known.

    Attributes:
        on: the graphs are on before the GPU's vendor is known; ``why`` the setting or rule that decided it
            (shown in the plan's note). ``explicit``: the user chose the backend (the automatic rules, the AMD one
            included, are skipped). ``mla``: the MLA branch (flat 1.5 GiB from 0.5.10). ``max_tokens``: the user's
            maximum (``--piecewise-cuda-graph-max-tokens`` / ``--cuda-graph-max-bs-prefill``), None for the default;
            ``caps``: what caps the default maximum (``--max-total-tokens``, 4096 for a ``llama-2`` path, the
            8192 of pp > 1 breakable graphs); ``clamp``: ``--context-length`` when it clamps any maximum.
            ``deepep_align``: DeepEP's multiple-of-8 sizes from a 2048 maximum; ``extra_mib``: DeepEP's 1 GiB.
            ``version``: the release (its size list). ``sizes``: the user's own list of captured sizes
            (``--piecewise-cuda-graph-tokens`` 0.5.8 - 0.5.13, ``--cuda-graph-bs-prefill`` / its alias / the
            ``--cuda-graph-config`` ``prefill.bs`` from 0.5.14), which replaces the generated one (its length is
            what the reserve counts, duplicates included: ``len(...bs) * 8``); ``sizes_from`` names where it came
            from.
    """

    on: bool
    why: str
    explicit: bool = False
    mla: bool = False
    max_tokens: int | None = None
    caps: tuple[int, ...] = ()
    clamp: int | None = None
    deepep_align: bool = False
    extra_mib: int = 0
    version: SgVersion = (0, 5, 23)
    sizes: tuple[int, ...] | None = None
    sizes_from: str = ""

    def reserve_mib(self, chunked_prefill_size: int, *, amd: bool) -> tuple[float, str]:
        """``(MiB, note)`` the default fraction reserves for the prefill graphs with ``chunked_prefill_size`` (the
        resolved one: the user's or the GPU tier's, §3.2) on a GPU that is ``amd`` or not. 0 with a note saying
        why when they are off."""
        if not self.on:
            return 0.0, f"prefill CUDA graphs off ({self.why}): no reserve"
        if amd and not self.explicit and self.version >= DEFAULT_ON_FROM:
            return 0.0, "prefill CUDA graphs off (non-CUDA GPU): no reserve"
        if self.mla and self.version >= DEFAULT_ON_FROM:
            mib = float(MLA_RESERVE_MIB + self.extra_mib)
            return mib, f"prefill CUDA graphs ({self.why}): {mib:.0f} MiB reserved (MLA)"
        if self.sizes is not None:
            # the user's list, as given (DeepEP's alignment rounds and deduplicates it)
            top = max(self.sizes)
            n = len({(s + 7) // 8 * 8 for s in self.sizes}) if self.deepep_align else len(self.sizes)
            mib = float(n * PER_SIZE_MIB + self.extra_mib)
            extra = f" + {self.extra_mib} MiB (DeepEP)" if self.extra_mib else ""
            return mib, (
                f"prefill CUDA graphs ({self.why}): {n} sizes of {self.sizes_from} (up to {top} tokens) x "
                f"{PER_SIZE_MIB} MiB{extra} = {mib:.0f} MiB reserved"
            )
        if self.deepep_align:
            top = self.max_tokens or 2048
            n = capture_count(top, self.version, aligned=True)
        else:
            if self.max_tokens is not None:
                top = self.max_tokens
            else:
                top = 2048 if self.mla else chunked_prefill_size
                for cap in self.caps:
                    top = min(top, cap)
            if self.clamp is not None:
                top = min(top, self.clamp)
            n = capture_count(top, self.version)
        mib = float(n * PER_SIZE_MIB + self.extra_mib)
        extra = f" + {self.extra_mib} MiB (DeepEP)" if self.extra_mib else ""
        return mib, (
            f"prefill CUDA graphs ({self.why}): {n} sizes up to {top} tokens x {PER_SIZE_MIB} MiB{extra} = "
            f"{mib:.0f} MiB reserved"
        )


def prefill_graphs(
    v: SgVersion,
    get: Callable[[str], Any],
    model: ModelSpec,
    *,
    model_path: str,
    multimodal: bool,
    deepep: bool,
    dp_attention: bool,
    pp: int,
) -> PrefillGraphs | None:
    """What decides SGLang's prefill CUDA graphs for these flags (``get``: flag name -> value), None before
    :data:`RESERVE_FROM` (no reserve). ``multimodal``: ``ModelConfig.is_multimodal`` as SGLang resolves it (with
    its default ``enable_multimodal``); ``deepep``: the DeepEP all-to-all backend; ``dp_attention``: the user's
    ``--enable-dp-attention`` (what SGLang turns on later, for DeepSeek sparse attention, comes after the reserve).
    Sources and rules in the module docstring."""
    if v < RESERVE_FROM:
        return None
    archs = set(model.architectures or ())
    mla = model.is_mla
    mtt = as_int(get("max_total_tokens"))
    ctx = as_int(get("context_length"))
    llama2 = "llama-2" in model_path.lower()
    caps: list[int] = []
    if v >= DEFAULT_ON_FROM:
        if mtt is not None:
            caps.append(mtt)
        if llama2:
            caps.append(4096)
    base = PrefillGraphs(False, "", mla=mla, caps=tuple(caps), version=v)
    if v < GRAPH_CONFIG_FROM:
        # 0.5.8 - 0.5.13: a user's --piecewise-cuda-graph-tokens list replaces the generated one
        listed = user_sizes(get("piecewise_cuda_graph_tokens"))
        if listed is not None:
            base = replace(base, sizes=listed, sizes_from="--piecewise-cuda-graph-tokens")
    if v < DEFAULT_ON_FROM:
        user = as_int(get("piecewise_cuda_graph_max_tokens"))
        if _flag(get, "enable_piecewise_cuda_graph"):
            return replace(base, on=True, why="--enable-piecewise-cuda-graph", explicit=True, max_tokens=user)
        return replace(base, why="off by default before 0.5.10")

    a2a = str(get("moe_a2a_backend") or "none").strip().lower()
    if deepep and a2a == "none":
        a2a = "deepep"
    lora = _flag(get, "enable_lora") or bool(get("lora_paths"))
    gguf = (
        str(get("load_format") or "") == "gguf"
        or str(get("quantization") or "") == "gguf"
        or model_path.lower().endswith(".gguf")
    )
    cp = (as_int(get("attn_cp_size")) or as_int(get("attention_context_parallel_size")) or 1) > 1

    if v < GRAPH_CONFIG_FROM:
        user = as_int(get("piecewise_cuda_graph_max_tokens"))
        clamp = ctx if v >= (0, 5, 13) else None
        sized = replace(base, max_tokens=user, clamp=clamp)
        if _flag(get, "enforce_piecewise_cuda_graph"):
            return replace(sized, on=True, why="--enforce-piecewise-cuda-graph", explicit=True)
        if _flag(get, "disable_piecewise_cuda_graph"):
            return replace(sized, why="--disable-piecewise-cuda-graph")
        rules = _tc_piecewise_rules(v, get, model, archs, dp_attention, pp, a2a, lora, multimodal, gguf, cp)
        for name, hit in rules:
            if hit:
                return replace(sized, why=f"SGLang turns them off for {name}")
        return replace(sized, on=True, why="on by default from 0.5.10")

    # 0.5.14 on: cuda_graph_config's prefill phase; from 0.5.15 a PD decode node reserves nothing for prefill graphs
    # (reserve_for_graph_mb: disaggregation_mode != "decode"). --cuda-graph-config's prefill settings win over the
    # flags (_parse_cuda_graph_config: "explicit JSON > convenience > legacy > defaults")
    user = phase_setting(get, "prefill", "max_bs")
    if user is None:
        user = as_int(get("cuda_graph_max_bs_prefill"))
    if user is None:  # its alias, when the parser kept it apart
        user = as_int(get("piecewise_cuda_graph_max_tokens"))
    listed, listed_from = user_sizes(phase_setting(get, "prefill", "bs")), "--cuda-graph-config prefill.bs"
    if listed is None:
        listed, listed_from = user_sizes(get("cuda_graph_bs_prefill")), "--cuda-graph-bs-prefill"
    if listed is None:
        listed, listed_from = user_sizes(get("piecewise_cuda_graph_tokens")), "--piecewise-cuda-graph-tokens"
    clamp = ctx if v < BREAKABLE_0517 else None
    if v >= (0, 5, 19) and pp > 1 and listed is None:
        # _DEFAULT_PP_PREFILL_CUDA_GRAPH_MAX_TOKENS, for the breakable graphs a user opts into with pp > 1
        caps.append(8192)
    sized = replace(base, caps=tuple(caps), max_tokens=user, clamp=clamp)
    if listed is not None:
        sized = replace(sized, sizes=listed, sizes_from=listed_from)
    backend: str | None = None
    switch = ""
    if _flag(get, "disable_cuda_graph"):
        backend, switch = "disabled", "--disable-cuda-graph"
    if _flag(get, "disable_prefill_cuda_graph"):
        backend, switch = "disabled", "--disable-prefill-cuda-graph"
    # the deprecated aliases share --cuda-graph-backend-prefill's dest from 0.5.14 (the parser gives it the last
    # one written); read apart only when the parser kept them so
    if _flag(get, "disable_piecewise_cuda_graph"):
        backend, switch = "disabled", "--disable-piecewise-cuda-graph"
    if _flag(get, "enforce_piecewise_cuda_graph"):
        backend, switch = "tc_piecewise", "--enforce-piecewise-cuda-graph"
    if v < BREAKABLE_ALIAS_UNTIL and _flag(get, "enable_breakable_cuda_graph"):
        backend, switch = "breakable", "--enable-breakable-cuda-graph"
    chosen = get("cuda_graph_backend_prefill")
    if isinstance(chosen, str) and chosen.strip():
        backend, switch = chosen.strip().lower(), f"--cuda-graph-backend-prefill {chosen.strip()}"
    js = phase_setting(get, "prefill", "backend")
    if isinstance(js, str):
        backend, switch = js, f"--cuda-graph-config prefill.backend {js}"
    if v >= BREAKABLE_FROM and str(get("disaggregation_mode") or "null").strip().lower() == "decode":
        return replace(sized, why="a PD-disaggregation decode node has no prefill graphs' reserve")
    if backend is not None:
        deepep_extra = 1024 if (v >= BREAKABLE_0517 and backend == "breakable" and deepep) else 0
        return replace(
            sized,
            on=backend != "disabled",
            why=switch,
            explicit=True,
            deepep_align=deepep_extra > 0,
            extra_mib=deepep_extra,
        )
    if v < BREAKABLE_FROM:
        # 0.5.14: the default backend is tc_piecewise, turned off by 0.5.13's rules (a multimodal model on
        # multimodal_piecewise_cuda_graph_supported_model_archs keeps it)
        first = model.architectures[0] if model.architectures else ""
        mm = multimodal and first not in _MM_PIECEWISE_ARCHS_0514
        rules = _tc_piecewise_rules(v, get, model, archs, dp_attention, pp, a2a, lora, mm, gguf, cp)
        for name, hit in rules:
            if hit:
                return replace(sized, why=f"SGLang turns the tc_piecewise graphs off for {name}")
        return replace(sized, on=True, why="tc_piecewise, on by default in 0.5.14")
    return _breakable(v, get, model, archs, sized, dp_attention, pp, a2a, lora, multimodal, deepep, cp)


def _tc_piecewise_rules(
    v: SgVersion,
    get: Callable[[str], Any],
    model: ModelSpec,
    archs: set[str],
    dp_attention: bool,
    pp: int,
    a2a: str,
    lora: bool,
    multimodal: bool,
    gguf: bool,
    cp: bool,
) -> list[tuple[str, bool]]:
    """The automatic rules that turn the torch.compile piecewise prefill graphs off (AMD aside, in
    :meth:`PrefillGraphs.reserve_mib`): ``ServerArgs._handle_piecewise_cuda_graph`` of 0.5.10 - 0.5.13,
    ``_disable_tc_piecewise_cudagraph_if_incompatible`` of 0.5.14 (read in each of those wheels)."""
    if v < (0, 5, 12):
        disabled_archs = _DISABLED_ARCHS_0510
    elif v < (0, 5, 13):
        disabled_archs = _DISABLED_ARCHS_0512
    else:
        disabled_archs = _DISABLED_ARCHS_0513
    blocked = sorted(archs & disabled_archs)
    nsa = _deepseek_nsa_0510(model) if v < (0, 5, 13) else None
    if not blocked and nsa is not None:
        blocked = [f"{nsa} (DeepSeek sparse attention, index_topk)"]
    return [
        (f"the {blocked[0] if blocked else ''} architecture", bool(blocked)),
        # 0.5.10 only: the 0.5.11 and later wheels have no speculative-decoding rule
        ("speculative decoding", v < (0, 5, 11) and bool(get("speculative_algorithm"))),
        ("DP attention", dp_attention),
        ("--enable-torch-compile", _flag(get, "enable_torch_compile")),
        ("pp > 1", pp > 1),
        ("MoE all-to-all backend", a2a != "none"),
        ("LoRA", lora),
        ("multimodal model", multimodal),
        ("GGUF", gguf),
        ("diffusion LLM", bool(get("dllm_algorithm"))),
        (
            "CPU offload / hierarchical cache",
            (as_int(get("cpu_offload_gb")) or 0) > 0 or _flag(get, "enable_hierarchical_cache"),
        ),
        ("deterministic inference", _flag(get, "enable_deterministic_inference")),
        ("PD disaggregation", str(get("disaggregation_mode") or "null") != "null"),
        ("symmetric memory", _flag(get, "enable_symm_mem")),
        (
            "expert distribution recorder",
            _flag(get, "enable_eplb") or bool(get("expert_distribution_recorder_mode")),
        ),
        ("context parallelism", cp),
        ("--debug-cuda-graph", v >= (0, 5, 11) and _flag(get, "debug_cuda_graph")),
        (
            "DSA prefill context parallelism",
            v >= (0, 5, 13) and _flag(get, "enable_dsa_prefill_context_parallel"),
        ),
    ]


def _breakable(
    v: SgVersion,
    get: Callable[[str], Any],
    model: ModelSpec,
    archs: set[str],
    sized: PrefillGraphs,
    dp_attention: bool,
    pp: int,
    a2a: str,
    lora: bool,
    multimodal: bool,
    deepep: bool,
    cp: bool,
) -> PrefillGraphs:
    """0.5.15 on, no backend chosen: the breakable default and the rules that turn it off (module docstring)."""
    mla = model.is_mla

    first = model.architectures[0] if model.architectures else ""
    dsv4 = any(a.startswith("DeepseekV4") for a in archs)
    dcp = (as_int(get("dcp_size")) or 1) > 1
    mm_ok = v >= (0, 5, 16) and any(first in names for since, names in _MM_BREAKABLE_ARCHS if v >= since)
    if v < BREAKABLE_0517:
        rules = [
            ("MLA attention", mla),
            ("DeepSeek-V4", dsv4),
            ("context parallelism", cp),
            ("decode context parallelism", v >= (0, 5, 16) and dcp),
            ("LoRA", lora),
            ("MoE all-to-all backend", a2a != "none"),
            ("DP attention", dp_attention),
            ("multimodal model", multimodal and not mm_ok),
        ]
    else:
        kda = (
            v >= (0, 5, 20)
            and uses_kda(model)
            and not (v >= (0, 5, 23) and "Glm5NextForConditionalGeneration" in archs)
        )
        rules = []
        if v < (0, 5, 18):
            # 0.5.17 only: MLA outside DeepSeek sparse attention, and Nemotron-H's hybrid Mamba2 prefill
            first_cfg = model.text_config or model.config or {}
            dsa = first in _DSA_ARCHS_0517 and first_cfg.get("index_topk") is not None
            rules += [
                ("MLA attention (non-DSA)", mla and not dsa),
                ("NemotronH (hybrid Mamba2 prefill)", first in _NEMOTRON_H_0517),
            ]
        rules += [
            ("pp > 1", v >= (0, 5, 19) and pp > 1),
            ("KDA linear attention", kda),
            ("DeepSeek-V4", dsv4),
            ("context parallelism", cp),
            ("decode context parallelism", dcp),
            ("two-batch overlap", _flag(get, "enable_two_batch_overlap")),
            (f"all-to-all backend {a2a}", a2a not in _A2A_VALIDATED),
            ("multimodal model", multimodal and not mm_ok),
        ]
    for name, hit in rules:
        if hit:
            return replace(sized, why=f"SGLang turns the breakable graphs off for {name}")
    deepep_extra = 1024 if (v >= BREAKABLE_0517 and deepep) else 0
    return replace(
        sized,
        on=True,
        why="breakable, on by default from 0.5.15",
        deepep_align=deepep_extra > 0,
        extra_mib=deepep_extra,
    )
