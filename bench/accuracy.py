"""Replay the ground-truth engine start-ups through kvlint's memory models and report the error.

Usage: ``python bench/accuracy.py [--cases PATH] [--models DIR] [--why]``

Cases: the shared ``../shared/groundtruth/cases.yaml`` (copy: ``fixtures/plan/groundtruth_cases.yaml``) plus
this project's second set ``bench/groundtruth/cases.yaml`` (gt-2NN and gt-3NN, same format). Every vLLM case is
classified: replayed (:data:`REPLAY`: model config from ``../shared/corpus/models``, ``fixtures/plan/models``,
``bench/groundtruth/models`` or the bundled catalogue, parsed by :func:`kvlint.models.resolve_model`; GPU from
the case or :func:`kvlint.accelerators.lookup`; version from the case or its log family) or skipped with the
reason (:data:`SKIP`). TGI and SGLang cases are replayed by ``bench/accuracy_engines.py``.

For each replayed case it prints predicted vs reported weights, KV GiB (printed, or implied by the printed block
count or token count for full-attention models: ``src`` column), KV tokens, the tokens kvlint derives from the
engine's *own* reported KV GiB, and the verdict (ok/risky/fail:
:attr:`kvlint.memory.vllm.VllmPlanDetail.verdict`) against the outcome. Then the median and p90 absolute KV
error over the started cases (outcome ``ok``) by version era and by model family, and the verdict confusion
matrix, both in-sample and leave-one-out (calibration refitted without the case,
:func:`kvlint.memory.calibration.refit`); and for every calibrated term alone, the leave-one-out figure with
only that term refitted. These are benchmark figures, not tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kvlint.accelerators import lookup  # noqa: E402
from kvlint.memory import calibration as cal  # noqa: E402
from kvlint.memory.versions import resolve_version  # noqa: E402
from kvlint.memory.vllm import VllmPlanDetail, VllmSettings, plan_vllm_detailed  # noqa: E402
from kvlint.models import resolve_model  # noqa: E402

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

GiB = 1 << 30
CORPUS_MODELS = SHARED / "corpus/models"
FIXTURE_MODELS = ROOT / "fixtures" / "plan" / "models"
SHARED_CASES = SHARED / "groundtruth/cases.yaml"
LOCAL_CASES = ROOT / "bench" / "groundtruth" / "cases.yaml"
LOCAL_MODELS = ROOT / "bench" / "groundtruth" / "models"


@dataclass(frozen=True)
class Replay:
    """How to replay one case.

    ``model_dir``: ``<org>--<name>`` directory holding config.json. ``version``: engine version when the case gives
    none (read from its log family/date). ``gpu``: accelerator reference for :func:`lookup` (its CUDA total is used
    when the case prints none). ``quantization``: the checkpoint's method when config.json is the bf16 base model.
    ``settings``: extra :class:`VllmSettings` fields. ``why``: the reasoning, shown with ``--why``.
    """

    model_dir: str
    gpu: str
    version: str | None = None
    quantization: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    why: str = ""


LATEST_SERIES = (
    "'vllm/vllm-openai:latest' in the document's pod spec at every revision up to 356b8e03 (2026-02-24), and every run "
    "but Mistral-Small-3.2 was already in its first revision, beb38b5d..745f62f3 of 2026-01-26 "
    "(llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md) -> the image of that date, 0.14.x "
    "(0.14.0 in January 2026, 0.14.1 pinned by downstream projects on 2026-01-27). The 'v0.11.0' of the later "
    "revisions (5977e162, 2026-02-26) is the Mistral-Small-3.2 run's release, added on 2026-02-23 with its own "
    "'vLLM version: 0.11.0' line, written into the cleaned-up pod template. Its printed DEBUG line "
    "('Free memory on device ... Actual usage is ...', --kv-cache-memory with a 150 MiB buffer) is also in 0.11.0's "
    "gpu_worker.py, so the log does not separate the two; kvlint's plan is the same for 0.13.0 - 0.19.0, while at "
    "0.11.0 the profile's sampler is FlashInfer's (vllm@0.11.0 topk_topp_sampler.py; PyTorch-native from 0.11.1, "
    "vllm-project/vllm#26859), 3.3 - 5.2 GiB less activation than the printed 4.76 - 7.38 GiB"
)

#: gt-283 / gt-284: the same DP 8 + EP run of Qwen3-Coder-480B FP8 on H20, at two utilizations (from the cases).
_QWEN3_CODER_DP8 = Replay(
    "Qwen--Qwen3-Coder-480B-A35B-Instruct",
    "h200",
    "0.10.1",
    quantization="fp8",
    settings={"data_parallel_size": 8, "enable_expert_parallel": True},
    why="the 0.10.1 dev build of the PR (v0.10.1.dev101) replayed at 0.10.1; Qwen3-Coder-480B-A35B-Instruct from the "
    "catalogue with fp8 given (the FP8 checkpoint); -dp=8 --enable-expert-parallel, no TP; the H20 is the 141 GB "
    "variant by the case's arithmetic (6.99 GiB of KV for 0.05 of utilization = ~139.8 GiB), the same HBM3e "
    "part as the H200, whose catalogue total (139.72 GiB) stands in, our reading; the model's own 262,144-token "
    "context",
)


#: gt-345 - gt-357: llm-d-incubation/llm-d-planner's vLLM 0.19.0 accuracy sweep on H100 80GB (79.19 GiB printed), one
#: committed server log per run (utilization 0.95, max_model_len 8,192, prefix caching off, the PyTorch sampler the log
#: names).
_PLANNER_019 = (
    "vLLM 0.19.0 (the log's banner); the sweep's H100 80GB, 79.19 GiB printed; --gpu-memory-utilization 0.95, "
    "--max-model-len 8192, --no-enable-prefix-caching (no change to the profile); the log's 'FlashInfer top-p/top-k "
    "sampling is available but disabled by default', the release's default sampler"
)


REPLAY: dict[str, Replay] = {
    "gt-003": Replay(
        "meta-llama--Llama-3.1-8B", "rtx-3090", "0.6.4", why="V0 'Memory profiling results' (~0.6.4)"
    ),
    "gt-007": Replay(
        "openai--gpt-oss-120b",
        "h100",
        "0.11.0",
        settings={"flashinfer_sampler": False, "mxfp4_backend": "marlin"},
        why="2025-10 report (~0.11), MXFP4 checkpoint, H100 80GB. A pip install, not the image: the traceback runs "
        "from /opt/conda/envs/vllm_env/lib/python3.13/site-packages/vllm. vLLM 0.11.0 declares FlashInfer only as "
        "an extra (wheel METADATA: flashinfer-python==0.3.1; extra == 'flashinfer'), and without it "
        "TopKTopPSampler falls back to the PyTorch-native sampler (vllm@0.11.0:vllm/v1/sample/ops/"
        "topk_topp_sampler.py::TopKTopPSampler.__init__, 'FlashInfer is not available'): replayed with the native "
        "path (as VLLM_USE_FLASHINFER_SAMPLER=0). For the same reason the MXFP4 MoE on Hopper takes Marlin: "
        "0.11.0's get_mxfp4_backend (mxfp4.py, read in the wheel) returns MARLIN without FlashInfer when the optional "
        "triton_kernels module is missing (not a dependency of the wheel), and Marlin pads the intermediate size to "
        "128 (not 64): about 1.35 GiB more (vllm-project/vllm#23278 printed 65.97 GiB on an H100 under Marlin); "
        "replayed with mxfp4_backend marlin",
    ),
    "gt-008": Replay("openai--gpt-oss-120b", "h100", why="0.14.1 as stated; H100 80GB"),
    "gt-009": Replay(
        "Qwen--Qwen2.5-72B",
        "a100-40gb",
        settings={"tensor_parallel_size": 4, "use_v1": False, "max_model_len": 128000},
        why="Qwen2.5-VL-72B's text decoder = Qwen2.5-72B config (vision tower not counted); 34.43 GiB/rank "
        "weights -> TP4; V0 log family; VL config's max_position_embeddings 128000",
    ),
    "gt-010": Replay(
        "Qwen--Qwen2.5-7B",
        "rtx-4060",
        "0.6.6",
        "awq",
        why="V0 0.6.x log family; 5.2 GB weights = 4-bit checkpoint",
    ),
    "gt-052": Replay("openai--gpt-oss-20b", "h100", "0.14.1", why=LATEST_SERIES),
    "gt-054": Replay(
        "meta-llama--Llama-3.3-70B-Instruct",
        "h100",
        "0.14.1",
        "fp8",
        why=LATEST_SERIES + "; FP8-dynamic checkpoint of the bf16 config",
    ),
    "gt-056": Replay("meta-llama--Llama-3.1-8B", "h100", "0.14.1", why=LATEST_SERIES),
    "gt-058": Replay("Qwen--Qwen3-0.6B", "h100", "0.14.1", why=LATEST_SERIES),
    "gt-062": Replay(
        "Qwen--Qwen2.5-7B", "rtx-4080", None, "awq", why="AWQ checkpoint of the Qwen2.5-7B config"
    ),
    "gt-071": Replay(
        "meta-llama--Llama-3.1-8B", "l4", "0.7.0", why="V0 MQLLMEngine log (~0.7); 14.99 GB = 8B bf16"
    ),
    "gt-074": Replay("openai--gpt-oss-20b", "l4", why="version not stated: newest rules assumed"),
    # Configs below are catalogue extras (kvlint/models/extra_sources.yaml), not in the shared corpus: the
    # fixtures copy is addressed by absolute path (``mdir / abs`` is ``abs``).
    "gt-066": Replay(
        str(FIXTURE_MODELS / "Qwen--Qwen2.5-1.5B"),
        "t4",
        "0.7.2",
        settings={"dtype": "float16"},
        why="0.7.2 V0 as stated; T4 (CC 7.5, no bf16) so the bf16 checkpoint is cast to float16 as the case "
        "says; Qwen2.5-1.5B base config = the Instruct architecture (only max_position_embeddings/eos "
        "differ; max_model_len 32768 is set explicitly)",
    ),
    # ---- second set (bench/groundtruth/cases.yaml). Model dirs not under ../shared/corpus/models come from
    # fixtures/plan/models, bench/groundtruth/models (SOURCE.md there) or the bundled catalogue (kvlint/data/models).
    "gt-201": Replay(
        "meta-llama--Meta-Llama-3-8B",
        "mi300x",
        "0.5.5",
        settings={"kv_cache_dtype": "fp8"},
        why="ROCm build from source of Aug 2024 (V0 gpu_executor.py line) -> 0.5.x; MI300X; only --kv-cache-dtype fp8",
    ),
    "gt-202": Replay(
        "meta-llama--Meta-Llama-3-8B",
        "mi300x",
        "0.5.5",
        why="as gt-201 without fp8 KV; KV from the printed GPU blocks (78,897 x 16 tokens x 128 KiB)",
    ),
    "gt-203": Replay(
        "google--medgemma-27b-it",
        "b200",
        why="gemma-3-27b-it architecture: MedGemma 27B multimodal shares Gemma 3 27B's config (62 layers, hidden 5376, "
        "16 KV heads x 128, 5:1 sliding/full, SigLIP 896px, 256 tokens per image); 0.11.2 as stated; B200",
    ),
    "gt-209": Replay(
        "Qwen--Qwen3-0.6B",
        "h100",
        "0.9.2",
        settings={"use_v1": False},
        why="VLLM_USE_V1=0 (V0 forced); the project pins vllm>=0.9.1 and the log is the V0 format -> 0.9.2; "
        "79.19 GiB printed (H100-80GB class)",
    ),
    "gt-210": Replay("Qwen--Qwen2-7B-Instruct", "a100-80gb", why="0.10.1.1 as stated, A100 80GB"),
    "gt-211": Replay("Qwen--Qwen2-7B-Instruct", "a100-80gb", why="0.10.1.1 as stated, A100 80GB"),
    "gt-212": Replay(
        "Qwen--Qwen2-7B-Instruct", "a100-40gb", why="0.10.1.1, A100 40GB (file name), TP2 across two nodes"
    ),
    "gt-213": Replay("Qwen--Qwen2-7B-Instruct", "a100-80gb", why="0.10.1.1, TP2 on one node"),
    "gt-214": Replay("Qwen--Qwen2-7B-Instruct", "a100-80gb", why="0.10.1.1, TP2 on one node"),
    "gt-215": Replay(
        "openai--gpt-oss-120b", "a100-80gb", why="0.10.1.1, MXFP4 checkpoint, TP4 Ray across nodes"
    ),
    "gt-217": Replay(
        "meta-llama--Meta-Llama-3-8B",
        "h100",
        "0.6.5",
        why="Dec 2024 build of the PR under review (vllm#10511): its 'Memory profiling results' table with a "
        "'duration' row is the branch's format, not the 0.6.5 wheel's ('Memory profiling takes X seconds'); replayed "
        "as 0.6.5, which carries the branch's non-torch accounting (utils.py::memory_profiling); 79.22 GiB printed",
    ),
    "gt-218": Replay(
        "meta-llama--Meta-Llama-3-8B", "h100", "0.6.5", why="as gt-217 with -tp 2 (no KV printed)"
    ),
    "gt-219": Replay(
        "meta-llama--Llama-3.2-11B-Vision-Instruct",
        "h100",
        "0.6.6",
        why="Jan 2025 main, V0 -> 0.6.6; the Instruct config has the base model's architecture (mllama, 40 layers, "
        "8 cross-attention); 79.22 GiB printed",
    ),
    "gt-220": Replay(
        "meta-llama--Llama-2-7b-hf",
        "h100",
        "0.8.0",
        settings={"use_v1": False},
        why="V0 worker.py lines of an ~0.8 image -> V0 0.8.x; the manifest has --enable-lora but the log is not "
        "that start-up: torch.compile ran (0.8's V0 turns it off with LoRA, config.py) and the 12.55 GiB of weights "
        "hold no LoRA stacks (0.8 allocates them inside the load profiler); 79.19 GiB",
    ),
    "gt-221": Replay(
        "Qwen--Qwen2.5-14B",
        "rtx-4090",
        "0.7.0",
        why="DeepSeek-R1-Distill-Qwen-14B is a fine-tune of Qwen2.5-14B (same config shapes, 131072 positions); "
        "V0 ~0.7 log lines",
    ),
    "gt-222": Replay(
        "meta-llama--Llama-3.1-8B",
        "l40s",
        "0.8.4",
        why="V1 main of April 2025 (~0.8.4); L40S; KV implied by the printed tokens (128 KiB/token)",
    ),
    "gt-255": Replay(
        "deepseek-ai--DeepSeek-R1-Distill-Qwen-1.5B",
        "gpu-8gb",
        "0.8.0",
        settings={"use_v1": False},
        why="VLLM_USE_V1=0 run of a March 2025 build with [file:line] log tags -> V0 0.8.0; an 8 GB GPU, 7.75 GiB "
        "printed; the bundled config of the named checkpoint",
    ),
    "gt-256": Replay(
        "Qwen--Qwen3-8B",
        "rtx-a5000",
        "0.21.0",
        why="vLLM 0.21.0 as stated; RTX A5000; the printed gpu_memory_utilization 0.9764 and max_model_len 16384 "
        "(the concurrency line); the LMCache connector is not modelled (kvlint says so)",
    ),
    # llm-d-benchmark's measured runs at a later commit than the shared gt-052 - gt-058 (same document, pod spec
    # and log lines, so the same release family)
    "gt-258": Replay(
        "openai--gpt-oss-120b",
        "h100",
        "0.14.1",
        settings={"gpu_memory_utilization": 0.95},
        why=LATEST_SERIES
        + "; gpu_memory_utilization 0.95, not the table's 0.9: the case's own printed terms close "
        "only at 0.95 (0.95 x 79.18 - 64.38 - 7.38 - 0.13 = 3.33 GiB printed; at 0.9 they give -0.63 and vLLM would "
        "not have started)",
    ),
    "gt-259": Replay("Qwen--Qwen3-32B", "h100", "0.14.1", why=LATEST_SERIES),
    "gt-260": Replay("Qwen--Qwen3-32B", "h100", "0.14.1", why=LATEST_SERIES),
    "gt-261": Replay(
        "Qwen--Qwen3-32B", "h100", "0.14.1", why=LATEST_SERIES + "; the 32,000-token run that failed"
    ),
    "gt-262": Replay(
        "mistralai--Mistral-Small-3.1-24B-Instruct-2503",
        "h100",
        "0.11.0",
        settings={"dtype": "bfloat16"},
        why="v0.11.0 as the document's later revision states for this run; the bundled Mistral-Small-3.1 config has "
        "Mistral-Small-3.2's architecture (Mistral3ForConditionalGeneration, Pixtral vision tower, 40 layers, hidden "
        "5120, 8 KV heads x 128); gpu_memory_utilization 0.95 and 79.19 GiB printed",
    ),
    "gt-263": Replay(
        "meta-llama--Llama-3.1-8B",
        "rtx-3090",
        "0.5.5",
        why="vllm==0.5.5 pinned by the project (reason/README.md); its LLM() keeps tensor_parallel_size 1, "
        "gpu_memory_utilization 0.9 and the 131,072-token context (so V0 chunked prefill at 512 tokens); Llama-3.1-8B "
        "config = the Instruct architecture",
    ),
    "gt-269": Replay(
        "MiniMaxAI--MiniMax-M2.5",
        "mi300x",
        "0.17.1",
        why="MiniMax-M2 FP8 on the bundled MiniMax-M2.5 config, of which MiniMaxAI/MiniMax-M2 is a cited variant "
        "(kvlint/models/sources/variants.yaml: transformers' MiniMaxM2Config defaults; 62 layers, 8 KV heads x 128, "
        "FP8 block weights); vLLM 0.17.1 ROCm wheel as stated; TP2 on 2x MI300X, "
        "every other setting at its default (the recipe's TP2 command)",
    ),
    "gt-270": Replay(
        "deepseek-ai--deepseek-coder-6.7b-instruct",
        "t4",
        "0.4.3",
        settings={"dtype": "float16"},
        why="0.4.2 by its log lines (distributed_gpu_executor.py:45), one release older than kvlint covers; its "
        "Worker.determine_num_available_blocks and _get_and_verify_max_len are 0.4.3's (both wheels read), so "
        "replayed at 0.4.3: 2x T4 at TP2, --dtype float16, the 65,536-token context derived from 16,384 positions x "
        "linear RoPE factor 4; KV from the printed 507 GPU blocks (4 MiB per block per rank)",
    ),
    "gt-282": Replay(
        "zai-org--GLM-4.7-FP8",
        "a100-80gb",
        "0.15.0",
        quantization="fp8",
        why="a main-branch nightly of 2026-01-28 (commit 58996f35), between the 0.14.x and 0.15.0 releases, whose fit "
        "check is 0.14.0 - 0.16.x's: one request of the whole model against the smallest pipeline stage's memory "
        "(both wheels read); replayed at 0.15.0. GLM-4.7-FP8 from the catalogue (abridged config without "
        "quantization_config: its name's FP8 taken with the block-wise settings of the catalogued zai-org/GLM-5-FP8, an "
        "assumption (docs/engine-memory-model.md §1.10), and fp8 given as the case records); 'NVIDIA A100' x 8 at PP 8 is the 80 GB card (the ~355 GB FP8 checkpoint "
        "does not fit eight 40 GB cards, our arithmetic); the command's utilization 0.925, max_num_seqs 128, "
        "max_model_len 202,752",
    ),
    "gt-283": _QWEN3_CODER_DP8,
    "gt-284": _QWEN3_CODER_DP8,  # the same run at --gpu-memory-utilization 0.95 (the case gives it)
    "gt-289": Replay(
        "Qwen--Qwen3-0.6B",
        "a100-80gb",
        "0.10.2",
        settings={"max_num_batched_tokens": 8192},
        why="main of 2025-09-10 (the pull request's base, between 0.10.1.1 and 0.10.2) replayed at 0.10.2; the A100 is "
        "the 80 GB one by its 69.66 GiB of KV; lm_eval's vllm backend builds the offline LLM class, whose "
        "max_num_batched_tokens on an A100 is 8,192 (vllm@0.10.2:vllm/engine/arg_utils.py::_set_default_args, "
        "UsageContext.LLM_CLASS; the H100-class 16,384 excludes 'a100' by name)",
    ),
    "gt-300": Replay(
        "Qwen--Qwen2.5-32B",
        "rtx-a6000",
        "0.6.4.post1",
        quantization="awq",
        settings={"max_model_len": 4096},
        why="the 0.6.4.post1 image as stated; Qwen2.5-32B config (the Instruct architecture) with the AWQ checkpoint's "
        "quantization; the A6000's CUDA total as the log prints it (47.54 GiB, ECC off); --enable-prefix-caching does not "
        "change V0's memory profile",
    ),
    "gt-313": Replay(
        "meta-llama--Llama-3.1-8B",
        "l4",
        "0.11.0",
        settings={"flashinfer_sampler": False},
        why="Llama-3.1-8B config (the Instruct model's shapes); the Colab L4 of the repository's name and scripts; "
        "the log's 'FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling' (a pip install: FlashInfer is an extra of the wheel), so the native sampler (flashinfer_sampler False)",
    ),
    "gt-314": Replay(
        "meta-llama--Meta-Llama-3-8B",
        "a100-80gb",
        "0.15.0",
        quantization="awq",
        settings={"max_num_batched_tokens": 8192},
        why="0.15.0rc2 dev replayed as 0.15.0; llm-compressor's W4A16 AWQ output (4-bit group-wise weights with 16-bit "
        "scales, lm-head and embeddings unquantized) has AWQ's bytes, so the bf16 config with the 'awq' label (the "
        "bare 'compressed-tensors' label says no bit width: kvlint would keep 8.46 GiB of weights against 5.32 printed); "
        "the offline LLM class's 8,192 batched tokens are printed (its A100 default), the 80 GB A100 our reading",
    ),
    "gt-315": Replay(
        "Qwen--Qwen2.5-14B",
        "rtx-a5000",
        "0.13.0",
        quantization="awq",
        settings={"dtype": "float16"},
        why="Qwen2.5-14B config (the Instruct architecture) with the AWQ checkpoint's quantization; the A5000 of the "
        "repository's guides",
    ),
    "gt-316": Replay(
        "microsoft--Phi-3-mini-4k-instruct",
        "rtx-3090",
        "0.19.1",
        settings={"dtype": "float16"},
        why="the catalogue's Phi-3-mini-4k-instruct config (sliding_window 2047); a 24 GB RTX 3090 under WSL 2, whose "
        "desktop memory is not modelled",
    ),
    "gt-317": Replay(
        "openai--gpt-oss-20b",
        "gb10",
        "0.13.0",
        why="the NGC 26.01 container's vLLM 0.13.0 replayed as 0.13.0; openai/gpt-oss-20b's config for its abliterated "
        "fine-tune; GB10's 121.69 GiB CUDA total (unified memory)",
    ),
    "gt-318": Replay(
        "Qwen--Qwen3-30B-A3B",
        "h100",
        "0.22.1",
        quantization="fp8",
        settings={"dtype": "bfloat16"},
        why="Qwen3-30B-A3B config (Instruct-2507 has the same shapes) quantized online to FP8 (--quantization fp8)",
    ),
    "gt-319": Replay(
        "Qwen--Qwen3-30B-A3B",
        "a100-80gb",
        "0.26.1",
        settings={"dtype": "bfloat16"},
        why="a 0.26.1rc1 source build replayed as 0.26.1; Qwen3-30B-A3B config for Qwen3-Coder-30B-A3B (same shapes); "
        "the A100-SXM4-80GB the MoE config path names",
    ),
    "gt-320": Replay(
        "Qwen--Qwen2.5-32B",
        "a100-40gb",
        "0.13.0",
        quantization="awq",
        settings={"dtype": "float16"},
        why="Qwen2.5-32B config for Qwen2.5-Coder-32B (same shapes) with the AWQ checkpoint's quantization; a 40 GB A100 "
        "is our reading (the 2,048-token default and the memory left after weights and KV)",
    ),
    "gt-323": Replay(
        "google--gemma-4-26B-A4B",
        "h200",
        "0.20.2",
        settings={"dtype": "bfloat16"},
        why="the catalogue's Gemma 4 26B-A4B config for the -it checkpoint (same shapes); the H200 the fused-MoE config "
        "path names (E=128,N=704,device_name=NVIDIA_H200)",
    ),
    "gt-324": Replay(
        "Qwen--Qwen2.5-1.5B",
        "a100-40gb",
        "0.31.0",
        settings={"dtype": "float16"},
        why="Qwen2.5-1.5B config for Qwen2.5-Coder-1.5B-Instruct (same shapes); the 39.49 GiB CUDA total the worker "
        "prints (a 40 GB A100, our reading); utilization not set (0.92, the default from 0.20.0)",
    ),
    "gt-325": Replay(
        "Qwen--Qwen2.5-3B",
        "rtx-4090",
        "0.10.2",
        settings={"dtype": "float16", "max_num_seqs": 1, "flashinfer_sampler": False},
        why="the catalogue's Qwen2.5-3B config; the 23.65 GiB CUDA total the worker prints (an RTX 4090 on AutoDL, our "
        "reading); --max-num-seqs 1; the log's 'FlashInfer is not available' line, so the native sampler (one row: "
        "the forward pass sets the peak either way)",
    ),
    "gt-326": Replay(
        "Qwen--Qwen2.5-3B",
        "rtx-3090",
        "0.17.0",
        settings={"dtype": "float16"},
        why="the catalogue's Qwen2.5-3B config for the Instruct model (same shapes); a 24 GB GeForce is our reading "
        "(weights + KV exceed 0.9 x a 22 GiB A10/L4; a 3090 and a 4090 differ by 0.05 GiB)",
    ),
    "gt-327": Replay(
        "Qwen--Qwen2.5-14B",
        "a100-40gb",
        "0.8.5.post1",
        why="Qwen2.5-14B config for DeepSeek-R1-Distill-Qwen-14B (same shapes); a 40 GB A100 is our reading (weights + "
        "KV need more than 0.9 x 32 GB, and a 44.5 GiB card would leave 6.5 GiB a 2,048-token profile does not take)",
    ),
    "gt-331": Replay(
        "Qwen--Qwen2.5-7B",
        "a100-40gb",
        "0.16.0",
        quantization="bitsandbytes",
        settings={"dtype": "bfloat16"},
        why="Qwen2.5-7B config for unsloth's bnb-4bit Instruct checkpoint; Colab's 40 GB A100, our reading",
    ),
    "gt-332": Replay(
        "Qwen--Qwen3-30B-A3B",
        "h100",
        "0.10.2",
        settings={"dtype": "bfloat16", "flashinfer_sampler": False},
        why="Qwen3-30B-A3B config for the Instruct-2507 checkpoint (same shapes); the H100 80GB HBM3 the fused-MoE "
        "config path names, 79.18 GiB printed; --enable-prefix-caching does not change the profile; the log's 'FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling' (a pip install: FlashInfer is an extra of the wheel), so the native sampler (flashinfer_sampler False)",
    ),
    "gt-333": Replay(
        "Qwen--Qwen3-30B-A3B",
        "rtx-pro-6000",
        "0.12.0",
        settings={"dtype": "bfloat16"},
        why="Qwen3-30B-A3B config for the Instruct-2507 checkpoint (same shapes); the RTX PRO 6000 Blackwell Server "
        "Edition the fused-MoE config path names; --enforce-eager",
    ),
    "gt-334": Replay(
        "meta-llama--Llama-3.1-8B",
        "a100-80gb",
        "0.17.1",
        settings={"dtype": "bfloat16"},
        why="Llama-3.1-8B config (the Instruct model's shapes); 'single A100' in the repository's scripts, the 80 GB "
        "one by the printed weights + KV",
    ),
    "gt-335": Replay(
        "Qwen--Qwen2.5-3B",
        "a100-80gb",
        "0.17.1",
        settings={"dtype": "bfloat16"},
        why="the catalogue's Qwen2.5-3B config for the repository's merged LoRA distillation of Qwen2.5-3B-Instruct; the "
        "same A100 as gt-334",
    ),
    "gt-340": Replay(
        "Qwen--Qwen3-4B",
        "rtx-pro-6000",
        "0.12.0",
        settings={"dtype": "bfloat16"},
        why="the catalogue's Qwen3-4B config; the RTX PRO 6000 Blackwell Server Edition of the same machine's server log "
        "(gt-333), 94.97 GiB printed; verl's rollout flags (max_num_seqs 8, 8,192 batched tokens, utilization 0.5); "
        "--logprobs-mode processed_logprobs keeps the sampler native, which 0.12.0 takes anyway",
    ),
    "gt-341": Replay(
        "meta-llama--Meta-Llama-3-8B",
        "a800-80gb",
        "0.13.0",
        settings={"dtype": "bfloat16"},
        why="the Meta-Llama-3-8B config (bench/groundtruth/models) for the Instruct model; an A800 80GB by the log "
        "(compute capability 8.0, and the 8,192-token scheduler default vLLM gives only to >= 70 GiB GPUs not named "
        "A100); TP 4",
    ),
    "gt-342": Replay(
        "Qwen--Qwen2.5-32B",
        "rtx-a5000",
        "0.6.3.post1",
        settings={"max_model_len": 32768},
        why="Qwen2.5-32B config (the Instruct architecture) at the Instruct checkpoint's 32,768-token length (its "
        "max_position_embeddings; the base config's 131,072 would turn V0's long-context chunked prefill on), the "
        "length the concurrency line prints; V0 at TP 4 as printed; the 4x RTX A5000 of the "
        "repository's environment notes (our reading: the notes are a later commit, and the KV per rank fits 24 GB)",
    ),
    "gt-343": Replay(
        "meta-llama--Llama-3.1-8B",
        "a100-40gb",
        "0.11.0",
        settings={"dtype": "bfloat16", "flashinfer_sampler": False},
        why="Llama-3.1-8B config (the Instruct model's shapes); the A100 of the repository's README, the 40 GB one by "
        "the printed weights + KV; the log's 'FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling' (a pip install: FlashInfer is an extra of the wheel), so the native sampler (flashinfer_sampler False)",
    ),
    "gt-344": Replay(
        "Qwen--Qwen3-30B-A3B",
        "rtx-3090",
        "0.10.0",
        quantization="awq",
        settings={"dtype": "bfloat16", "flashinfer_sampler": False},
        why="Qwen3-30B-A3B config for the Thinking-2507 checkpoint (same shapes) with 4-bit AWQ bytes (the compressed-"
        "tensors W4A16 checkpoint, run on Marlin); the RTX 3090 of the script's nvidia-smi line and the MoE config path; "
        "the log's 'FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling' (a pip install: FlashInfer is an extra of the wheel), so the native sampler (flashinfer_sampler False)",
    ),
    "gt-345": Replay(
        "Qwen--Qwen3-8B",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; the shared corpus's Qwen3-8B config",
    ),
    "gt-346": Replay(
        "codellama--CodeLlama-7b-hf",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; the catalogue's CodeLlama-7b config (MHA, 32 KV heads)",
    ),
    "gt-347": Replay(
        "google--gemma-2-9b",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; the shared corpus's gemma-2-9b config for the -it model (same shapes)",
    ),
    "gt-348": Replay(
        "google--gemma-3-27b-it",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; the catalogue's gemma-3-27b-it config (vision tower and text stack)",
    ),
    "gt-349": Replay(
        "microsoft--phi-4",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; the shared corpus's phi-4 config",
    ),
    "gt-350": Replay(
        "Qwen--Qwen1.5-MoE-A2.7B",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; the catalogue's Qwen1.5-MoE-A2.7B config",
    ),
    "gt-351": Replay(
        "Qwen--Qwen3-30B-A3B",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; the shared corpus's Qwen3-30B-A3B config",
    ),
    "gt-352": Replay(
        "meta-llama--Llama-3.1-8B",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; Llama-3.1-8B config for the Instruct model (same shapes); TP 2",
    ),
    "gt-353": Replay(
        "Qwen--Qwen2.5-72B",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; Qwen2.5-72B config for the Instruct model (same shapes); TP 2",
    ),
    "gt-354": Replay(
        "mistralai--Mixtral-8x7B-v0.1",
        "h100",
        "0.19.0",
        why=_PLANNER_019
        + "; the shared corpus's Mixtral-8x7B-v0.1 config for the Instruct model (same shapes); TP 2",
    ),
    "gt-355": Replay(
        "meta-llama--Llama-3.1-8B",
        "h100",
        "0.19.0",
        why=_PLANNER_019
        + "; Llama-3.1-8B config for the Instruct model; pipeline-parallel size 2 (PP0's printed KV)",
    ),
    "gt-356": Replay(
        "meta-llama--Llama-4-Scout-17B-16E-Instruct",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; the shared corpus's Llama-4-Scout config; TP 4",
    ),
    "gt-357": Replay(
        "meta-llama--Llama-3.1-8B",
        "h100",
        "0.19.0",
        why=_PLANNER_019
        + "; Llama-3.1-8B config for the Instruct model; --kv-cache-dtype fp8, --dtype bfloat16",
    ),
    "gt-360": Replay(
        "meta-llama--Llama-3.1-8B",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; Llama-3.1-8B config for the Instruct model (same shapes); TP 4",
    ),
    "gt-361": Replay(
        "Qwen--Qwen2.5-7B",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; Qwen2.5-7B config for the Instruct model (same shapes); TP 2",
    ),
    "gt-362": Replay(
        "Qwen--Qwen2.5-7B",
        "h100",
        "0.19.0",
        why=_PLANNER_019 + "; Qwen2.5-7B config for the Instruct model (same shapes); TP 4",
    ),
    "gt-363": Replay(
        "meta-llama--Llama-3.3-70B-Instruct",
        "h100",
        "0.19.0",
        quantization="compressed-tensors",
        why=_PLANNER_019
        + "; Llama-3.3-70B-Instruct config with RedHatAI's FP8-dynamic compressed-tensors checkpoint's "
        "bytes (8-bit linear layers, 16-bit embeddings and LM head); TP 2",
    ),
    "gt-364": Replay(
        "meta-llama--Llama-3.3-70B-Instruct",
        "h100",
        "0.19.0",
        quantization="compressed-tensors",
        why=_PLANNER_019
        + "; Llama-3.3-70B-Instruct config with RedHatAI's FP8-dynamic compressed-tensors checkpoint's "
        "bytes (8-bit linear layers, 16-bit embeddings and LM head); TP 4",
    ),
    "gt-365": Replay(
        "meta-llama--Llama-3.3-70B-Instruct",
        "h100",
        "0.19.0",
        quantization="compressed-tensors",
        why=_PLANNER_019
        + "; Llama-3.3-70B-Instruct config with RedHatAI's W8A8 INT8 compressed-tensors checkpoint's "
        "bytes (8-bit linear layers, 16-bit embeddings and LM head); TP 2",
    ),
    "gt-366": Replay(
        "mistralai--Mistral-Small-3.1-24B-Instruct-2503",
        "h100",
        "0.19.0",
        quantization="compressed-tensors",
        why=_PLANNER_019
        + "; the catalogue's Mistral-Small-3.1-24B-Instruct-2503 config (its vision_config completed from "
        "transformers' Mistral3Config defaults: the Pixtral encoder is priced) "
        "with RedHatAI's W8A8 INT8 compressed-tensors checkpoint's bytes; TP 2",
    ),
    "gt-367": Replay(
        "Qwen--Qwen2.5-72B",
        "h100",
        "0.19.0",
        why=_PLANNER_019
        + "; Qwen2.5-72B config for Kimi-Dev-72B (Qwen2ForCausalLM; the log's TP-sharded LM head "
        "[76032, 8192] is Qwen2.5-72B's vocabulary and hidden size, and its 67.82 GiB of weights the 67.8 of gt-353); TP 2",
    ),
    "gt-368": Replay(
        "Qwen--Qwen2.5-72B",
        "h100",
        "0.19.0",
        why=_PLANNER_019
        + "; Qwen2.5-72B config for Kimi-Dev-72B (Qwen2ForCausalLM; the log's TP-sharded LM head "
        "[38016, 8192] is Qwen2.5-72B's vocabulary and hidden size); TP 4",
    ),
    "gt-369": Replay(
        "openai--gpt-oss-20b",
        "h100",
        "0.19.0",
        why=_PLANNER_019.replace("--gpu-memory-utilization 0.95", "the default utilization 0.9 (not given)")
        + "; the corpus's gpt-oss-20b config (MXFP4 experts); TP 2",
    ),
    "gt-336": Replay(
        "deepseek-ai--DeepSeek-R1-Distill-Qwen-32B",
        "l40s",
        "0.11.0",
        quantization="fp8",
        settings={"dtype": "float16", "flashinfer_sampler": False},
        why="the corpus's DeepSeek-R1-Distill-Qwen-32B config with the FP8 compressed-tensors checkpoint's bytes (FP8 "
        "linear layers, 16-bit embeddings and LM head: 'fp8'); the L40S of the repository's chat export; the log's 'FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling' (a pip install: FlashInfer is an extra of the wheel), so the native sampler (flashinfer_sampler False)",
    ),
}

# GPUs the accelerator catalogue lacks: (name, CUDA total GiB as the case prints it, compute capability).
EXTRA_GPUS = {
    "rtx-4080": ("NVIDIA GeForce RTX 4080", 15.99, "8.9"),
    "rtx-4060": ("NVIDIA GeForce RTX 4060", 8.0, "8.9"),
    "gpu-8gb": ("an 8 GB NVIDIA GPU (not named)", 7.75, None),
    # gt-341: the A800 80GB (export variant of the A100 80GB, same 80 GB HBM2e): the A100-SXM4-80GB's measured CUDA
    # total stands in (gt-291's arithmetic puts an A800 at ~79.3 GiB); not named A100, so vLLM's >= 70 GiB defaults
    "a800-80gb": ("NVIDIA A800-SXM4-80GB", 79.26, "8.0"),
    # gt-337: RDNA 4 (gfx1201), 16 GB; ROCm names it "AMD Radeon RX 9070 XT", no CUDA compute capability
    "rx-9070-xt": ("AMD Radeon RX 9070 XT", 15.92, None),
}

_NOCFG = "model config not in ../shared/corpus/models and the report does not state the architecture"
_NOGPU = "GPU (or its memory) not stated"
SKIP: dict[str, str] = {
    "gt-015": "FP8 checkpoint whose config is not available: Meta's fbgemm_fp8 405B keeps every attention projection "
    "and the first and last blocks' MLPs in bf16 (Llama 3 paper, arXiv 2407.21783 section 6.2). kvlint now reads such a "
    "modules_to_not_convert list (weights.skipped_params); with the paper's list written into the bf16 config the "
    "replay puts 56.75 GiB per rank against 57.75 printed (tests/test_quant_skip.py), but the list is reconstructed, "
    "not read, and the KV side still misses: 12.3 GiB predicted against 4.77 printed, so kvlint says 'ok' where the "
    "engine failed. Its log (v0.5.3.post1) prints that chunked prefill is on by default with "
    "max_num_batched_tokens=512 (defaults.V0_LONG_CONTEXT_CHUNKED_FROM). With the printed weights, 0.9 x H100 "
    "(71.28 GiB) - 57.75 - 4.77 GiB of printed KV leaves 8.8 GiB, where a 512-token profile and TP8 non-torch memory "
    "take about 2.2 in kvlint's terms: about 6.5 GiB per rank no source term explains",
    "gt-064": "GPU not named and shared with ~11.9 GiB of other tenants (shared/groundtruth/README.md: do not "
    "score cases without a GPU); its token arithmetic (48 layers x 4 KV heads x 128, catalogue config "
    "Qwen/Qwen3-VL-30B-A3B-Instruct) is checked in tests instead",
    "gt-012": "mixed GPUs (16 GB + 32 GB) per pipeline stage; " + _NOCFG + " (Qwen3-Coder-30B-A3B-FP8)",
    "gt-013": "no model and no GPU in the report (figures only)",
    "gt-014": "no model and no GPU in the report",
    "gt-016": _NOGPU + " (pre-release V1 main of Jan 2025)",
    "gt-018": "DeepSeek-V4-Flash (TP2+EP, GH200, 0.22): its KV layout is modelled (kvlint.memory.deepseek_v4) and, "
    "given the 5.44 GiB vLLM printed, kvlint's fit check gives the printed 6.66 GiB for 30,000 tokens and the "
    "estimated length 13,528 (tests/test_deepseek_v4_kv.py; the LLM class's 16,384 batched tokens). The available "
    "memory is not: replayed (0.22.0, block 256, max_num_batched_tokens 16384) kvlint plans 10.93 GiB of KV, i.e. "
    "about 5.5 GiB per GPU of non-KV memory it does not know (weights of 76.52 GiB estimated, not printed; V4's "
    "extra buffers and the expert-parallel all-to-all are not modelled), and says ok where the engine failed",
    "gt-019": _NOCFG + " (Kimi-Linear-48B)",
    "gt-020": _NOCFG + " (DeepSeek-Coder-V2 236B; corpus has only V2-Lite)",
    "gt-021": "DeepSeek-V2 variant and GPU not stated",
    "gt-022": "local model and GPU not stated",
    "gt-023": _NOGPU + " (OpenRLHF actor, Llama-3-70B)",
    "gt-024": "model not stated",
    "gt-025": _NOGPU + "; " + _NOCFG + " (Qwen1.5-7B)",
    "gt-026": "model size and GPU not stated",
    "gt-027": _NOCFG + " (Mistral-Small-4-119B); GPU count not stated",
    "gt-028": _NOCFG + " (MiniMax-M2.7 AWQ); GB10 unified memory",
    "gt-029": _NOCFG + " (MiniMax-M2.7 AWQ); GB10 unified memory",
    "gt-031": _NOCFG + " (Qwen2.5-VL-3B)",
    "gt-032": "bus error (shared memory), not a GPU-memory outcome; GPU not stated",
    "gt-033": "ROCm fork on MI300X (kvlint models CUDA vLLM); numbers at failure not reported",
    "gt-035": _NOGPU + " (vLLM ~0.2)",
    "gt-036": "static validation (max_model_len capped by sliding window), model size and GPU not stated",
    "gt-037": "static validation (heads % TP), not a memory outcome; " + _NOCFG + " (LLaMA-33B)",
    "gt-040": "static validation (heads % TP), not a memory outcome; GPU not stated",
    "gt-042": "static validation (bf16 on CC 7.0), not a memory outcome; model not stated",
    "gt-043": _NOCFG + " (local qwen3.6-27b)",
    "gt-045": _NOCFG + " (local qwen3.6-35b-a3b)",
    "gt-046": _NOCFG + " (Qwen3.8-27B)",
    "gt-047": _NOCFG + " (Qwen3.8-27B)",
    "gt-048": "custom image and EXL3 quantization; " + _NOCFG + " (GLM-5.3-Flash)",
    "gt-049": "custom image and EXL3 quantization; " + _NOCFG + " (GLM-5.3-Flash)",
    "gt-050": "composed engine without config.json; GPU not stated",
    "gt-067": _NOCFG + " (qwen2.5-0.5b bnb-4bit); GPU not named",
    "gt-068": _NOCFG + " (qwen2.5-0.5b bnb-4bit)",
    "gt-070": _NOCFG + " (Qwen2.5-Math-1.5B); GPU not named",
    "gt-073": _NOCFG + " (gemma-4-26B-A4B); A100 size not stated",
    "gt-075": _NOGPU + "; non-torch memory of other processes (8.29 GiB) dominates",
    # second set
    "gt-204": _NOGPU + " (8x H200 or H20; the run's GPU is not named); Kimi-K2-Thinking INT4",
    "gt-205": _NOGPU + " (decode context parallel 8)",
    "gt-206": _NOCFG + " (Qwen3.8-27B)",
    "gt-207": _NOCFG + " (Qwen3.8-27B)",
    "gt-208": _NOCFG + " (Qwen3.8-27B)",
    "gt-216": "local AutoRound INT4 checkpoint: weight bytes unknown; DFlash speculative draft",
    "gt-223": "vLLM 0.2.x: older than the releases the memory model covers (0.4.3 onward)",
    "gt-224": "vLLM 0.2.x: older than the releases the memory model covers (0.4.3 onward)",
    "gt-225": "L20 not in the accelerator catalogue (CUDA total not known)",
    "gt-226": "local NVFP4 checkpoint of unknown producer: weight bytes unknown (token arithmetic checked in tests)",
    "gt-227": "local AutoRound INT4 checkpoint: weight bytes unknown",
    "gt-228": "local AutoRound checkpoint: weight bytes unknown (token arithmetic checked in tests)",
    "gt-229": _NOCFG + " (qwen3.8-27b-autoround-int4)",
    "gt-230": _NOGPU,
    "gt-231": "model not named (AWQ, ~Qwen3-4B shape)",
    "gt-241": "ROCm main build; DeepSeek-V4 compressed attention is not modelled",
    "gt-242": "low reliability; H20 not in the accelerator catalogue; DeepSeek-V4-Flash-0731 variant",
    "gt-243": _NOGPU + " (a 24 GB card)",
    "gt-244": _NOGPU,
    "gt-245": "model and GPU not stated",
    "gt-359": "a failure after the KV cache was sized (vLLM 0.19.0, gpt-oss-20b on an H100 at utilization 0.95): the "
    "sampler warm-up's 786 MiB fp32 logits copy did not fit beside the CUDA graphs captured outside the budget (1.84 "
    "GiB) and 1.78 GiB PyTorch held reserved but unallocated. kvlint's verdict is the KV-cache fit vLLM checks (KV "
    "+0.7 %, ok) and it plans no check of the warm-up after graph capture. Its CUDA-graph term for this model, 0.39 "
    "GiB while it priced 512 tokens of capture width, is 1.02 GiB since it counts the graphs vLLM captures (83 "
    "piecewise + 83 FULL up to gpt-oss's own 1,024-token size; vLLM estimated 1.30 and captured 1.84), still short of "
    "the pool (docs/engine-memory-model.md §5) - not scored",
    "gt-246": "gpu_memory_utilization cut off in the stored excerpt; the start failed in CUDA-graph capture after KV "
    "sizing, not a capacity failure. With the 0.9 default, `kvlint plan --accelerator a10 --gpus 4 --engine-version "
    "0.8.5` predicts 138,512 tokens (band up to 5.34 GiB = ~233k) against 198,784 printed: the point estimate takes "
    "the PyTorch sampler, the band's FlashInfer alternative covers the print",
    "gt-248": "vLLM 0.2.x: older than the releases the memory model covers (0.4.3 onward)",
    "gt-249": "vLLM 0.2.x: older than the releases the memory model covers (0.4.3 onward); its 13 GiB per GPU "
    "outside the KV cache at TP 4 is the same size as TGI 1.0's unexplained gap on the same model and GPUs (gt-235)",
    "gt-247": "local w4a16 (int4) MoE checkpoint: weight bytes not in a config.json kvlint can read (its V0 budget "
    "sentence is checked in tests/test_groundtruth_local.py)",
    "gt-253": "gpu_memory_utilization and the release not in the stored excerpt; its 65.97 GiB of weights are the "
    "Marlin MXFP4 backend on Hopper (a pip install without FlashInfer/triton_kernels), a backend kvlint's weights "
    "model takes only below compute capability 9.0 (64.5 GiB on an H100: the Triton padding)",
    "gt-266": "H20 not in the accelerator catalogue (CUDA total not known); Qwen3.5 hybrid whose printed token "
    "line is the per-group block count, not what one request can use (the case's notes)",
    "gt-267": "low reliability: figures quoted as '~55k tokens' and '~50 GB' in a table, the arguments besides "
    "gpu_memory_utilization not given; AWQ checkpoint of Gemma 4 31B whose config is not in the corpus",
    "gt-268": "low reliability: figures quoted as '~525k tokens' and '~50 GB' in a table, the arguments besides "
    "gpu_memory_utilization not given; AWQ checkpoint of Gemma 4 31B whose config is not in the corpus",
    "gt-271": _NOCFG + " (local qwen3.8-27b-fp8)",
    "gt-272": _NOCFG + " (local qwen3.6-27b-fp8); speculative config cut in the stored excerpt",
    "gt-273": "gpu_memory_utilization and the parallel layout (TP 2 or one engine per GPU) not stated; the figure is "
    "the reporter's transcription ('kvcache num per gpu')",
    "gt-274": "gpu_memory_utilization and the parallel layout (TP 2 or one engine per GPU) not stated; the figure is "
    "the reporter's transcription ('kvcache num per gpu')",
    "gt-275": "gpu_memory_utilization chosen by GPUStack and not in the stored excerpt (the failure, 2,400 tokens of "
    "KV for an 8,192-token context, is a V0 max-seq-len refusal)",
    "gt-276": _NOCFG + " (Qwen3.8-27B); GPU count not in the excerpt",
    "gt-288": "GPU not named and the start-up stops on the FP8 path before the memory profile; its encoder budget "
    "(98,304 tokens, one dummy video) is checked in tests/test_qwen_vl_profile.py",
    "gt-278": _NOCFG + " (local qwen3.8-27b-fp8)",
    "gt-279": _NOCFG + " (qwen3.8-27b-fp8 per the title)",
    "gt-280": _NOCFG + " (Qwen3.8-27B FP8); figures from a table",
    "gt-281": _NOCFG
    + " (Qwen3.8-27B FP8); its Mamba-block refusal is the check KV108 predicts (docs §1.5), tested on the bundled "
    "Qwen3.5-27B stand-in (tests/test_mamba_blocks.py)",
    "gt-290": "GPU not named (an 80 GB-class card, 79.33 GiB) and the run's speculative settings cut from the "
    "stored excerpt (the thread compares DFlash on and off). `kvlint verify` with the H100 standing in gives KV "
    "+8.5 % (weights -2.7 %, activation 2.75 against 5.66 GiB at 40,000 batched tokens, CUDA graphs 0.17 against "
    "1.34 GiB, non-torch 0.97 against 0.13; docs §5)",
    "gt-291": "DFlash draft model (z-lab/Qwen3.6-35B-A3B-DFlash) not in the corpus or the catalogue, and the A800 is "
    "not in the accelerator catalogue; its 6.24 GiB CUDA-graph estimate (capture sizes to 336 = 2 x 24 sequences x "
    "7 tokens with 6 speculative ones, the capture kvlint now takes) is far above kvlint's graph term, calibrated "
    "without speculation and without the drafter's graphs (docs §5)",
    "gt-296": "local AutoRound INT4 checkpoint: weight bytes unknown; DFlash draft",
    "gt-301": _NOCFG + " (Qwen3.8-27B FP8); figures from a pull request's table",
    "gt-302": "model not named in the stored excerpt (a 64-layer GDN hybrid) and the release not stated",
    "gt-303": "gpu_memory_utilization and the launch command not in the stored excerpt; the qwen3_next_mtp draft "
    "layer's KV and weights come with it. Its 61,600 tokens follow exactly from its own 1.53 GiB with an fp8 KV cache "
    "and 2 or 3 speculative tokens (tests/test_gdn_speculative_state.py); the bf16 KV cache gives half",
    "gt-304": "a refusal with an external MTP draft model whose config is not in the library (Gemma 4 26B-A4B AWQ on "
    "one RTX 3090); figures quoted in prose",
    "gt-305": "DeepSeek-V4-Flash-0731 config not in the library and the figure (156.9x at 1M, DP 8) quoted in prose, "
    "whether per rank or summed not said",
    "gt-306": "local AutoRound INT4 checkpoint (weight bytes unknown) with a DFlash draft whose config is not in the "
    "library; the compose's flags are cut in the stored excerpt (a 0.20.1rc1 nightly, before 0.20.1 in PEP 440 "
    "order, whose 67,728 tokens with 1.06x at 180,000 are not concurrency x length: 0.20.0's block formula)",
    "gt-307": "local AutoRound INT4 checkpoint (weight bytes unknown) with a DFlash draft whose config is not in the "
    "library (0.20.2rc1 nightly); only the KV GiB line is in the stored excerpt",
    "gt-308": "local AutoRound INT4 checkpoint (weight bytes unknown); the command, and any draft, not in the stored "
    "excerpt",
    "gt-309": "local Qwen3.8-27B FP8 checkpoint: config not in the corpus or the catalogue; flags and release cut in "
    "the stored excerpt",
    "gt-310": "local AutoRound INT4 checkpoint (weight bytes unknown) with its MTP head; no KV GiB line in the stored "
    "excerpt. Its v0.20.1 token line (619,479 = 2.36x x 262,144) is checked against the release's formula "
    "(tests/test_vllm_capacity_line.py)",
    "gt-311": "a refusal of the repository's long-text compose (Qwen3.6-27B AutoRound INT4, 180K at 0.93 on one RTX "
    "3090): checkpoint, draft and release not in the stored comment (weight bytes unknown)",
    "gt-321": "RedHatAI's compressed-tensors NVFP4 checkpoint of Gemma 4 26B-A4B: its config (which layers stay 16-bit) "
    "is not in the library. Replayed with NVIDIA's NVFP4 config, which keeps attention and the dense MLPs in bf16, "
    "kvlint puts 17.35 GiB of weights against 15.88 printed (+9.3 %; 16.35 before the dense MLP every Gemma 4 MoE layer "
    "keeps beside its experts was counted, which NVIDIA's config holds in bf16) and 85.74 GiB of KV against 84.68 "
    "(+1.3 %) at GB10's small batch default (docs/engine-memory-model.md §1.9; the engine then raises it to 2,496 for "
    "Gemma 4's image items, not modelled); a bare 'compressed-tensors' label on the bf16 config gives no bit width "
    "(25.1 GiB)",
    "gt-328": "GPU not named: weights + KV (41.3 GiB) need a CUDA total of about 47 GiB at utilization 0.9, a 48 GB "
    "card reporting ~47.5 GiB (RTX A6000 with ECC off or RTX 6000 Ada, our reading) rather than the catalogue's 44.5 "
    "GiB 48 GB parts; kept for its figures",
    "gt-337": "ROCm on a consumer RDNA 4 card (AMD Radeon RX 9070 XT, 15.92 GiB; a 0.14.0rc1 source build): replayed as "
    "0.14.0 with the Qwen2.5-14B config and AWQ bytes at utilization 0.75, kvlint puts 9.33 GiB of weights against "
    "9.49 printed and no KV (-1.31 GiB) against 0.34 GiB printed: the engine's whole non-KV rest is 2.11 GiB (11.94 - "
    "9.49 - 0.34), where kvlint's ROCm share of the non-torch memory alone is 2.38 GiB (NON_TORCH_GIB['rocm'], fitted "
    "on one V0 0.5.5 MI300X run, gt-202: a data-centre card's runtime, not measured on a Radeon); not scored",
    "gt-338": "an AMD GPU (ROCm build of 0.17.0) not named in the log or the repository: 14.37 + 41.81 GiB at "
    "utilization 0.9 need about 64 GiB, an MI210 by our reading (the catalogue's MI210 is marketing 64 GB taken as "
    "GiB, not measured); kept for its figures",
    "gt-339": "Gemma 4 E4B's config is not in the library (sliding-window layers and per-layer embeddings) and the GPU "
    "is not named (a 40 GB A100 by the profiling note's arithmetic); kept for its figures",
    "gt-330": "GPU not named (V0 0.6.3.post1 at pipeline-parallel size 4: 34.26 GiB of KV per stage, a 48 GB-class card "
    "by our reading); kept for its figures",
    "gt-285": "gpu_memory_utilization and max_model_len of the run not in the stored excerpt (figures quoted in "
    "prose). Weights only: kvlint puts 88.30 GiB per rank for the catalogue's GLM-5.3-FP8 at TP 8 against the "
    "94.46 GiB the PR states (-6.5 %, docs §5; 86.90 before the TP-replicated MLA/indexer projections and routers)",
}


def models_dir(override: Path | None = None) -> Path:
    """Where config.json directories are read: ``--models``, else the shared corpus, else the fixtures copy."""
    if override:
        return override
    return CORPUS_MODELS if CORPUS_MODELS.is_dir() else FIXTURE_MODELS


def load_cases(shared: Path) -> list[dict[str, Any]]:
    """The shared cases (``shared``) followed by this project's second set (:data:`LOCAL_CASES`)."""
    cases = list(yaml.safe_load(shared.read_text()))
    if LOCAL_CASES.is_file() and LOCAL_CASES.resolve() != shared.resolve():
        cases += yaml.safe_load(LOCAL_CASES.read_text())
    return cases


def _model(r: Replay, mdir: Path) -> Any:
    """The replay's config: ``mdir/<dir>``, else fixtures/plan/models, bench/groundtruth/models, else the bundled
    catalogue by id (``org--name`` -> ``org/name``)."""
    for base in (mdir, FIXTURE_MODELS, LOCAL_MODELS):
        d = base / r.model_dir
        if (d / "config.json").is_file():
            return resolve_model(str(d), allow_hub=False)
    return resolve_model(r.model_dir.replace("--", "/", 1), allow_hub=False)


def _gpu(r: Replay, case: dict[str, Any]) -> tuple[str, float, str | None]:
    gpu = case.get("gpu") or {}
    total = gpu.get("total_gib_reported")
    if r.gpu in EXTRA_GPUS:
        name, t, cc = EXTRA_GPUS[r.gpu]
        return name, float(total or t), cc
    acc = lookup(r.gpu)
    if acc is None:
        raise SystemExit(f"bench: accelerator '{r.gpu}' not in the catalogue")
    return acc.name, float(total or acc.memory_bytes / GiB), acc.compute_capability


def case_settings(case: dict[str, Any], r: Replay) -> VllmSettings:
    """:class:`VllmSettings` for a case: its flags (``--block-size`` included: the llm-d runs set 128, and V1
    rounds the KV token count down to whole blocks of that size), the replay's version/quantization/extra
    settings."""
    p = case.get("parallelism") or {}
    version = r.version or case.get("engine_version")
    kvd = case.get("kv_cache_dtype")
    kw: dict[str, Any] = dict(
        version=str(version or "latest"),
        version_assumed=not version,
        tensor_parallel_size=int(p.get("tensor_parallel") or 1),
        pipeline_parallel_size=int(p.get("pipeline_parallel") or 1),
        max_model_len=case.get("max_model_len"),
        gpu_memory_utilization=case.get("gpu_memory_utilization"),
        kv_cache_dtype=str(kvd) if kvd and " " not in str(kvd) else "auto",
        max_num_seqs=case.get("max_num_seqs"),
        max_num_batched_tokens=case.get("max_num_batched_tokens"),
        enforce_eager=bool(case.get("enforce_eager")),
        block_size=case.get("block_size"),
        quantization=r.quantization,
    )
    kw.update(r.settings)
    return VllmSettings(**kw)


def reported(case: dict[str, Any], detail: VllmPlanDetail | None = None) -> dict[str, Any]:
    """The figures a case reports: weights GiB, KV GiB (min over ranks), KV tokens (or blocks x block size).

    ``kv_src`` says where the KV GiB comes from: ``printed``; ``blocks`` (V0 ``# GPU blocks`` x the plan's bytes per
    block, exact for every model V0 serves) or ``tokens`` (the printed token count x the plan's KV bytes per token,
    only for single-group full-attention plans) when ``detail`` is given and nothing was printed; else None.
    """
    f = case.get("figures") or {}
    fail = case.get("failure") or {}
    kv = f.get("kv_cache_gib", fail.get("kv_available_gib"))
    if kv is None and f.get("kv_cache_gib_per_rank"):
        kv = min(f["kv_cache_gib_per_rank"])
    tok = f.get("kv_tokens", fail.get("kv_capacity_tokens"))
    if tok is None and f.get("gpu_blocks"):
        # blocks x the case's --block-size, else the block size the plan derived (16 on V0 without the flag)
        bs = case.get("block_size") or (detail.plan.block_size if detail is not None else 16)
        tok = int(f["gpu_blocks"]) * int(bs)
    src = "printed" if kv is not None else None
    if kv is None and detail is not None:
        p = detail.plan
        single_full = len(detail.groups) == 1 and detail.groups[0].kind == "full"
        if f.get("gpu_blocks") and (p.era == "v0" or single_full):
            kv, src = int(f["gpu_blocks"]) * p.bytes_per_block / GiB, "blocks"
        elif f.get("kv_tokens") and single_full:
            kv, src = int(f["kv_tokens"]) * p.kv_bytes_per_token / GiB, "tokens"
    return {
        "weights": f.get("weights_gib"),
        "kv": kv,
        "kv_src": src,
        "tok": tok,
        "conc": f.get("max_concurrency"),
    }


def plan_case(case: dict[str, Any], r: Replay, mdir: Path) -> VllmPlanDetail:
    """Plan one case from its config, flags and GPU only."""
    model = _model(r, mdir)
    name, total, cc = _gpu(r, case)
    return plan_vllm_detailed(
        case_settings(case, r), model, int(total * GiB), gpu_name=name, compute_capability=cc
    )


def era_bucket(era: str, version: str) -> str:
    """Version era of a replayed plan: V0, or V1 before 0.11 / 0.11-0.19 / from 0.20."""
    if era == "v0":
        return "V0"
    v = resolve_version(version)[0]
    return "V1 <0.11" if v < (0, 11, 0) else "V1 0.11-0.19" if v < (0, 20, 0) else "V1 >=0.20"


def family(detail: VllmPlanDetail, model: Any) -> str:
    """Model family for the by-family table: multimodal, MLA, hybrid (Mamba/linear attention), MoE,
    sliding-window or dense."""
    if (model.config or {}).get("vision_config") or (model.config or {}).get("audio_config"):
        return "multimodal"
    if model.is_mla:
        return "MLA"
    if any(g.kind == "mamba" for g in detail.groups):
        return "hybrid"
    if model.num_experts:
        return "MoE"
    if any(g.kind in ("sliding", "chunked") for g in detail.groups):
        return "sliding-window"
    return "dense"


def _row(gid: str, c: dict[str, Any], r: Replay, mdir: Path) -> dict[str, Any]:
    d = plan_case(c, r, mdir)
    model = _model(r, mdir)
    with cal.using(cal.refit(cal.without(gid))):
        d_loo = plan_case(c, r, mdir)
    rep = reported(c, d)
    p = d.plan
    return {
        "id": gid,
        "model": r.model_dir,
        "version": p.engine_version + ("?" if "assumed" in " ".join(p.assumptions) else ""),
        "era": p.era,
        "bucket": era_bucket(p.era, p.engine_version),
        "family": family(d, model),
        "pred_w": p.weights_bytes / GiB,
        "rep_w": rep["weights"],
        "pred_kv": p.kv_cache_bytes / GiB,
        "loo_kv": d_loo.plan.kv_cache_bytes / GiB,
        "low": p.kv_cache_bytes_low / GiB,
        "high": p.kv_cache_bytes_high / GiB,
        "rep_kv": rep["kv"],
        "kv_src": rep["kv_src"],
        "pred_tok": p.capacity_tokens,
        "tok_from_rep_kv": d.capacity_tokens_for(int(rep["kv"] * GiB))
        if rep["kv"] and rep["kv_src"] == "printed"
        else None,
        "rep_tok": rep["tok"],
        "verdict": d.verdict,
        "loo_verdict": d_loo.verdict,
        "outcome": c.get("outcome"),
        "dense": all(g.kind == "full" for g in d.groups) and not p.kv_cache_dtype.startswith("fp8"),
    }


def replay(cases_path: Path, mdir: Path) -> list[dict[str, Any]]:
    """One row per replayed case (GiB and tokens), in-sample and leave-one-out, over ``cases_path`` and the
    second set."""
    cases = {c["id"]: c for c in load_cases(cases_path)}
    return [_row(gid, cases[gid], r, mdir) for gid, r in REPLAY.items() if gid in cases]


def loo_by_term(cases_path: Path, mdir: Path) -> dict[str, dict[str, Any]]:
    """For every calibrated term (a key of :func:`kvlint.memory.calibration.refit`): KV error summary when only that
    term is refitted without each case (the others keep their shipped values), and the spread of the term's
    refitted value over the folds."""
    cases = {c["id"]: c for c in load_cases(cases_path)}
    shipped = cal.refit()
    out: dict[str, dict[str, Any]] = {}
    for term in shipped:
        rows, values = [], []
        for gid, r in REPLAY.items():
            c = cases.get(gid)
            if c is None:
                continue
            fold = cal.refit(cal.without(gid))
            values.append(fold[term])
            coeffs = dict(shipped)
            coeffs[term] = fold[term]
            with cal.using(coeffs):
                d = plan_case(c, r, mdir)
            rep = reported(c, d)
            rows.append({"id": gid, "pred_kv": d.plan.kv_cache_bytes / GiB, "rep_kv": rep["kv"],
                         "outcome": c.get("outcome"), "verdict": d.verdict})  # fmt: skip
        out[term] = {"summary": summary(rows), "values": values, "shipped": shipped[term]}
    return out


def _pct(pred: float, rep: float | None) -> float | None:
    if rep is None or rep <= 0:
        return None
    return (pred - rep) / rep * 100


def _p90(xs: list[float]) -> float:
    q = sorted(xs)
    return q[min(len(q) - 1, int(round(0.9 * (len(q) - 1))))] if q else 0.0


def summary(rows: list[dict[str, Any]], key: str = "pred_kv", verdict_key: str = "verdict") -> dict[str, Any]:
    """KV error over started cases (outcome ok, KV reported): median/p90 |%|; verdict confusion matrix."""
    errs = [abs(e) for r in rows if r["outcome"] == "ok" and (e := _pct(r[key], r["rep_kv"])) is not None]
    conf = {(v, o): 0 for v in ("ok", "risky", "fail") for o in ("ok", "fail")}
    for r in rows:
        conf[(r[verdict_key], r["outcome"])] += 1
    started = sum(1 for r in rows if r["outcome"] == "ok")
    return {
        "kv_cases": len(errs),
        "median": statistics.median(errs) if errs else 0.0,
        "p90": _p90(errs),
        "max": max(errs) if errs else 0.0,
        "confusion": conf,
        "fail_missed": conf[("ok", "fail")],
        "started": started,
        "started_pred_fail": conf[("fail", "ok")],
    }


def _fmt(x: Any, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _fmt_coeff(x: Any) -> str:
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}: {v:g}" for k, v in x.items()) + "}"
    return f"{x:g}"


def _spread(values: list[Any]) -> str:
    if values and isinstance(values[0], dict):
        keys = values[0].keys()
        return ", ".join(f"{k} {min(v[k] for v in values):g}..{max(v[k] for v in values):g}" for k in keys)
    return f"{min(values):g}..{max(values):g}" if values else "-"


def print_groups(rows: list[dict[str, Any]], by: str, key: str = "pred_kv") -> None:
    """Median/p90/max |KV error| of the started cases grouped by ``by`` (``bucket`` or ``family``)."""
    for g in sorted({r[by] for r in rows}):
        sub = [r for r in rows if r[by] == g]
        s = summary(sub, key)
        loo = summary(sub, "loo_kv", "loo_verdict")
        print(
            f"  {g:16} cases {len(sub):2d}, started with KV {s['kv_cases']:2d}: median {s['median']:5.1f}%, "
            f"p90 {s['p90']:5.1f}%, max {s['max']:5.1f}% (leave-one-out median {loo['median']:5.1f}%, "
            f"p90 {loo['p90']:5.1f}%)"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    default_cases = (
        SHARED_CASES if SHARED_CASES.is_file() else ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml"
    )
    ap.add_argument("--cases", type=Path, default=default_cases)
    ap.add_argument("--models", type=Path, default=None)
    ap.add_argument("--why", action="store_true", help="print why each replay uses its version/GPU/config")
    a = ap.parse_args(argv)
    mdir = models_dir(a.models)
    cases = load_cases(a.cases)
    rows = replay(a.cases, mdir)
    print(f"cases: {a.cases} + {LOCAL_CASES.relative_to(ROOT)}\nconfigs: {mdir}\n")
    print(
        f"{'case':7} {'model':27} {'ver':9} {'era':3} {'W pred':>6} {'W rep':>6} {'KV pred':>7} {'band':>15} "
        f"{'KV LOO':>7} {'KV rep':>6} {'src':4} {'err%':>6} {'tok pred':>9} {'tok|repKV':>9} {'tok rep':>9} "
        f"{'verdict':>7} {'LOO':>5} {'outcome':>7}"
    )
    for r in rows:
        e = _pct(r["pred_kv"], r["rep_kv"])
        print(
            f"{r['id']:7} {Path(r['model']).name[:27]:27} {r['version'][:9]:9} {r['era']:3} {r['pred_w']:6.2f} "
            f"{_fmt(r['rep_w'], '6.2f'):>6} {r['pred_kv']:7.2f} [{r['low']:6.2f},{r['high']:7.2f}] "
            f"{r['loo_kv']:7.2f} {_fmt(r['rep_kv'], '6.2f'):>6} {(r['kv_src'] or '-')[:4]:4} {_fmt(e, '+6.1f'):>6} "
            f"{r['pred_tok']:9d} {_fmt(r['tok_from_rep_kv'], '9d'):>9} {_fmt(r['rep_tok'], '9d'):>9} "
            f"{r['verdict']:>7} {r['loo_verdict']:>5} {r['outcome']:>7}"
        )
        if a.why:
            print(f"        why: {REPLAY[r['id']].why}")
    wt = [abs(e) for r in rows if (e := _pct(r["pred_w"], r["rep_w"])) is not None]
    print(f"\nweights: median |err| {statistics.median(wt):.1f}%, max {max(wt):.1f}% over {len(wt)} cases")
    tk = [
        (r["id"], (r["tok_from_rep_kv"] - r["rep_tok"]) / r["rep_tok"] * 100)
        for r in rows
        if r["tok_from_rep_kv"] and r["rep_tok"] and r["dense"] and r["outcome"] == "ok"
    ]
    print(
        "tokens from the engine's own KV GiB (dense started cases): "
        + ", ".join(f"{i} {e:+.2f}%" for i, e in tk)
        + (f"; max |err| {max(abs(e) for _, e in tk):.2f}%" if tk else "")
    )
    for label, key, vkey in (("in-sample", "pred_kv", "verdict"), ("leave-one-out", "loo_kv", "loo_verdict")):
        s = summary(rows, key, vkey)
        printed = summary([r for r in rows if r["kv_src"] == "printed"], key, vkey)
        print(
            f"\n{label}: KV GiB |err| over {s['kv_cases']} started cases: median {s['median']:.1f}%, "
            f"p90 {s['p90']:.1f}% (printed KV only, {printed['kv_cases']} cases: median {printed['median']:.1f}%, "
            f"p90 {printed['p90']:.1f}%); capacity failures predicted ok: {s['fail_missed']}; "
            f"started cases predicted fail: {s['started_pred_fail']}/{s['started']}"
        )
        print(f"  verdict \\ outcome {'ok':>5} {'fail':>5}")
        for v in ("ok", "risky", "fail"):
            print(f"  {v:17} {s['confusion'][(v, 'ok')]:5d} {s['confusion'][(v, 'fail')]:5d}")
    print("\nby version era:")
    print_groups(rows, "bucket")
    print("by model family:")
    print_groups(rows, "family")
    print("\nleave-one-out for each calibrated term alone (the other terms at their shipped values):")
    for term, t in loo_by_term(a.cases, mdir).items():
        s = t["summary"]
        print(
            f"  {term:18} shipped {_fmt_coeff(t['shipped'])}; refitted without each case: {_spread(t['values'])}; "
            f"KV |err| median {s['median']:.1f}%, p90 {s['p90']:.1f}%, started predicted fail "
            f"{s['started_pred_fail']}, failures predicted ok {s['fail_missed']}"
        )
    print("\nnot replayed:")
    for c in cases:
        gid = c["id"]
        if gid in REPLAY or not str(c.get("engine", "")).startswith("vllm"):
            continue
        print(f"  {gid}: {SKIP.get(gid, 'UNCLASSIFIED')}")
    # TGI and SGLang cases of the same files (bench/accuracy_engines.py, runnable on its own too)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import accuracy_engines

    print("\nTGI / SGLang (max_batch_total_tokens / max_total_num_tokens):")
    accuracy_engines.main([str(a.cases)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
