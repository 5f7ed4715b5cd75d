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


def test_env_entry_named_by_a_list_beside_lws_variables() -> None:
    # LWS (and OME's multi-node runtimes) head each container's env with LWS's variables and drop the container's
    # own of those names (with_injected_env, operator_first): an entry whose name is a list was looked up in the
    # injected names' dict, TypeError "unhashable type: 'LList'", and the whole file was "could not finish
    # checking". Found by fuzzing an OME runtime of the corpus.
    text = (
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec:\n"
        "  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      spec:\n"
        "        nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "        containers:\n        - name: c\n          image: vllm/vllm-openai:v0.11.0\n"
        "          args: [--model, meta-llama/Llama-3.1-8B-Instruct]\n"
        "          env:\n          - {name: [LWS_GROUP_SIZE], value: x}\n          - {name: {a: b}, value: y}\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    result = run_documents(load_text(text, "l.yaml"), Options(allow_hub=False))
    assert not [d.message for d in result.diagnostics if "could not finish" in d.message]
    assert result.workloads, [d.message for d in result.diagnostics]
