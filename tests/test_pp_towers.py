"""Which pipeline stages hold the multimodal towers (``kvlint.memory.vllm.pipeline_towers``).

vLLM builds a model's vision/audio towers whole, not by decoder layer: on every pipeline stage up to 0.32.0
(``SupportsMultiModal._mark_tower_model`` skips a tower only at a ``--limit-mm-per-prompt`` of 0; read in the
0.15.1 - 0.32.0 wheels, and ``vllm@0.11.0:qwen2_5_vl.py`` builds ``self.visual`` whenever images are allowed), on the
first stage only from 0.34.0 (``StageMissingLayer`` where ``not get_pp_group().is_first_rank``; 0.33.0 on the V2
model runner only). kvlint spread the towers over the stages by their layers: Qwen2.5-VL-7B at pipeline-parallel
size 2 put half its 1.26 GiB vision tower on each stage. Expected figures come from the model's own vision tower
size (``vision_params``), not from any engine output.
"""

from __future__ import annotations

import pytest

import kvlint.memory.vllm as V
from kvlint.models import resolve_model
from kvlint.models.weights import vision_params

GiB = 1 << 30
H100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
H100_TOTAL = int(79.19 * GiB)


def _stage_weights(monkeypatch: pytest.MonkeyPatch, version: str, **kw: object) -> list[int]:
    model = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    seen: list[int] = []
    orig = V.stage_memory

    def spy(*a: object, **k: object):  # type: ignore[no-untyped-def]
        r = orig(*a, **k)  # type: ignore[arg-type]
        if r is not None:
            seen.append(r.weights)
        return r

    monkeypatch.setattr(V, "stage_memory", spy)
    s = V.VllmSettings(version=version, pipeline_parallel_size=2, max_model_len=8192, **kw)  # type: ignore[arg-type]
    V.plan_vllm_detailed(s, model, H100_TOTAL, **H100)
    monkeypatch.undo()
    return seen[:2]


def test_towers_on_every_stage_then_on_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    model = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    assert not model.tie_word_embeddings  # the embedding on stage 0 and the LM head on stage 1 weigh the same
    vision = vision_params(model.config, model.hidden_size) * 2  # bf16
    assert vision > GiB
    old = _stage_weights(monkeypatch, "0.32.0")
    new = _stage_weights(monkeypatch, "0.34.0")
    assert old[0] == old[1]  # every stage holds the whole tower
    assert new[0] == pytest.approx(old[0], abs=2)  # the first stage holds it in both
    assert old[1] - new[1] == pytest.approx(vision, abs=2)  # the second stage holds it before 0.34.0 only
    # at a limit of 0 for images and videos no stage builds it
    none = _stage_weights(monkeypatch, "0.32.0", limit_mm_per_prompt={"image": 0, "video": 0})
    assert none[0] == pytest.approx(none[1], abs=2) and none[1] == pytest.approx(new[1], abs=2)
