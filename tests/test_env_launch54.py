"""A custom image whose entrypoint starts the engine from the container's env (no command or args in the manifest,
or a script of the image: fixtures/collected/ScottNi0809__ml-serving-platform__k8s__deployment-vllm.yaml,
rakanbakir__vllm-gpu-cluster__kubernetes__vllm-deployment.yaml): when the env names the model (``MODEL_ID``,
``MODEL_NAME`` ... holding a hub id or a path), the engine is read from the env, sized when its GPU layout is known,
and a KV503 warning says what was read and assumed. It was "engine command cannot be read", never sized."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import sizing_of
from kvlint.types import ContainerResult

_COLLECTED = Path(__file__).resolve().parent.parent / "fixtures" / "collected"

_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: registry.example.com/team/vllm-server:v1
%s        env:
%s        ports: [{containerPort: 8100}]
        readinessProbe: {httpGet: {path: /health, port: 8100}}
        resources: {limits: {nvidia.com/gpu: %d}}
"""


def _run(
    env: dict[str, str], gpus: int = 1, command: str = ""
) -> tuple[ContainerResult, dict[str, list[str]]]:
    entries = "".join(f"        - {{name: {k}, value: {v!r}}}\n" for k, v in env.items())
    result = run_documents(
        load_text(_MANIFEST % (command, entries, gpus), "d.yaml"), Options(allow_hub=False)
    )
    (cr,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    got: dict[str, list[str]] = {}
    for d in result.diagnostics:
        got.setdefault(d.rule, []).append(f"{d.severity}: {d.message}")
    return cr, got


@pytest.mark.parametrize("command", ["", '        command: ["/entrypoint.sh"]\n'])
def test_the_model_and_settings_the_env_names_are_read_and_sized(command: str) -> None:
    """MODEL_NAME (a catalogued hub id), MAX_MODEL_LEN and GPU_MEMORY_UTILIZATION as vLLM's options of those
    names, on one GPU: planned at a 2,048-token context and 0.85 of the GPU (the engine's defaults are the model's
    32,768 and 0.9), against the fleet."""
    cr, got = _run(
        {
            "MODEL_NAME": "Qwen/Qwen2.5-1.5B-Instruct",
            "MAX_MODEL_LEN": "2048",
            "GPU_MEMORY_UTILIZATION": "0.85",
            "HF_HOME": "/app/models",
        },
        command=command,
    )
    assert cr.serving.model is not None and cr.serving.model.value == "Qwen/Qwen2.5-1.5B-Instruct"
    assert cr.serving.get("max_model_len") == 2048 and cr.serving.get("gpu_memory_utilization") == 0.85
    assert sizing_of(cr) in ("plan", "fleet")
    (msg,) = got["KV503"]
    assert msg.startswith("warning: engine command not in the manifest"), msg
    assert (
        "MODEL_NAME, MAX_MODEL_LEN, GPU_MEMORY_UTILIZATION" in msg and "1 GPU sets the GPU layout" in msg
    ), msg
    # the probes' port is the entrypoint's, not known: no KV408 against vLLM's default 8000
    assert "KV408" not in got, got


def test_a_layout_the_env_does_not_give_on_several_gpus_is_not_assumed() -> None:
    """4 GPUs and no TENSOR_PARALLEL_SIZE: the entrypoint may pass any layout, so the container is not sized (no
    KV403 "tensor-parallel-size 1 uses only 1"); with VLLM_TENSOR_PARALLEL_SIZE=4 (the engine's prefix) it is."""
    env = {"MODEL_ID": "Qwen/Qwen2.5-7B-Instruct", "MAX_MODEL_LEN": "8192"}
    cr, got = _run(env, gpus=4)
    assert sizing_of(cr) == "parallel size unknown" and "KV403" not in got, got
    assert any("the GPU layout may be among them" in m for m in got["KV503"]), got
    cr, got = _run({**env, "VLLM_TENSOR_PARALLEL_SIZE": "4"}, gpus=4)
    assert cr.serving.get("tensor_parallel_size") == 4 and sizing_of(cr) in ("plan", "fleet")


@pytest.mark.parametrize("value", ["llama3", "$(OTHER)", ""])
def test_an_env_that_names_no_model_leaves_the_command_unread(value: str) -> None:
    """A served name without an org (``llama3``), a reference kvlint did not resolve, an empty value: no model
    named, so nothing is read from the env (the KV503 "cannot be read" stands)."""
    cr, got = _run({"MODEL_NAME": value, "MAX_MODEL_LEN": "2048"})
    assert cr.serving.model is None and sizing_of(cr) == "command unreadable"
    assert any("engine command cannot be read" in m for m in got["KV503"]), got


def test_the_collected_manifests_of_that_shape_are_sized() -> None:
    """The two collected manifests (their env names the model, one GPU each) are sized; before, both were
    "command unreadable"."""
    for name in (
        "ScottNi0809__ml-serving-platform__k8s__deployment-vllm.yaml",
        "rakanbakir__vllm-gpu-cluster__kubernetes__vllm-deployment.yaml",
    ):
        text = (_COLLECTED / name).read_text()
        result = run_documents(load_text(text, name), Options(allow_hub=False))
        (cr,) = [c for c in result.containers if isinstance(c, ContainerResult)]
        assert sizing_of(cr) in ("plan", "fleet"), (name, sizing_of(cr))


_ENV_FROM = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: t, namespace: llm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: registry.example.com/team/vllm-server:v1
        envFrom: [{configMapRef: {name: vllm-config}}]
        resources: {limits: {nvidia.com/gpu: 1}}
"""

_CONFIGMAP = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: vllm-config, namespace: llm}
data: {MODEL_NAME: Qwen/Qwen2.5-1.5B-Instruct, MAX_MODEL_LEN: "4096"}
"""


def test_an_env_from_a_configmap_not_among_the_inputs_says_which_to_pass() -> None:
    """The model may be in the envFrom ConfigMap (fixtures/collected/sicknosn__...deployment-vllm.yaml's
    vllm-config): KV503 names it and the remedy is to pass it; passed, the engine is read from its keys and sized."""
    result = run_documents(load_text(_ENV_FROM, "d.yaml"), Options(allow_hub=False))
    (kv503,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert "engine command cannot be read" in kv503.message
    assert "envFrom: ConfigMap vllm-config is not among the inputs" in kv503.message, kv503.message
    assert kv503.fix is not None and kv503.fix.startswith("pass the ConfigMap with the workload"), kv503.fix
    result = run_documents(load_text(_ENV_FROM + _CONFIGMAP, "d.yaml"), Options(allow_hub=False))
    (cr,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    assert cr.serving.model is not None and cr.serving.model.value == "Qwen/Qwen2.5-1.5B-Instruct"
    assert cr.serving.get("max_model_len") == 4096 and sizing_of(cr) in ("plan", "fleet")
