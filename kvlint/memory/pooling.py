"""Pooling models (embedding, reranking/classification, reward) on vLLM and SGLang: how each engine tells one from a
generative model, and what that changes in the start-up memory kvlint models (docs/engine-memory-model.md §1.15).

vLLM runs a model with the *pooling runner* instead of the generate runner when ``--runner pooling`` (0.10.1 on; the
flag and ``--convert`` are not in ``vllm@0.10.0:vllm/engine/arg_utils.py``), a pooling ``--task`` (``embed``/``embedding``/``classify``/``score``/``reward``, up to 0.12.0), a ``--convert``
other than ``auto``/``none`` (from 0.22.0: ``ModelConfig._get_runner_type`` returns ``pooling`` for it; read in the
0.21.0 and 0.22.0 wheels; before, assumed: :func:`vllm_pooling`) or, with ``--runner auto``, the architecture says so (``ModelConfig._get_default_runner_type``
and ``_SUFFIX_TO_DEFAULTS``, the same in ``vllm@0.12.0`` and ``vllm@0.34.0:vllm/config/model.py``). For such a
model vLLM:

* runs the pooler, not the sampler, after the profile's forward pass
  (``vllm@0.12.0:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.profile_run`` calls ``_dummy_pooler_run``;
  ``vllm@0.34.0:vllm/v1/worker/gpu/model_runner.py`` ``PoolingRunner.dummy_pooler_run``; V0's
  ``vllm@0.8.5:vllm/worker/pooling_model_runner.py::PoolingModelRunner.execute_model`` returns
  ``self.model.pooler(...)``): no ``max_num_seqs x vocab`` logits are sampled, so kvlint's sampler term is 0. The
  pooler's own output (one ``hidden_size`` vector per request, or per token for token tasks) is smaller than the
  forward pass's activations and is not added;
* does not keep the LM head of a generative checkpoint it adapts (``vllm@0.12.0:vllm/model_executor/models/
  adapters.py::_create_pooling_model_cls``: ``lm_head`` and ``logits_processor`` are deleted and ``lm_head.*``
  weights skipped on load), so an untied ``vocab x hidden`` output matrix holds no GPU memory;
* captures piecewise CUDA graphs only ("Pooling models do not support full cudagraphs",
  ``vllm@0.12.0:vllm/config/vllm.py::VllmConfig.__post_init__``; the same in 0.34.0): kvlint's calibrated graph
  estimate does not tell the modes apart, and the plan says so;
* before 0.9.2 runs on the V0 engine (``vllm@0.8.5:vllm/engine/arg_utils.py::_is_v1_supported_oracle``: "No
  Embedding Models so far", ``--task`` other than ``generate`` falls back to V0; V1 pooling came with
  vllm-project/vllm#16188, merged after 0.9.1 per vllm-project/vllm#19842 of 2025-06-19; 0.9.2 has no such
  fallback), where chunked prefill is never turned on by default for it (``_set_default_args_v0``:
  ``model_config.runner_type != "pooling"``).

Its KV cache: decoder models (E5-Mistral, Qwen3-Embedding, gte-Qwen2) keep causal attention and a paged KV cache
sized as for generation; encoder-only models (BERT, XLM-RoBERTa: bge-m3, bge-reranker-v2-m3) use
``EncoderOnlyAttentionSpec`` layers that hold no KV cache (``GPUModelRunner.may_add_encoder_only_layers_to_kv_cache_
config``, 0.12.0). kvlint reads the configs of decoder models only (:class:`kvlint.models.config.NotDecoderLLM`), so
only the first kind is planned.

SGLang serves a model in embedding mode (``ModelConfig.is_generation`` False) when ``--is-embedding`` is given or
its architectures are among those ``is_generation_model`` lists (``sglang@0.5.5`` and
``sglang@0.5.23:python/sglang/srt/configs/model_config.py``; the list grew from 0.4.8 to 0.5.22, and kvlint reads
it per release: :data:`SGLANG_EMBEDDING_ARCHITECTURE_FROM`). Its memory pool is sized as for a generative model
(``mem_fraction_static``), but no decode CUDA graphs are captured ("cuda graph only captures decode steps, which
only exists for generation models": ``sglang@0.5.5:model_executor/model_runner.py::ModelRunner.init_device_graphs``;
``sglang@0.5.23:model_executor/model_runner_components/cuda_graph_setup.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from kvlint.memory.versions import Version

#: ``--task`` values that select the pooling runner (``_RUNNER_TASKS["pooling"]``, ``vllm@0.12.0:vllm/config/
#: model.py``); ``generate``/``transcription`` select the generate runner. ``--task`` is gone from 0.13.0.
VLLM_POOLING_TASKS = frozenset({"embedding", "embed", "classify", "score", "reward"})
VLLM_GENERATE_TASKS = frozenset({"generate", "transcription"})
#: Last release with ``--task`` (``_RUNNER_TASKS`` in the 0.12.0 wheel, not in 0.13.0).
VLLM_TASK_UNTIL: Version = (0, 12, 99)
#: First release whose ``--runner auto`` resolves to ``pooling`` for any ``--convert`` other than ``auto``/``none``
#: (``ModelConfig._get_runner_type``: absent in 0.21.0, present in 0.22.0 - 0.34.0).
VLLM_CONVERT_IMPLIES_POOLING_FROM: Version = (0, 22, 0)
#: First release with ``--runner`` and ``--convert`` (``vllm@0.10.1:vllm/engine/arg_utils.py``; ``vllm@0.10.0`` has
#: ``--task`` only, and argparse stops the server on either flag: KV205).
VLLM_RUNNER_FROM: Version = (0, 10, 1)
#: First release whose V1 engine runs pooling models (see the module docstring); before it, V0.
VLLM_V1_POOLING_FROM: Version = (0, 9, 2)

#: ``_SUFFIX_TO_DEFAULTS`` (``vllm@0.12.0`` and ``vllm@0.34.0:vllm/config/model.py``), runner per architecture
#: suffix, first match wins ("Let other `*Model`s take priority" for the bare ``Model``).
_SUFFIX_RUNNER: tuple[tuple[str, str], ...] = (
    ("ForCausalLM", "generate"),
    ("ForConditionalGeneration", "generate"),
    ("ChatModel", "generate"),
    ("LMHeadModel", "generate"),
    ("ForTextEncoding", "pooling"),
    ("EmbeddingModel", "pooling"),
    ("ForSequenceClassification", "pooling"),
    ("ForTokenClassification", "pooling"),
    ("ForAudioClassification", "pooling"),
    ("ForImageClassification", "pooling"),
    ("ForVideoClassification", "pooling"),
    ("ClassificationModel", "pooling"),
    ("ForRewardModeling", "pooling"),
    ("RewardModel", "pooling"),
    ("Model", "pooling"),
)

#: Architectures the registry lists as generative although their name ends in ``Model`` (registered archs win
#: over the suffix table: ``_get_default_runner_type``). From ``_TEXT_GENERATION_MODELS`` / ``_MULTIMODAL_MODELS``
#: of ``vllm@0.12.0:vllm/model_executor/models/registry.py``: every key there that the suffix table would take as
#: pooling and that ``_EMBEDDING_MODELS`` / ``_CROSS_ENCODER_MODELS`` do not list.
_REGISTERED_GENERATIVE = frozenset(
    {"AquilaModel", "ChatGLMModel", "MiDashengLMModel", "Qwen2_5OmniModel", "UltravoxModel"}
)
#: Registered pooling architectures the suffix table does not name (``_EMBEDDING_MODELS`` /
#: ``_CROSS_ENCODER_MODELS`` of ``vllm@0.12.0``; decoder ones only: the encoder-only ones are not planned).
_REGISTERED_POOLING = frozenset({"GritLM", "JinaVLForRanking"})

#: Architectures SGLang serves in embedding mode without ``--is-embedding`` (``is_generation_model``,
#: ``sglang@0.5.23:python/sglang/srt/configs/model_config.py``); those some releases lack are gated by
#: :data:`SGLANG_EMBEDDING_ARCHITECTURE_FROM`.
SGLANG_EMBEDDING_ARCHITECTURES = frozenset(
    {
        "LlamaEmbeddingModel",
        "MistralModel",
        "LlamaForSequenceClassification",
        "LlamaForSequenceClassificationWithNormal_Weights",
        "InternLM2ForRewardModel",
        "Qwen2ForRewardModel",
        "Qwen3ForRewardModel",
        "Qwen2ForSequenceClassification",
        "Qwen3ForSequenceClassification",
        "Qwen3Model",
        "CLIPModel",
        "BertModel",
        "Contriever",
        "BertForSequenceClassification",
        "XLMRobertaModel",
        "XLMRobertaForSequenceClassification",
        "Gemma2ForSequenceClassification",
        "EmbeddingGemma2Model",
        "Lfm2BidirectionalModel",
    }
)
#: First release whose ``is_generation_model`` lists the architecture, read in the wheels (``sglang==V``,
#: ``sglang/srt/configs/model_config.py``: 0.4.6 - 0.4.8, 0.4.9.post3, 0.4.10, 0.5.1 - 0.5.23; there is no 0.5.0).
#: Each is absent from the release read before it; a post-release of that earlier release (0.4.7.post1,
#: 0.4.10.post1/2, 0.5.8.post1) was not read and is taken as its base release. The other eight are in 0.4.6 and
#: every later wheel; releases before 0.4.6 are taken as 0.4.6 [assumed].
SGLANG_EMBEDDING_ARCHITECTURE_FROM: dict[str, Version] = {
    "BertModel": (0, 4, 8),
    "Contriever": (0, 4, 8),
    "BertForSequenceClassification": (0, 4, 8),
    "XLMRobertaModel": (0, 4, 8),
    "XLMRobertaForSequenceClassification": (0, 4, 8),
    "Qwen3ForSequenceClassification": (0, 5, 1),
    "Qwen3ForRewardModel": (0, 5, 9),
    "Gemma2ForSequenceClassification": (0, 5, 9),
    "Qwen3Model": (0, 5, 17),
    "Lfm2BidirectionalModel": (0, 5, 17),
    "EmbeddingGemma2Model": (0, 5, 22),
}


def _arch_runner(architectures: Sequence[str]) -> tuple[str, str | None]:
    """``(runner, architecture that decided)`` of ``--runner auto`` by architecture alone: the first architecture
    the registry approximation or the suffix table answers for (``_get_default_runner_type``), else
    ``generate``."""
    for arch in architectures:
        if arch in _REGISTERED_GENERATIVE:
            return "generate", arch
        if arch in _REGISTERED_POOLING:
            return "pooling", arch
        for suffix, runner in _SUFFIX_RUNNER:
            if arch.endswith(suffix):
                return runner, arch
    return "generate", None


def vllm_pooling(
    v: Version,
    architectures: Sequence[str],
    *,
    runner: str | None = None,
    task: str | None = None,
    convert: str | None = None,
) -> tuple[bool, str]:
    """Whether vLLM release ``v`` runs the model of ``architectures`` with the pooling runner, and why (one
    sentence for the plan's assumptions; empty when it is the generate runner by default).

    ``runner``/``task``/``convert``: ``--runner``, ``--task`` and ``--convert`` as given (None: not given). Order as
    ``ModelConfig.__post_init__`` resolves them (``vllm@0.12.0:vllm/config/model.py``): a ``--task`` (up to 0.12.0)
    sets the runner (over ``--runner``: ``self.runner = runner``), then an explicit ``--runner``, then ``--convert`` (0.22.0 on) and the architecture
    (:func:`_arch_runner`). [assumed] a sentence-transformers checkpoint whose ``modules.json`` holds a pooling
    module also selects ``pooling`` with a ``*ForCausalLM`` architecture (``get_pooling_config``): kvlint does not
    read that file, so such a model (Qwen3-Embedding) is planned as generative unless the command says
    ``--runner pooling``, ``--convert embed`` or a pooling ``--task``. Before 0.22.0 a ``--convert`` does not itself
    select the pooling runner, but vLLM applies it to the model class whatever the runner
    (``vllm@0.12.0:vllm/model_executor/model_loader/utils.py``) and the converted class has no LM head for the
    generate runner's sampler, so a deployment that starts with one runs the pooling runner: kvlint takes it so,
    and says it is assumed. Before 0.10.1 (:data:`VLLM_RUNNER_FROM`) vLLM has no ``--runner``/``--convert`` and
    refuses them (KV205): they are not read.
    """
    if v < VLLM_RUNNER_FROM:
        runner = convert = None  # no such options before 0.10.1: the server does not start (KV205)
    r = (runner or "auto").strip().lower()
    t = (task or "auto").strip().lower()
    c = (convert or "auto").strip().lower()
    if v <= VLLM_TASK_UNTIL and t in VLLM_POOLING_TASKS:
        return True, f"--task {t}: vLLM runs the model with the pooling runner (ModelConfig._RUNNER_TASKS)"
    if v <= VLLM_TASK_UNTIL and t in VLLM_GENERATE_TASKS:
        return False, ""
    if r == "pooling":
        return True, "--runner pooling: vLLM runs the model with the pooling runner"
    if r in ("generate", "draft"):
        return False, ""
    if c not in ("auto", "none") and v >= VLLM_CONVERT_IMPLIES_POOLING_FROM:
        return True, f"--convert {c}: vLLM resolves --runner auto to pooling (ModelConfig._get_runner_type)"
    if c not in ("auto", "none"):
        # before 0.22.0 --runner auto looks at the checkpoint only; the converted class (model_loader/utils.py
        # applies --convert whatever the runner) has no LM head, so the generate runner's sampler could not run it
        return True, (
            f"--convert {c}: taken as the pooling runner [assumed]: vLLM {v[0]}.{v[1]} resolves --runner auto from "
            "the checkpoint (a sentence-transformers modules.json selects pooling), and the generate runner could "
            "not run the converted model, which has no LM head"
        )
    runner_type, arch = _arch_runner(architectures)
    if runner_type == "pooling":
        return True, (
            f"architecture {arch} is a pooling model: vLLM resolves --runner auto to pooling "
            "(ModelConfig._get_default_runner_type)"
        )
    return False, ""


def sglang_embedding(architectures: Sequence[str], is_embedding: bool, v: Version) -> tuple[bool, str]:
    """Whether SGLang release ``v`` serves the model in embedding mode (``ModelConfig.is_generation`` False), and
    why: ``--is-embedding`` (``is_embedding``) or an architecture of :data:`SGLANG_EMBEDDING_ARCHITECTURES` that
    release lists (:data:`SGLANG_EMBEDDING_ARCHITECTURE_FROM`; ``is_generation_model``, which looks at every
    architecture the config lists)."""
    hit = next(
        (
            a
            for a in architectures
            if a in SGLANG_EMBEDDING_ARCHITECTURES and v >= SGLANG_EMBEDDING_ARCHITECTURE_FROM.get(a, (0,))
        ),
        None,
    )
    if hit is not None:
        return True, f"architecture {hit}"
    if is_embedding:
        return True, "--is-embedding"
    return False, ""


#: ``model_type`` of the encoder-only families vLLM and SGLang serve as pooling models (BERT, RoBERTa,
#: XLM-RoBERTa, ModernBERT; the first three are in both engines' registries, ModernBERT in vLLM's).
ENCODER_ONLY_TYPES = frozenset({"bert", "roberta", "xlm-roberta", "modernbert"})


def encoder_only_clause(engine: str, model_type: str) -> str:
    """What ``engine`` does with an encoder-only ``model_type`` (:data:`ENCODER_ONLY_TYPES`), as a clause for
    KV502 ("" for other types and engines): vLLM serves it with the pooling runner and no KV cache (its
    encoder-only attention layers get ``EncoderOnlyAttentionSpec``, which holds none, ``vllm@0.12.0``); SGLang in
    embedding mode, with its token pool sized from ``mem_fraction_static`` as for any model."""
    if model_type not in ENCODER_ONLY_TYPES:
        return ""
    if engine == "vllm":
        return (
            "; vLLM serves this encoder-only model as a pooling (embedding or reranking) model that holds no KV "
            "cache, so its GPU memory is the weights and the profile run's activations"
        )
    if engine == "sglang":
        return (
            "; SGLang serves this encoder-only model in embedding mode, with a token pool sized from "
            "mem_fraction_static as for any model"
        )
    return ""


#: SGLang model classes of embedding architectures built without an LM head: ``LlamaEmbeddingModel`` and
#: ``MistralModel`` (E5-Mistral) hold the decoder and a pooler only (``models/llama_embedding.py``, the same in
#: ``sglang@0.5.5`` and ``sglang@0.5.23``), and ``Qwen2ForRewardModel`` the decoder and its score head
#: (``models/qwen2_rm.py``: ``load_weights`` drops the ``lm_head`` weights; the same in both releases). A
#: ``*ForCausalLM`` served with ``--is-embedding`` keeps its class and its ``lm_head``.
SGLANG_HEADLESS_ARCHITECTURES = frozenset({"LlamaEmbeddingModel", "MistralModel", "Qwen2ForRewardModel"})


#: Decoder pooling architectures whose class declares a pooling type other than vLLM's default ``LAST``
#: (``@default_pooling_type``, read in the 0.12.0, 0.14.0 and 0.34.0 wheels: ``gritlm.py::GritLM`` ``MEAN``,
#: ``qwen2_rm.py::Qwen2ForRewardModel`` and ``internlm2.py::InternLM2ForRewardModel`` ``ALL``,
#: ``qwen2_rm.py::Qwen2ForProcessRewardModel`` ``STEP``). ``ALL`` and ``STEP`` are token pooling types
#: (``tok_pooling_type``) from 0.14.0. Encoder-only classes (BERT, RoBERTa: ``CLS``) are not planned by kvlint.
VLLM_CLASS_POOLING: dict[str, str] = {
    "GritLM": "MEAN",
    "Qwen2ForRewardModel": "ALL",
    "InternLM2ForRewardModel": "ALL",
    "Qwen2ForProcessRewardModel": "STEP",
}
#: Token pooling types (``TOK_POOLING_TYPES``, ``vllm@0.14.0:vllm/config/pooler.py``); the others are sequence ones.
VLLM_TOKEN_POOLING = frozenset({"ALL", "STEP"})
#: First release whose ``PoolerConfig`` splits ``pooling_type`` into ``seq_pooling_type``/``tok_pooling_type`` and
#: whose ``ModelConfig.is_chunked_prefill_supported`` turns chunked prefill off for ``MEAN``/``CLS`` sequence pooling
#: or ``STEP`` token pooling only (``vllm@0.14.0`` … ``vllm@0.34.0:vllm/config/model.py``).
VLLM_SPLIT_POOLING_FROM: Version = (0, 14, 0)


def _pooler_types(value: object) -> tuple[str | None, str | None]:
    """``(sequence type, token type)`` a ``--pooler-config``/``--override-pooler-config`` JSON object sets
    (``pooling_type``, from 0.14.0 also ``seq_pooling_type``/``tok_pooling_type``; upper-cased), else Nones."""
    import json

    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None, None
    if not isinstance(value, dict):
        return None, None

    def word(key: str) -> str | None:
        x = value.get(key)
        return x.strip().upper() if isinstance(x, str) and x.strip() else None

    seq, tok = word("seq_pooling_type"), word("tok_pooling_type")
    legacy = word("pooling_type")
    if legacy is not None:
        if legacy in VLLM_TOKEN_POOLING:
            tok = tok or legacy
        else:
            seq = seq or legacy
    return seq, tok


def vllm_pooling_chunked_prefill(
    v: Version,
    architectures: Sequence[str],
    config: dict[str, object],
    *,
    pooler_config: object = None,
    task: str | None = None,
    convert: str | None = None,
) -> tuple[bool, str]:
    """Whether vLLM ``v``'s V1 engine turns chunked prefill (and prefix caching) on by default for a decoder
    pooling model, and the pooling type it decided that from (for the plan's assumptions).

    The pooling type: ``--pooler-config``/``--override-pooler-config`` (:func:`_pooler_types`) over the class's
    (:data:`VLLM_CLASS_POOLING`; ``--convert reward``/``--task reward`` before 0.14.0 is ``as_reward_model``'s
    ``ALL``), else ``LAST``. [assumed] a sentence-transformers ``modules.json`` with its pooling module's
    ``config.json`` (``get_pooling_config``, between the two), which kvlint does not read offline, states none
    (Qwen3-Embedding's and E5-Mistral's say last-token, as the default does). Then:

    * a config with ``"is_causal": false`` makes the model bidirectional (``attn_type`` ``encoder_only``): off;
    * before 0.12.0 on only for ``LAST`` (``vllm@0.10.2``/``0.11.0``: ``EngineArgs._set_default_args_v1``;
      ``0.11.1``: ``get_chunked_prefill_prefix_caching_defaults``; assumed from 0.9.2, where V1 pooling begins);
    * 0.12.0 - 0.13.x off for ``ALL``, ``MEAN``, ``STEP``, ``CLS`` (``ModelConfig.is_chunked_prefill_supported``);
    * from 0.14.0 (:data:`VLLM_SPLIT_POOLING_FROM`) off for ``MEAN``/``CLS`` sequence pooling or ``STEP`` token
      pooling (a reward model's ``ALL`` keeps it on).

    ``--[no-]enable-chunked-prefill`` given overrides this default in all of them (the caller checks)."""
    seq, tok = _pooler_types(pooler_config)
    source = "--pooler-config" if (seq or tok) else ""
    if (seq or tok) and v >= VLLM_SPLIT_POOLING_FROM:
        # from 0.14.0 ModelConfig fills each type the pooler config leaves unset from the class's default
        # (``vllm@0.14.0:vllm/config/model.py`` ``ModelConfig.__post_init__``: ``if
        # self.pooler_config.tok_pooling_type is None: ... = self._model_info.default_tok_pooling_type``): a
        # --pooler-config naming only the sequence type keeps Qwen2ForProcessRewardModel's STEP token pooling
        cls = next((VLLM_CLASS_POOLING[a] for a in architectures if a in VLLM_CLASS_POOLING), None)
        if cls is not None and (tok if cls in VLLM_TOKEN_POOLING else seq) is None:
            if cls in VLLM_TOKEN_POOLING:
                tok = cls
            else:
                seq = cls
            source += " and the model class's default"
    if not (seq or tok):
        cls = next((VLLM_CLASS_POOLING[a] for a in architectures if a in VLLM_CLASS_POOLING), None)
        reward = "reward" in ((task or "").strip().lower(), (convert or "").strip().lower())
        if cls is None and reward and v < VLLM_SPLIT_POOLING_FROM:
            cls = "ALL"
        if cls is not None:
            source = "the model class's default"
            if cls in VLLM_TOKEN_POOLING:
                tok = cls
            else:
                seq = cls
    if v < VLLM_SPLIT_POOLING_FROM:
        # one pooling_type: the sequence one given, else the token one, else LAST
        one = seq or tok or "LAST"
        seq, tok = one, None
    seq = seq or "LAST"
    named = f"{seq} pooling" + (f" ({tok} token pooling)" if tok else "")
    named += f" ({source})" if source else " (vLLM's default; no --pooler-config)"
    if config.get("is_causal") is False:
        return False, f'{named}, "is_causal": false in config.json (bidirectional attention)'
    if v < (0, 12, 0):
        return seq == "LAST", named
    if v < VLLM_SPLIT_POOLING_FROM:
        return seq not in ("ALL", "MEAN", "STEP", "CLS"), named
    return not (seq in ("MEAN", "CLS") or tok == "STEP"), named
