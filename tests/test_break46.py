"""Adversarial pass on what session 45 landed (branch break46): each test fails before its fix."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents


def _deployment(
    image: str, env: str, args: str = "[--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '8192']"
) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "      containers:\n      - name: c\n"
        f"        image: {image}\n        args: {args}\n"
        f"        env:\n{env}"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_refusal_at_the_env_entry_the_kubelet_keeps() -> None:
    # An env name given twice: the kubelet keeps the last entry (makeEnvironmentVariables), and kvlint's plan
    # reads the last (container_env), but the KV502 refusal was placed at the first entry's value, a value the
    # engine never sees ("VLLM_USE_V2_MODEL_RUNNER=0 raises ..." at the line of "1").
    env = (
        "        - {name: VLLM_USE_V2_MODEL_RUNNER, value: '1'}\n"
        "        - {name: OTHER, value: x}\n"
        "        - {name: VLLM_USE_V2_MODEL_RUNNER, value: 'zero'}\n"
    )
    text = _deployment("vllm/vllm-openai:v0.34.0", env)
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    kv502 = [d for d in result.diagnostics if d.rule == "KV502" and "VLLM_USE_V2_MODEL_RUNNER" in d.message]
    assert len(kv502) == 1, [d.message for d in result.diagnostics]
    assert "VLLM_USE_V2_MODEL_RUNNER=zero" in kv502[0].message
    assert kv502[0].loc.line == _line_of(text, "'zero'")


def test_refusal_at_the_last_entry_of_v1_and_tgi_attention() -> None:
    # the same helper places VLLM_USE_V1's and TGI's ATTENTION refusals
    env = "        - {name: ATTENTION, value: flashinfer}\n        - {name: ATTENTION, value: bogus}\n"
    text = _deployment(
        "ghcr.io/huggingface/text-generation-inference:3.3.4",
        env,
        "[--model-id, meta-llama/Llama-3.1-8B-Instruct]",
    )
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    found = [d for d in result.diagnostics if d.rule == "KV502" and "ATTENTION" in d.message]
    assert len(found) == 1, [d.message for d in result.diagnostics]
    assert found[0].loc.line == _line_of(text, "bogus")
