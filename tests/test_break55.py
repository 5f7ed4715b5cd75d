"""Hostile and odd input against what session 55 merged (branch break55): each test here failed before its fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.workloads.init_download import init_download

ROOT = Path(__file__).resolve().parents[1]
A_CONFIG = ROOT / "fixtures" / "tgi" / "models" / "meta-llama--Llama-2-7b-hf" / "config.json"


def _pod(init_command: list[str], env: dict[str, str] | None = None) -> str:
    env_yaml = json.dumps([{"name": k, "value": v} for k, v in (env or {}).items()])
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  template:
    spec:
      initContainers:
      - name: fetch
        image: python:3.12
        command: {json.dumps(init_command)}
        env: {env_yaml}
        volumeMounts: [{{name: m, mountPath: /models}}]
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [vllm, serve, /models/base]
        volumeMounts: [{{name: m, mountPath: /models}}]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
      volumes: [{{name: m, emptyDir: {{}}}}]
"""


def _a_model_dir(tmp_path: Path) -> Path:
    """A directory on this machine holding a real config.json (a fixture's), which a path would resolve to."""
    d = tmp_path / "evil"
    d.mkdir()
    shutil.copy(A_CONFIG, d / "config.json")
    return d


@pytest.mark.parametrize(
    "how",
    ["snapshot", "snapshot-env"],
)
def test_a_hub_download_of_a_path_is_not_read_from_this_machine(tmp_path: Path, how: str) -> None:
    # snapshot_download takes a Hub repository id (ORG/NAME): a path such as
    # /tmp/x or ../.. is refused by huggingface_hub (validate_repo_id) and names no repository; kvlint read it as
    # the model's id and resolved it as a directory on the machine running kvlint
    evil = _a_model_dir(tmp_path)
    commands = {
        "snapshot": (
            ["python", "-c", f"from huggingface_hub import snapshot_download\n"
             f"snapshot_download(repo_id={str(evil)!r}, local_dir='/models/base')"],
            None,
        ),
        "snapshot-env": (
            ["python", "-c", "import os\nfrom huggingface_hub import snapshot_download\n"
             "snapshot_download(os.environ['R'], local_dir='/models/base')"],
            {"R": str(evil)},
        ),
    }  # fmt: skip
    command, env = commands[how]
    manifest = tmp_path / "sub" / "d.yaml"
    manifest.parent.mkdir()
    manifest.write_text(_pod(command, env))
    result = run_check([str(manifest)], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.model is None, cr.model.notes  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "url", ["https://huggingface.co/../..", "https://hf.co/./..", "https://huggingface.co/a--b/..c"]
)
def test_a_git_clone_of_no_hub_repository_names_no_model(url: str) -> None:
    # a URL whose path is no Hub repository id (ORG/NAME: letters, digits, '-', '_', '.', no '..' nor '--',
    # huggingface_hub validate_repo_id) names no model: ../.. was passed on as the model's id, then looked up
    # as a path relative to where kvlint runs
    pod = yaml.safe_load(_pod(["git", "clone", url, "/models/base"]))["spec"]["template"]["spec"]
    assert init_download(pod, "/models/base") is None


_ENVFROM_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: w}
spec:
  template:
    spec:
      containers:
      - name: c
        image: vllm/vllm-openai:v0.8.5
        command: [vllm, serve, $(MODEL)]
        envFrom: [{configMapRef: {name: cfg}}]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def _configmap(model: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg}}\ndata: {{MODEL: {model}}}\n"


@pytest.mark.parametrize("configmaps", [2, 0])
def test_a_model_variable_an_unread_envfrom_configmap_may_set_names_that_configmap(
    tmp_path: Path, configmaps: int
) -> None:
    # $(MODEL) with no env entry, imported by envFrom from a ConfigMap that two sibling applications define
    # differently (or that is not among the inputs): KV502 said "a $(VAR) with no env entry" and named neither
    # the ConfigMap nor why it was not read, while an env configMapKeyRef's did
    (tmp_path / "w.yaml").write_text(_ENVFROM_DEPLOYMENT)
    for i in range(configmaps):
        (tmp_path / f"app{i}").mkdir()
        (tmp_path / f"app{i}" / "cm.yaml").write_text(_configmap(f"Qwen/Qwen2.5-{i}B"))
    result = run_check([str(tmp_path)], Options(allow_hub=False))
    (kv502,) = [d for d in result.diagnostics if d.rule == "KV502"]
    assert "the model '$(MODEL)' may come from the env, which kvlint could not read" in kv502.message
    if configmaps:
        assert "envFrom: ConfigMap cfg is defined differently in 2 files" in kv502.message
        assert kv502.fix.startswith("lint the workload with the ConfigMap it is deployed with")
    else:
        assert "envFrom: ConfigMap cfg is not among the inputs" in kv502.message
    assert kv502.loc is not None and (kv502.loc.file, kv502.loc.line) == (str(tmp_path / "w.yaml"), 10)


def _uvx_pod(command: list[str]) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: r}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
      containers:
      - name: vllm
        image: python:3.11
        command: {json.dumps(command)}
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize(
    ("spec", "admits_newest"),
    [("<0.1", False), (">=0.9,<0.10,!=0.9.2", False), (">=0.9", True)],
)
@pytest.mark.parametrize("form", ["exec", "script"])
def test_a_uv_tool_runner_within_a_range_kvlint_places_no_release_in_is_not_called_unpinned(
    tmp_path: Path, spec: str, admits_newest: bool, form: str
) -> None:
    # uvx --from "vllm<0.1": uv installs only a release the range admits; KV208 said "unpinned: uv installs the
    # newest vLLM release", which a range that admits none of the releases kvlint models contradicts
    words = ["uvx", "--from", f"vllm{spec}", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]
    command = words if form == "exec" else ["sh", "-c", " ".join(f"'{w}'" for w in words)]
    path = tmp_path / "d.yaml"
    path.write_text(_uvx_pod(command))
    result = run_check([str(path)], Options(allow_hub=False))
    (kv208,) = [d for d in result.diagnostics if d.rule == "KV208"]
    assert "unpinned" not in kv208.message
    assert f"with uv's tool runner within the range {spec}" in kv208.message
    from kvlint.memory.versions import NEWEST_VLLM

    tail = f"may be newer than {NEWEST_VLLM}" if admits_newest else "none of the releases kvlint models"
    assert tail in kv208.message


@pytest.mark.parametrize(
    ("value", "read"),
    [
        (
            "\U0001f600 and \U00020000",
            "\U0001f600 and \U00020000",
        ),  # json.dumps writes each as a surrogate pair
        ("\ud800 lone high, lone low \udc00", "\ufffd lone high, lone low \ufffd"),  # Go's decoder: U+FFFD
        ("\\ud83d literal backslash", "\\ud83d literal backslash"),  # an escaped backslash, then text
    ],
    ids=["pairs", "lone", "escaped-backslash"],
)
def test_a_json_manifest_with_surrogate_escapes_is_read_as_kubectl_reads_it(
    tmp_path: Path, value: str, read: str
) -> None:
    # Python's json.dumps (ensure_ascii) writes a character past U+FFFF as a \ud83d\ude00 pair; kubectl's JSON
    # decoder reads it, but the YAML reader refused it ("found invalid Unicode character escape code"): a KV001
    # error for a valid file, and its Deployment was never linted
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "j", "annotations": {"note": value}},
        "spec": {"template": {"spec": {
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"},
            "containers": [{
                "name": "vllm",
                "image": "vllm/vllm-openai:v0.8.5",
                "command": ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "400000"],
                "resources": {"limits": {"nvidia.com/gpu": 1}},
            }],
        }}},
    }  # fmt: skip
    text = json.dumps(doc)
    path = tmp_path / "d.json"
    path.write_text(text + "\n", encoding="utf-8")
    result = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV001"]
    (kv201,) = [d for d in result.diagnostics if d.rule == "KV201"]
    # the column of the "400000" in the file, characters counted as kvlint counts them
    assert kv201.loc is not None and (kv201.loc.line, kv201.loc.column) == (1, text.index('"400000"') + 1)
    (cr,) = result.containers
    assert cr.workload.annotations["note"] == read


def test_an_mps_replica_count_that_leaves_no_mib_per_client_is_held_to_that_cap(tmp_path: Path) -> None:
    # nvidia.com/gpu.replicas=100000 under MPS: the device plugin's cap is floor(NVML MiB / replicas) = 0 MiB,
    # which the placement note says; KV106 read the 0-byte cap as no cap and said "up to 2 engines may land on one
    # GPU", time-slicing's reading, contradicting the note above it
    path = tmp_path / "d.yaml"
    path.write_text(
        """apiVersion: apps/v1
kind: Deployment
metadata: {name: m}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
        nvidia.com/gpu.sharing-strategy: mps
        nvidia.com/gpu.replicas: "100000"
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "4096"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    )
    result = run_check([str(path)], Options(allow_hub=False))
    (kv106,) = [d for d in result.diagnostics if d.rule == "KV106"]
    assert "/ 100000 = 0 MiB" in kv106.message
    assert "each engine may allocate at most 0.00 GiB" in kv106.message
    assert "engines may land on one GPU" not in kv106.message
    assert kv106.fix == "request a GPU that is not shared through MPS"
