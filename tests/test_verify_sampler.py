"""``kvlint verify`` reads which top-k/top-p sampler vLLM V1 chose at start-up and replays that one.

Before 0.11.1 the choice hangs on the image: ``TopKTopPSampler.__init__`` takes FlashInfer when the package is
installed, and the 0.10.2 / 0.11.0 wheels list it only as an extra (``Requires-Dist: flashinfer-python==…; extra ==
"flashinfer"``), so a ``pip install vllm`` runs the PyTorch-native sort, whose profile peak is several times
FlashInfer's (calibration.sampler_path). The engine names its choice in one line; the lines below are written from
the format strings of the wheels named beside each (vllm/v1/sample/ops/topk_topp_sampler.py), and the real excerpt
fixtures/logs/gt-332.log (vLLM 0.10.2 on an H100, Qwen3-30B-A3B, 1,024 sampler rows) prints the native fall-back.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from kvlint.verify import parse_log, verify_log
from kvlint.verify.compare import build_command
from kvlint.verify.logparse import _sampler_choice

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_verify import _replay_inputs  # noqa: E402

PREFIX = "(EngineCore_DP0 pid=1) WARNING 06-16 14:13:27 [topk_topp_sampler.py:69] "
LINES = [
    # vllm@0.10.2 / vllm@0.11.0
    ("Using FlashInfer for top-p & top-k sampling.", True),
    (
        "FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k "
        "sampling. For the best performance, please install FlashInfer.",
        False,
    ),
    (
        "FlashInfer is available, but it is not enabled. Falling back to the PyTorch-native implementation of "
        "top-p & top-k sampling. For the best performance, please set VLLM_USE_FLASHINFER_SAMPLER=1.",
        False,
    ),
    ("FlashInfer version >= 0.2.3 required. Falling back to default sampling implementation.", False),
    # vllm@0.17.0
    (
        "FlashInfer top-p/top-k sampling is available but disabled by default. Set VLLM_USE_FLASHINFER_SAMPLER=1 "
        "to opt in after verifying accuracy for your workloads.",
        False,
    ),
    # vllm@0.21.0
    (
        "FlashInfer top-p/top-k sampling not supported on compute capability 7.0; falling back to PyTorch-native "
        "sampler. Set VLLM_USE_FLASHINFER_SAMPLER=0 to silence.",
        False,
    ),
    (
        "FlashInfer top-p/top-k sampling disabled via VLLM_USE_FLASHINFER_SAMPLER=0; using PyTorch-native sampler.",
        False,
    ),
    # vllm@0.34.0
    (
        "FlashInfer top-p/top-k sampling unavailable: no module; falling back. Set VLLM_USE_FLASHINFER_SAMPLER=0",
        False,
    ),
    # vllm@0.24.0 / vllm@0.34.0 ``flashinfer_sampler_supported``: the warning falls back, the error (the variable set
    # to 1 on a GPU FlashInfer cannot serve) stops the start-up: no sampler was chosen
    (
        "FlashInfer top-p/top-k sampling unavailable: unsupported compute capability 7.5; falling back. Set "
        "VLLM_USE_FLASHINFER_SAMPLER=0 to silence.",
        False,
    ),
    (
        "RuntimeError: FlashInfer top-p/top-k sampling unavailable: unsupported compute capability 7.5. Unset "
        "VLLM_USE_FLASHINFER_SAMPLER=1.",
        None,
    ),
    # at sampling time, not in the profile: not a start-up choice
    (
        "FlashInfer 0.2.3+ does not support per-request generators. Falling back to PyTorch-native implementation.",
        None,
    ),
    ("Using default chat sampling params from model: {'temperature': 0.7, 'top_k': 20, 'top_p': 0.8}", None),
]


@pytest.mark.parametrize(("text", "expected"), LINES, ids=[str(i) for i in range(len(LINES))])
def test_sampler_line_is_read(text: str, expected: bool | None) -> None:
    assert _sampler_choice(PREFIX + text) is expected


GT332 = ROOT / "fixtures" / "logs" / "gt-332.log"


def _without_sampler_line(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if "topk_topp_sampler" not in line)


def test_log_sampler_goes_to_the_replay() -> None:
    text = GT332.read_text(encoding="utf-8")
    log = parse_log(text)
    assert log.flashinfer_sampler is False
    assert log.sampler_line is not None and "topk_topp_sampler" in text.splitlines()[log.sampler_line - 1]
    _, env, sources, _ = build_command(log, model="Qwen/Qwen3-30B-A3B", engine_version=None)
    assert env.get("VLLM_USE_FLASHINFER_SAMPLER") == "0"
    assert "PyTorch-native" in sources["top-k/top-p sampler"]
    # no sampler line: nothing set, the release's own choice (and its band) stands
    bare = parse_log(_without_sampler_line(text))
    assert bare.flashinfer_sampler is None
    assert (
        "VLLM_USE_FLASHINFER_SAMPLER"
        not in build_command(bare, model="Qwen/Qwen3-30B-A3B", engine_version=None)[1]
    )


def test_native_sampler_profile_closes_the_printed_activation() -> None:
    """With the sampler the log names, kvlint's activation peak and KV are nearer the engine's printed breakdown
    than with the FlashInfer path kvlint assumes for 0.10.2 when nothing is said (both compared with the log's own
    figures, no number written here)."""
    text = GT332.read_text(encoding="utf-8")
    opts, ref, extra = _replay_inputs("gt-332")
    opts = dataclasses.replace(opts, engine_version=None)
    read = verify_log(parse_log(text), opts, model=ref, extra_args=extra)
    assumed = verify_log(parse_log(_without_sampler_line(text)), opts, model=ref, extra_args=extra)

    def err(res, key: str) -> float:
        f = next(f for f in res.figures if f.key == key)
        return abs(f.predicted - f.reported)

    for key in ("activation_gib", "kv_cache_gib"):
        assert err(read, key) < err(assumed, key), key
    kv = next(f for f in read.figures if f.key == "kv_cache_gib")
    assert kv.inside and read.exit_code == 0
