"""KV302 and the V0/V1 choice for fp8 KV caches: kvlint.memory.fp8kv against what vLLM's source decides
(each row names the release and the function read in the wheel; see the module docstring)."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.memory.fp8kv import forced_backend, fp8_kv_support
from kvlint.pipeline import Options, run_documents

T4, V100, A100, L4, H100, B200 = (7, 5), (7, 0), (8, 0), (8, 9), (9, 0), (10, 0)


@pytest.mark.parametrize(
    ("version", "cc", "kvd", "extra", "outcome", "engine"),
    [
        # V0 only: software fp8, runs anywhere (vllm@0.6.6 attention selector)
        ((0, 6, 6), V100, "fp8", {}, "ok", "v0"),
        # 0.8.5: V1 keeps fp8 only with FA3 on Hopper, else V0 fallback (EngineArgs._is_v1_supported_oracle)
        ((0, 8, 5), H100, "fp8", {}, "ok", "v1"),
        ((0, 8, 5), A100, "fp8", {}, "ok", "v0"),
        ((0, 8, 5), B200, "fp8", {}, "ok", "v0"),
        # ... and VLLM_USE_V1=1 turns the fallback into NotImplementedError (_raise_or_fallback)
        ((0, 8, 5), A100, "fp8", {"use_v1_env": True}, "raises", "v1"),
        # 0.10.0-0.10.1: Blackwell also passes (is_kv_cache_dtype_supported without model_config)
        ((0, 10, 1), B200, "fp8", {}, "ok", "v1"),
        ((0, 10, 1), L4, "fp8", {}, "ok", "v0"),
        # 0.10.2: a forced FlashInfer or Triton (sm_89) backend keeps V1
        ((0, 10, 2), L4, "fp8", {}, "ok", "v0"),
        ((0, 10, 2), L4, "fp8", {"backend": "FLASHINFER"}, "ok", "v1"),
        ((0, 10, 2), L4, "fp8", {"backend": "TRITON_ATTN"}, "ok", "v1"),
        ((0, 10, 2), A100, "fp8", {"backend": "TRITON_ATTN"}, "ok", "v0"),
        # Hopper FA3 does not know e5m2 from 0.10 to 0.22.0; FlashInfer takes it from 0.22.1
        ((0, 10, 2), H100, "fp8_e5m2", {}, "raises", "v1"),
        ((0, 12, 0), H100, "fp8_e5m2", {}, "raises", "v1"),
        ((0, 23, 0), H100, "fp8_e5m2", {}, "ok", "v1"),
        # 0.11.0: Triton below sm_89 (cc 8.x) and FlexAttention below 8.0 fail; forced FlashInfer runs
        ((0, 11, 0), A100, "fp8", {}, "raises", "v1"),
        ((0, 11, 0), T4, "fp8", {}, "raises", "v1"),
        ((0, 11, 0), L4, "fp8", {}, "ok", "v1"),
        ((0, 11, 0), A100, "fp8", {"backend": "FLASHINFER"}, "ok", "v1"),
        # 0.11.1+: FlashInfer is picked on cc >= 7.5 (>= 8.0 from 0.24.0) for eligible models; else Triton
        ((0, 12, 0), A100, "fp8", {"head_size": 128}, "ok", "v1"),
        ((0, 12, 0), A100, "fp8", {"head_size": 80}, "raises", "v1"),
        ((0, 12, 0), A100, "fp8", {"dtype": "float32"}, "raises", "v1"),
        ((0, 12, 0), A100, "fp8", {"architectures": ("GptOssForCausalLM",)}, "raises", "v1"),
        ((0, 20, 0), T4, "fp8", {}, "ok", "v1"),
        ((0, 24, 0), T4, "fp8", {}, "raises", "v1"),
        ((0, 24, 0), A100, "fp8", {}, "ok", "v1"),
        ((0, 20, 0), V100, "fp8", {}, "raises", "v1"),
        ((0, 33, 0), L4, "fp8_e5m2", {}, "ok", "v1"),
        # forced backends (0.11.1+ validate the forced one and raise when it is not valid)
        ((0, 12, 0), A100, "fp8", {"backend": "FLASH_ATTN"}, "raises", "v1"),
        ((0, 12, 0), H100, "fp8", {"backend": "FLASH_ATTN"}, "ok", "v1"),
        ((0, 12, 0), L4, "fp8", {"backend": "FLEX_ATTENTION"}, "raises", "v1"),
        # MLA models: V0 MLA and 0.8.5 FlashMLA reject fp8; 0.11.1-0.17 need cc 9/10; 0.18+ sm_89
        ((0, 8, 5), H100, "fp8", {"is_mla": True}, "raises", "v1"),
        ((0, 9, 2), A100, "fp8", {"is_mla": True}, "raises", "v0"),
        ((0, 10, 2), H100, "fp8", {"is_mla": True}, "ok", "v1"),
        ((0, 12, 0), A100, "fp8", {"is_mla": True}, "raises", "v1"),
        ((0, 12, 0), L4, "fp8", {"is_mla": True}, "raises", "v1"),
        ((0, 20, 0), L4, "fp8", {"is_mla": True}, "ok", "v1"),
        ((0, 20, 0), H100, "fp8_e5m2", {"is_mla": True}, "raises", "v1"),
        ((0, 20, 0), A100, "fp8", {"is_mla": True, "mla_disabled": True}, "ok", "v1"),
    ],
)
def test_nvidia_decisions(
    version: tuple[int, int, int], cc: tuple[int, int], kvd: str, extra: dict, outcome: str, engine: str
) -> None:
    got = fp8_kv_support(version, kvd, vendor="nvidia", cc=cc, **extra)
    assert (got.outcome, got.engine) == (outcome, engine), got
    if outcome == "raises":
        assert got.source.startswith("vllm@") and got.why


def test_amd_and_unknowns() -> None:
    # ROCm: 0.8.5 falls back to V0; V1 on a GPU without fp8 (gfx90a) most likely fails, MI300-class runs
    assert fp8_kv_support((0, 8, 5), "fp8", vendor="amd", cc=None).engine == "v0"
    assert fp8_kv_support((0, 12, 0), "fp8", vendor="amd", cc=None).outcome == "likely_raises"
    assert fp8_kv_support((0, 12, 0), "fp8", vendor="amd", cc=None, gpu_has_fp8=True).outcome == "ok"
    assert fp8_kv_support((0, 12, 0), "auto", vendor="nvidia", cc=A100).outcome == "unknown"
    assert fp8_kv_support((0, 12, 0), "fp8", vendor="intel", cc=None).outcome == "unknown"


def test_forced_backend_by_version() -> None:
    assert forced_backend((0, 10, 2), "FLASH_ATTN_VLLM_V1", None) == "FLASH_ATTN"
    assert forced_backend((0, 14, 1), "FLASHINFER", None) == "FLASHINFER"
    assert forced_backend((0, 15, 1), "FLASHINFER", None) is None  # the env var is no longer read
    assert forced_backend((0, 13, 0), "FLASHINFER", "TRITON_ATTN") == "TRITON_ATTN"  # the flag wins
    assert forced_backend((0, 12, 0), None, "TRITON_ATTN") is None  # --attention-backend from 0.13


POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p, annotations: {{kvlint.io/accelerator: {acc}}}}}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:{tag}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
    args: ["--model", "{model}", "--dtype", "half", "--max-model-len", "{len}"{kv}]
"""


def _run(acc: str, tag: str, kv: str = "", length: int = 4096, model: str = "Qwen/Qwen2.5-1.5B-Instruct"):
    kv_arg = f', "--kv-cache-dtype", "{kv}"' if kv else ""
    text = POD.format(acc=acc, tag=tag, kv=kv_arg, len=length, model=model)
    return run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))


def test_kv302_on_a_t4_with_vllm_0_24_and_not_with_0_20() -> None:
    res = _run("nvidia-tesla-t4", "v0.24.0", "fp8")
    (d,) = [d for d in res.diagnostics if d.rule == "KV302"]
    assert d.severity == "error" and "Tesla T4" in d.message and "vLLM 0.24.0" in d.message
    assert d.loc is not None and d.loc.line == 9
    # the engine never serves, so no capacity findings
    assert not {"KV101", "KV102", "KV103", "KV104", "KV105"} & {x.rule for x in res.diagnostics}
    assert not [x for x in _run("nvidia-tesla-t4", "v0.20.0", "fp8").diagnostics if x.rule == "KV302"]


def test_fp8_is_never_suggested_where_it_cannot_run() -> None:
    """A capacity finding's fix offers --kv-cache-dtype fp8 only where that release runs it on the GPU:
    on an A100, vLLM 0.11.0 sends fp8 to Triton (fails below sm_89) while 0.12.0 picks FlashInfer."""
    model = "meta-llama/Llama-3.1-8B-Instruct"
    old = _run("nvidia-a100-sxm4-40gb", "v0.11.0", length=131072, model=model)
    fixes = " ".join(d.fix for d in old.diagnostics if d.rule.startswith("KV10"))
    assert fixes and "--kv-cache-dtype fp8" not in fixes
    new = _run("nvidia-a100-sxm4-40gb", "v0.12.0", length=131072, model=model)
    assert "--kv-cache-dtype fp8" in " ".join(d.fix for d in new.diagnostics if d.rule.startswith("KV10"))


def test_kv302_fix_names_only_gpus_where_the_release_runs_it() -> None:
    text = POD.format(
        acc="nvidia-l4",
        tag="v0.12.0",
        model="deepseek-ai/DeepSeek-V2-Lite",
        len=4096,
        kv=', "--kv-cache-dtype", "fp8"',
    )
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV302"]
    assert "H100" in d.fix and "B200" in d.fix and "L4" not in d.fix  # MLA fp8 needs cc 9/10 in 0.12
    old = POD.format(
        acc="nvidia-a100-sxm4-80gb",
        tag="v0.8.5",
        model="deepseek-ai/DeepSeek-V2-Lite",
        len=4096,
        kv=', "--kv-cache-dtype", "fp8"',
    )
    (d,) = [
        d
        for d in run_documents(load_text(old, "p.yaml"), Options(allow_hub=False)).diagnostics
        if d.rule == "KV302"
    ]
    assert "a GPU where" not in d.fix  # no GPU runs MLA with fp8 KV in 0.8.5
    assert "vllm@0.8.5:" in d.message
