"""substratusai/vllm images v0.4.2-v0.6.2 build vLLM's command from the env (kvlint.engines.substratus), as
substratusai/helm's vllm chart (fixtures/helm/substratus-vllm) deploys them: kvlint reads that command."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

from kvlint.engines.command import parse_container
from kvlint.engines.images import engine_release, engine_version
from kvlint.engines.substratus import entrypoint_argv, runs_env_entrypoint
from kvlint.pipeline import Options, run_documents
from kvlint.render import load_inputs
from kvlint.source import LDict

CHART_TGZ = Path(__file__).resolve().parents[1] / "fixtures" / "helm" / "substratus-vllm" / "vllm-0.5.5.tgz"
OFFLINE = Options(allow_hub=False)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("substratusai/vllm:v0.5.4", True),
        ("docker.io/substratusai/vllm:v0.4.2", True),
        ("substratusai/vllm:v0.6.2-docker1", True),
        ("substratusai/vllm:v0.5.3.post1", True),
        ("substratusai/vllm:v0.4.1", False),  # an older entrypoint.sh, not restated
        ("substratusai/vllm:v0.6.3", False),  # vLLM's own entrypoint from here
        ("substratusai/vllm:v0.6.3.post1-cpu", False),
        ("substratusai/vllm:v0.6.2-cpu", False),  # built from vLLM's Dockerfile.cpu: no entrypoint.sh
        ("substratusai/vllm:v0.6.1-tpu", False),
        ("substratusai/vllm", False),
        ("substratusai/vllm:latest", False),
        ("vllm/vllm-openai:v0.5.4", False),
    ],
)
def test_which_images_run_the_env_entrypoint(image: str, expected: bool) -> None:
    assert runs_env_entrypoint(image) is expected


@pytest.mark.parametrize(
    ("image", "installs"),
    [
        ("substratusai/vllm:v0.6.1", "0.5.5"),  # the Dockerfile still says ARG VERSION=v0.5.5
        ("substratusai/vllm:v0.6.2", "0.5.5"),
        ("docker.io/substratusai/vllm:v0.5.0-post1", "0.5.0.post1"),
        ("substratusai/vllm:v0.6.2-docker1", "0.6.2"),
        ("substratusai/vllm:v0.6.2-cpu", "0.6.2"),  # built from vLLM at v0.6.2
        ("substratusai/vllm:v0.5.4", "0.5.4"),
    ],
)
def test_each_tag_is_read_as_the_vllm_its_dockerfile_installs(image: str, installs: str) -> None:
    assert engine_version(image) == installs
    # --engine-version does not override a release image's tag, read through the Dockerfile
    assert engine_release(image, "vllm", "0.9.2") == installs
    container = _container({"MODEL": "facebook/opt-125m"}, image=image)
    assert parse_container(container).version == installs


def _container(env: dict[str, str], gpus: int | None = 2, **extra: object) -> LDict:
    c: dict[str, object] = {
        "name": "vllm",
        "image": "substratusai/vllm:v0.5.4",
        "env": [{"name": k, "value": v} for k, v in env.items()],
    }
    if gpus is not None:
        c["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    c.update(extra)
    return LDict(c)


def test_the_command_is_written_from_the_env_and_the_gpus() -> None:
    env = {
        "MODEL": "mistralai/Mistral-7B-Instruct-v0.1",
        "MAX_MODEL_LEN": "4096",
        "GPU_MEMORY_UTILIZATION": "0.8",
        "QUANTIZATION": "awq",
        "DTYPE": "half",
        "EXTRA_ARGS": "--enable-prefix-caching  --max-num-seqs=64",
    }
    # args are ignored: entrypoint.sh never reads "$@"
    cfg = parse_container(_container(env, args=["--max-model-len", "99"]))
    assert cfg is not None and cfg.engine == "vllm"
    assert cfg.model is not None and cfg.model.value == env["MODEL"]
    flags = {k: v.value for k, v in cfg.flags.items()}
    assert flags["tensor_parallel_size"] == 2
    assert flags["max_model_len"] == int(env["MAX_MODEL_LEN"])
    assert flags["gpu_memory_utilization"] == float(env["GPU_MEMORY_UTILIZATION"])
    assert flags["quantization"] == env["QUANTIZATION"] and flags["dtype"] == env["DTYPE"]
    assert flags["enable_prefix_caching"] is True and flags["max_num_seqs"] == 64
    assert not [f for f in cfg.findings if f.rule in ("KV205", "KV206", "KV207", "KV503")]


def test_quantization_without_dtype_and_no_gpu() -> None:
    """The script passes ``-q`` only with ``--dtype``; with no NVIDIA GPU it writes no tensor-parallel size."""
    env = {"MODEL": "m", "QUANTIZATION": "awq"}
    words = [w for w, _ in entrypoint_argv(_container(env, gpus=None), env, {})]
    assert "-q" not in words and "--tensor-parallel-size" not in words
    assert words[words.index("--model") + 1] == "m" and words[words.index("--port") + 1] == "8080"


def test_a_later_image_still_reads_its_args() -> None:
    """From v0.6.3 the image runs vLLM's own entrypoint: its args are the command, its env is not."""
    c = _container(
        {"MODEL": "ignored/model"}, image="substratusai/vllm:v0.6.3", args=["--model", "facebook/opt-125m"]
    )
    cfg = parse_container(c)
    assert cfg is not None and cfg.model is not None and cfg.model.value == "facebook/opt-125m"


@pytest.mark.skipif(shutil.which("helm") is None, reason="needs helm on PATH (the dev extras install it)")
@pytest.mark.parametrize(
    "values",
    [
        "llama-3.1-8b-instruct-fp8-values.yaml",
        "mistral-7b-awq-values.yaml",
        "mixtral-8x7b-8gpu.yaml",
        "mistral-7b-instruct-gcp-l4.yaml",
    ],
)
def test_the_chart_examples_are_read_and_sized(tmp_path: Path, values: str) -> None:
    """Each example values file of substratusai/helm's vllm chart, rendered by helm: the engine is read with the
    values' model, maximum length and GPUs, planned, and the model's position is the template line that writes
    the MODEL env var (before, every example was KV503 "names no model" and none was sized)."""
    with tarfile.open(CHART_TGZ) as tgz:
        tgz.extractall(tmp_path, filter="data")
    chart = tmp_path / "vllm"
    vals_path = chart / "examples" / values
    vals = yaml.safe_load(vals_path.read_text())
    loaded = load_inputs([str(chart)], helm_values=[str(vals_path)])
    result = run_documents(loaded, OFFLINE)
    assert not [d for d in result.diagnostics if d.rule in ("KV001", "KV503")]
    (c,) = result.containers
    assert c.serving.model is not None and c.serving.model.value == vals["model"]
    flags = {k: v.value for k, v in c.serving.flags.items()}
    assert flags["tensor_parallel_size"] == int(vals["resources"]["limits"]["nvidia.com/gpu"])
    if "maxModelLen" in vals:
        assert flags["max_model_len"] == int(vals["maxModelLen"])
    assert c.plan is not None or c.fleet
    template = (chart / "templates" / "deployment.yaml").read_text().splitlines()
    model_line = next(i for i, t in enumerate(template, 1) if "{{ .Values.model | quote }}" in t)
    loc = c.serving.model.loc
    assert (
        loc is not None
        and loc.file == str(chart / "templates" / "deployment.yaml")
        and loc.line == model_line
    )
