"""vLLM does not build an encoder tower whose modalities are all limited to 0 by ``--limit-mm-per-prompt``
(kvlint.memory.multimodal.towers_not_loaded): from 0.15.1 every tower built inside ``_mark_tower_model``
(``vllm/model_executor/models/interfaces.py``), in 0.10.1 - 0.15.0 the model classes that test the limit themselves
(the Qwen2-VL family, Llama 4, Mistral 3, LLaVA, Pixtral; not Gemma 3), from 0.10.1. The plan's weights leave the
tower out; a tower that also serves video stays at an image limit of 0 alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.accelerators import lookup
from kvlint.memory.multimodal import towers_not_loaded
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import resolve_model
from kvlint.models.weights import vision_params

ROOT = Path(__file__).resolve().parent.parent
GiB = 1 << 30


def _model(name: str):
    for base in (ROOT / "fixtures" / "plan" / "models", ROOT.parent / "shared" / "corpus" / "models"):
        if (base / name / "config.json").is_file():
            return resolve_model(str(base / name), allow_hub=False)
    return resolve_model(name.replace("--", "/", 1), allow_hub=False)


def _weights(model, version: str, limits: dict[str, int], tp: int = 1) -> int:
    acc = lookup("h100")
    assert acc is not None
    s = VllmSettings(version=version, tensor_parallel_size=tp, max_model_len=8192, limit_mm_per_prompt=limits)
    d = plan_vllm_detailed(
        s, model, acc.memory_bytes, gpu_name=acc.name, compute_capability=acc.compute_capability
    )
    return d.plan.weights_bytes


@pytest.mark.parametrize(
    ("name", "version", "limits", "skipped"),
    [
        ("Qwen--Qwen2.5-VL-7B-Instruct", "0.19.0", {"image": 0, "video": 0}, True),
        (
            "Qwen--Qwen2.5-VL-7B-Instruct",
            "0.19.0",
            {"image": 0},
            False,
        ),  # video still 999: the tower serves it
        (
            "Qwen--Qwen2.5-VL-7B-Instruct",
            "0.14.0",
            {"image": 0, "video": 0},
            True,
        ),  # qwen2_5_vl.py's own test
        (
            "Qwen--Qwen2.5-VL-7B-Instruct",
            "0.12.0",
            {"image": 0, "video": 0},
            True,
        ),  # qwen2_5_vl.py tests both limits from 0.10.1 (#22299)
        ("Qwen--Qwen2.5-VL-7B-Instruct", "0.10.1.1", {"image": 0, "video": 0}, True),
        ("Qwen--Qwen2.5-VL-7B-Instruct", "0.10.0", {"image": 0, "video": 0}, False),  # before #22299
        (
            "Qwen--Qwen3.5-27B",
            "0.19.0",
            {"image": 0},
            False,
        ),  # qwen3_5.py marks its tower with image and video: video still 999
        ("Qwen--Qwen3.5-27B", "0.19.0", {"image": 0, "video": 0}, True),
        ("Qwen--Qwen3-VL-8B-Instruct", "0.11.0", {"image": 0, "video": 0}, True),
        (
            "Qwen--Qwen3-VL-8B-Instruct",
            "0.10.2",
            {"image": 0, "video": 0},
            False,
        ),  # no Qwen3-VL test before 0.11
        ("google--gemma-3-27b-it", "0.19.0", {"image": 0}, True),
        (
            "google--gemma-3-27b-it",
            "0.14.0",
            {"image": 0},
            False,
        ),  # gemma3_mm.py builds it whatever the limit
        ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "0.13.0", {"image": 0}, True),
        ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "0.19.0", {"image": 1}, False),
    ],
)
def test_tower_left_out_of_the_weights(name, version, limits, skipped):
    m = _model(name)
    full = _weights(m, version, {})
    limited = _weights(m, version, limits)
    tower = vision_params(m.config or {}, m.hidden_size) * 2  # bf16
    assert tower > 0.2 * GiB
    if skipped:
        assert towers_not_loaded(m, tuple(int(x) for x in version.split(".")), limits)
        assert abs((full - limited) - tower) <= 2, (full - limited, tower)
    else:
        assert full == limited


def test_gemma4_audio_tower_limit_is_read_alone():
    """Gemma 4 marks its vision tower with image and video and its audio tower with audio (vllm@0.19.0
    ``gemma4_mm.py``): an audio limit of 0 leaves the vision tower in."""
    m = _model("google--gemma-4-E2B-it")
    assert towers_not_loaded(m, (0, 19, 0), {"audio": 0}) == (("audio", ("audio",)),)
    assert towers_not_loaded(m, (0, 19, 0), {"image": 0}) == ()
    assert towers_not_loaded(m, (0, 19, 0), {"image": 0, "video": 0, "audio": 0}) == (
        ("vision", ("image", "video")),
        ("audio", ("audio",)),
    )


def test_language_model_only_sets_every_limit_to_zero():
    """``--language-model-only`` (vllm@0.19.0 ``MultiModalConfig.get_limit_per_prompt`` returns 0 for every
    modality): Qwen3.5's image-and-video tower is not built, so the weights lose it as at image and video 0, and
    the explicit limits it overrides do not matter."""
    from kvlint.engines.vllm import parse_vllm_argv
    from kvlint.memory.vllm import settings_from_config

    m = _model("Qwen--Qwen3.5-27B")
    acc = lookup("h100")
    assert acc is not None

    def weights(extra: list[str]) -> int:
        argv = ["vllm", "serve", "Qwen/Qwen3.5-27B", "--max-model-len", "8192", "-tp", "2", *extra]
        s = settings_from_config(parse_vllm_argv(argv, version="0.19.0"))
        d = plan_vllm_detailed(
            s, m, acc.memory_bytes, gpu_name=acc.name, compute_capability=acc.compute_capability
        )
        return d.plan.weights_bytes

    full = weights([])
    off = weights(["--limit-mm-per-prompt", '{"image": 0, "video": 0}'])
    assert full - off > 0.2 * GiB
    assert weights(["--language-model-only"]) == off
    assert weights(["--language-model-only", "--limit-mm-per-prompt", '{"image": 2}']) == off
    assert weights(["--no-language-model-only"]) == full
