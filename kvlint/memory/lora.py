"""vLLM ``--enable-lora``: the GPU memory vLLM reserves for LoRA adapter slots (docs/engine-memory-model.md §1.14).

With LoRA on, vLLM wraps every linear layer of the language model (and, for the architectures that list them, the
input embedding and the LM head) in a LoRA layer that allocates, once at start-up, zero-filled *stacks* for
``--max-loras`` adapters of rank ``--max-lora-rank``: for each layer, an ``A`` stack of ``max_loras x rank x
input`` and a ``B`` stack of ``max_loras x output x rank`` elements per output slice, in the LoRA dtype
(``--lora-dtype``, ``auto`` = the model dtype). Adapters loaded later are copied into these stacks, so their size
does not depend on the adapters served. vLLM creates them while it loads the model, before the profile run, so the
KV budget loses them in every release read: inside the load profiler, i.e. in "Model loading took", in 0.8.0 (V0 and
V1) and 0.11.0 (``vllm@0.11.0:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.load_model`` ->
``vllm/v1/worker/lora_model_runner_mixin.py::LoRAModelRunnerMixin.load_lora_model``;
``vllm@0.8.0:vllm/worker/model_runner.py::GPUModelRunnerBase.load_model``); just after it in 0.5.5 and 0.6.4, whose
profile (initial free memory minus free memory after the profile run) counts them all the same
(``vllm@0.5.5:vllm/worker/model_runner.py::GPUModelRunnerBase.load_model``,
``vllm/worker/worker.py::Worker.determine_num_available_blocks``). The dummy adapters of the profile run are built
on the CPU (``vllm@0.11.0:vllm/lora/models.py::LoRAModelManager.create_dummy_lora``), and the Punica kernels'
per-token buffers are a few MiB, so the stacks are the whole term.

Shapes per GPU (``r`` = max_lora_rank, ``tp`` = tensor-parallel size; ``vllm@0.11.0:vllm/lora/layers/``):

* column-parallel layers (``base_linear.py::BaseLinearLayerWithLoRA.create_lora_weights``,
  ``column_parallel_linear.py``: the fused ``qkv_proj`` has 3 slices, ``gate_up_proj`` 2): per slice ``A`` = ``r x
  input`` (the full input; ``r / tp`` with ``--fully-sharded-loras``) and ``B`` = ``output slice / tp x r``;
* row-parallel layers (``row_parallel_linear.py``: ``o_proj``, ``down_proj``): ``A`` = ``r x input / tp`` and
  ``B`` = ``output x r`` (``output / tp`` with ``--fully-sharded-loras``);
* the embedding (``vocal_parallel_embedding.py::VocabParallelEmbeddingWithLoRA``): ``A`` = ``(vocab + 256) x r``,
  ``B`` = ``hidden x r`` and the added-vocabulary rows ``256 x hidden`` (``lora_extra_vocab_size`` 256), not split
  by TP; the LM head (``logits_processor.py::LogitsProcessorWithLoRA``): ``A`` = ``r x hidden``, ``B`` = the
  vocabulary padded to 256 ``x r``, plus ``256 x hidden`` added-vocabulary rows. Only architectures whose class
  lists ``embed_tokens``/``lm_head`` in ``embedding_modules`` get these (:data:`EMBEDDING_LORA_ARCHITECTURES`;
  Qwen2/Qwen3 do not in 0.11.0).

Not priced, and said so in the plan: the routed experts of MoE layers (not LoRA layers in 0.8.0 or 0.11.0; later
releases add ``vllm/lora/layers/fused_moe.py``), latent-attention (MLA) and Mamba/linear-attention projections, and
vision towers (vLLM applies LoRA to the language model only, ``LoRAModelManager._filter_unsupported_mm_module``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kvlint.types import LayerSpec, ModelSpec

#: ``LoRAConfig`` defaults in vLLM 0.5.5, 0.8.0 and 0.11.0 (``vllm@0.11.0:vllm/config/lora.py::LoRAConfig``).
DEFAULT_MAX_LORAS = 1
DEFAULT_MAX_LORA_RANK = 16
#: ``lora_extra_vocab_size`` (0.5.5 – 0.11.0) and the LM head's ``lora_vocab_padding_size`` on CUDA.
EXTRA_VOCAB = 256
VOCAB_PADDING = 256

#: Architectures whose vLLM 0.11.0 model class lists ``embed_tokens`` and ``lm_head`` in ``embedding_modules``, so
#: LoRA wraps the embedding and the LM head too (``vllm@0.11.0:vllm/model_executor/models/*.py``, the Llama class
#: also serving the architectures ``registry.py`` maps to it).
EMBEDDING_LORA_ARCHITECTURES = frozenset(
    {
        "LlamaForCausalLM",
        "LLaMAForCausalLM",
        "MistralForCausalLM",
        "AquilaForCausalLM",
        "AquilaModel",
        "InternLMForCausalLM",
        "InternLM3ForCausalLM",
        "XverseForCausalLM",
        "CwmForCausalLM",
        "ApertusForCausalLM",
        "BambaForCausalLM",
        "ExaoneForCausalLM",
        "Exaone4ForCausalLM",
        "FalconH1ForCausalLM",
        "GraniteForCausalLM",
        "GraniteMoeForCausalLM",
        "GraniteMoeHybridForCausalLM",
        "GraniteMoeSharedForCausalLM",
        "JambaForCausalLM",
        "Lfm2ForCausalLM",
        "MiniCPMForCausalLM",
        "MixtralForCausalLM",
        "NemotronForCausalLM",
        "NemotronHForCausalLM",
        "DeciLMForCausalLM",
        "PhiMoEForCausalLM",
        "SolarForCausalLM",
    }
)

_ATTENTION_KINDS = ("full", "sliding", "chunked", "cross")

#: V0 releases that leave the stacks out of the KV budget: from 0.7.0 to before 0.8.0 the V0 model runner creates
#: the LoRA manager after its load profiler (``vllm@0.7.3:vllm/worker/model_runner.py::GPUModelRunnerBase.load_model``)
#: and ``memory_profiling`` counts only non-torch memory since start-up, the weights and the profile's torch peak
#: increase (``vllm@0.7.3:vllm/utils.py::memory_profiling``, ``non_torch_increase = diff_from_create.non_torch_memory``),
#: so torch-allocated stacks made before the profile are in no term (read in the 0.7.0 and 0.7.3 wheels; reported as
#: vllm-project/vllm#14450, "LoRA is not taken into account when determining the number of KV cache blocks").
#: 0.6.5 measured them as non-torch memory (``current - baseline - weights - torch diff``); 0.8.0 creates them inside
#: the profiler.
V0_UNCOUNTED_FROM = (0, 7, 0)
V0_UNCOUNTED_UNTIL = (0, 8, 0)


def stacks_in_kv_budget(era: str, version: tuple[int, int, int]) -> bool:
    """Whether vLLM subtracts the LoRA stacks from the KV budget: always, except the V0 engine of 0.7.x
    (:data:`V0_UNCOUNTED_FROM` .. :data:`V0_UNCOUNTED_UNTIL`), whose profile misses them."""
    return not (era == "v0" and V0_UNCOUNTED_FROM <= tuple(version)[:3] < V0_UNCOUNTED_UNTIL)


#: ``--lora-dtype`` values and their element size; ``auto`` (or unset) takes the model's dtype.
_LORA_DTYPE_BYTES = {"float16": 2, "half": 2, "bfloat16": 2, "float32": 4, "float": 4}


def lora_dtype_bytes(lora_dtype: str | None, model_dtype_bytes: int) -> int:
    """Bytes per element of the LoRA stacks: ``--lora-dtype`` (float16/bfloat16 2, float32 4), the model dtype for
    ``auto`` or unset (``vllm@0.11.0:vllm/config/lora.py::LoRAConfig.verify_with_model_config``)."""
    return _LORA_DTYPE_BYTES.get(str(lora_dtype or "auto").lower(), model_dtype_bytes)


@dataclass(frozen=True)
class LoraStacks:
    """LoRA stack bytes on one GPU, split as a pipeline stage needs them.

    ``layers``: the decoder layers given (bytes); ``embedding``: the input embedding's stacks (first stage);
    ``lm_head``: the LM head's stacks (last stage); ``unpriced``: what holds LoRA weights in vLLM but is not
    counted (for the plan's note), empty when everything is.
    """

    layers: int
    embedding: int
    lm_head: int
    unpriced: tuple[str, ...] = ()


def lora_stacks(
    model: ModelSpec,
    layers: Sequence[LayerSpec],
    *,
    tp: int = 1,
    max_loras: int | None = None,
    max_lora_rank: int | None = None,
    fully_sharded: bool = False,
    element_bytes: int = 2,
    model_bytes: int = 2,
) -> LoraStacks:
    """Bytes of the zero-filled LoRA stacks vLLM allocates at start-up on one GPU for ``layers`` (the decoder
    layers of one pipeline stage) and for the embedding and LM head, per the shapes in this module's docstring
    (``vllm@0.11.0:vllm/lora/layers/*.py::create_lora_weights``; the same shapes in 0.8.0). ``max_loras`` and
    ``max_lora_rank`` default to vLLM's 1 and 16; ``element_bytes`` is :func:`lora_dtype_bytes`; ``model_bytes`` the
    model dtype's, in which the embedding and LM head keep their 256 added-vocabulary rows.

    Per attention layer (``q`` = heads x head size / tp, ``kv`` = max(1, KV heads / tp) x head size, ``h`` = hidden
    size, ``a`` = ``r`` or ``r / tp`` fully sharded, ``o`` = ``h`` or ``h / tp`` fully sharded)::

        qkv_proj  3 x a x h + (q + 2 x kv) x r      o_proj    r x q + o x r
        gate_up   2 x a x h + 2 x (I / tp) x r      down_proj r x I / tp + o x r   (dense MLP only)

    times ``max_loras x element_bytes``.
    """
    loras = max(1, int(max_loras or DEFAULT_MAX_LORAS))
    r = max(1, int(max_lora_rank or DEFAULT_MAX_LORA_RANK))
    tp = max(1, int(tp))
    h = int(model.hidden_size)
    a = max(1, r // tp) if fully_sharded else r
    o_out = max(1, h // tp) if fully_sharded else h
    q = int(model.num_attention_heads) * int(model.head_size) // tp
    inter = int(model.intermediate_size) // tp
    moe = bool(model.num_experts)
    mlp = 0 if moe else 2 * a * h + 2 * inter * r + r * inter + o_out * r
    elements = 0
    skipped: dict[str, int] = {}
    for spec in layers:
        if model.is_mla or spec.kind not in _ATTENTION_KINDS:
            if spec.kind != "none":
                what = "latent-attention (MLA)" if model.is_mla else f"{spec.kind}"
                skipped[what] = skipped.get(what, 0) + 1
            continue
        kv = max(1, int(spec.kv_heads) // tp) * int(spec.head_size or model.head_size)
        elements += 3 * a * h + (q + 2 * kv) * r + r * q + o_out * r + mlp
    unpriced = [f"{n} {what} layer(s)" for what, n in sorted(skipped.items())]
    if moe and layers:
        unpriced.append("the routed experts of the MoE layers")
    arch = set(model.architectures or ())
    embed = head = 0
    unit = loras * int(element_bytes)
    if arch & EMBEDDING_LORA_ARCHITECTURES:
        v = int(model.vocab_size)
        added = loras * EXTRA_VOCAB * h * int(model_bytes)
        embed = ((v + EXTRA_VOCAB) * r + h * r) * unit + added
        head = (r * h + math.ceil(v / VOCAB_PADDING) * VOCAB_PADDING * r) * unit + added
    return LoraStacks(layers=elements * unit, embedding=embed, lm_head=head, unpriced=tuple(unpriced))
