"""vLLM's V2 model runner forced on (``VLLM_USE_V2_MODEL_RUNNER=1``) with a model or feature it does not run
(engine46): hybrid/Mamba models, prefill context parallelism, dual batch overlap, ``--mamba-cache-mode all``.

Source, read in the 0.21.0 - 0.33.0 wheels: ``vllm/config/vllm.py::VllmConfig._get_v2_model_runner_unsupported_features``
(0.22.0 on; 0.21.0's ``_validate_v2_model_runner``), ``_get_dbo_unsupported_features`` (0.30.0 on) and
``ParallelConfig.use_ubatching``. An explicit variable skips ``use_v2_model_runner``'s fallback and
``_validate_v2_model_runner`` raises ``ValueError``; unset, the release falls back to the V1 runner. kvlint
refused only an n-gram/other speculative method and elastic EP, and planned the rest as a V2 start-up.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.memory import vllm_runner as vr
from kvlint.memory.versions import parse_version as v
from kvlint.pipeline import Options, run_check

F = vr.RunnerFeatures
HYBRID = F(inner_state=True, hybrid=True)
LLAMA = ("LlamaForCausalLM",)


def _says(version: str, features: vr.RunnerFeatures, spec: str | None = None) -> str:
    return vr.v2_unsupported(v(version), "1", spec, features=features) or ""


@pytest.mark.parametrize(
    ("version", "features", "entry"),
    [
        ("0.21.0", HYBRID, "VLLM_USE_V2_MODEL_RUNNER does not yet support: hybrid/mamba models"),
        ("0.22.0", HYBRID, "VLLM_USE_V2_MODEL_RUNNER does not yet support: hybrid/mamba models"),
        (
            "0.24.0",
            F(inner_state=True, mamba_cache_mode="align"),
            "hybrid/mamba models with align cache mode",
        ),
        ("0.25.0", F(pcp=2), "Model Runner V2 does not yet support: prefill context parallelism"),
        ("0.28.0", F(pcp=2), "prefill context parallelism"),
        ("0.21.0", F(enable_dbo=True), "dual batch overlap"),
        ("0.29.0", F(enable_dbo=True), "dual batch overlap"),
        ("0.30.0", F(enable_dbo=True, pp=2), "dual batch overlap with pipeline parallelism"),
        ("0.33.0", F(ubatch_size=2, dcp=2), "dual batch overlap with context parallelism"),
        ("0.33.0", F(enable_dbo=True, lora=True), "dual batch overlap with LoRA"),
        (
            "0.31.0",
            F(enable_dbo=True, inner_state=True, hybrid=True),
            "dual batch overlap with hybrid models",
        ),
        ("0.31.0", F(mamba_cache_mode="all"), "mamba cache mode 'all'"),
    ],
)
def test_forced_v2_runner_refuses_the_feature(version: str, features: vr.RunnerFeatures, entry: str) -> None:
    assert entry in _says(version, features)
    # unset or 0, the release picks the V1 runner for it instead of stopping
    assert vr.v2_unsupported(v(version), None, features=features) is None
    assert vr.v2_unsupported(v(version), "0", features=features) is None


@pytest.mark.parametrize(
    ("version", "features"),
    [
        ("0.23.0", HYBRID),  # no align cache mode given
        ("0.25.0", HYBRID),  # hybrid models run on V2 from 0.25.0
        ("0.26.0", F(pcp=2, is_mla=True)),  # MLA with PCP from 0.26.0
        ("0.29.0", F(pcp=2)),  # PCP from 0.29.0
        ("0.30.0", F(enable_dbo=True)),  # DBO alone, the variable set
        ("0.32.0", F(mamba_cache_mode="all")),
        ("0.20.0", HYBRID),  # before 0.21.0 the variable is not read
        ("0.34.0", F(pcp=2, enable_dbo=True, pp=2)),  # only the V2 runner left
    ],
)
def test_forced_v2_runner_takes_what_the_release_runs(version: str, features: vr.RunnerFeatures) -> None:
    assert _says(version, features) == ""


def test_entries_in_the_sources_order() -> None:
    """0.24.0 lists the model, then prefill context parallelism, the speculative method, DBO."""
    text = _says("0.24.0", F(inner_state=True, mamba_cache_mode="align", pcp=2, enable_dbo=True), "ngram")
    assert (
        "support: hybrid/mamba models with align cache mode, prefill context parallelism, ngram/ngram_gpu "
        'speculative decoding, dual batch overlap")' in text
    )


def test_unset_variable_falls_back_to_the_v1_runner() -> None:
    """Where the release would pick V2 itself, an unsupported feature makes ``use_v2_model_runner`` fall back."""
    assert vr.uses_v2_runner(v("0.31.0"), LLAMA) and vr.uses_v2_runner(v("0.31.0"), LLAMA, features=F(pcp=2))
    assert not vr.uses_v2_runner(
        v("0.31.0"), LLAMA, features=F(enable_dbo=True)
    )  # unset: "dual batch overlap"
    assert not vr.uses_v2_runner(v("0.31.0"), LLAMA, features=F(ubatch_size=2))
    assert not vr.uses_v2_runner(v("0.29.0"), LLAMA, features=F(enable_dbo=True))
    assert vr.uses_v2_runner(v("0.34.0"), LLAMA, features=F(enable_dbo=True))
    assert not vr.uses_v2_runner(v("0.24.0"), LLAMA, features=F(pcp=2))
    assert vr.uses_v2_runner(v("0.24.0"), LLAMA)


_MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
      containers:
      - name: main
        image: vllm/vllm-openai:VERSION
        args: ["--model", "THE_MODEL", "--max-model-len", "8192", "--tensor-parallel-size", "4"EXTRA]
        env:
        - name: VLLM_USE_V2_MODEL_RUNNER
          value: "1"
        resources:
          limits:
            nvidia.com/gpu: '4'
"""


@pytest.mark.parametrize(
    ("version", "model", "extra", "entry"),
    [
        ("v0.22.0", "Qwen/Qwen3-Next-80B-A3B-Thinking", "", "hybrid/mamba models"),
        ("v0.25.0", "Qwen/Qwen3-Next-80B-A3B-Thinking", "", None),
        ("v0.24.0", "Qwen/Qwen2.5-7B-Instruct", ', "--enable-dbo"', "dual batch overlap"),
        ("v0.24.0", "Qwen/Qwen2.5-7B-Instruct", "", None),
    ],
)
def test_through_the_pipeline(
    tmp_path: Path, version: str, model: str, extra: str, entry: str | None
) -> None:
    f = tmp_path / "m.yaml"
    f.write_text(_MANIFEST.replace("VERSION", version).replace("THE_MODEL", model).replace("EXTRA", extra))
    res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
    (cr,) = res.containers
    if entry is None:
        assert cr.plan is not None, [x.message for x in res.diagnostics]
        return
    assert cr.plan is None and cr.plan_refusal is not None
    assert cr.plan_refusal.value == "vllm-v2-runner-unsupported"
    (d,) = [x for x in res.diagnostics if "VLLM_USE_V2_MODEL_RUNNER=1 " in x.message]
    assert d.rule == "KV502" and d.severity == "error" and d.loc is not None and d.loc.line == 14
    assert f'support: {entry}")' in d.message
