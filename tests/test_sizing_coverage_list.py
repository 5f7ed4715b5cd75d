"""bench/sizing_coverage.py --list: the findings listed under a container not sized are those of its own object.

A real ServingRuntime of the collected set (rh-aiservices-bu/llm-on-openshift's vLLM runtime, source in
fixtures/collected/INDEX.csv) and, in the same file, a Deployment of the same name ``vllm`` serving a made-up
model no catalogue holds: matched on the name alone, each listed the other's findings (the Deployment "not sized:
model unknown" with the runtime's "this ServingRuntime is a template" note).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import sizing_coverage  # noqa: E402

RUNTIME = (
    ROOT
    / "fixtures/collected/rh-aiservices-bu__llm-on-openshift__serving-runtimes__vllm_runtime__vllm-runtime.yaml"
)
ABSENT = "example-org/not-catalogued-8B"
DEPLOYMENT = f"""---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: kserve-container
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "{ABSENT}"]
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def test_each_unsized_container_lists_only_its_own_objects_findings(tmp_path: Path) -> None:
    (tmp_path / "both.yaml").write_text(RUNTIME.read_text() + DEPLOYMENT)
    row = sizing_coverage.sizing(tmp_path)
    by_object = {u["object"]: u for u in row["unsized"]}
    assert set(by_object) == {"ServingRuntime/vllm", "Deployment/vllm"}, by_object
    runtime, deployment = by_object["ServingRuntime/vllm"], by_object["Deployment/vllm"]
    assert (runtime["reason"], deployment["reason"]) == ("runtime template", "model unknown")
    assert any("this ServingRuntime is a template" in why for why in runtime["why"]), runtime
    assert any(f"no config.json for model '{ABSENT}'" in why for why in deployment["why"]), deployment
    assert not any("template" in why for why in deployment["why"]), deployment["why"]
    assert not any(ABSENT in why for why in runtime["why"]), runtime["why"]
    for u in (runtime, deployment):
        assert len(u["why"]) == len(set(u["why"]))


RERANKER = (
    ROOT / "fixtures/collected/sgl-project__ome__config__runtimes__srt__BAAI__bge-reranker-v2-m3-rt.yaml"
)


def test_list_names_the_model_looked_up_not_the_commands_placeholder(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """OME's reranker runtime (fixtures/collected) runs ``--model-path $(MODEL_PATH)`` and names its model in
    ``--served-model-name``: kvlint looked up BAAI/bge-reranker-v2-m3 ("model unknown"), and the list printed
    ``model=$(MODEL_PATH)``. The KServe runtime's ``/mnt/models/`` is the service's model: said so."""
    (tmp_path / "reranker.yaml").write_text(RERANKER.read_text())
    (tmp_path / "runtime.yaml").write_text(RUNTIME.read_text())
    assert sizing_coverage.main([str(tmp_path), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (reranker,) = [line for line in lines if "ClusterServingRuntime/srt-bge-reranker-v2-m3" in line]
    assert reranker.strip().startswith("model unknown:"), reranker
    assert reranker.endswith("model=BAAI/bge-reranker-v2-m3 (command: $(MODEL_PATH))"), reranker
    (runtime,) = [line for line in lines if "ServingRuntime/vllm " in line]
    assert runtime.endswith("model=the service's (command: /mnt/models/)"), runtime


def test_objects_not_read_are_counted_and_listed(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """A serving chart's values file (substratusai/helm's vllm chart keeps its configurations as such: a model and
    a GPU limit, no apiVersion/kind) is a serving object kvlint saw but did not read: not among the serving
    containers, so the list of containers not sized left it out, and the summary line with it. It is counted and
    listed with its reason and place, as ``--require-sizing`` names it."""
    values = tmp_path / "llama-3-70b-8gpu.yaml"
    values.write_text(
        "model: meta-llama/Meta-Llama-3-70B-Instruct\nreplicaCount: 1\nresources:\n  limits:\n"
        "    nvidia.com/gpu: 8\n"
    )
    (tmp_path / "both.yaml").write_text(RUNTIME.read_text())
    row = sizing_coverage.sizing(tmp_path)
    assert row["summary"]["not_read"] == 1
    assert row["not_read"] == [{"where": f"{values}:1", "reason": "Helm values file not rendered"}]
    assert sizing_coverage.main([str(tmp_path), "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        "  not read (serving objects seen but not read, not counted above): 1: Helm values file not rendered 1"
        in out
    )
    assert f"    not read, Helm values file not rendered: {values}:1" in out
