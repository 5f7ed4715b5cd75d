"""What the V2 model runner's and the DBO unsupported-features checks read (``kvlint.memory.vllm._runner_features``)
is settled once per container, in its plan prelude, and read over the model's distinct layer specs (issue 19, perf47).

It depends on the settings and the model only, never on the GPU; it was computed three times for each GPU a container
was planned on (twice in ``_era``, once in ``_v2_runner``), each time over every layer of the model (80 for a 70B).
The answer must be the one the per-layer reading gives, for every model of the catalogue and for hybrid shapes
built here.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvlint.accelerators.site import default_fleet
from kvlint.memory import stage, vllm
from kvlint.memory.refusal import PlanError
from kvlint.models import resolve_model
from kvlint.pipeline import Options, run_check
from kvlint.types import LayerSpec, ModelSpec


def _per_layer(model: ModelSpec) -> tuple[bool, bool]:
    """``(inner_state, hybrid)`` as the pre-perf47 code read them: over every layer of the model."""
    layers = model.layers
    stateful = any(ly.kind == "mamba" or ly.state_bytes for ly in layers)
    attention = any(ly.kind not in ("mamba", "none") for ly in layers)
    return stateful, stateful and attention


_MODELS = (
    "meta-llama/Llama-3.1-8B",
    "google/gemma-3-1b-it",
    "nvidia/Nemotron-H-56B-Base-8K",
    "Qwen/Qwen3-Next-80B-A3B-Thinking",
)


@pytest.mark.parametrize("ref", _MODELS)
def test_features_over_distinct_layers_equal_the_per_layer_reading(ref: str) -> None:
    model = resolve_model(ref, allow_hub=False)
    mamba = LayerSpec("mamba", 0, 0, 0, state_bytes=4096)
    stated = replace(model.layers[0], state_bytes=1024)  # attention carrying state beside it (Falcon-H1)
    none = replace(model.layers[0], kind="none")
    shapes = [
        model.layers,
        (mamba,) * 4,
        (mamba, *model.layers[1:]),
        (stated, *model.layers[1:]),
        (none, mamba),
        (none,) * 3,
    ]
    for layers in shapes:
        m = replace(model, layers=tuple(layers), num_layers=len(layers))
        for s in (
            vllm.VllmSettings(version="0.31.0"),
            vllm.VllmSettings(version="0.31.0", enable_dbo=True, pipeline_parallel_size=2, enable_lora=True),
        ):
            for generate in (True, False):
                got = vllm._runner_features(s, m, generate)
                assert (got.inner_state, got.hybrid) == _per_layer(m)
                assert got.generate is generate and got.is_mla == m.is_mla
            try:
                prelude = vllm.plan_prelude(s, m)
            except PlanError:
                continue
            assert prelude.features == vllm._runner_features(s, m, prelude.pooling is None)
    none = vllm._runner_features(vllm.VllmSettings(), None)
    assert not none.inner_state and not none.hybrid and not none.is_mla


_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
      containers:
      - name: main
        image: vllm/vllm-openai:v0.31.0
        args: ["--model", "meta-llama/Llama-3.1-8B", "--max-model-len", "8192"]
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def test_a_fleet_reads_the_runner_features_once(tmp_path, monkeypatch) -> None:
    """Planned on one GPU or on the whole default fleet, a container's runner features are computed once (in
    :func:`kvlint.memory.vllm.plan_prelude`), not once or more per GPU; the entries are what they were."""
    path = tmp_path / "d.yaml"
    path.write_text(_DEPLOYMENT)
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = [c for c in res.containers if c.model is not None]
    assert cr.fleet, "no GPU named: planned on the fleet"
    fleet = default_fleet("cuda")
    assert len(fleet) >= 4
    calls = []
    real = vllm._runner_features

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(vllm, "_runner_features", counted)
    counts = []
    for gpus in (fleet[:1], fleet):
        calls.clear()
        entries = stage.plan_fleet(cr.serving, cr.settings, cr.model, cr.placement, gpus, 1)
        assert [e.accelerator for e in entries] == list(gpus)
        assert entries == cr.fleet[: len(gpus)]
        counts.append(len(calls))
    assert counts == [1, 1]
    monkeypatch.undo()
    again = stage.plan_fleet(cr.serving, cr.settings, cr.model, cr.placement, fleet, 1)
    assert again == cr.fleet


def test_era_and_v2_runner_take_the_prelude_features_and_never_recompute_them(monkeypatch) -> None:
    """``_era`` and ``_v2_runner`` read the container's settled features (:attr:`PlanPrelude.features`): they have
    no fallback that recomputes :func:`kvlint.memory.vllm._runner_features` when a caller gives none (perf48; a
    caller outside the plan paid it on every call), and with the features given they answer without it."""
    import inspect

    for fn in (vllm._era, vllm._v2_runner):
        param = inspect.signature(fn).parameters["features"]
        assert param.default is inspect.Parameter.empty, f"{fn.__name__} still defaults its features"
    model = resolve_model("meta-llama/Llama-3.1-8B", allow_hub=False)
    s = vllm.VllmSettings(version="0.31.0")
    pre = vllm.plan_prelude(s, model)
    v = pre.version
    with pytest.raises(TypeError):
        vllm._era(v, s, "9.0", "bfloat16", model, pre.pooling)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        vllm._v2_runner(s, model, v, "nvidia")  # type: ignore[call-arg]

    def refused(*args):
        raise AssertionError("_runner_features recomputed")

    monkeypatch.setattr(vllm, "_runner_features", refused)
    assert vllm._era(v, s, "9.0", "bfloat16", model, pre.pooling, pre.features)[0] == "v1"
    assert isinstance(vllm._v2_runner(s, model, v, "nvidia", pre.features), bool)
