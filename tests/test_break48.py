"""Adversarial pass on what session 47 landed and on older surfaces (branch break48): each test fails before its fix."""

from __future__ import annotations

import json
import tempfile
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
        ("openai--gpt-oss-20b", ("rope_scaling", "original_max_position_embeddings")),
        ("openai--gpt-oss-20b", ("rope_scaling", "factor")),
        ("Qwen--Qwen2.5-7B", ("partial_rotary_factor",)),
        # the weights estimate: an integer past 2^63 - 1 (int(1e308)) made its float arithmetic raise OverflowError,
        # a number where a list of layers is read "'float' object is not iterable"
        ("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", ("moe_shared_expert_intermediate_size",)),
        ("Qwen--Qwen3.5-27B", ("text_config", "mlp_only_layers")),
    ],
)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), "abc", [1], True, 1e308])
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
    # nor the planner's net (KV502 "could not size ...: TypeError: can't multiply sequence by non-int of type
    # 'float'", the RoPE cache of a YaRN original length "NaN"); SGLang's own int() of a factor it multiplies is
    # KV202's error, which quotes the exception SGLang stops with
    assert not [
        d
        for d in result.diagnostics
        if "could not" in d.message or ("Error" in d.message and "stops at start-up with" not in d.message)
    ], [d.message for d in result.diagnostics]


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


def _local_model(tmp_path: Path, source: str, edit: object, quant_edit: object = None) -> Options:
    """``acme/odd`` in a model directory under ``tmp_path``: ``source``'s catalogue config (and hf_quant_config.json
    when it has one) changed by ``edit(config)`` (and ``quant_edit(quant)``)."""
    here = Path(__file__).parents[1] / "kvlint/data/models" / source
    d = tmp_path / "acme--odd"
    d.mkdir()
    cfg = json.loads((here / "config.json").read_text())
    edit(cfg)  # type: ignore[operator]
    (d / "config.json").write_text(json.dumps(cfg))
    if (here / "hf_quant_config.json").is_file():
        quant = json.loads((here / "hf_quant_config.json").read_text())
        if quant_edit is not None:
            quant_edit(quant)  # type: ignore[operator]
        (d / "hf_quant_config.json").write_text(json.dumps(quant))
    return Options(allow_hub=False, model_dirs=(str(tmp_path),))


@pytest.mark.parametrize(
    ("source", "edit", "quant_edit", "file"),
    [
        # a Nemotron-NAS block_configs entry, or its ffn, that is a number (AttributeError: no attribute 'get')
        (
            "nvidia--Llama-3_3-Nemotron-Super-49B-v1",
            lambda c: c["block_configs"].__setitem__(2, -1),
            None,
            "config.json holds",
        ),
        (
            "nvidia--Llama-3_3-Nemotron-Super-49B-v1",
            lambda c: c["block_configs"][1].__setitem__("ffn", 1e308),
            None,
            "config.json holds",
        ),
        # hf_quant_config.json whose "quantization" is a number
        (
            "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4",
            lambda c: None,
            lambda q: q.__setitem__("quantization", -(2**63)),
            "config.json or hf_quant_config.json holds",
        ),
    ],
)
def test_a_config_of_another_shape_is_refused_at_its_file(
    tmp_path: Path, source: str, edit: object, quant_edit: object, file: str
) -> None:
    # these were KV502 "no config.json for model 'acme/odd', so capacity rules were skipped: acme/odd:
    # AttributeError: ..." (the resolution's net), though the file is there and was read
    options = _local_model(tmp_path, source, edit, quant_edit)
    text = _vllm_pod(["--model", "acme/odd", "--max-model-len", "4096"])
    result = run_documents(load_text(text, "p.yaml"), options)
    kv502 = [d for d in result.diagnostics if d.rule == "KV502"]
    assert len(kv502) == 1, [d.message for d in result.diagnostics]
    assert "was found but refused" in kv502[0].message, kv502[0].message
    assert file in kv502[0].message and "acme--odd/config.json" in kv502[0].message
    assert "no config.json" not in kv502[0].message


@pytest.mark.parametrize("value", [[1], "abc", float("nan"), float("inf"), 1e-300, 1e308, -1, 0, 0.5])
@pytest.mark.parametrize(
    ("source", "key"),
    [
        ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "pixel_shuffle_ratio"),
        ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "image_size"),
        ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "patch_size"),
        ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "vision_output_dim"),
        ("meta-llama--Llama-3.2-11B-Vision-Instruct", "intermediate_layers_indices"),
        ("Qwen--Qwen2.5-VL-7B-Instruct", "hidden_size"),
        ("Qwen--Qwen2.5-VL-7B-Instruct", "spatial_merge_size"),
        ("Qwen--Qwen2.5-VL-7B-Instruct", "in_chans"),
    ],
)
def test_a_vision_config_number_of_another_type_leaves_the_container_sized(
    tmp_path: Path, source: str, key: str, value: object
) -> None:
    # vision_config.pixel_shuffle_ratio [1] or 1e-300: float() of a list, round(inf): "kvlint could not size acme/odd
    # for vllm: TypeError: float() argument must be a string or a real number, not 'list'" (the planner's net)
    options = _local_model(tmp_path, source, lambda c: c["vision_config"].__setitem__(key, value))
    text = _vllm_pod(["--model", "acme/odd", "--max-model-len", "4096", "-tp", "1"])
    result = run_documents(load_text(text, "p.yaml"), options)
    assert not [d for d in result.diagnostics if "Error" in d.message], [
        d.message for d in result.diagnostics
    ]


def test_a_sweep_lists_at_most_64_values_counted_before_any_is_read() -> None:
    # --sweep max-model-len=1,2,...,20000: each value a whole plan, 16 CPU seconds for a 110 kB argument (a
    # range doubles from its low end: at most 64 points)
    from kvlint.capacity.sweep import MAX_SWEEP_POINTS, SweepError, parse_sweep

    assert (
        parse_sweep("max-model-len=" + ",".join(str(i) for i in range(1, MAX_SWEEP_POINTS + 1)))[1][-1] == 64
    )
    for listed in ("max-model-len=" + ",".join(["1k"] * 20_000), "kv-cache-dtype=" + ",".join(["auto"] * 65)):
        with pytest.raises(SweepError, match="kvlint sweeps at most 64 listed values") as info:
            parse_sweep(listed + ",not-a-number")
        assert len(str(info.value)) < 300
    assert len(parse_sweep("max-model-len=1..9223372036854775807")[1]) <= MAX_SWEEP_POINTS


@pytest.mark.parametrize(
    "wrapper",
    [
        "numactl --interleave=all",
        "numactl -N 0 -m 0",
        "taskset -c 0-7",
        "taskset 0xff",
        "stdbuf -oL -eL",
        "stdbuf -o L",
        "nice -n 5",
        "nice -10",
        "timeout --signal=TERM 10h",
        "timeout -k 5s 10h",
        "setsid -f",
        "ionice -c 3",
        "tini --",
        "dumb-init --",
        "env -u CUDA_VISIBLE_DEVICES",
        "sudo -E -u app",
        "exec -a vllm-server",
        "nohup setsid numactl --cpunodebind=0 taskset -c 0-15",
    ],
)
def test_a_wrapper_and_its_options_leave_the_engine_command_read(wrapper: str) -> None:
    # `numactl --interleave=all vllm serve ...` in a script: the wrapper word was dropped and its option read as the
    # command (KV503 "not a recognised engine command"), so the engine went unchecked: here TP 8 on a 1-GPU pod
    script = (
        f"set -e\n{wrapper} vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 8 --max-model-len 4096"
    )
    text = _vllm_pod(["-c", script]).replace("    args:", "    command: [/bin/bash]\n    args:")
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    rules = {d.rule for d in result.diagnostics}
    assert "KV503" not in rules, [d.message for d in result.diagnostics]
    assert "KV401" in rules, [d.message for d in result.diagnostics]


@pytest.mark.parametrize(
    "script", ["numactl --hardware", "taskset -c", "timeout", "env -u", "sudo -u", "stdbuf -o"]
)
def test_a_wrapper_with_no_command_is_no_engine(script: str) -> None:
    text = _vllm_pod(["-c", script + "\nsleep infinity"]).replace(
        "    args:", "    command: [/bin/bash]\n    args:"
    )
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    assert not [d for d in result.diagnostics if "could not" in d.message or "Error" in d.message]


@pytest.mark.parametrize("factor", ["NaN", "Infinity", '"abc"', "1e308", "1e16"])
def test_a_rope_factor_vllm_cannot_use_is_an_error_without_max_model_len(factor: str) -> None:
    # review48F: --hf-overrides '{"rope_scaling": {"rope_type": "dynamic", "factor": NaN}}' and no --max-model-len:
    # vLLM multiplies its derived length by the factor and takes int() of the product (vllm/config/model.py::
    # _get_and_verify_max_len, 0.11.0 and 0.33.0): start-up fails, but the plan only noted "not applied"
    def kv202(max_len: list[str]) -> list[str]:
        args = [
            "--model",
            "Qwen/Qwen2.5-7B-Instruct",
            *max_len,
            "--hf-overrides",
            '{"rope_scaling": {"rope_type": "dynamic", "factor": ' + factor + "}}",
        ]
        result = run_documents(load_text(_vllm_pod(args), "p.yaml"), Options(allow_hub=False))
        return [d.severity for d in result.diagnostics if d.rule == "KV202"]

    assert kv202([]) == ["error"]
    assert kv202(["--max-model-len", "4096"]) == []  # vLLM only compares a given length with the derived one


_QWEN_CONFIG = Path(__file__).parents[1] / "kvlint/data/models/Qwen--Qwen2.5-7B/config.json"


def _sglang_rope_errors(
    rope: str, args: list[str], image: str = "lmsysorg/sglang:v0.5.5"
) -> list[tuple[str, str]]:
    """KV201/KV202 errors for SGLang serving acme/odd, Qwen2.5-7B's config.json with ``rope_scaling`` set
    to the JSON text ``rope`` (a --model-dir copy: Python's json reads NaN and Infinity)."""
    cfg = dict(json.loads(_QWEN_CONFIG.read_text()), rope_scaling="ROPE")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "acme--odd").mkdir()
        (Path(tmp) / "acme--odd" / "config.json").write_text(json.dumps(cfg).replace('"ROPE"', rope))
        text = _vllm_pod(["--model-path", "acme/odd", *args], image, engine="sglang")
        result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False, model_dirs=(tmp,)))
    return [
        (d.rule, d.message)
        for d in result.diagnostics
        if d.rule in ("KV201", "KV202") and d.severity == "error"
    ]


@pytest.mark.parametrize(
    ("factor", "raised"),
    [
        ("NaN", "ValueError: cannot convert float NaN to integer"),
        ("Infinity", "OverflowError: cannot convert float infinity to integer"),
        ("1e308", "OverflowError"),  # 1e308 x 131072 leaves the float range
        ("null", "TypeError: unsupported operand type(s) for *: 'NoneType'"),
        ("[2]", "TypeError: int() argument"),
    ],
)
def test_a_rope_factor_sglang_cannot_use_stops_it_with_or_without_context_length(
    factor: str, raised: str
) -> None:
    # SGLang's get_context_length takes int(rope_scaling factor x max_position_embeddings) in
    # ModelConfig._derive_context_length before it reads --context-length (0.4.6 - 0.5.23): Python raises whether or
    # not the flag is given; kvlint sized the container on max_position_embeddings and said nothing (KV202 a warning)
    rope = '{"type": "dynamic", "factor": ' + factor + "}"
    without = _sglang_rope_errors(rope, [])
    assert [r for r, _ in without] == ["KV202"] and raised in without[0][1], without
    given = _sglang_rope_errors(rope, ["--context-length", "8192"])
    assert [r for r, _ in given] == ["KV201"] and raised in given[0][1], given
    # transformers 5 (SGLang 0.5.10 on) keeps a dynamic factor: the same
    later = _sglang_rope_errors(rope, ["--context-length", "8192"], "lmsysorg/sglang:v0.5.23")
    assert [r for r, _ in later] == ["KV201"]


@pytest.mark.parametrize(
    ("rope", "args"),
    [
        # original_max_position_embeddings in the rope dict, or rope_type llama3: get_context_length takes factor 1
        ('{"type": "yarn", "factor": NaN, "original_max_position_embeddings": 32768}', []),
        ('{"rope_type": "llama3", "factor": NaN}', []),
        ('{"type": "dynamic", "factor": 4.0}', ["--context-length", "8192"]),
        # --json-model-override-args may replace the dict: kvlint does not apply it, so it says nothing
        ('{"type": "dynamic", "factor": NaN}', ["--json-model-override-args", '{"rope_scaling": null}']),
    ],
)
def test_a_rope_factor_sglang_does_not_multiply_is_not_reported(rope: str, args: list[str]) -> None:
    assert _sglang_rope_errors(rope, args) == []
