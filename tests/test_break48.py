"""Adversarial pass on what session 47 landed and on older surfaces (branch break48): each test fails before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult

_NOT_NUMBERS = ["NaN", "Infinity", "-Infinity", '"abc"', "[1]", "{}", "1e308"]


def _vllm_pod(args: list[str], image: str = "vllm/vllm-openai:v0.22.0", engine: str = "vllm") -> str:
    spec = (
        f"    command: {json.dumps(['python3', '-m', 'sglang.launch_server', *args])}\n"
        if engine == "sglang"
        else f"    args: {json.dumps(args)}\n"
    )
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
        f"  containers:\n  - name: c\n    image: {image}\n{spec}"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


def _sized_without_internal_error(text: str, options: Options) -> None:
    result = run_documents(load_text(text, "p.yaml"), options)
    assert not [d for d in result.diagnostics if "could not finish" in d.message], [
        d.message for d in result.diagnostics
    ]
    assert [c for c in result.containers if isinstance(c, ContainerResult) and c.plan is not None]


@pytest.mark.parametrize("value", _NOT_NUMBERS)
@pytest.mark.parametrize(
    "overrides",
    [
        '{"rope_scaling": {"rope_type": "yarn", "factor": %s, "original_max_position_embeddings": 4096}}',
        '{"rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": %s}}',
        '{"rope_scaling": {"rope_type": "dynamic", "factor": %s}}',
        '{"model_max_length": %s}',
    ],
)
@pytest.mark.parametrize("max_len", [["--max-model-len", "4096"], []])
def test_hf_overrides_that_are_not_finite_numbers_leave_the_container_sized(
    overrides: str, value: str, max_len: list[str]
) -> None:
    # --hf-overrides '{"rope_scaling": {"rope_type": "yarn", "factor": NaN, ...}}' (json.loads reads NaN and
    # Infinity): the max_model_len derivation ran int(NaN) or float("abc"), the workload was "kvlint could not finish
    # checking" and none of its other findings were reported
    args = ["--model", "Qwen/Qwen2.5-7B-Instruct", *max_len, "--hf-overrides", overrides % value]
    for image in ("vllm/vllm-openai:v0.22.0", "vllm/vllm-openai:v0.9.2"):
        _sized_without_internal_error(_vllm_pod(args, image), Options(allow_hub=False))


def test_a_rope_factor_not_applied_is_said_in_the_plan() -> None:
    args = [
        "--model",
        "Qwen/Qwen2.5-7B-Instruct",
        "--hf-overrides",
        '{"rope_scaling": {"rope_type": "dynamic", "factor": NaN}}',
    ]
    result = run_documents(load_text(_vllm_pod(args), "p.yaml"), Options(allow_hub=False))
    plans = [c.plan for c in result.containers if isinstance(c, ContainerResult) and c.plan is not None]
    assert len(plans) == 1
    assert any("factor .nan is not a finite number: not applied" in a for a in plans[0].assumptions), plans[
        0
    ].assumptions
    assert plans[0].max_model_len == 32768


@pytest.mark.parametrize(
    ("source", "path"),
    [
        ("allenai--Olmo-3.1-32B-Instruct", ("rope_scaling", "factor")),
        ("allenai--Olmo-3.1-32B-Instruct", ("rope_scaling", "original_max_position_embeddings")),
        ("microsoft--Phi-3.5-mini-instruct", ("rope_scaling", "factor")),
        ("Qwen--Qwen2.5-VL-7B-Instruct", ("model_type",)),
    ],
)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), "abc", [1], True])
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_local_config_value_of_the_wrong_type_leaves_the_container_checked(
    tmp_path: Path, source: str, path: tuple[str, ...], value: object, engine: str
) -> None:
    # a --model-dir config.json (Python's json writes NaN and Infinity, and reads them back) with a rope factor, a
    # YaRN original length or a model_type that is not what it should be: int(n * float(factor)) (SGLang's context
    # length), int(NaN) (vLLM's derived length) or model_type.startswith (the multimodal profile) raised
    cfg = json.loads((Path(__file__).parents[1] / "kvlint/data/models" / source / "config.json").read_text())
    cur = cfg
    for key in path[:-1]:
        cur = cur.setdefault(key, {})
    cur[path[-1]] = value
    (tmp_path / "acme--odd").mkdir()
    (tmp_path / "acme--odd" / "config.json").write_text(json.dumps(cfg))
    if engine == "sglang":
        text = _vllm_pod(["--model-path", "acme/odd"], "lmsysorg/sglang:v0.5.3", engine="sglang")
    else:
        text = _vllm_pod(["--model", "acme/odd", "--max-model-len", "4096"])
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False, model_dirs=(str(tmp_path),)))
    assert not [d for d in result.diagnostics if "could not finish" in d.message], [
        d.message for d in result.diagnostics
    ]


@pytest.mark.parametrize("total", ["1" + "0" * 4000, str(2**64), "true", "1e400"])
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_checkpoint_index_total_past_int64_is_not_read(tmp_path: Path, total: str, engine: str) -> None:
    # model.safetensors.index.json "metadata": {"total_size": 10**4000}: every plan of the model was "kvlint could
    # not size acme/odd: OverflowError: integer division result too large for a float" (KV502)
    d = tmp_path / "acme--odd"
    d.mkdir()
    src = Path(__file__).parents[1] / "kvlint/data/models/Qwen--Qwen2.5-7B/config.json"
    (d / "config.json").write_text(src.read_text())
    (d / "model.safetensors.index.json").write_text(
        '{"metadata": {"total_size": ' + total + '}, "weight_map": {}}'
    )
    if engine == "sglang":
        text = _vllm_pod(["--model-path", "acme/odd"], "lmsysorg/sglang:v0.5.3", engine="sglang")
    else:
        text = _vllm_pod(["--model", "acme/odd", "--max-model-len", "4096"])
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False, model_dirs=(str(tmp_path),)))
    assert not [d for d in result.diagnostics if "Error" in d.message], [
        d.message for d in result.diagnostics
    ]
    plans = [c.plan for c in result.containers if isinstance(c, ContainerResult) and c.plan is not None]
    assert len(plans) == 1
    assert plans[0].weights_bytes < 2**40
