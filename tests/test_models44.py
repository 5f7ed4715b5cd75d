"""Models named by real manifests in fixtures/collected that kvlint could not size offline (branch models44).

zai-org/GLM-4.6 (kubernetes-sigs/lws topology-aware-scheduling vllm-kueue example; its -FP8 build in OME's GLM
runtime tree) and deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct (KServe's llmisvc dp-ep sample) were "model unknown"
(KV502). Neither config.json was found in a readable source; both are cited variants of a stored config of the
same architecture (kvlint/models/sources/variants.yaml, with the reasons). The parameter counts are checked
against the layer shapes of the architectures and the KV bytes per token against vLLM's per-layer page formula
(docs/engine-memory-model.md §1.3: full attention 2 x KV heads x head size x dtype bytes a layer; MLA one latent
of kv_lora_rank + qk_rope_head_dim a layer).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.memory.kv import kv_bytes_per_token
from kvlint.models.catalogue import lookup
from kvlint.models.resolve import resolve_model
from kvlint.models.weights import param_count
from kvlint.pipeline import Options, run_check
from kvlint.sizing import SIZED, outcomes
from kvlint.types import ModelUnavailable

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
LWS_KUEUE = (
    COLLECTED
    / "kubernetes-sigs__lws__docs__examples__leaderworkerset__topology-aware-scheduling__vllm-kueue.yaml"
)
KSERVE_DP_EP = (
    COLLECTED
    / "kserve__kserve__docs__samples__llmisvc__dp-ep__deepseek-r1-gpu-rdma-roce__llm-inference-service-dp-ep-deepseek-r1-gpu-naive.yaml"
)


def test_glm46_is_a_catalogued_bf16_variant_and_its_fp8_build_is_derived() -> None:
    assert lookup("zai-org/GLM-4.6") is not None
    bf16 = resolve_model("zai-org/GLM-4.6", allow_hub=False)
    # the bf16 checkpoint: the stored FP8 build's quantization is not applied
    assert bf16.quant_method is None
    fp8 = resolve_model("zai-org/GLM-4.6-FP8", allow_hub=False)
    assert fp8.quant_method == "fp8"
    assert param_count(fp8) == param_count(bf16)


def test_glm46_parameter_count_is_its_layer_shapes() -> None:
    spec = resolve_model("zai-org/GLM-4.6", allow_hub=False)
    c = spec.config
    h, heads, kv, hd = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    layers, dense = c["num_hidden_layers"], c["first_k_dense_replace"]
    experts, moe, shared = c["n_routed_experts"], c["moe_intermediate_size"], c["n_shared_experts"]
    # q, k, v, o (the stored subset has no attention_bias, so no biases)
    attention = h * heads * hd + 2 * h * kv * hd + heads * hd * h
    gated = 3 * h  # gate, up and down projections per unit of intermediate size
    mlp = dense * gated * c["intermediate_size"] + (layers - dense) * (
        experts * gated * moe + shared * gated * moe + experts * h  # routed experts, shared expert, router
    )
    norms = layers * 2 * h + h
    expected = 2 * c["vocab_size"] * h + layers * attention + mlp + norms  # untied embedding and head
    assert c["tie_word_embeddings"] is False
    assert param_count(spec) == expected


def test_glm46_kv_bytes_per_token_is_vllms_full_attention_page() -> None:
    spec = resolve_model("zai-org/GLM-4.6", allow_hub=False)
    c = spec.config
    per_layer = 2 * c["num_key_value_heads"] * c["head_dim"] * 2  # K and V, bf16
    assert kv_bytes_per_token(spec) == c["num_hidden_layers"] * per_layer
    # TP splits the 8 KV heads (vllm ModelConfig.get_num_kv_heads: max(1, kv_heads // tp))
    assert kv_bytes_per_token(spec, tp=8) == c["num_hidden_layers"] * per_layer // 8


def test_deepseek_coder_v2_lite_is_the_v2_lite_stack_with_mla_kv() -> None:
    assert lookup("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct") is not None
    coder = resolve_model("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct", allow_hub=False)
    base = resolve_model("deepseek-ai/DeepSeek-V2-Lite", allow_hub=False)
    assert param_count(coder) == param_count(base)
    c = coder.config
    latent = c["kv_lora_rank"] + c["qk_rope_head_dim"]  # one MLA latent a layer, replicated on every TP rank
    assert kv_bytes_per_token(coder) == c["num_hidden_layers"] * latent * 2
    assert kv_bytes_per_token(coder, tp=4) == kv_bytes_per_token(coder)


def _sized_models(path: Path) -> list[str]:
    r = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in r.diagnostics if d.rule == "KV502"]
    assert r.containers and all(o in SIZED for o in outcomes(r.containers)), outcomes(r.containers)
    return [cr.model.id for cr in r.containers if cr.model is not None]


def test_lws_glm46_example_is_sized_offline() -> None:
    models = _sized_models(LWS_KUEUE)
    assert "zai-org/GLM-4.6" in models


def test_kserve_deepseek_coder_v2_lite_sample_is_sized_offline() -> None:
    models = _sized_models(KSERVE_DP_EP)
    assert models and all(m == "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct" for m in models)


DSV41_RECIPE = (
    COLLECTED
    / "ai-dynamo__dynamo__recipes__deepseek-v4.1-flash__vllm__disagg-b200-agentic__kustomize__base__deploy.yaml"
)


def test_deepseek_v41_flash_kv502_says_the_architecture_is_not_modelled() -> None:
    r = run_check([str(DSV41_RECIPE)], Options(allow_hub=False))
    kv502 = [d for d in r.diagnostics if d.rule == "KV502"]
    assert kv502
    for d in kv502:
        assert "DeepseekV41ForCausalLM" in d.message and "not in kvlint's memory model" in d.message
        assert "kvlint models pull" not in d.fix  # a pulled config would be refused too
        assert d.fix.startswith("none in kvlint yet")


def test_deepseek_v41_config_is_refused_not_sized_as_v4(tmp_path: Path) -> None:
    # A DeepSeek V4.1 config in the shape vLLM's DeepseekV41Config reads (architectures DeepseekV41ForCausalLM,
    # model_type deepseek_v41, the text model under text_config); made up for this test from the stored
    # DeepSeek-V4-Flash config, whose text model_type deepseek_v4 kvlint would otherwise size with V4's layout.
    v4 = json.loads(
        (ROOT / "kvlint" / "data" / "models" / "deepseek-ai--DeepSeek-V4-Flash" / "config.json").read_text()
    )
    v41 = {"architectures": ["DeepseekV41ForCausalLM"], "model_type": "deepseek_v41", "text_config": v4}
    d = tmp_path / "deepseek-ai--DeepSeek-V4.1-Flash"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(v41))
    with pytest.raises(ModelUnavailable) as e:
        resolve_model(str(d), allow_hub=False)
    assert "DeepseekV41ForCausalLM" in str(e.value) and "not in kvlint's memory model" in str(e.value)
    assert e.value.refusal is not None
