"""Mistral 7B v0.2 has no sliding window (model card: "No Sliding-Window Attention"; its config.json has
sliding_window null), unlike v0.1's 4096. The catalogue's v0.2 config was litgpt's sizes on the v0.1 template,
which kept v0.1's sliding_window_size 4096: every layer was planned as a 4096-token window, so a 32,768-token
request was counted at window + in-flight tokens and `kvlint plan` on an L4 printed 7.85x concurrency where vLLM
has about 1.5x. Found on a RayService serving it through Ray Serve LLM (llm_configs)."""

from __future__ import annotations

from pathlib import Path

from kvlint.models import clear_cache, resolve_model
from kvlint.options import Options
from kvlint.pipeline import run_check


def test_v02_layers_are_full_attention_and_v01_keeps_its_window() -> None:
    clear_cache()
    v2 = resolve_model("mistralai/Mistral-7B-Instruct-v0.2", allow_hub=False)
    assert v2.sliding_window is None and {ly.kind for ly in v2.layers} == {"full"}
    v1 = resolve_model("mistralai/Mistral-7B-v0.1", allow_hub=False)
    assert v1.sliding_window == 4096 and {ly.kind for ly in v1.layers} == {"sliding"}


def test_a_full_context_request_holds_every_token(tmp_path: Path) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n"
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  containers:\n"
        "  - name: vllm\n    image: vllm/vllm-openai:v0.11.0\n"
        '    args: ["--model", "mistralai/Mistral-7B-Instruct-v0.2"]\n'
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (cr,) = run_check([str(p)], Options(allow_hub=False)).containers
    plan = cr.plan
    assert plan is not None and plan.max_model_len == 32768
    # no window: one request of max_model_len holds max_model_len tokens of KV on each of the 32 layers
    assert plan.per_request_bytes >= plan.max_model_len * plan.kv_bytes_per_token
    assert abs(plan.max_concurrency - plan.capacity_tokens / plan.max_model_len) < 0.05
