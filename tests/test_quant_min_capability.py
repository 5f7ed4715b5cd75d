"""KV305: vLLM refuses a quantization method whose kernels need a newer NVIDIA GPU.

vLLM compares the GPU's compute capability with the method's ``get_min_capability()`` while it builds its
configuration (vllm@0.34.0:vllm/config/vllm.py::VllmConfig._get_quantization_config) and raises "The quantization
method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70." The minimums
asserted here are the ones read in vLLM's wheels release by release and cited in
:data:`kvlint.memory.compat.QUANT_MIN_CC_STEPS`: AWQ 7.5 (``AWQConfig``: "The AWQ kernel only supports Turing or newer
GPUs"), MXFP4 8.0 (``Mxfp4Config``, bfloat16 activations only), ModelOpt FP8 8.9 up to 0.26.0 and 8.0 from 0.27.0
(``ModelOptFp8Config``), FP8 8.0 up to 0.13.0 and 7.5 from 0.14.0 (``Fp8Config``), GPTQ Marlin 8.0 / 7.5 / 6.0
(``AutoGPTQConfig`` from 0.22.0), GPTQ 6.0 (so a V100 runs it). Compute capabilities are NVIDIA's (V100 7.0, T4 7.5,
A100 8.0, L4 8.9, H100 9.0).

Before this rule kvlint planned gpt-oss (MXFP4) on a T4 and an AWQ checkpoint on a V100 as fits: new-user pass 29
(fixtures/collected, the AWQ manifests of shiqs90/vllm-serving-eks and R-D-Engineering/vllm-serving-aks)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvlint.accelerators.registry import lookup
from kvlint.memory.compat import (
    CT_SCHEME_MIN_CC_STEPS,
    QUANT_MIN_CC,
    compressed_tensors_scheme,
    quant_min_cc,
    quantization_refusal,
    startup_refusal,
)
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import ServingConfig
from kvlint.values import parse_cc

REPO = Path(__file__).resolve().parents[1]
COLLECTED = REPO / "fixtures" / "collected"
#: R-D-Engineering/vllm-serving-aks k8s/vllm-deployment.yaml (source in fixtures/collected/INDEX.csv): vLLM 0.22.1,
#: Qwen/Qwen2.5-7B-Instruct-AWQ with --quantization=awq --dtype=float16, meant for an AKS T4, naming no GPU
AKS_T4 = COLLECTED / "R-D-Engineering__vllm-serving-aks__k8s__vllm-deployment.yaml"
#: fixtures/collected: the AWQ SGLang Deployment (source in its INDEX.csv), to check the rule is vLLM's only
SGLANG_AWQ = COLLECTED / "arnavsriva__llm-serving-gke-vs-vertex__k8s__sglang__deployment.yaml"


def _serving(*args: str) -> ServingConfig:
    from kvlint.engines.command import parse_command_line

    return parse_command_line(["vllm", "serve", *args])


def _model(model_id: str):
    from kvlint.models.resolve import resolve_model

    return resolve_model(model_id, allow_hub=False)


def _gpu(gid: str):
    acc = lookup(gid)
    assert acc is not None, gid
    return acc


def test_floors_are_the_cited_vllm_minimums() -> None:
    # AWQ's kernel needs Turing (7.5); MXFP4 needs Ampere (8.0); GPTQ (6.0) is not listed, so never refused
    assert QUANT_MIN_CC["awq"] == (7, 5)
    assert QUANT_MIN_CC["mxfp4"] == (8, 0)
    assert "gptq" not in QUANT_MIN_CC and "compressed-tensors" not in QUANT_MIN_CC


def test_awq_flag_refused_on_v100_not_on_t4() -> None:
    s = _serving("Qwen/Qwen2.5-7B-Instruct-AWQ", "--quantization", "awq", "--dtype", "half")
    v100, t4 = _gpu("nvidia-v100-sxm2-32gb"), _gpu("nvidia-t4")
    assert v100.compute_capability == "7.0" and t4.compute_capability == "7.5"
    assert quantization_refusal(s, None, v100) == ("awq", "flag", (7, 5))
    assert quantization_refusal(s, None, t4) is None


def test_checkpoint_method_is_used_without_the_flag() -> None:
    gpt_oss = _model("openai/gpt-oss-20b")
    assert gpt_oss.quant_method == "mxfp4"
    s = _serving("openai/gpt-oss-20b", "--max-model-len", "8192")
    assert quantization_refusal(s, gpt_oss, _gpu("nvidia-t4")) == ("mxfp4", "checkpoint", (8, 0))
    assert quantization_refusal(s, gpt_oss, _gpu("nvidia-l4")) is None
    # the refusal is what the fleet verdict and plan --compare take: KV305, certain
    r = startup_refusal(s, gpt_oss, _gpu("nvidia-t4"), has_pod=False)
    assert r is not None and r.rule == "KV305" and r.certain and "mxfp4" in r.reason


def test_modelopt_fp8_minimum_follows_the_release() -> None:
    # nvidia/Llama-3.1-70B-Instruct-FP8 is an NVIDIA ModelOpt export (hf_quant_config.json, quant_algo FP8).
    # ModelOptFp8Config.get_min_capability is 89 up to the 0.26.0 wheel and 80 from 0.27.0 (QUANT_MIN_CC_STEPS):
    # an A100 is refused by vLLM 0.12.0 and runs it in 0.34.0
    m = _model("nvidia/Llama-3.1-70B-Instruct-FP8")
    assert m.quant_method == "modelopt"
    s = _serving("nvidia/Llama-3.1-70B-Instruct-FP8", "--tensor-parallel-size", "4")
    a100, t4 = _gpu("nvidia-a100-sxm4-80gb"), _gpu("nvidia-t4")
    assert a100.compute_capability == "8.0"
    old, new = replace(s, version="0.12.0"), replace(s, version="0.34.0")
    assert quantization_refusal(old, m, a100) == ("modelopt", "checkpoint", (8, 9))
    assert quantization_refusal(old, m, _gpu("nvidia-l4")) is None
    assert quantization_refusal(old, m, _gpu("nvidia-h100-sxm5-80gb")) is None
    assert quantization_refusal(new, m, a100) is None
    assert quantization_refusal(new, m, t4) == ("modelopt", "checkpoint", (8, 0))
    # release unknown: an A100 is not refused by every release, so nothing is said of it
    assert quantization_refusal(s, m, a100) is None


def test_modelopt_hf_quant_config_is_read_only_from_0_10_1() -> None:
    # vLLM reads hf_quant_config.json as the quantization config from 0.10.1 (not in the 0.9.2 wheel): before it
    # the checkpoint is not taken as modelopt without --quantization modelopt, so no capability refusal is said
    m = _model("nvidia/Llama-3.1-70B-Instruct-FP8")
    assert m.quant_config is not None and "quant_method" not in m.quant_config  # from hf_quant_config.json
    s, t4 = _serving("nvidia/Llama-3.1-70B-Instruct-FP8"), _gpu("nvidia-t4")
    assert quantization_refusal(replace(s, version="0.9.2"), m, t4) is None
    assert quantization_refusal(replace(s, version="0.10.1"), m, t4) == ("modelopt", "checkpoint", (8, 9))
    flag = _serving("nvidia/Llama-3.1-70B-Instruct-FP8", "--quantization", "modelopt")
    assert quantization_refusal(replace(flag, version="0.9.2"), m, t4) == ("modelopt", "flag", (8, 9))


def test_gptq_marlin_minimum_follows_the_release() -> None:
    # GPTQMarlinConfig 80 up to 0.13.0, 75 from 0.14.0; from 0.22.0 gptq_marlin maps to AutoGPTQConfig, 60
    v100, t4 = _gpu("nvidia-v100-sxm2-16gb"), _gpu("nvidia-t4")
    s = _serving("TheBloke/Llama-2-7B-GPTQ", "--quantization", "gptq_marlin", "--dtype", "half")
    assert quantization_refusal(replace(s, version="0.13.0"), None, t4) == ("gptq_marlin", "flag", (8, 0))
    assert quantization_refusal(replace(s, version="0.14.0"), None, t4) is None
    assert quantization_refusal(replace(s, version="0.21.0"), None, v100) == ("gptq_marlin", "flag", (7, 5))
    assert quantization_refusal(replace(s, version="0.22.0"), None, v100) is None
    assert quantization_refusal(s, None, v100) is None  # release unknown: 0.22.0 and later run it


def test_fp8_on_a_t4_is_refused_before_0_14() -> None:
    # Fp8Config.get_min_capability: 80 in 0.6.3.post1 - 0.13.0, 75 from 0.14.0
    t4 = _gpu("nvidia-t4")
    m = _model("Qwen/Qwen3-8B-FP8")
    assert m.quant_method == "fp8"
    s = _serving("Qwen/Qwen3-8B-FP8", "--dtype", "half")
    assert quantization_refusal(replace(s, version="0.11.0"), m, t4) == ("fp8", "checkpoint", (8, 0))
    assert quantization_refusal(replace(s, version="0.14.0"), m, t4) is None
    assert quantization_refusal(s, m, t4) is None


def _deployment(tmp_path: Path, image_tag: str, gpu_product: str, *args: str) -> Path:
    """A one-GPU vLLM Deployment pinned to ``gpu_product`` (made up for these tests)."""
    manifest = tmp_path / "deployment.yaml"
    quoted = ", ".join(f'"{a}"' for a in args)
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: q}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        f"      nodeSelector: {{nvidia.com/gpu.product: {gpu_product}}}\n      containers:\n        - name: vllm\n"
        f"          image: vllm/vllm-openai:{image_tag}\n"
        f"          args: [{quoted}]\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return manifest


def test_fix_names_gpus_and_checkpoints_that_run_in_that_release(tmp_path: Path) -> None:
    """The fix is re-checked against the release: vLLM 0.11.0 needs 8.0 for fp8, so no T4 is offered, and an AWQ
    checkpoint (7.5) is not offered on a V100."""
    manifest = _deployment(
        tmp_path, "v0.11.0", "Tesla-V100-SXM2-32GB", "--model", "Qwen/Qwen3-8B-FP8", "--dtype", "half"
    )
    result = run_check([str(manifest)], Options(allow_hub=False))
    kv305 = next(d for d in result.diagnostics if d.rule == "KV305")
    assert "vLLM 0.11.0 refuses" in kv305.message
    assert "Minimum capability: 80. Current capability: 70." in kv305.message
    fix = kv305.fix or ""
    assert "compute capability 8.0 or newer" in fix and "T4" not in fix
    assert "GPTQ one (quant_method gptq, minimum 6.0)" in fix and "AWQ" not in fix and "--dtype half" in fix


def test_message_quotes_the_method_name_vllm_prints(tmp_path: Path) -> None:
    """From 0.24.0 an AWQ checkpoint is auto_awq in vLLM's error (AutoAWQConfig.override_quantization_method);
    0.22.1 prints awq (the AKS manifest's test above)."""
    args = ("--model", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--quantization", "awq", "--dtype", "half")
    manifest = _deployment(tmp_path, "v0.34.0", "Tesla-V100-SXM2-32GB", *args)
    kv305 = next(
        d for d in run_check([str(manifest)], Options(allow_hub=False)).diagnostics if d.rule == "KV305"
    )
    assert "'The quantization method auto_awq is not supported" in kv305.message


def test_gptq_and_unquantized_models_are_not_refused_on_v100() -> None:
    v100 = _gpu("nvidia-v100-sxm2-16gb")
    s = _serving("TheBloke/Llama-2-7B-GPTQ", "--quantization", "gptq")
    assert quantization_refusal(s, None, v100) is None
    m = _model("Qwen/Qwen3-8B")
    assert m.quant_method is None
    assert quantization_refusal(_serving("Qwen/Qwen3-8B"), m, v100) is None


def test_amd_gpus_are_not_compared() -> None:
    # vLLM's capability tuple on ROCm is the gfx version (9.4 for an MI300X), above every minimum: nothing is said
    mi300x = _gpu("amd-instinct-mi300x")
    s = _serving("Qwen/Qwen2.5-7B-Instruct-AWQ", "--quantization", "awq")
    assert quantization_refusal(s, None, mi300x) is None


def test_real_manifest_on_a_v100_is_kv305_and_on_a_t4_is_not() -> None:
    on_v100 = run_check([str(AKS_T4)], Options(allow_hub=False, accelerator="nvidia-v100-sxm2-32gb"))
    on_t4 = run_check([str(AKS_T4)], Options(allow_hub=False, accelerator="nvidia-t4"))
    assert "KV305" in [d.rule for d in on_v100.diagnostics]
    assert "KV305" not in [d.rule for d in on_t4.diagnostics]
    kv305 = next(d for d in on_v100.diagnostics if d.rule == "KV305")
    assert "Minimum capability: 75. Current capability: 70." in kv305.message
    assert kv305.loc is not None and kv305.loc.line is not None
    line = AKS_T4.read_text().splitlines()[kv305.loc.line - 1]
    assert "--quantization=awq" in line  # reported at the flag


def test_fleet_verdict_says_where_gpt_oss_refuses(tmp_path: Path) -> None:
    """A gpt-oss Deployment naming no GPU: the default fleet (T4 first) says T4 fails with KV305's reason."""
    manifest = tmp_path / "gpt-oss.yaml"
    # made up for this test: vLLM 0.11.0 serving openai/gpt-oss-20b on one GPU, the GPU left unnamed
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: gpt-oss}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers:\n        - name: vllm\n"
        "          image: vllm/vllm-openai:v0.11.0\n"
        '          args: ["--model", "openai/gpt-oss-20b", "--max-model-len", "8192"]\n'
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    result = run_check([str(manifest)], Options(allow_hub=False))
    fleet = [e for cr in result.containers for e in (getattr(cr, "fleet", None) or ())]
    by_gpu = {e.accelerator.id: e for e in fleet}
    assert by_gpu["nvidia-t4"].verdict == "fails" and by_gpu["nvidia-t4"].refused_by == "KV305"
    assert by_gpu["nvidia-l4"].refused_by != "KV305"


def test_sglang_makes_the_same_test_with_its_own_minimums() -> None:
    """SGLang's model loader compares the GPU with the method's get_min_capability too
    (sglang/srt/model_loader/loader.py::_get_quantization_config, every wheel read): its AWQ container (SGLang
    0.5.21, Qwen/Qwen3-8B-AWQ) is refused on a V100 (AWQConfig 75) and starts on a T4. kvlint said nothing."""
    on_v100 = run_check([str(SGLANG_AWQ)], Options(allow_hub=False, accelerator="nvidia-v100-sxm2-32gb"))
    on_t4 = run_check([str(SGLANG_AWQ)], Options(allow_hub=False, accelerator="nvidia-t4"))
    kv305 = [d for d in on_v100.diagnostics if d.rule == "KV305"]
    assert len(kv305) == 1 and "KV305" not in [d.rule for d in on_t4.diagnostics]
    assert "SGLang 0.5.21 refuses to start" in kv305[0].message
    assert "'The quantization method awq is not supported" in kv305[0].message
    assert "vLLM" not in kv305[0].message and "KV301" not in (kv305[0].fix or "")


def test_sglang_refuses_fp8_on_a_t4_in_every_release_where_vllm_0_14_does_not() -> None:
    """SGLang's Fp8Config needs 80 in every wheel read (0.4.6 - 0.5.23); vLLM's Fp8Config 75 from 0.14.0."""
    t4, m = _gpu("nvidia-t4"), _model("Qwen/Qwen3-8B-FP8")
    sglang = replace(_serving("Qwen/Qwen3-8B-FP8"), engine="sglang")
    need = quant_min_cc("fp8", "0.5.21", "sglang")
    assert need is not None and parse_cc(t4.compute_capability) < need
    assert quantization_refusal(replace(sglang, version="0.5.21"), m, t4) == ("fp8", "checkpoint", need)
    assert quantization_refusal(sglang, m, t4) == ("fp8", "checkpoint", need)  # every release read
    assert quantization_refusal(replace(_serving("Qwen/Qwen3-8B-FP8"), version="0.14.0"), m, t4) is None
    r = startup_refusal(replace(sglang, version="0.5.21"), m, t4, has_pod=False)
    assert r is not None and r.rule == "KV305" and r.certain


def test_sglang_modelopt_checkpoints_are_not_tested() -> None:
    """SGLang maps ModelOpt exports by rules of its own (modelopt_fp8/fp4/mixed): kvlint says nothing of them."""
    m = _model("nvidia/Llama-3.1-70B-Instruct-FP8")
    s = replace(_serving("nvidia/Llama-3.1-70B-Instruct-FP8"), engine="sglang", version="0.5.21")
    assert quantization_refusal(s, m, _gpu("nvidia-t4")) is None
    # a vLLM release that reads hf_quant_config.json refuses it on a T4
    assert quantization_refusal(replace(s, engine="vllm", version="0.34.0"), m, _gpu("nvidia-t4")) is not None


def test_modelopt_on_an_a10g_names_its_source_and_the_fp8_alternative(tmp_path: Path) -> None:
    """vLLM 0.12.0 refuses a ModelOpt FP8 export on an A10G (8.6 < 8.9); the checkpoint's config came from
    hf_quant_config.json, and an fp8 checkpoint (Fp8Config 80 in 0.12.0) is offered since the A10G runs it."""
    args = ("--model", "nvidia/Llama-3.1-70B-Instruct-FP8", "--tensor-parallel-size", "4")
    manifest = _deployment(tmp_path, "v0.12.0", "NVIDIA-A10G", *args)
    kv305 = next(
        d for d in run_check([str(manifest)], Options(allow_hub=False)).diagnostics if d.rule == "KV305"
    )
    assert "is modelopt-quantized (hf_quant_config.json)" in kv305.message
    assert "Minimum capability: 89. Current capability: 86." in kv305.message
    assert "an FP8 one (quant_method fp8, minimum 8.0)" in (kv305.fix or "")


def test_modelopt_nvfp4_from_hf_quant_config_follows_the_release() -> None:
    """nvidia/Qwen3-32B-NVFP4 (catalogued with its hf_quant_config.json, quant_algo NVFP4) is ``modelopt_fp4`` in
    vLLM from 0.10.1 (the release that reads hf_quant_config.json): ModelOptNvFp4Config.get_min_capability 80 in
    0.9.2 - 0.13.0, 75 from 0.14.0 (its Marlin FP4 fallback). Before this, no NVFP4 export was tested."""
    m = _model("nvidia/Qwen3-32B-NVFP4")
    assert m.quant_config is not None and "quant_method" not in m.quant_config  # from hf_quant_config.json
    s = _serving("nvidia/Qwen3-32B-NVFP4")
    t4, v100, l4 = _gpu("nvidia-t4"), _gpu("nvidia-v100-sxm2-32gb"), _gpu("nvidia-l4")
    old, new = replace(s, version="0.12.0"), replace(s, version="0.34.0")
    assert quantization_refusal(old, m, t4) == (
        "modelopt_fp4",
        "checkpoint",
        quant_min_cc("modelopt_fp4", "0.12.0"),
    )
    assert quantization_refusal(old, m, l4) is None
    assert quantization_refusal(new, m, t4) is None  # 7.5 from 0.14.0
    assert quantization_refusal(new, m, v100) == (
        "modelopt_fp4",
        "checkpoint",
        quant_min_cc("modelopt_fp4", "0.34.0"),
    )
    # hf_quant_config.json is not read before 0.10.1, and an unknown release may be one of those
    assert quantization_refusal(replace(s, version="0.9.2"), m, v100) is None
    assert quantization_refusal(s, m, v100) is None
    # --quantization modelopt_fp4 needs no file: the method exists from the 0.9.2 wheel (0.8.5 named it nvfp4)
    flag = _serving("nvidia/Qwen3-32B-NVFP4", "--quantization", "modelopt_fp4")
    assert quantization_refusal(replace(flag, version="0.9.2"), m, t4) == ("modelopt_fp4", "flag", (8, 0))
    assert quantization_refusal(replace(flag, version="0.8.5"), m, t4) is None


def test_modelopt_nvfp4_in_config_json_is_overridden_to_modelopt_fp4_from_0_10_1() -> None:
    """nvidia/Gemma-4-31B-IT-NVFP4 writes ``quant_method: modelopt`` with ``quant_algo: NVFP4`` in config.json;
    ModelOptNvFp4Config.override_quantization_method (from the 0.10.1 wheel) makes it modelopt_fp4."""
    m = _model("nvidia/Gemma-4-31B-IT-NVFP4")
    assert m.quant_config is not None and m.quant_config.get("quant_method") == "modelopt"
    s, v100 = _serving("nvidia/Gemma-4-31B-IT-NVFP4"), _gpu("nvidia-v100-sxm2-32gb")
    got = quantization_refusal(replace(s, version="0.20.0"), m, v100)
    assert got is not None and got[:2] == ("modelopt_fp4", "checkpoint")
    # 0.9.2 has no override: the checkpoint would be built as ModelOpt FP8, a case kvlint does not test
    assert quantization_refusal(replace(s, version="0.9.2"), m, v100) is None


def test_modelopt_mixed_precision_is_refused_on_an_a100_in_0_17_to_0_23() -> None:
    """nvidia/Qwen3.6-27B-NVFP4 is a ModelOpt MIXED_PRECISION export (config.json ``quant_method: modelopt``);
    vLLM reads it as modelopt_mixed (ModelOptMixedPrecisionConfig, from the 0.17.0 wheel): minimum 89 up to
    0.23.0, 75 from 0.24.0. kvlint took it for ModelOpt FP8 and said nothing."""
    m = _model("nvidia/Qwen3.6-27B-NVFP4")
    s, a100, t4 = _serving("nvidia/Qwen3.6-27B-NVFP4"), _gpu("nvidia-a100-sxm4-80gb"), _gpu("nvidia-t4")
    need = quant_min_cc("modelopt_mixed", "0.20.0")
    assert need is not None and parse_cc(a100.compute_capability) < need
    assert quantization_refusal(replace(s, version="0.20.0"), m, a100) == (
        "modelopt_mixed",
        "checkpoint",
        need,
    )
    assert quantization_refusal(replace(s, version="0.34.0"), m, a100) is None
    assert quantization_refusal(replace(s, version="0.34.0"), m, t4) is None
    assert quantization_refusal(replace(s, version="0.16.0"), m, a100) is None  # no modelopt_mixed yet


def test_modelopt_mixed_in_hf_quant_config_is_read_only_after_0_32() -> None:
    """NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4 keeps MIXED_PRECISION in hf_quant_config.json: vLLM 0.14.0 -
    0.32.0 stop with 'Unknown ModelOpt quant algo' (not this rule), 0.34.0 reads it as modelopt_mixed."""
    ref = "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4"
    m, s, v100 = _model(ref), _serving(ref), _gpu("nvidia-v100-sxm2-32gb")
    assert m.quant_config is not None and "quant_method" not in m.quant_config
    assert quantization_refusal(replace(s, version="0.32.0"), m, v100) is None
    got = quantization_refusal(replace(s, version="0.34.0"), m, v100)
    assert got is not None and got[0] == "modelopt_mixed"


def test_fbgemm_fp8_and_experts_int8_need_ampere() -> None:
    """FBGEMMFp8Config and ExpertsInt8Config return 80 in every wheel from 0.6.3.post1 to 0.34.0."""
    t4, a10g = _gpu("nvidia-t4"), _gpu("nvidia-a10g")
    for method in ("fbgemm_fp8", "experts_int8"):
        s = _serving("Qwen/Qwen3-30B-A3B", "--quantization", method, "--dtype", "half")
        for version in ("0.6.3", "0.34.0"):
            need = quant_min_cc(method, version)
            assert need is not None and parse_cc(t4.compute_capability) < need <= parse_cc(
                a10g.compute_capability
            )
            assert quantization_refusal(replace(s, version=version), None, t4) == (method, "flag", need)
            assert quantization_refusal(replace(s, version=version), None, a10g) is None
        assert quantization_refusal(s, None, t4) == (method, "flag", QUANT_MIN_CC[method])  # every release


def test_modelopt_mxfp8_needs_blackwell_up_to_0_19() -> None:
    """ModelOptMxFp8Config.get_min_capability: 100 in 0.16.0 - 0.19.0, 80 from 0.20.0."""
    h100 = _gpu("nvidia-h100-sxm5-80gb")
    s = _serving("Qwen/Qwen3-8B", "--quantization", "modelopt_mxfp8")
    assert quantization_refusal(replace(s, version="0.19.0"), None, h100) == (
        "modelopt_mxfp8",
        "flag",
        (10, 0),
    )
    assert quantization_refusal(replace(s, version="0.20.0"), None, h100) is None
    assert quantization_refusal(replace(s, version="0.14.0"), None, h100) is None  # before the method


def test_nvfp4_on_a_t4_quotes_vllms_text_for_modelopt_fp4(tmp_path: Path) -> None:
    """The finding for an NVIDIA NVFP4 export on a T4 under vLLM 0.12.0 quotes vLLM's text for modelopt_fp4."""
    manifest = _deployment(tmp_path, "v0.12.0", "Tesla-T4", "--model", "nvidia/Qwen3-32B-NVFP4")
    kv305 = next(
        d for d in run_check([str(manifest)], Options(allow_hub=False)).diagnostics if d.rule == "KV305"
    )
    assert "is modelopt_fp4-quantized (hf_quant_config.json)" in kv305.message
    assert "'The quantization method modelopt_fp4 is not supported for the current GPU." in kv305.message


def test_name_derived_awq_build_is_float16_so_a_t4_is_not_kv301(tmp_path: Path) -> None:
    """An ``-AWQ`` id known only by name took its base's bfloat16, and kvlint said vLLM 0.8.5 keeps bf16 on a T4
    (KV301, error). AutoAWQ quantizes in float16 and saves that dtype (casper-hansen/AutoAWQ
    awq/models/base.py), and vLLM's awq method takes float16 activations only before 0.24.0: the derived config is
    float16, as the real checkpoint's is, and the pod starts."""
    m = _model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert m.quant_method == "awq" and m.torch_dtype == "float16"
    assert "torch_dtype float16 assumed instead of the base's bfloat16" in m.notes[0]
    # a GPTQ build derived the same way keeps its base's dtype
    assert _model("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4").torch_dtype == "bfloat16"
    manifest = _deployment(
        tmp_path, "v0.8.5", "Tesla-T4", "--model", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--max-model-len", "4096"
    )
    rules = [d.rule for d in run_check([str(manifest)], Options(allow_hub=False)).diagnostics]
    assert "KV301" not in rules and "KV305" not in rules and "KV505" in rules


def test_compressed_tensors_fp8_layers_need_their_schemes_minimum() -> None:
    """poolside/Laguna-XS.2-FP8 (catalogued config.json, compressed-tensors, FP8 weights and activations): vLLM's
    config minimum is 70, but each layer's scheme is tested when the model is built
    (CompressedTensorsConfig.get_scheme): W8A8 FP8 (89) falls back to W8A16 FP8 Marlin, 80 up to 0.14.0 and 75
    from 0.16.0. kvlint said nothing on a T4 or a V100."""
    m = _model("poolside/Laguna-XS.2-FP8")
    assert m.quant_method == "compressed-tensors"
    s, t4, v100 = _serving("poolside/Laguna-XS.2-FP8"), _gpu("nvidia-t4"), _gpu("nvidia-v100-sxm2-32gb")
    assert compressed_tensors_scheme(m, "0.11.0") == ("fp8", CT_SCHEME_MIN_CC_STEPS["fp8"][0][1])
    need_old, need_new = compressed_tensors_scheme(m, "0.11.0"), compressed_tensors_scheme(m, "0.34.0")
    assert need_old is not None and need_new is not None
    assert parse_cc(t4.compute_capability) < need_old[1] and need_new[1] <= parse_cc(t4.compute_capability)
    want_old = ("compressed-tensors", "checkpoint", need_old[1])
    assert quantization_refusal(replace(s, version="0.11.0"), m, t4) == want_old
    assert quantization_refusal(replace(s, version="0.34.0"), m, t4) is None
    assert quantization_refusal(replace(s, version="0.34.0"), m, v100) == (
        "compressed-tensors",
        "checkpoint",
        need_new[1],
    )
    assert (
        quantization_refusal(s, m, v100) is not None and quantization_refusal(s, m, t4) is None
    )  # unknown release


def test_compressed_tensors_floor_is_the_highest_of_its_groups() -> None:
    """RedHatAI/DeepSeek-V4-Flash-NVFP4-FP8 has an FP8 group and an NVFP4 group (catalogued config.json): in
    0.9.2 - 0.14.0 NVFP4 below Blackwell runs as W4A16 FP4 (80) and FP8 as W8A16 (80); from 0.16.0 both 75."""
    m = _model("RedHatAI/DeepSeek-V4-Flash-NVFP4-FP8")
    got = compressed_tensors_scheme(m, "0.34.0")
    assert got is not None and got[1] == max(
        CT_SCHEME_MIN_CC_STEPS["fp8"][-1][1], CT_SCHEME_MIN_CC_STEPS["nvfp4"][-1][1]
    )
    assert compressed_tensors_scheme(m, "0.8.5") is not None  # the fp8 group; nvfp4 starts at 0.9.2


def test_compressed_tensors_int_schemes_by_name_derived_templates() -> None:
    """-quantized.w4a16 (WNA16: 80 up to 0.11.0, 75 from 0.12.0) and -quantized.w8a8 (W8A8 int8: 75) builds known
    by name carry kvlint's compressed-tensors templates (docs/models.md)."""
    t4, v100 = _gpu("nvidia-t4"), _gpu("nvidia-v100-sxm2-32gb")
    w4a16 = _model("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16")
    w8a8 = _model("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8")
    s = _serving("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16")
    assert quantization_refusal(replace(s, version="0.11.0"), w4a16, t4) is not None
    assert quantization_refusal(replace(s, version="0.12.0"), w4a16, t4) is None
    assert quantization_refusal(replace(s, version="0.12.0"), w8a8, t4) is None
    assert quantization_refusal(replace(s, version="0.34.0"), w8a8, v100) is not None


def test_compressed_tensors_without_a_written_quant_method_is_not_scheme_tested() -> None:
    """Qwen/Qwen3-32B-FP8-Static-PerTensor keeps config_groups in a ModelOpt-produced quantization_config with no
    quant_method: vLLM does not take it as compressed-tensors by that, so no scheme minimum is said."""
    m = _model("Qwen/Qwen3-32B-FP8-Static-PerTensor")
    assert m.quant_config is not None and "quant_method" not in m.quant_config
    assert compressed_tensors_scheme(m, "0.11.0") is None


def test_compressed_tensors_finding_quotes_the_scheme_error(tmp_path: Path) -> None:
    manifest = _deployment(tmp_path, "v0.11.0", "Tesla-T4", "--model", "poolside/Laguna-XS.2-FP8")
    kv305 = next(
        d for d in run_check([str(manifest)], Options(allow_hub=False)).diagnostics if d.rule == "KV305"
    )
    assert "is compressed-tensors fp8-quantized" in kv305.message
    assert "'Quantization scheme is not supported for the current GPU. Min capability: 80." in kv305.message


def test_modelopt_flag_is_overridden_by_the_checkpoints_quant_algo_from_0_10_1(tmp_path: Path) -> None:
    """``--quantization modelopt`` on an NVFP4 export: from 0.10.1 ``ModelConfig._verify_quantization`` takes the
    ModelOpt configs' ``override_quantization_method``, which answers by ``quant_algo`` and ignores the user's
    method (vllm@0.20.0 and 0.34.0 modelopt.py), so the release tests ``modelopt_fp4``, not ModelOpt FP8's minimum:
    an A100 runs it (review of quant44: it was a false KV305 error), a V100 does not."""
    model_id = "nvidia/Qwen3-32B-NVFP4"
    m = _model(model_id)
    flag = _serving(model_id, "--quantization", "modelopt")
    a100, v100 = _gpu("nvidia-a100-sxm4-40gb"), _gpu("nvidia-v100-sxm2-32gb")
    new = replace(flag, version="0.20.0")
    assert quant_min_cc("modelopt", "0.20.0") > parse_cc(a100.compute_capability)  # type: ignore[operator]
    assert quantization_refusal(new, m, a100) is None
    assert quantization_refusal(new, m, v100) == (
        "modelopt_fp4",
        "flag",
        quant_min_cc("modelopt_fp4", "0.20.0"),
    )
    # before 0.10.1 no override reads the checkpoint: the flag's method is tested
    old = replace(flag, version="0.9.2")
    assert quantization_refusal(old, m, a100) == ("modelopt", "flag", quant_min_cc("modelopt", "0.9.2"))
    # release unknown: which method is tested depends on it, so no refusal is certain
    assert quantization_refusal(flag, m, v100) is None
    # an FP8 export with the flag is ModelOpt FP8 in every release
    fp8 = _serving("nvidia/Llama-3.1-70B-Instruct-FP8", "--quantization", "modelopt")
    fp8_model = _model("nvidia/Llama-3.1-70B-Instruct-FP8")
    assert fp8_model.quant_method == "modelopt"
    assert quantization_refusal(fp8, fp8_model, v100) == ("modelopt", "flag", quant_min_cc("modelopt", None))
    # the finding names the flag as written and the method vLLM prints
    path = _deployment(
        tmp_path, "v0.20.0", "Tesla-V100-SXM2-32GB", f"--model={model_id}", "--quantization=modelopt"
    )
    out = run_check([str(path)], Options(allow_hub=False)).diagnostics
    kv305 = [d for d in out if d.rule == "KV305"]
    assert len(kv305) == 1
    assert "--quantization modelopt " in kv305[0].message
    assert "The quantization method modelopt_fp4 is not supported" in kv305[0].message


def test_compressed_tensors_group_of_routed_experts_only_is_not_tested() -> None:
    """moonshotai/Kimi-K2.5 (catalogued config.json): one int4 group targeting ``Linear`` with the attention, dense
    MLPs and shared experts ignored, so only the routed experts are quantized. vLLM tests a scheme's minimum only for
    a Linear layer (CompressedTensorsConfig.get_scheme); a FusedMoE layer's CompressedTensorsMoEMethod.get_moe_method
    makes no capability test (vllm@0.11.0 and 0.34.0). Review of quant44: this was a false KV305 error on a T4 up to
    0.11 and on a V100 from 0.12. The same group with only lm_head ignored is still tested."""
    m = _model("moonshotai/Kimi-K2.5")
    assert m.quant_method == "compressed-tensors" and isinstance(m.quant_config, dict)
    s, t4, v100 = _serving("moonshotai/Kimi-K2.5"), _gpu("nvidia-t4"), _gpu("nvidia-v100-sxm2-32gb")
    for version in ("0.11.0", "0.34.0", None):
        assert compressed_tensors_scheme(m, version) is None
        assert quantization_refusal(replace(s, version=version), m, t4) is None
        assert quantization_refusal(replace(s, version=version), m, v100) is None
    every_linear = replace(m, quant_config={**m.quant_config, "ignore": ["lm_head"]})
    floor = CT_SCHEME_MIN_CC_STEPS["w4a16"][0][1]
    assert compressed_tensors_scheme(every_linear, "0.11.0") == ("w4a16", floor)
    assert quantization_refusal(replace(s, version="0.11.0"), every_linear, t4) == (
        "compressed-tensors",
        "checkpoint",
        floor,
    )
    # a group whose targets name the routed experts reaches no Linear layer either
    experts = {**m.quant_config, "ignore": []}
    experts["config_groups"] = {
        name: {**group, "targets": ["re:.*mlp\\.experts.*"]}
        for name, group in m.quant_config["config_groups"].items()
    }
    assert compressed_tensors_scheme(replace(m, quant_config=experts), "0.11.0") is None


#: (arguments of ``vllm serve``, version, model id or None) for the GPU-independent part of KV305's test: a flag, a
#: checkpoint's method, ModelOpt (checkpoint and flag), compressed-tensors, a method with no minimum, none at all
_NEED_CASES: tuple[tuple[tuple[str, ...], str | None, str | None], ...] = (
    (("Qwen/Qwen2.5-7B-Instruct-AWQ", "--quantization", "awq"), "0.22.1", None),
    (("openai/gpt-oss-20b",), "0.11.0", "openai/gpt-oss-20b"),
    (("Qwen/Qwen3-8B-FP8",), "0.11.0", "Qwen/Qwen3-8B-FP8"),
    (("Qwen/Qwen3-8B-FP8",), None, "Qwen/Qwen3-8B-FP8"),
    (("TheBloke/Llama-2-7B-GPTQ", "--quantization", "gptq"), None, None),
    (("TheBloke/Llama-2-7B-GPTQ", "--quantization", "gptq_marlin"), "0.13.0", None),
    (("Qwen/Qwen3-8B",), None, "Qwen/Qwen3-8B"),
)


def _need_cases() -> list[tuple[ServingConfig, object]]:
    out = []
    for args, version, model_id in _NEED_CASES:
        s = replace(_serving(*args), version=version)
        out.append((s, _model(model_id) if model_id else None))
    return out


def test_quantization_need_once_answers_every_gpu_as_the_whole_test() -> None:
    """quantization_refusal given quantization_need's answer (what plan_fleet computes once per container) answers
    what it answers computing it itself, on every catalogue accelerator, and the need is the refusal's triple."""
    from kvlint.accelerators import registry as cat
    from kvlint.memory.compat import quantization_need

    refused = 0
    for s, m in _need_cases():
        need = quantization_need(s, m)
        for acc in cat.catalogue().values():
            whole = quantization_refusal(s, m, acc)
            assert quantization_refusal(s, m, acc, quant_need=need) == whole
            if whole is not None:
                refused += 1
                assert whole == need
            want = startup_refusal(s, m, acc, has_pod=False)
            assert startup_refusal(s, m, acc, has_pod=False, quant_need=need) == want
    assert refused > 0  # the cases reach a refusal


def test_accelerator_build_once_answers_every_gpu_as_the_whole_test() -> None:
    """image_platform_mismatch given accelerator_build's answer (what plan_fleet computes once per container)
    answers what it answers computing it itself, on every catalogue accelerator, for a CUDA, ROCm, TPU, Ascend
    and Gaudi image and vLLM's --device hpu."""
    from kvlint.accelerators import registry as cat
    from kvlint.engines.images import accelerator_build, platform_of
    from kvlint.memory.compat import image_platform_mismatch, platform_refusal

    s = _serving("Qwen/Qwen3-8B")
    servings = [
        replace(s, image=image)
        for image in (
            "vllm/vllm-openai:v0.11.0",
            "rocm/vllm:latest",
            "vllm/vllm-tpu:nightly",
            "quay.io/ascend/vllm-ascend:v0.11.0",
            "ghcr.io/huggingface/tgi-gaudi:2.0.6",
        )
    ] + [_serving("Qwen/Qwen3-8B", "--device", "hpu")]
    said = set()
    for sv in servings:
        build, platform = accelerator_build(sv), platform_of(sv)
        for acc in cat.catalogue().values():
            whole = image_platform_mismatch(sv, acc)
            assert image_platform_mismatch(sv, acc, platform=platform, build=build) == whole
            assert platform_refusal(sv, acc, platform=platform, build=build) == platform_refusal(sv, acc)
            said.add(whole)
    assert {"rocm", "tpu"} <= said and None in said  # the images reach a mismatch and a match


def test_fleet_computes_the_quantization_method_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """plan_fleet asks for KV305's method and minimum, and KV304's accelerator build of the image, once for the
    container, not once per GPU (issue 19: the fleet's 8 GPUs each recomputed them), and the fleet's KV305
    verdicts stay the per-GPU test's."""
    from kvlint.accelerators.site import DEFAULT_FLEET
    from kvlint.engines import images
    from kvlint.memory import compat
    from kvlint.memory.stage import plan_fleet

    cr = next(c for c in run_check([str(AKS_T4)], Options(allow_hub=False)).containers if c.model is not None)
    fleet = tuple(a for a in (lookup(g) for g in DEFAULT_FLEET) if a is not None) + (
        _gpu("nvidia-v100-sxm2-32gb"),
    )
    asked = []
    whole = compat.quant_min_cc

    def counted(*args: object, **kwargs: object) -> object:
        asked.append(args)
        return whole(*args, **kwargs)  # type: ignore[arg-type]

    builds = []  # KV304's accelerator build of the image, likewise GPU-independent
    build_whole = images.accelerator_build

    def build_counted(serving: ServingConfig) -> str | None:
        builds.append(serving)
        return build_whole(serving)

    monkeypatch.setattr(compat, "quant_min_cc", counted)
    monkeypatch.setattr(compat, "accelerator_build", build_counted)
    monkeypatch.setattr(images, "accelerator_build", build_counted)
    entries = plan_fleet(cr.serving, cr.settings, cr.model, cr.placement, fleet, cr.placement.gpus or 1)
    assert len([a for a in fleet if a.vendor == "nvidia"]) > 2
    assert len(asked) == 1 and len(builds) == 1
    monkeypatch.setattr(compat, "quant_min_cc", whole)
    by_gpu = {e.accelerator.id: e for e in entries}
    v100 = by_gpu["nvidia-v100-sxm2-32gb"]
    assert v100.refused_by == "KV305" and v100.verdict == "fails"
    for e in entries:
        if e.detail is None:
            continue
        alone = startup_refusal(cr.serving, cr.model, e.accelerator, dtype=e.detail.plan.dtype, has_pod=False)
        assert (e.refused_by == "KV305") == (alone is not None and alone.rule == "KV305")
