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
    """A pod whose ``nvidia.com/gpu.product`` names a GPU not in the catalogue: KV501 said only "kvlint cannot tell
    which GPU this pod lands on" and told the user to "add a nodeSelector such as nvidia.com/gpu.product", the very
    label the pod has. The placement's own note ("GPU product ... is not in the catalogue") was dropped."""
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
    assert "nodeSelector nvidia.com/gpu.product=NVIDIA-Foo-9000" in kv501.message, kv501.message
    assert "GPU product NVIDIA-Foo-9000 is not in the catalogue" in kv501.message, kv501.message
    assert "add a nodeSelector" not in (kv501.fix or ""), kv501.fix
    assert "kvlint.io/accelerator" in (kv501.fix or ""), kv501.fix
