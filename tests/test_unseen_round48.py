"""Real public manifests kvlint had not seen (new-user pass 48, fixtures/collected: KAITO Workspaces, llmaz
Playgrounds, vLLM production-stack values, an SGLang LeaderWorkerSet and a Dynamo SGLang graph). What a first run on
them showed to be wrong, each checked on the file itself and on a general case."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
KAITO_ARC = "kaito-project__kaito__examples__inference__arc-examples__kaito_workspace_phi_3_medium_4k.yaml"


def _kv501(paths: list[str]) -> list[str]:
    diags = run_check(paths, Options(allow_hub=False)).diagnostics
    return [d.message for d in diags if d.rule == "KV501"]


def test_kv501_says_a_placeholder_instance_type_is_a_blank_to_fill_in() -> None:
    """KAITO's Azure Arc example writes ``instanceType: <your-vm-sku>``: KV501 said
    "node.kubernetes.io/instance-type=<your-vm-sku> is not a GPU instance type in the catalogue", as if kvlint had
    looked the VM size up and not found it; the value is a blank of the template, still to be written."""
    (msg,) = _kv501([str(COLLECTED / KAITO_ARC)])
    assert "<your-vm-sku> is a placeholder left to fill in" in msg, msg
    assert "instance type of your GPU nodes" in msg, msg
    assert "not a GPU instance type in the catalogue" not in msg, msg


def test_kv501_says_an_unexpanded_gpu_label_is_a_placeholder(tmp_path: Path) -> None:
    """The same for a GPU product label left as an envsubst reference (Kubernetes expands nothing in a nodeSelector),
    while a real label value kvlint does not read keeps its own wording."""
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: m}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: ${GPU_PRODUCT}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model, Qwen/Qwen3-0.6B, --max-model-len, "4096"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""
    f = tmp_path / "m.yaml"
    f.write_text(manifest)
    (msg,) = _kv501([str(f)])
    assert "nvidia.com/gpu.product=${GPU_PRODUCT} is a placeholder left to fill in" in msg, msg
    assert "the value your GPU nodes carry" in msg, msg
    g = tmp_path / "n.yaml"
    g.write_text(
        manifest.replace("nvidia.com/gpu.product: ${GPU_PRODUCT}", "node.kubernetes.io/instance-type: x9.big")
    )
    (msg,) = _kv501([str(g)])
    assert "node.kubernetes.io/instance-type=x9.big is not a GPU instance type in the catalogue" in msg, msg


def test_kv501_names_the_gpu_label_that_named_a_gpu_kvlint_does_not_know(tmp_path: Path) -> None:
    """A pod whose ``nvidia.com/gpu.product`` names a GPU not in the catalogue: KV501 told the user to "add a
    nodeSelector such as nvidia.com/gpu.product", the very label the pod has (and, before gpus48's change of the
    same round, said only "kvlint cannot tell which GPU this pod lands on", the placement's note dropped)."""
    f = tmp_path / "m.yaml"
    f.write_text(
        """apiVersion: apps/v1
kind: Deployment
metadata: {name: m}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-Foo-9000}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model, Qwen/Qwen3-0.6B, --max-model-len, "4096"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""
    )
    diags = run_check([str(f)], Options(allow_hub=False)).diagnostics
    (kv501,) = [d for d in diags if d.rule == "KV501"]
    assert "GPU product NVIDIA-Foo-9000 is not in the catalogue" in kv501.message, kv501.message
    assert "add a nodeSelector" not in (kv501.fix or ""), kv501.fix
    assert "kvlint.io/accelerator" in (kv501.fix or ""), kv501.fix


LLMAZ = "InftyAI__llmaz__docs__examples__"


def _containers(paths: list[str]):  # type: ignore[no-untyped-def]
    res = run_check(paths, Options(allow_hub=False))
    return res.containers, res.diagnostics


def test_llmaz_playground_is_read_as_the_pod_llmaz_builds() -> None:
    """llmaz's TGI Playground (OpenModel Qwen/Qwen2-0.5B-Instruct with a flavor of one nvidia.com/gpu, backendName
    tgi) was "not read" (KV503, 0 serving containers): llmaz builds its model-runner from the chart's BackendRuntime
    ``tgi`` (image ghcr.io/huggingface/text-generation-inference:2.3.1, args ``--model-id {{ .ModelPath }} --port
    8080``), the model loader's copy at /workspace/models/models--Qwen--Qwen2-0.5B-Instruct, and the flavor's limits."""
    (cr,), diags = _containers([str(COLLECTED / (LLMAZ + "tgi__playground.yaml"))])
    assert cr.serving.engine == "tgi", cr.serving.engine
    assert cr.container["image"] == "ghcr.io/huggingface/text-generation-inference:2.3.1"
    assert list(cr.container["args"]) == [
        "--model-id",
        "/workspace/models/models--Qwen--Qwen2-0.5B-Instruct",
        "--port",
        "8080",
    ]
    assert cr.container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert cr.model is not None and cr.model_looked_up == "Qwen/Qwen2-0.5B-Instruct", cr.model_looked_up
    assert cr.plan is not None or cr.fleet, cr.plan_error
    rules = [d.rule for d in diags]
    assert "KV503" not in rules and "KV504" in rules, rules


def test_llmaz_playground_own_settings_win() -> None:
    """The Run:ai streamer Playground: ``llmaz.io/skip-model-loader: "true"`` makes {{ .ModelPath }} the OpenModel's
    URI (vLLM streams it from S3), the Playground's args follow the BackendRuntime's and its envs are the
    container's; Envoy AI Gateway's Playground sets ``backendRuntimeConfig.version`` v0.8.5 over the chart's
    v0.7.3."""
    (cr,), _ = _containers([str(COLLECTED / (LLMAZ + "runai-streamer__playground-streaming-from-s3.yaml"))])
    args = list(cr.container["args"])
    assert args[:2] == ["--model", "s3://<YOUR_S3_BUCKET>/DeepSeek-R1-Distill-Qwen-1.5B"], args
    assert args[-2:] == ["--load-format", "runai_streamer"], args
    assert [e["name"] for e in cr.container["env"]] == ["RUNAI_STREAMER_S3_REQUEST_TIMEOUT_MS"]
    assert cr.container["resources"]["limits"]["memory"] == "16Gi"
    (cr,), _ = _containers([str(COLLECTED / (LLMAZ + "envoy-ai-gateway__basic-vllm.yaml"))])
    assert cr.container["image"] == "vllm/vllm-openai:v0.8.5"
    assert cr.container["command"] == ["python3", "-m", "vllm.entrypoints.openai.api_server"]


def test_llmaz_playground_and_its_openmodel_in_two_files(tmp_path: Path) -> None:
    """The OpenModel and the Playground applied from two files of one directory: joined as in one file; a
    Playground whose OpenModel is not among the inputs, or whose backend llmaz's chart does not restate as an
    engine kvlint models (llama.cpp), keeps its KV503 note."""
    text = (COLLECTED / (LLMAZ + "sglang__playground.yaml")).read_text()
    model, playground = text.split("\n---\n", 1)
    (tmp_path / "model.yaml").write_text(model)
    (tmp_path / "playground.yaml").write_text(playground)
    crs, _ = _containers([str(tmp_path)])
    assert [cr.serving.engine for cr in crs] == ["sglang"], crs
    crs, diags = _containers([str(tmp_path / "playground.yaml")])
    assert crs == [] and "KV503" in [d.rule for d in diags]
    crs, diags = _containers([str(COLLECTED / (LLMAZ + "hpa__playground.yaml"))])
    assert crs == [] and "KV503" in [d.rule for d in diags]
