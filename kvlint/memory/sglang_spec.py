"""SGLang speculative decoding (``--speculative-algorithm EAGLE`` / ``EAGLE3`` / ``NEXTN`` / ``STANDALONE``): what
the draft adds to the start-up plan, by release.

SGLang runs the draft on the target's GPUs with the target's KV pool indices. What it sizes differs by release
(read in the PyPI wheels' ``sglang/srt``):

* 0.5.3 - 0.5.6 (read: 0.5.3, 0.5.4, 0.5.5, 0.5.6; ``server_args.py::ServerArgs._handle_gpu_memory_settings`` /
  ``::_handle_speculative_decoding`` / ``auto_choose_speculative_params``; ``model_executor/model_runner.py::ModelRunner.init_memory_pool`` /
  ``::profile_max_num_token``): the default ``mem_fraction_static`` reserves 2 GiB more ("eagle draft models and cuda
  graphs"; 6 GiB for STANDALONE, none for NGRAM), ``--max-running-requests`` defaults to 48, the target sizes its pool
  over its own layers and pads the token count by ``max_num_reqs × (num_steps × topk + num_draft_tokens) + 100``;
  the draft worker then allocates a pool of that many tokens over its own layers, after the target's, outside the
  static fraction.
* 0.5.7 - 0.5.12 (read: 0.5.7, 0.5.8; ``model_executor/model_runner_kv_cache_mixin.py``): the same 2 GiB reserve and
  separate draft pool, without the padding (``draft_runner_cache_size = max_total_num_tokens``).
* 0.5.13 (``server_args.py``, ``arg_groups/speculative_hook.py``, ``model_executor/pool_configurator.py``,
  ``model_executor/model_runner_kv_cache_mixin.py``): the reserve is 4 GiB (STANDALONE 6), no padding; the draft
  worker reuses the target's ``MemoryPoolConfig`` (the same token count) and allocates its own layers' pool outside
  the fraction.
* 0.5.14 – 0.5.23 (``model_executor/pool_configurator.py::DefaultPoolConfigurator.__init__``; 0.5.14 and 0.5.15
  ``model_runner.py`` and from 0.5.16 ``model_runner_components/spec_aux_hidden_state.py`` for the draft's layer
  count): no reserve; one cell for the target's and the draft's layers, ``int(cell × (1 + d / n))`` (0.5.15 –
  0.5.21) or ``cell + int(cell × d / n)`` (0.5.22, 0.5.23; a DSA model's from 0.5.18, its indexer keys counted on
  the draft's layers too), ``n`` the stage's KV layers and ``d`` the draft's:
  its config's ``num_nextn_predict_layers``, else its ``num_hidden_layers``. The draft is the target checkpoint
  itself (an MTP head) when ``--speculative-draft-model-path`` is unset and the target's architecture is one SGLang
  points at itself (:func:`self_draft_architectures`); from 0.5.20 also any path-less target whose config states
  ``num_nextn_predict_layers`` (``_resolve_eagle_aux_hidden_state`` reads the target's config when no draft path is
  set; 0.5.22: "A private draft pool is sized off the TARGET config when path-less"; 0.5.19 needs the path).
  With a draft path (the user's, or the one SGLang sets for a self-drafting architecture) the count is read from
  the draft-mode ``ModelConfig`` (``is_draft_model=True``), whose ``_config_draft_model`` rewrites some
  architectures' ``num_nextn_predict_layers`` to 1 before it is read (:func:`draft_mode_nextn`).

Every release read resets an unset ``--max-running-requests`` to 48 ("Max running requests is reset to 48 for
speculative decoding") and loads the draft's weights and captures its CUDA graphs after the target's pool is sized,
so they come out of the memory the static fraction leaves. The 0.5.3, 0.5.4, 0.5.6, 0.5.7 and 0.5.8 wheels were read
for the reserve, the reset and the padding: 0.5.3 - 0.5.6 size as 0.5.5; from 0.5.7 the padding is gone (the draft's
pool takes the target's token count) while the 2 GiB reserve stays to 0.5.9 (the 0.5.9 and 0.5.10 wheels' default
fraction was read: 4 GiB from 0.5.10; the 0.5.11 and 0.5.12 wheels have it too). 0.5.9 - 0.5.12 are otherwise taken
as 0.5.8 **[assumed]**; 0.5.14 (read) sizes as 0.5.15; 0.5.17 as 0.5.16. 0.5.0 - 0.5.2 and the 0.4.x releases are
not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.types import ModelSpec

SgVersion = tuple[int, int, int]

#: ``--speculative-algorithm`` values whose draft shares the target's KV pool through ``DefaultPoolConfigurator``'s
#: EAGLE branch (``SpeculativeAlgorithm.is_eagle() or is_standalone()``); NEXTN is an alias of EAGLE
#: (``spec_info.py::SpeculativeAlgorithm.from_string``; 0.5.5 ``_handle_speculative_decoding``)
EAGLE_FAMILY = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
#: An unset ``--max-running-requests`` becomes this with speculative decoding (every 0.5.x wheel read)
SPEC_MAX_RUNNING_REQUESTS = 48
#: From this release the draft's layers share the target's cell (``DefaultPoolConfigurator``'s EAGLE branch) and the
#: default fraction has no draft reserve: read in the 0.5.14 wheel (``model_executor/pool_configurator.py``,
#: ``model_runner.py``'s ``eagle_draft_num_layers``, ``server_args.py::ServerArgs._handle_gpu_memory_settings`` without
#: the 4 GiB term), not only from 0.5.15 as kvlint assumed before
ONE_CELL_FROM = (0, 5, 14)
#: From this release the draft's share is added as ``cell + int(cell × d / n)`` (0.5.22, 0.5.23), before it as
#: ``int(cell × (1 + d / n))`` (0.5.15, 0.5.16, 0.5.18, 0.5.21; 0.5.19 and 0.5.20 between them)
ADDITIVE_CELL_FROM = (0, 5, 22)
#: From this release a DSA model's (DeepSeek V3.2, GLM-5) draft share is added, its KV part and the indexer keys of
#: its layers (``is_deepseek_dsa`` branch, 0.5.18 - 0.5.23; absent from 0.5.16)
DSA_ADDITIVE_CELL_FROM = (0, 5, 18)
#: From this release a path-less target's own ``num_nextn_predict_layers`` sizes the draft share whatever its
#: architecture (``spec_aux_hidden_state.py`` of the 0.5.20 - 0.5.23 wheels); before it (0.5.15 - 0.5.19) only a
#: draft path did, which :func:`self_draft_architectures` set
PATHLESS_NEXTN_FROM = (0, 5, 20)
#: The largest ``--speculative-num-steps`` / ``--speculative-eagle-topk`` / ``--speculative-num-draft-tokens`` kvlint
#: sizes 0.5.5's padding with (SGLang's own choices are single digits; a larger value is refused as absurd rather than
#: priced, as vLLM's ``MAX_SPECULATIVE_TOKENS``)
MAX_SPEC_PARAM = 4096
#: Up to this release (exclusive) the target pads its token count for the draft (``ModelRunner.init_memory_pool`` of
#: the 0.5.3 - 0.5.6 wheels; 0.5.7's ``model_runner_kv_cache_mixin.py`` sets ``draft_runner_cache_size =
#: max_total_num_tokens`` without it, as 0.5.8 and 0.5.13 do)
PAD_UNTIL = (0, 5, 7)
#: From this release the self-drafting architectures are 0.5.13's twelve
RESERVE_4G_FROM = (0, 5, 13)
#: From this release the draft's reserve in the default fraction is 4 GiB (``_handle_gpu_memory_settings`` of the
#: 0.5.10 and 0.5.13 wheels; 2 GiB in the 0.5.3 - 0.5.9 wheels)
DRAFT_RESERVE_4G_FROM = (0, 5, 10)
#: The first release whose speculative sizing is modelled: the 0.5.3 and 0.5.4 wheels already have 0.5.5's reserve
#: ("eagle draft models and cuda graphs"), the reset to 48 requests, the padding, the separate draft pool, the
#: five self-drafting architectures and ``auto_choose_speculative_params`` (0.5.0 - 0.5.2 not read)
SIZED_FROM = (0, 5, 3)

# architectures whose target checkpoint SGLang takes as the draft (--speculative-draft-model-path := --model-path)
_SELF_DRAFT_055 = (
    "DeepseekV32ForCausalLM",
    "DeepseekV3ForCausalLM",
    "Glm4MoeForCausalLM",
    "BailingMoeForCausalLM",
    "BailingMoeV2ForCausalLM",
)
_SELF_DRAFT_0513 = (
    *_SELF_DRAFT_055,
    "DeepseekV4ForCausalLM",
    "Glm4MoeLiteForCausalLM",
    "GlmMoeDsaForCausalLM",
    "BailingMoeV2_5ForCausalLM",
    "MistralLarge3ForCausalLM",
    "PixtralForConditionalGeneration",
    "HYV3ForCausalLM",
)
_SELF_DRAFT_0520 = (*_SELF_DRAFT_0513, "HYV4ForCausalLM", "Qwen4ExpForConditionalGeneration")


#: Architectures whose draft-mode ``ModelConfig`` (``configs/model_config.py::ModelConfig._config_draft_model``) sets
#: ``num_nextn_predict_layers = 1`` before ``_derive_model_shapes`` reads it: ``arch -> (first release, first release
#: that sets it on the text config too)`` (None: on ``hf_config`` only, which is the config a model without a text
#: config reads it from; a model with one keeps its text config's value). Read with ``ast`` in the 0.5.3, 0.5.5,
#: 0.5.8, 0.5.10 - 0.5.23 wheels (each release's branches that assign the constant 1).
_DRAFT_NEXTN_ONE: dict[str, tuple[SgVersion, SgVersion | None]] = {
    "Qwen3NextForCausalLM": ((0, 5, 3), None),
    "NemotronHForCausalLM": ((0, 5, 8), None),
    "Qwen3_5ForConditionalGeneration": ((0, 5, 10), (0, 5, 18)),
    "Qwen3_5MoeForConditionalGeneration": ((0, 5, 10), (0, 5, 18)),
    "ExaoneMoEForCausalLM": ((0, 5, 10), None),
    "HYV3ForCausalLM": ((0, 5, 11), None),
    "DeepseekV4ForCausalLM": ((0, 5, 12), None),
    "InternS2PreviewForConditionalGeneration": ((0, 5, 12), (0, 5, 18)),
    "Qwen3MoeForCausalLM": ((0, 5, 13), None),
    "NemotronHPuzzleForCausalLM": ((0, 5, 13), None),
    "Qwen3_5ForCausalLM": ((0, 5, 17), (0, 5, 18)),
    "Qwen3_5MoeForCausalLM": ((0, 5, 17), (0, 5, 18)),
    "InternS2MobiusForConditionalGeneration": ((0, 5, 18), (0, 5, 18)),
    "MiMoV2ForCausalLM": ((0, 5, 18), None),
    "MiMoV2FlashForCausalLM": ((0, 5, 18), None),
    "Glm5NextForConditionalGeneration": ((0, 5, 20), (0, 5, 20)),
    "Qwen4ExpForConditionalGeneration": ((0, 5, 20), (0, 5, 20)),
    "NemotronH_Omni_Reasoning_V3": ((0, 5, 20), (0, 5, 20)),
    "HYV4ForCausalLM": ((0, 5, 20), None),
    "ExaoneMoeForCausalLM": ((0, 5, 22), None),
}


def draft_mode_nextn(model: ModelSpec, v: SgVersion) -> int | None:
    """1 when SGLang ``v``'s draft-mode config of ``model`` (a checkpoint loaded as the draft: the user's
    ``--speculative-draft-model-path``, or the target itself when SGLang points the path at it) states one MTP layer
    whatever its ``config.json`` says (:data:`_DRAFT_NEXTN_ONE`), else None (the config's own value counts)."""
    arch = model.architectures[0] if model.architectures else ""
    rule = _DRAFT_NEXTN_ONE.get(arch)
    if rule is None or v < rule[0]:
        return None
    separate_text = bool(model.text_config) and model.text_config != model.config
    if separate_text and (rule[1] is None or v < rule[1]):
        return None  # set on hf_config only; num_nextn_predict_layers is read from the text config
    return 1


def normalize_algorithm(raw: object) -> str:
    """The ``--speculative-algorithm`` value upper-cased and stripped; ``""`` when unset or ``NONE``."""
    text = str(raw or "").strip().upper()
    return "" if text == "NONE" else text


def self_draft_architectures(v: SgVersion) -> tuple[str, ...]:
    """First architectures for which SGLang ``v`` sets ``--speculative-draft-model-path`` to ``--model-path`` when
    it is unset (an MTP head in the target checkpoint): the list in 0.5.5's ``ServerArgs._handle_speculative_decoding``
    (0.5.6 - 0.5.12 taken as it), the twelve of ``arg_groups/speculative_hook.py`` in 0.5.13, 0.5.14, 0.5.15, 0.5.16, 0.5.18
    and 0.5.19, fourteen from 0.5.20 (``_handle_eagle_family``, + ``HYV4ForCausalLM``,
    ``Qwen4ExpForConditionalGeneration``; read in 0.5.20, 0.5.21, 0.5.22 and 0.5.23)."""
    if v >= PATHLESS_NEXTN_FROM:
        return _SELF_DRAFT_0520
    if v >= RESERVE_4G_FROM:
        return _SELF_DRAFT_0513
    return _SELF_DRAFT_055


def default_reserve_mib(v: SgVersion, algorithm: str) -> int:
    """MiB SGLang ``v``'s default ``mem_fraction_static`` reserves for the draft, on top of the floor of 10 GiB:
    2048 (0.5.3 - 0.5.9 read, "eagle draft models and cuda graphs") or 4096 (0.5.10 - 0.5.13 read)
    for every algorithm but NGRAM and STANDALONE (``elif self.speculative_algorithm != "NGRAM"``: EAGLE, EAGLE3,
    NEXTN, and DFLASH in 0.5.13), 6144 for STANDALONE, 0 for NGRAM and from 0.5.14 (``server_args.py::
    ServerArgs._handle_gpu_memory_settings``; the 0.5.14, 0.5.15, 0.5.16 and 0.5.23 defaults have no such term). 0
    before 0.5.3 (not modelled)."""
    if v < SIZED_FROM or v >= ONE_CELL_FROM or not algorithm or algorithm == "NGRAM":
        return 0
    if algorithm == "STANDALONE":
        return 6 * 1024
    return 4 * 1024 if v >= DRAFT_RESERVE_4G_FROM else 2 * 1024


def _stated_none(raw: object, v: SgVersion) -> bool:
    """Whether a draft config's ``num_nextn_predict_layers`` value ``raw`` makes SGLang ``v`` size no draft layers
    with the target: a stated integer of 0 or less from 0.5.14, where the target's runner takes the draft's count
    whenever the field ``is not None`` (``model_runner.py::ModelRunner.__init__`` of 0.5.14 and 0.5.15,
    ``spec_aux_hidden_state.py::_resolve_eagle_aux_hidden_state`` of 0.5.16 - 0.5.23: ``eagle_draft_num_layers =
    int(num_nextn_predict_layers)``) and ``pool_configurator.py::DefaultPoolConfigurator.__init__`` adds the draft's
    share only when that count is ``> 0``. An EAGLE3 draft carrying a DeepSeek-V3 config (``num_nextn_predict_layers:
    0``, as nvidia/Kimi-K2.5-Thinking-Eagle3) is the case SGLang's comment names. Before 0.5.15 the draft has its own
    pool, whose worker takes its ``num_hidden_layers`` for a count of 0 (0.5.13 ``ModelRunner``'s
    ``model_has_mtp_layers``), so this is False there (0.5.14 read: one cell, as 0.5.15)."""
    return v >= ONE_CELL_FROM and isinstance(raw, int) and not isinstance(raw, bool) and raw <= 0


def draft_kv_layers(
    model: ModelSpec,
    v: SgVersion,
    algorithm: str,
    draft_path: object,
    model_path: object,
    draft: ModelSpec | None = None,
) -> tuple[int | None, str]:
    """``(layers, why)``: the draft's KV layers SGLang ``v`` sizes with the target for ``algorithm``, when the draft
    is the target checkpoint's multi-token-prediction head: ``--speculative-draft-model-path`` unset (or the
    target's own path) and either the architecture is one of :func:`self_draft_architectures` or, from 0.5.20,
    any target. The count is the config's ``num_nextn_predict_layers`` (SGLang's ``ModelConfig.
    num_nextn_predict_layers``), or 1 when the draft path is set (by the user, or by SGLang for a self-drafting
    architecture) and the draft-mode config states 1 (:func:`draft_mode_nextn`; a path-less target from 0.5.20 is
    sized off its own config, as ``_resolve_eagle_aux_hidden_state`` does).
    A separate draft checkpoint (another ``--speculative-draft-model-path``) counts when ``draft``, its resolved
    config, is given: its ``num_nextn_predict_layers``, else its ``num_hidden_layers`` (the larger of those and its
    attention layers in SGLang: ``model_runner.py`` of 0.5.15, ``spec_aux_hidden_state.py::
    _resolve_eagle_aux_hidden_state`` of 0.5.16 - 0.5.23, ``ModelConfig(..., is_draft_model=True)``).
    ``layers`` 0: from 0.5.15, a draft (or target) config that states ``num_nextn_predict_layers: 0``, which SGLang
    takes as no draft layers in the target's cell rather than as absent (:func:`_stated_none`).
    ``layers`` None: a separate draft checkpoint not resolved, or a target without an MTP head."""
    if algorithm not in EAGLE_FAMILY or algorithm == "STANDALONE" and not draft_path:
        return None, "STANDALONE drafts with a separate model"
    path = str(draft_path or "").strip()
    own = not path or path == str(model_path or "").strip()
    if not own:
        if draft is None:
            return None, f"a separate draft model ({path[:80]}) whose config was not resolved"
        dc = draft.text_config or draft.config or {}
        raw_d = dc.get("num_nextn_predict_layers")
        if draft_mode_nextn(draft, v) is not None:
            arch_d = draft.architectures[0] if draft.architectures else ""
            return (
                1,
                f"1 MTP layer: SGLang loads the draft checkpoint {path[:80]} ({arch_d}) in draft mode with num_nextn_predict_layers 1",
            )
        if isinstance(raw_d, int) and not isinstance(raw_d, bool) and raw_d > 0:
            return raw_d, f"num_nextn_predict_layers {raw_d} of the draft checkpoint {path[:80]}"
        if _stated_none(raw_d, v):
            return 0, f"num_nextn_predict_layers {raw_d} of the draft checkpoint {path[:80]}"
        if draft.num_layers > 0:
            return (
                draft.num_layers,
                f"num_hidden_layers {draft.num_layers} of the draft checkpoint {path[:80]}",
            )
        return None, f"the draft checkpoint {path[:80]} states no layers"
    arch = model.architectures[0] if model.architectures else ""
    c = model.text_config or model.config or {}
    raw = c.get("num_nextn_predict_layers")
    nextn = raw if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else None
    if not path and arch not in self_draft_architectures(v) and v < PATHLESS_NEXTN_FROM:
        return (
            None,
            f"no draft model path and {arch or 'this architecture'} is not one SGLang drafts from itself",
        )
    if (path or arch in self_draft_architectures(v)) and draft_mode_nextn(model, v) is not None:
        # the draft path (the user's, or the one SGLang sets for a self-drafting architecture) is read in draft mode,
        # whose _config_draft_model rewrite states one MTP layer; a path-less target is sized off its own config
        return 1, (
            f"1 MTP layer: SGLang reads the {arch} checkpoint in draft mode, which sets num_nextn_predict_layers 1"
            + (f" (its config states {raw})" if raw is not None and raw != 1 else "")
        )
    if _stated_none(raw, v):
        return 0, f"num_nextn_predict_layers {raw} of the target checkpoint"
    if nextn is None:
        return None, "the config states no num_nextn_predict_layers"
    if nextn > max(1, model.num_layers):
        return (
            None,
            f"num_nextn_predict_layers {nextn} is more than the model's {model.num_layers} layers (not sized)",
        )
    return nextn, f"num_nextn_predict_layers {nextn} of the target checkpoint (its MTP head)"


def scale_cell(cell: int, layers: int, draft_layers: int, v: SgVersion, *, dsa: bool = False) -> int:
    """The cell size (bytes per token per rank) with the draft's ``draft_layers`` added at the target's per-layer
    KV size over its ``layers``: ``cell + int(cell × d / n)`` from 0.5.22 (a DSA model's from 0.5.18: its latent and
    its indexer keys per layer, the same sum), ``int(cell × (1 + d / n))`` in 0.5.15 - 0.5.21
    (``DefaultPoolConfigurator.__init__``); unchanged before 0.5.15 or without layers."""
    if v < ONE_CELL_FROM or layers <= 0 or draft_layers <= 0 or cell <= 0:
        return cell
    if v >= ADDITIVE_CELL_FROM or (dsa and v >= DSA_ADDITIVE_CELL_FROM):
        return cell + int(cell * draft_layers / layers)
    return int(cell * (1 + draft_layers / layers))


def auto_params_055(model: ModelSpec, algorithm: str) -> tuple[int, int, int]:
    """``(num_steps, eagle_topk, num_draft_tokens)`` SGLang 0.5.5 chooses when ``--speculative-num-steps`` is unset
    (``server_args.py::auto_choose_speculative_params``): (3, 1, 4) for STANDALONE and the DeepSeek / gpt-oss /
    Bailing MoE architectures, (5, 4, 8) otherwise; with top-k 1 the draft tokens become ``num_steps + 1``
    (``_handle_speculative_decoding``)."""
    arch = model.architectures[0] if model.architectures else ""
    small = (
        "DeepseekV32ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV2ForCausalLM",
        "GptOssForCausalLM",
        "BailingMoeForCausalLM",
        "BailingMoeV2ForCausalLM",
    )
    if algorithm == "STANDALONE" or arch in small:
        return 3, 1, 4
    return 5, 4, 8


def pad_tokens_055(max_num_reqs: int, steps: int, topk: int, draft_tokens: int) -> int:
    """Tokens SGLang 0.5.3 - 0.5.6 add to the target's profiled pool for the draft and verify tokens in flight
    (``ModelRunner.init_memory_pool``: ``max_num_reqs × num_steps × topk + max_num_reqs × num_draft_tokens + 100``)."""
    return (
        max(0, max_num_reqs) * max(0, steps) * max(0, topk)
        + max(0, max_num_reqs) * max(0, draft_tokens)
        + 100
    )


@dataclass(frozen=True)
class SpecSizing:
    """What :func:`kvlint.memory.sglang.sglang_prelude` resolved for speculative decoding.

    Attributes:
        algorithm: the normalized ``--speculative-algorithm`` (EAGLE, EAGLE3, NEXTN, STANDALONE).
        draft_layers: the draft's KV layers sized with the target (0 when not known).
        reserve_mib: the default fraction's extra reserve (:func:`default_reserve_mib`).
        pad: ``(num_steps, topk, num_draft_tokens)`` for 0.5.5's token padding, or None from 0.5.13.
        draft_weight_bytes: the draft's weights per rank (the MTP layers at the last decoder layer's size), loaded
            after the pool outside the static fraction; 0 when not known.
    """

    algorithm: str
    draft_layers: int
    reserve_mib: int
    pad: tuple[int, int, int] | None
    draft_weight_bytes: int = 0


__all__ = [
    "ADDITIVE_CELL_FROM",
    "DSA_ADDITIVE_CELL_FROM",
    "EAGLE_FAMILY",
    "MAX_SPEC_PARAM",
    "ONE_CELL_FROM",
    "PAD_UNTIL",
    "RESERVE_4G_FROM",
    "DRAFT_RESERVE_4G_FROM",
    "SIZED_FROM",
    "PATHLESS_NEXTN_FROM",
    "SPEC_MAX_RUNNING_REQUESTS",
    "SpecSizing",
    "auto_params_055",
    "default_reserve_mib",
    "draft_kv_layers",
    "draft_mode_nextn",
    "normalize_algorithm",
    "pad_tokens_055",
    "scale_cell",
    "self_draft_architectures",
]
