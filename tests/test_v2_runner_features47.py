"""vLLM's V2 model runner forced on (``VLLM_USE_V2_MODEL_RUNNER=1``) with a setting it does not run, beside those of
test_v2_runner_features46 (engines47): ``--enable-prompt-embeds``, ``--logprobs-mode raw_logits``/``processed_logits``,
``--logits-processors``, ``--kv-sharing-fast-prefill``, ``--enable-return-routed-experts``, ``--ec-transfer-config``,
EAGLE3 with pipeline parallelism and pipeline parallelism under ``--distributed-executor-backend external_launcher``.

Source, read in the 0.21.0 - 0.34.0 wheels (every minor release): ``vllm/config/vllm.py::VllmConfig.
_get_v2_model_runner_unsupported_features`` (0.21.0: ``_validate_v2_model_runner``; 0.34.0:
``_get_model_runner_unsupported_features``). kvlint planned each as a V2 start-up, and with the variable unset as
the V2 runner where the release falls back to the V1 one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.memory import vllm_runner as vr
from kvlint.memory.versions import parse_version as v
from kvlint.pipeline import Options, run_check

F = vr.RunnerFeatures
LLAMA = ("LlamaForCausalLM",)


def _says(version: str, features: vr.RunnerFeatures, spec: str | None = None) -> str:
    return vr.v2_unsupported(v(version), "1", spec, features=features) or ""


@pytest.mark.parametrize(
    ("version", "features", "spec", "entry"),
    [
        ("0.22.0", F(prompt_embeds=True), None, "prompt embeds"),
        ("0.28.0", F(prompt_embeds=True), None, "prompt embeds"),
        ("0.22.0", F(logprobs_mode="raw_logits"), None, "logprobs mode 'raw_logits'"),
        ("0.25.0", F(logprobs_mode="processed_logits"), None, "logprobs mode 'processed_logits'"),
        ("0.21.0", F(logits_processors=True), None, "custom logits processors"),
        ("0.30.0", F(logits_processors=True), None, "custom logits processors"),
        ("0.21.0", F(kv_sharing_fast_prefill=True), None, "KV sharing fast prefill"),
        ("0.29.0", F(kv_sharing_fast_prefill=True), None, "KV sharing fast prefill"),
        ("0.27.0", F(routed_experts=True), None, "routed experts capture"),
        ("0.27.0", F(ec_transfer=True), None, "EC transfer"),
        ("0.22.0", F(pp=2), "eagle3", "EAGLE3 with pipeline parallelism"),
        ("0.29.0", F(pp=2), "eagle3", "EAGLE3 with pipeline parallelism"),
        ("0.24.0", F(pp=2, external_launcher=True), None, "pipeline parallelism with external_launcher"),
        ("0.33.0", F(pp=2, external_launcher=True), None, "pipeline parallelism with external_launcher"),
    ],
)
def test_forced_v2_runner_refuses_the_setting(
    version: str, features: vr.RunnerFeatures, spec: str | None, entry: str
) -> None:
    assert f"support: {entry}" in _says(version, features, spec)
    # unset, the release falls back to the V1 runner instead of stopping
    assert vr.v2_unsupported(v(version), None, spec, features=features) is None
    assert not vr.uses_v2_runner(v(version), ("Qwen3ForCausalLM",), spec_method=spec, features=features)


@pytest.mark.parametrize(
    ("version", "features", "spec"),
    [
        ("0.29.0", F(prompt_embeds=True), None),  # prompt embeds run on V2 from 0.29.0
        ("0.21.0", F(prompt_embeds=True), None),  # not listed in 0.21.0
        ("0.26.0", F(logprobs_mode="raw_logits"), None),
        ("0.22.0", F(logprobs_mode="raw_logprobs"), None),  # only the *_logits modes
        ("0.22.0", F(logprobs_mode="raw_logits", generate=False), None),  # a pooling runner
        ("0.31.0", F(logits_processors=True), None),
        ("0.30.0", F(kv_sharing_fast_prefill=True), None),
        ("0.28.0", F(routed_experts=True, ec_transfer=True), None),
        ("0.30.0", F(pp=2), "eagle3"),
        ("0.29.0", F(pp=1), "eagle3"),
        ("0.23.0", F(pp=2, external_launcher=True), None),
        ("0.24.0", F(pp=1, external_launcher=True), None),
    ],
)
def test_forced_v2_runner_takes_what_the_release_runs(
    version: str, features: vr.RunnerFeatures, spec: str | None
) -> None:
    assert _says(version, features, spec) == ""


def test_entries_in_the_sources_order() -> None:
    """0.24.0: ..., pipeline parallelism with external_launcher, the speculative entries, dual batch overlap, elastic
    EP, routed experts, logits processors, prompt embeds, logprobs mode, KV sharing, EC transfer."""
    every = F(
        pp=2,
        external_launcher=True,
        enable_dbo=True,
        routed_experts=True,
        logits_processors=True,
        prompt_embeds=True,
        logprobs_mode="raw_logits",
        kv_sharing_fast_prefill=True,
        ec_transfer=True,
    )
    text = vr.v2_unsupported(v("0.24.0"), "1", "eagle3", elastic_ep=True, features=every) or ""
    assert (
        "support: pipeline parallelism with external_launcher, EAGLE3 with pipeline parallelism, dual batch overlap, "
        "elastic expert parallelism, routed experts capture, custom logits processors, prompt embeds, logprobs mode "
        "'raw_logits', KV sharing fast prefill, EC transfer\")" in text
    )


def test_034_refuses_external_launcher_pipelines() -> None:
    """0.34.0's one runner: ``_get_model_runner_unsupported_features`` lists it first, on every start-up."""
    said = vr.runner_unsupported(v("0.34.0"), F(pp=2, external_launcher=True)) or ""
    assert 'does not support: pipeline parallelism with external_launcher")' in said
    both = vr.runner_unsupported(v("0.34.0"), F(pp=2, external_launcher=True, enable_dbo=True)) or ""
    assert "external_launcher, dual batch overlap with pipeline parallelism" in both
    assert vr.runner_unsupported(v("0.34.0"), F(pp=1, external_launcher=True)) is None
    assert vr.runner_unsupported(v("0.33.0"), F(pp=2, external_launcher=True)) is None


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
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"EXTRA]
        ENV
        resources:
          limits:
            nvidia.com/gpu: '1'
"""
_ENV = """env:
        - name: VLLM_USE_V2_MODEL_RUNNER
          value: "1\""""


@pytest.mark.parametrize(
    ("version", "extra", "env", "entry"),
    [
        ("v0.24.0", ', "--enable-prompt-embeds"', True, "prompt embeds"),
        ("v0.25.0", ', "--logprobs-mode", "processed_logits"', True, "logprobs mode 'processed_logits'"),
        ("v0.29.0", ', "--kv-sharing-fast-prefill"', True, "KV sharing fast prefill"),
        ("v0.30.0", ', "--logits-processors", "my_pkg.MyLogitsProcessor"', True, "custom logits processors"),
        ("v0.29.0", ', "--enable-prompt-embeds"', True, None),
        ("v0.24.0", ', "--enable-prompt-embeds"', False, None),
    ],
)
def test_through_the_pipeline(tmp_path: Path, version: str, extra: str, env: bool, entry: str | None) -> None:
    f = tmp_path / "m.yaml"
    f.write_text(
        _MANIFEST.replace("VERSION", version)
        .replace("EXTRA", extra)
        .replace("ENV", _ENV if env else "env: []")
    )
    res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
    (cr,) = res.containers
    if entry is None:
        assert cr.plan is not None, [x.message for x in res.diagnostics]
        return
    assert cr.plan is None and cr.plan_refusal is not None
    (d,) = [x for x in res.diagnostics if "VLLM_USE_V2_MODEL_RUNNER=1 " in x.message]
    assert d.rule == "KV502" and d.severity == "error" and d.loc is not None and d.loc.line == 14
    assert f'support: {entry}")' in d.message


def test_unset_variable_plans_the_v1_runner() -> None:
    """0.29.0 picks V2 for every model, unless a setting it does not run: then the V1 runner's profile."""
    from kvlint.memory.vllm import VllmSettings, resolve_startup
    from kvlint.models import resolve_model

    model = resolve_model("Qwen/Qwen2.5-7B-Instruct", allow_hub=False)
    base = VllmSettings(version="0.29.0", max_model_len=8192)
    h100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
    total = int(79.18 * 2**30)  # an H100's CUDA total, as tests/test_pooling.py takes it

    def v2(s: VllmSettings) -> bool:
        return resolve_startup(s, model, total, **h100).v2_runner

    assert v2(base)
    assert not v2(base.changed(kv_sharing_fast_prefill=True))
    assert v2(base.changed(enable_prompt_embeds=True))  # runs on V2 from 0.29.0


def test_034_external_launcher_through_the_pipeline(tmp_path: Path) -> None:
    """KV502 at --distributed-executor-backend, with a fix naming the backend (not --enable-dbo)."""
    f = tmp_path / "m.yaml"
    extra = ', "--pipeline-parallel-size", "2", "--distributed-executor-backend", "external_launcher"'
    f.write_text(
        _MANIFEST.replace("VERSION", "v0.34.0")
        .replace("EXTRA", extra)
        .replace("ENV", "env: []")
        .replace("nvidia.com/gpu: '1'", "nvidia.com/gpu: '2'")
    )
    res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
    (d,) = [x for x in res.diagnostics if "external_launcher" in x.message and x.rule == "KV502"]
    assert d.severity == "error" and d.loc is not None and d.loc.line == 11
    assert "--distributed-executor-backend" in (d.fix or "") and "--enable-dbo" not in (d.fix or "")
