"""A container whose shell script installs packages and then only waits (``pip install vllm huggingface_hub &&
sleep infinity``: a tools sidecar one execs into) serves nothing: kvlint took it for a serving container whose
command it could not read (KV503, "the shell script starts no engine directly") because the script names vllm."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

_POD = """apiVersion: v1
kind: Pod
metadata:
  name: llm
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
    resources:
      limits: {nvidia.com/gpu: 1}
  - name: tools
    image: IMAGE
    command: ["/bin/sh", "-c"]
    args: [SCRIPT]
"""


def _run(tmp_path: Path, image: str, script: str):
    f = tmp_path / "pod.yaml"
    f.write_text(_POD.replace("IMAGE", image).replace("SCRIPT", script))
    return run_check([str(f)], Options(allow_hub=False, accelerator="h100"))


@pytest.mark.parametrize(
    ("image", "script"),
    [
        ("python:3.11-slim", '"pip install --no-cache-dir vllm==0.11.0 huggingface_hub && sleep infinity"'),
        (
            "python:3.11-slim",
            '"apt-get update; apt-get install -y curl; pip3 install -U vllm; tail -f /dev/null"',
        ),
        ("vllm/vllm-openai:v0.11.0", '"python3 -m pip install sglang && echo ready && sleep infinity"'),
    ],
)
def test_install_then_wait_is_not_a_serving_container(tmp_path: Path, image: str, script: str) -> None:
    res = _run(tmp_path, image, script)
    names = [c.serving.container["name"] for c in res.containers if c.serving is not None]
    assert names == ["vllm"]
    assert not [d for d in res.diagnostics if d.rule == "KV503"], [d.message for d in res.diagnostics]


@pytest.mark.parametrize(
    "script",
    [
        '"pip install vllm==0.11.0"',  # no wait: the container exits after installing
        '"pip install vllm && ./start.sh && sleep infinity"',  # runs something kvlint cannot see into
    ],
)
def test_scripts_that_run_something_still_reported(tmp_path: Path, script: str) -> None:
    res = _run(tmp_path, "python:3.11-slim", script)
    assert any(d.rule == "KV503" for d in res.diagnostics)


@pytest.mark.parametrize(
    ("image", "script"),
    [
        # the engine run by the package manager (conda run / micromamba run), then a wait: it serves
        (
            "vllm/vllm-openai:v0.11.0",
            '"conda run -n vllm vllm serve Qwen/Qwen2.5-7B-Instruct & sleep infinity"',
        ),
        (
            "lmsysorg/sglang:v0.5.3",
            '"micromamba run -n base python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct & '
            'sleep infinity"',
        ),
        (
            "vllm/vllm-openai:v0.11.0",
            '"mamba run -n base vllm serve Qwen/Qwen2.5-7B-Instruct; tail -f /dev/null"',
        ),
    ],
)
def test_engine_run_by_conda_is_not_a_tools_sidecar(tmp_path: Path, image: str, script: str) -> None:
    """``conda run`` runs a program: a script that starts the engine with it and then waits is still a serving
    container kvlint reports on, not a sidecar that installs packages, which kvlint passed in silence ("0 serving
    containers" for the container). Since engines48 the engine behind ``conda run -n ENV`` is read (it was KV503,
    "cannot read the engine")."""
    res = _run(tmp_path, image, script)
    names = [c.serving.container["name"] for c in res.containers if c.serving is not None]
    assert names == ["vllm", "tools"]
    assert not [d for d in res.diagnostics if d.rule == "KV503"], [d.message for d in res.diagnostics]


@pytest.mark.parametrize(
    ("image", "script"),
    [
        (
            "vllm/vllm-openai:v0.11.0",
            '"pip install flashinfer-python && vllm serve Qwen/Qwen2.5-7B-Instruct"',
        ),
        (
            "lmsysorg/sglang:v0.5.3",
            '"pip install -U sglang && exec python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct"',
        ),
        ("vllm/vllm-openai:v0.11.0", '"vllm serve Qwen/Qwen2.5-7B-Instruct & sleep infinity"'),
        (
            "python:3.11-slim",
            '"conda install -y vllm && vllm serve Qwen/Qwen2.5-7B-Instruct & sleep infinity"',
        ),
    ],
)
def test_install_then_serve_is_a_serving_container(tmp_path: Path, image: str, script: str) -> None:
    res = _run(tmp_path, image, script)
    names = sorted(c.serving.container["name"] for c in res.containers if c.serving is not None)
    assert names == ["tools", "vllm"], [d.message for d in res.diagnostics]
