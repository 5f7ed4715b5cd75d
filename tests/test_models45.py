"""Models named by real manifests that kvlint could not size offline, or sized wrong (branch models45).

- Qwen/Qwen3-Next-80B-A3B-Instruct (and its -FP8 build, aws-samples' genai-on-eks starter kit vLLM template): a
  cited variant of the stored Qwen3-Next-80B-A3B-Thinking config (kvlint/models/sources/variants.yaml). Its KV
  layout is checked against vLLM's model file (``vllm/model_executor/models/qwen3_next.py``: every
  ``full_attention_interval``-th layer full attention, the rest Gated DeltaNet whose per-request state is
  ``MambaStateShapeCalculator.gated_delta_net_state_shape``: conv ``(conv_kernel - 1) x conv_dim`` with
  ``conv_dim = 2 x key heads x key head dim + value heads x value head dim``, temporal ``value heads x key head dim x
  value head dim``, both at the model dtype by default).
- zai-org/GLM-4.7-FP8: its stored config is ai-dynamo/aiconfigurator's abridged copy with no quantization_config,
  so the FP8 checkpoint was sized at bf16 (twice its weight bytes: OME's GLM-4.7-FP8 service "failed" on 8 x H100).
  The quantization its name states is now taken as for a build derived from its name, with a KV505 assumption.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from kvlint.memory.kv import kv_bytes_per_token
from kvlint.models import catalogue
from kvlint.models.catalogue import lookup
from kvlint.models.resolve import resolve_model
from kvlint.models.weights import param_count, weight_bytes
from kvlint.pipeline import Options, run_check
from kvlint.sizing import SIZED, outcomes

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
QWEN3_NEXT_TEMPLATE = (
    COLLECTED
    / "aws-samples__sample-genai-on-eks-starter-kit__components__llm-model__vllm__model-qwen3-next-80b-instruct-fp8.template.yaml"
)
OME_GLM = COLLECTED / "trees" / "sgl-project-ome-glm-fp8"


def test_qwen3_next_instruct_is_the_thinking_stack() -> None:
    entry = lookup("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert entry is not None and entry.base_id == "Qwen/Qwen3-Next-80B-A3B-Thinking"
    instruct = resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct", allow_hub=False)
    thinking = resolve_model("Qwen/Qwen3-Next-80B-A3B-Thinking", allow_hub=False)
    assert instruct.layers == thinking.layers
    assert param_count(instruct) == param_count(thinking)
    assert instruct.max_position_embeddings == 262144  # the model card's native context


def test_qwen3_next_layers_are_vllms_hybrid_layout() -> None:
    spec = resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct", allow_hub=False)
    c = spec.config
    n, interval = c["num_hidden_layers"], c["full_attention_interval"]
    kinds = ["full" if (i + 1) % interval == 0 else "mamba" for i in range(n)]
    assert [lay.kind for lay in spec.layers] == kinds
    full = [lay for lay in spec.layers if lay.kind == "full"]
    assert {(lay.kv_heads, lay.head_size, lay.head_size_v) for lay in full} == {
        (c["num_key_value_heads"], c["head_dim"], c["head_dim"])
    }
    # K and V of every full-attention layer at bf16; the Gated-DeltaNet layers keep no per-token cache
    assert kv_bytes_per_token(spec) == len(full) * 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    conv_dim = (
        2 * c["linear_num_key_heads"] * c["linear_key_head_dim"]
        + c["linear_num_value_heads"] * c["linear_value_head_dim"]
    )
    conv = (c["linear_conv_kernel_dim"] - 1) * conv_dim
    temporal = c["linear_num_value_heads"] * c["linear_key_head_dim"] * c["linear_value_head_dim"]
    states = {(lay.state_bytes, lay.spec_conv_bytes) for lay in spec.layers if lay.kind == "mamba"}
    assert states == {((conv + temporal) * 2, conv_dim * 2)}


def _render(template: Path, dest: Path) -> Path:
    """The template with its {{NAME}} / {{{NAME}}} placeholders removed (they prefix image and node names)."""
    dest.write_text(re.sub(r"\{\{\{?[A-Z_]+\}?\}\}", "", template.read_text(encoding="utf-8")))
    return dest


def test_qwen3_next_instruct_fp8_template_is_sized_offline(tmp_path: Path) -> None:
    r = run_check([str(_render(QWEN3_NEXT_TEMPLATE, tmp_path / "qwen3-next.yaml"))], Options(allow_hub=False))
    assert not [d for d in r.diagnostics if d.rule == "KV502"]
    assert r.containers and all(o in SIZED for o in outcomes(r.containers)), outcomes(r.containers)
    leaders = [cr.model for cr in r.containers if cr.model is not None]
    assert leaders and all(m.id == "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8" for m in leaders)
    assert all(m.quant_method == "fp8" for m in leaders)


def test_glm47_fp8_takes_the_quantization_its_name_states() -> None:
    fp8 = resolve_model("zai-org/GLM-4.7-FP8", allow_hub=False)
    # the unquantized variant of the same stored config
    bf16 = resolve_model("zai-org/GLM-4.6", allow_hub=False)
    assert fp8.quant_method == "fp8" and bf16.quant_method is None
    assert fp8.assumption.startswith("ASSUMPTION (quantization from name)")
    assert "abridged" in fp8.assumption and "-FP8" in fp8.assumption
    assert param_count(fp8) == param_count(bf16)
    w_fp8, _ = weight_bytes(fp8, dtype_bytes=2, compute_capability="9.0")
    w_bf16, _ = weight_bytes(bf16, dtype_bytes=2, compute_capability="9.0")
    # FP8 linear weights (1 B a parameter plus block scales) beside the bf16 embeddings, norms and routers
    assert 0.45 * w_bf16 < w_fp8 < 0.6 * w_bf16
    # the same build known only by name is sized the same (zai-org/GLM-4.6-FP8, derived from GLM-4.6)
    derived = resolve_model("zai-org/GLM-4.6-FP8", allow_hub=False)
    assert weight_bytes(derived, dtype_bytes=2, compute_capability="9.0")[0] == w_fp8


def test_ome_glm47_fp8_service_plans_like_glm46_fp8() -> None:
    r = run_check([str(OME_GLM)], Options(allow_hub=False))
    by_model = {cr.model.id: cr for cr in r.containers if cr.model is not None}
    assert {"zai-org/GLM-4.6-FP8", "zai-org/GLM-4.7-FP8"} <= set(by_model)
    kv505 = [d for d in r.diagnostics if d.rule == "KV505" and "GLM-4.7-FP8" in d.message]
    assert kv505 and all("has no quantization settings" in d.message for d in kv505)
    assert all(d.message.startswith("kvlint took this model's quantization from its name") for d in kv505)
    verdicts = {
        mid: sorted((e.accelerator.id, e.verdict) for e in by_model[mid].fleet)
        for mid in ("zai-org/GLM-4.6-FP8", "zai-org/GLM-4.7-FP8")
    }
    assert verdicts["zai-org/GLM-4.7-FP8"] == verdicts["zai-org/GLM-4.6-FP8"]
    assert ("nvidia-h100-sxm5-80gb", "fits") in verdicts["zai-org/GLM-4.7-FP8"]  # was "fails": bf16 weights


def test_a_verbatim_config_without_quantization_is_not_quantized_by_its_name() -> None:
    """The name rule is for a config that is not the checkpoint's own file (GLM-4.7-FP8's abridged copy). A verbatim
    config.json is what vLLM reads (``ModelConfig._parse_quant_hf_config``: ``quantization_config`` or
    ``compression_config``, never the repository name), so one without quantization settings stays unquantized.
    Crafted from the real stored GLM-4.7-FP8 entry with only its fidelity changed."""
    raw = catalogue._raw("zai-org/GLM-4.7-FP8")
    assert not catalogue._is_quantized(raw)  # the stored config really lacks quantization_config
    abridged = catalogue._make(raw)
    assert catalogue._stored_without_quantization(abridged, raw).derived  # the abridged copy takes -FP8
    for fidelity in ("verbatim_copy", "hf_page_transcription", "resaved_copy"):
        own = dataclasses.replace(abridged, source={**abridged.source, "fidelity": fidelity})
        kept = catalogue._stored_without_quantization(own, raw)
        assert kept is own and kept.derived is None, fidelity
