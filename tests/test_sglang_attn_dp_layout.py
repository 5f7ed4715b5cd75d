"""SGLang attention DP and the pod's GPUs (docs/engine-memory-model.md §3, "Attention DP and the GPUs"): attention-DP
ranks are the tensor-parallel workers (``data_parallel_controller.py::launch_dp_attention_schedulers``), so the pod
runs tp x pp GPU processes, not tp x pp x dp; from 0.5.22 ``--dp-size`` (replicas) next to ``--attn-dp-size`` is
refused (``arg_groups/parallel_hook.py::handle_data_parallelism``); and the PP + speculative refusal with
``SGLANG_ENABLE_PP_SPEC`` names attention DP as each release does (``validation_hook.py::
check_pipeline_parallel_compat``: "--enable-dp-attention" in 0.5.21, "attention DP (--attn-dp-size)" from 0.5.22)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines import parse_command_line
from kvlint.memory.sglang import ATTN_DP_SIZE_FROM, sglang_prelude
from kvlint.memory.vllm import PlanError
from kvlint.models import resolve_model
from kvlint.pipeline import Options, run_check

MODEL_DIRS = (str(Path(__file__).resolve().parent.parent / "fixtures" / "plan" / "models"),)
FIRST = ".".join(map(str, ATTN_DP_SIZE_FROM))


def _cmd(*args: str, version: str = "0.5.23", env: dict[str, str] | None = None):
    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", "x", *args], version)
    s.version = version
    s.env.update(env or {})
    return s


@pytest.mark.parametrize("version", [FIRST, "0.5.23", None])
@pytest.mark.parametrize(
    "args",
    [
        ("--dp-size", "2", "--attn-dp-size", "2"),
        ("--attention-data-parallel-size", "4", "--dp", "2"),
        # the deprecated switch next to --attn-dp-size only turns itself off: --dp-size stays replicas
        ("--dp-size", "2", "--enable-dp-attention", "--attn-dp-size", "2"),
    ],
)
def test_replicas_with_attention_dp_are_refused(args: tuple[str, ...], version: str | None) -> None:
    s = _cmd("--tp", "4", *args, version=version or "")
    bad = [f for f in s.findings if f.rule == "KV206"]
    assert len(bad) == 1 and bad[0].severity == "error", s.findings
    assert "not supported" in bad[0].message and "--attn-dp-size" in bad[0].message


@pytest.mark.parametrize(
    "args",
    [
        ("--attn-dp-size", "2"),
        ("--dp-size", "2"),
        ("--dp-size", "2", "--enable-dp-attention"),
        ("--dp-size", "1", "--attn-dp-size", "4"),
    ],
)
def test_attention_dp_or_replicas_alone_are_accepted(args: tuple[str, ...]) -> None:
    assert not _cmd("--tp", "4", *args).findings


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: s}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  containers:
  - name: engine
    image: lmsysorg/sglang:VERSION
    command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, ARGS]
    resources: {limits: {nvidia.com/gpu: GPUS}}
"""


def _check(tmp_path: Path, version: str, args: str, gpus: int):
    path = tmp_path / "pod.yaml"
    path.write_text(POD.replace("VERSION", version).replace("ARGS", args).replace("GPUS", str(gpus)))
    return run_check([str(path)], Options(allow_hub=False, model_dirs=MODEL_DIRS)).diagnostics


@pytest.mark.parametrize(
    ("version", "args"),
    [
        ("v0.5.21", "--tp, '4', --dp, '2', --enable-dp-attention"),
        ("v0.5.23", "--tp, '4', --dp, '2', --enable-dp-attention"),
        ("v0.5.23", "--tp, '4', --attn-dp-size, '2'"),
    ],
)
def test_kv404_counts_the_tensor_parallel_workers_under_attention_dp(
    tmp_path: Path, version: str, args: str
) -> None:
    """kvlint said "8 GPU workers (--tp-size 4)" for --tp 4 --dp 2 --enable-dp-attention on 4 GPUs (KV403 agreed
    on 4)."""
    tp = 4
    diags = _check(tmp_path, version, args, tp)
    shm = [d for d in diags if d.rule == "KV404"]
    assert len(shm) == 1 and shm[0].message.startswith(f"{tp} GPU workers"), shm
    assert not [d for d in diags if d.rule == "KV403"]


def test_kv403_under_attention_dp_does_not_offer_more_dp(tmp_path: Path) -> None:
    """A larger --dp-size adds no GPU under attention DP (and is refused next to --attn-dp-size): KV403's remedy
    does not offer it; without attention DP it still does."""
    diags = _check(tmp_path, "v0.5.21", "--tp, '4', --dp, '2', --enable-dp-attention", 8)
    (idle,) = [d for d in diags if d.rule == "KV403"]
    assert "--dp-size" not in (idle.fix or "")
    plain = _check(tmp_path, "v0.5.21", "--tp, '4'", 8)
    (idle,) = [d for d in plain if d.rule == "KV403"]
    assert "--dp-size 2" in (idle.fix or "")


@pytest.mark.parametrize(
    ("version", "args", "said"),
    [
        ("0.5.21", ("--dp", "2", "--enable-dp-attention"), "compatible with --enable-dp-attention'"),
        ("0.5.22", ("--attn-dp-size", "2"), "compatible with attention DP (--attn-dp-size)'"),
        ("0.5.23", ("--dp", "2", "--enable-dp-attention"), "compatible with attention DP (--attn-dp-size)'"),
    ],
)
def test_pp_spec_refusal_words_attention_dp_as_the_release(
    version: str, args: tuple[str, ...], said: str
) -> None:
    m = resolve_model("meta-llama/Llama-3.1-8B", model_dirs=MODEL_DIRS, allow_hub=False)
    cmd = _cmd(
        "--tp",
        "2",
        "--pp-size",
        "2",
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-draft-model-path",
        "d",
        *args,
        version=version,
        env={"SGLANG_ENABLE_PP_SPEC": "1"},
    )
    with pytest.raises(PlanError) as err:
        sglang_prelude(cmd, m)
    assert said in str(err.value), str(err.value)


@pytest.mark.parametrize(
    ("version", "value", "noted"),
    [
        ("0.5.16", "1", True),
        ("0.5.23", "y", True),
        ("0.5.23", "TRUE", True),
        ("0.5.15", "1", False),  # the variable is not in 0.5.15's environ.py
        ("0.5.23", "on", False),  # not one of EnvBool's true words
        ("0.5.23", "0", False),
    ],
)
def test_post_capture_kv_sizing_is_noted_as_not_modelled(version: str, value: str, noted: bool) -> None:
    """SGLANG_ENABLE_POST_CAPTURE_KV_SIZING (environ.py, 0.5.16 on) changes the default fraction and resizes the pool
    after capture from measured memory: kvlint says it does not model it (it was silent)."""
    m = resolve_model("meta-llama/Llama-3.1-8B", model_dirs=MODEL_DIRS, allow_hub=False)
    pre = sglang_prelude(_cmd(version=version, env={"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": value}), m)
    said = [n for n in pre.model_notes if "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING" in n]
    assert bool(said) is noted, pre.model_notes
    assert not [n for n in sglang_prelude(_cmd(version=version), m).model_notes if "POST_CAPTURE" in n]
