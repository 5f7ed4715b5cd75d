"""A ConfigMap joins the workload it can be deployed with (kvlint/workloads/configmaps.py ``scoped``): in a
directory run holding several applications, each with a ConfigMap of the same name, a workload reads the one of
its own file, else the one of its own directory, and when two files equally near define it differently it reads
none and says which files do, instead of the last one the run happened to load (another application's).

The manifests are made up for the test: two applications in the layout a repository of several apps has, one
directory each, both naming their ConfigMap ``vllm-config`` (as ai-on-gke's metaflow example and wellflat's
k8s-dev do in fixtures/collected)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint.checkrun import run_paths
from kvlint.options import Options
from kvlint.pipeline import run_check


def _deployment(name: str, *, namespace: str | None = None) -> str:
    ns = f"\n  namespace: {namespace}" if namespace else ""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}{ns}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [vllm, serve, $(MODEL_ID)]
        env:
        - name: MODEL_ID
          valueFrom:
            configMapKeyRef: {{name: vllm-config, key: model_id}}
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def _configmap(model: str, *, namespace: str | None = None) -> str:
    ns = f"\n  namespace: {namespace}" if namespace else ""
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: vllm-config{ns}
data:
  model_id: {model}
"""


def _models(result: object) -> dict[str, str | None]:
    """The model each workload's container read, by workload name."""
    return {c.workload.name: getattr(c.serving.model, "value", None) for c in result.containers}  # type: ignore[attr-defined]


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_each_application_reads_the_configmap_of_its_own_directory(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "apps/chat/deployment.yaml": _deployment("chat"),
            "apps/chat/configmap.yaml": _configmap("Qwen/Qwen2.5-7B-Instruct"),
            "apps/code/deployment.yaml": _deployment("code"),
            "apps/code/configmap.yaml": _configmap("facebook/opt-125m"),
        },
    )
    result = run_check([str(tmp_path)], Options(allow_hub=False))
    assert _models(result) == {"chat": "Qwen/Qwen2.5-7B-Instruct", "code": "facebook/opt-125m"}


def test_the_configmap_of_the_workloads_own_file_wins(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "a.yaml": _deployment("a") + "---\n" + _configmap("Qwen/Qwen2.5-7B-Instruct"),
            "b.yaml": _configmap("facebook/opt-125m"),
        },
    )
    result = run_check([str(tmp_path)], Options(allow_hub=False))
    assert _models(result) == {"a": "Qwen/Qwen2.5-7B-Instruct"}


@pytest.mark.parametrize("jobs", [0, 1])
def test_two_equally_near_configmaps_are_neither_read_and_the_finding_names_both(
    tmp_path: Path, jobs: int
) -> None:
    """jobs 0: the whole-run pipeline; 1: the streaming run (its context pass gathers the ConfigMaps file by
    file)."""
    _write(
        tmp_path,
        {
            "deploy/deployment.yaml": _deployment("svc", namespace="serving"),
            "deploy/one.yaml": _configmap("Qwen/Qwen2.5-7B-Instruct"),
            "deploy/two.yaml": _configmap("facebook/opt-125m", namespace="serving"),
            # another namespace: never the one a pod of namespace serving reads
            "deploy/three.yaml": _configmap("google/gemma-2b-it", namespace="other"),
        },
    )
    options = Options(allow_hub=False)
    if jobs:
        result = run_paths([str(tmp_path)], options, no_config=True, jobs=jobs).result
    else:
        result = run_check([str(tmp_path)], options)
    (kv502,) = [d for d in result.diagnostics if d.rule == "KV502"]
    text = kv502.message
    assert "the model '$(MODEL_ID)' comes from the env, which kvlint could not read" in text
    assert "ConfigMap vllm-config is defined differently in 2 files" in text
    assert "one.yaml:6" in text and "two.yaml:7" in text and "three.yaml" not in text
    # the one line that settles it: lint the workload with its own ConfigMap (not "fix the ConfigMap's key")
    assert kv502.fix.startswith("lint the workload with the ConfigMap it is deployed with (kvlint check")


def test_a_config_file_from_one_of_two_equally_near_configmaps_is_not_read(tmp_path: Path) -> None:
    """vLLM's --config file mounted from a ConfigMap two files of the directory define differently (wellflat's
    k8s-dev in fixtures/collected beside other repositories' vllm-config): neither is read, and KV503 says so."""
    deployment = """apiVersion: apps/v1
kind: Deployment
metadata: {name: svc}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [vllm, serve, facebook/opt-125m, --config, /etc/vllm/config.yaml]
        volumeMounts: [{name: cfg, mountPath: /etc/vllm}]
        resources: {limits: {nvidia.com/gpu: 1}}
      volumes: [{name: cfg, configMap: {name: vllm-config}}]
"""

    def config(mml: int) -> str:
        return (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vllm-config}\ndata:\n"
            f"  config.yaml: |\n    max-model-len: {mml}\n"
        )

    _write(tmp_path, {"deployment.yaml": deployment, "a.yaml": config(1024), "b.yaml": config(2048)})
    result = run_check([str(tmp_path)], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.serving.get("max_model_len") is None
    (kv503,) = [d for d in result.diagnostics if d.rule == "KV503" and "--config" in d.message]
    assert "ConfigMap vllm-config, which is defined differently in 2 files" in kv503.message
    assert kv503.fix.startswith("lint the workload with the ConfigMap it is deployed with")
    # beside only one of them, that one is read
    (tmp_path / "b.yaml").unlink()
    (cr,) = run_check([str(tmp_path)], Options(allow_hub=False)).containers
    assert cr.serving.get("max_model_len") == 1024


def test_one_configmap_of_the_name_is_read_wherever_it_is(tmp_path: Path) -> None:
    """The scoping only chooses among several: a ConfigMap passed from elsewhere is still the one read."""
    _write(
        tmp_path,
        {
            "apps/chat/deployment.yaml": _deployment("chat"),
            "shared/configmap.yaml": _configmap("Qwen/Qwen2.5-7B-Instruct"),
        },
    )
    result = run_check([str(tmp_path)], Options(allow_hub=False))
    assert _models(result) == {"chat": "Qwen/Qwen2.5-7B-Instruct"}


def test_a_configmap_of_another_namespace_is_not_read_and_the_finding_says_where_it_is(
    tmp_path: Path,
) -> None:
    """The kubelet reads a pod's ConfigMaps in the pod's own namespace (kubernetes pkg/kubelet/kubelet_pods.go,
    makeEnvironmentVariables): the only ConfigMap of the name, in another namespace, gives the pod nothing; a
    pod without a namespace of its own may be applied in the ConfigMap's, and reads it."""
    _write(
        tmp_path,
        {
            "app/deployment.yaml": _deployment("svc", namespace="serving"),
            "app/configmap.yaml": _configmap("Qwen/Qwen2.5-7B-Instruct", namespace="models"),
        },
    )
    result = run_check([str(tmp_path)], Options(allow_hub=False))
    assert _models(result) == {"svc": "$(MODEL_ID)"}
    (kv502,) = [d for d in result.diagnostics if d.rule == "KV502"]
    assert "ConfigMap vllm-config (" in kv502.message
    assert "is in namespace models, not the pod's namespace serving" in kv502.message
    # kvlint sees the inputs, not the cluster: the pod's namespace may hold its own, and an optional reference
    # starts the pod without one, so the finding says what it knows
    assert "none of namespace serving is among the inputs" in kv502.message
    assert "so the pod does not start" not in kv502.message
    assert kv502.fix.startswith("put the ConfigMap in the pod's namespace")
    (tmp_path / "app" / "deployment.yaml").write_text(_deployment("svc"))
    assert _models(run_check([str(tmp_path)], Options(allow_hub=False))) == {
        "svc": "Qwen/Qwen2.5-7B-Instruct"
    }


KUSTOMIZE = shutil.which("kubectl") is not None or shutil.which("kustomize") is not None


@pytest.mark.skipif(not KUSTOMIZE, reason="neither kustomize nor kubectl is installed")
@pytest.mark.parametrize("jobs", [0, 1])
def test_each_kustomize_overlay_reads_the_configmap_it_builds(tmp_path: Path, jobs: int) -> None:
    """A base with its ConfigMap and two overlays that each change the model, one with a patch and one with a
    ``configMapGenerator`` of ``behavior: replace`` (no ``namespace:`` nor ``namePrefix:``, as overlays of one
    application for different clusters have): each
    overlay's render holds its own Deployment and ConfigMap (``kubectl kustomize overlays/dev`` prints both), so
    its workload reads the model of its own render, not the one of whichever overlay the walk rendered last.
    Both renders' ConfigMaps map back to the base's configmap.yaml, so the file alone cannot tell them apart."""
    _write(
        tmp_path,
        {
            "base/deployment.yaml": _deployment("llm"),
            "base/configmap.yaml": _configmap("facebook/opt-125m"),
            "base/kustomization.yaml": "resources:\n- deployment.yaml\n- configmap.yaml\n",
            "overlays/prod/kustomization.yaml": "resources:\n- ../../base\npatches:\n- path: cm.yaml\n",
            "overlays/prod/cm.yaml": _configmap("Qwen/Qwen2.5-7B-Instruct"),
            "overlays/dev/kustomization.yaml": (
                "resources:\n- ../../base\nconfigMapGenerator:\n- name: vllm-config\n"
                "  behavior: replace\n  literals:\n  - model_id=google/gemma-2b-it\n"
            ),
        },
    )
    options = Options(allow_hub=False)
    if jobs:
        result = run_paths([str(tmp_path)], options, no_config=True, jobs=jobs).result
    else:
        result = run_check([str(tmp_path)], options)
    # (both workloads are Deployment/llm of the base's deployment.yaml: the renders differ in their model only)
    got = sorted(str(getattr(c.serving.model, "value", None)) for c in result.containers)  # type: ignore[attr-defined]
    assert got == ["Qwen/Qwen2.5-7B-Instruct", "google/gemma-2b-it"]


def test_a_configmap_of_an_enclosing_directory_is_nearer_than_one_of_a_sibling_application(
    tmp_path: Path,
) -> None:
    """A repository's shared ConfigMap at its top and one application's own beside that application: another
    application, with none of its own, is deployed with the shared one (applying its directory's parents applies
    it), never with the sibling's, which the longest shared directory path alone chose (``k8s/apps`` is shared
    with the sibling's directory, ``k8s`` only with the top's)."""
    _write(
        tmp_path,
        {
            "k8s/configmap.yaml": _configmap("Qwen/Qwen2.5-7B-Instruct"),
            "k8s/apps/chat/deployment.yaml": _deployment("chat"),
            "k8s/apps/code/deployment.yaml": _deployment("code"),
            "k8s/apps/code/configmap.yaml": _configmap("facebook/opt-125m"),
        },
    )
    result = run_check([str(tmp_path)], Options(allow_hub=False))
    assert _models(result) == {"chat": "Qwen/Qwen2.5-7B-Instruct", "code": "facebook/opt-125m"}
