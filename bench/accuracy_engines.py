"""TGI/SGLang part of the accuracy benchmark: replay the TGI and SGLang cases of groundtruth/cases.yaml.

Run: ``.venv/bin/python bench/accuracy_engines.py [cases.yaml]``. Prints every TGI/SGLang case (the shared file and
this project's ``bench/groundtruth/cases.yaml``) with what kvlint predicts and says which can be replayed: a case is
replayed only when its model config is available offline (../shared/corpus/models, fixtures or the bundled
catalogue), its GPU is in the catalogue, and the engine printed an inferred figure.
Source of the figures: the cases files (cite the gt-NNN id).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

CASES = SHARED / "groundtruth/cases.yaml"
MODEL_DIRS = (
    "../shared/corpus/models",
    str(Path(__file__).resolve().parent.parent / "fixtures" / "plan" / "models"),
)

#: How each case is replayed: (command, model id, accelerator id, version, gpus) or the reason it cannot be.
REPLAY: dict[str, Any] = {
    "gt-077": (
        ["--max-batch-prefill-tokens", "4096", "--max-total-tokens", "4096", "--max-input-length", "4095"],
        "meta-llama/Llama-2-7b-hf",
        "a10g",
        "0.9.4",
        1,
    ),
    # gt-082: the pasted log shards on 2 processes (tgi@293b8125:launcher/src/main.rs::main prints "Sharding model
    # on N processes" only when num_shard > 1), whatever the README's command says, and its 801,568 tokens do not fit
    # one 192 GB MI300X on 1 or 2 shards (+69 % / +251 %; TGI's ROCm warmup sizes the cache with the same
    # mem_get_info formula as CUDA, utils/import_utils.py::get_cuda_free_memory). Two shards of a 64 GiB AMD device
    # (MI210, or the two GCDs of one MI250/MI250X, which ROCm lists as two devices, the launcher's default shard
    # count) do: replayed so, our reading of the GPU, not the case's.
    "gt-082": (["--num-shard", "2"], "meta-llama/Llama-3.1-8B", "mi250", "2.0.4", 2),
    # gt-234: the release is v2.4.0 (the log's "Using optimized Triton indexing kernels." first appears in v2.4.0,
    # server/text_generation_server/models/metadata_kernels.py; the report, 2024-11-13, predates v2.4.1), and its
    # printed "Default `max_batch_prefill_tokens` to 10049" is that launcher's max_input_tokens + 50
    # (tgi@v2.4.0:launcher/src/main.rs::main), so the user set max_input_tokens 9999.
    "gt-234": (
        ["--num-shard", "2", "--max-input-tokens", "9999"],
        "meta-llama/Llama-3.1-70B",
        "a100-80gb",
        "2.4.0",
        2,
    ),
    "gt-235": (["--num-shard", "4"], "meta-llama/Llama-2-70b-hf", "a100-80gb", "1.0.0", 4),
    "gt-236": (
        ["--max-input-length", "8000", "--max-total-tokens", "8512", "--max-batch-prefill-tokens", "32768"],
        "mistralai/Mistral-7B-Instruct-v0.3",
        "a100-80gb",
        "2.0.0",
        1,
    ),
    "gt-232": ([], "Qwen/Qwen3-30B-A3B", "mi355x", None, 1),
    # gt-257: "TGI 1.4" (the series; its newest release 1.4.5 is read, whose launcher sets
    # TORCH_NCCL_AVOID_RECORD_STREAMS, irrelevant on one GPU), launcher defaults assumed (no Args line in the report)
    "gt-257": ([], "meta-llama/Meta-Llama-3-8B-Instruct", "rtx-3090", "1.4", 1),
    "gt-005": (
        ["--tp-size", "4", "--mem-fraction-static", "0.93"],
        "Qwen/Qwen3-235B-A22B",
        "h100-80gb",
        None,
        4,
    ),
    # 80 GB-class GPU not named in either log (78.81 / 78.59 GB free before loading); Meta-Llama-3.1-8B-Instruct has
    # the Llama-3.1-8B base config's shapes. gt-250 prints its resolved mem_fraction_static (0.88) in server_args;
    # gt-251 (a PR branch of 2025-03-25) is replayed with the release current then, 0.4.4.post1, so that the
    # fraction is kvlint's own default.
    "gt-250": (["--mem-fraction-static", "0.88"], "meta-llama/Llama-3.1-8B", "h100-80gb", None, 1),
    "gt-251": ([], "meta-llama/Llama-3.1-8B", "h100-80gb", "0.4.4.post1", 1),
    # QwQ-32B is a Qwen2.5-32B fine-tune with the same config shapes (64 layers, 8 KV heads, 5120 hidden).
    "gt-252": (["--tp-size", "4"], "Qwen/Qwen2.5-32B", "l4", "0.4.3.post4", 4),
    # gt-264: one 48 GB-class card, not named (47.24 GB free before loading): the L40 (48 GB AD102, 47.52 GiB CUDA
    # total) stands in for it, our reading; May 2025, the release then current (0.4.6.post4), whose default
    # mem_fraction_static 0.88 for tp_size 1 reproduces the printed K + V (cases.yaml notes).
    "gt-264": ([], "Qwen/Qwen3-14B", "l40", "0.4.6.post4", 1),
    # gt-265: an 80 GB Hopper (fa3 chosen by default, 78.68 GB free before loading), release not printed: replayed
    # with the release current on 2026-01-14, 0.5.7 (the files of the 0.5.7 wheel are dated 2026-01-01, 0.5.8's
    # 2026-01-23), whose default (no prefill CUDA graphs before 0.5.10) gives the printed resolved 0.835; from
    # 0.5.10 the prefill graphs' reserve lowers it (docs §3.2).
    "gt-265": ([], "Qwen/Qwen3-14B", "h100-80gb", "0.5.7", 1),
    # gt-297 / gt-298: SGLang's branches of 2025-10-07 before and after sgl-project/sglang#11309, replayed as the 0.5.3
    # wheel (mem_fraction_static fixed at 0.8, the DSA indexer left out of the cell) and the 0.5.4 wheel (the
    # indexer in the cell, the default fraction); the DeepSeek-V3.2 config stands in for V3.2-Exp (same shapes)
    "gt-297": (
        ["--tp", "8", "--dp", "8", "--enable-dp-attention"],
        "deepseek-ai/DeepSeek-V3.2",
        "b200",
        "0.5.3",
        8,
    ),
    "gt-298": (
        ["--tp", "8", "--dp", "8", "--enable-dp-attention"],
        "deepseek-ai/DeepSeek-V3.2",
        "b200",
        "0.5.4",
        8,
    ),
    "gt-299": (
        ["--quantize", "awq", "--cuda-memory-fraction", "1", "--sharded", "true", "--num-shard", "2"],
        "meta-llama/Llama-3.3-70B-Instruct",
        "rtx-3090",
        "3.0.1",
        2,
    ),
    "gt-277": (
        ["--tp-size", "8", "--mem-fraction-static", "0.88"],
        "deepseek-ai/DeepSeek-V4-Pro",
        "h200",
        None,
        8,
    ),
    # gt-312: SGLang built from tag v0.5.7 (the repository's README at the log's commit); a 48 GB-class card with 44.11
    # GB free before loading, the L40S of an AWS g6e our reading; the hierarchical cache's host pool does not touch
    # the device pool
    "gt-312": (
        [
            "--mem-fraction-static",
            "0.2",
            "--context-length",
            "35000",
            "--chunked-prefill-size",
            "-1",
            "--enable-hierarchical-cache",
            "--hicache-ratio",
            "4",
        ],
        "meta-llama/Llama-3.2-3B",
        "l40s",
        "0.5.7",
        1,
    ),
    # gt-358: lmsysorg/sglang:latest of 2025-02-04 (0.4.2.post1 by date; kvlint plans 0.4.2.x alike) with its defaults
    # (the compose file passes no memory flag; server_args prints the resolved 0.88); DeepSeek-R1-Distill-Qwen-7B
    # from the catalogue; an RTX 3090 under WSL2 whose free memory before loading is the log's (PRELOAD_FROM_LOG)
    "gt-358": (
        ["--mem-fraction-static", "0.88"],
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
        "rtx-3090",
        "0.4.2.post1",
        1,
    ),
    # gt-322: TGI 2.0.2 - 2.0.4 by the router's line numbers (2.0.4 read); the JumpStart container's limits are not
    # shown, so the launcher's defaults are assumed
    "gt-322": ([], "mistralai/Mistral-7B-Instruct-v0.3", "a10g", "2.0.4", 1),
}
#: GiB of device memory other processes held when the engine started, as the case records it (nvidia-smi before
#: the start): TGI sizes its cache from ``torch.cuda.mem_get_info``, the device's free memory
#: (tgi@v1.4.5:server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup), so at
#: ``cuda_memory_fraction`` 1.0 the replay plans the device total less that memory. gt-257: "0.7 GB in use before"
#: on a desktop RTX 3090 (nvidia-smi's MiB / 1024, read as GiB).
OTHER_PROCESS_GIB: dict[str, float] = {"gt-257": 0.7}
#: SGLang cases replayed from the free memory the log printed before loading ("Load weight begin. avail mem=X GB",
#: ``figures.free_before_weights_gb``), as `kvlint verify` replays them when it is below what the card leaves after
#: the CUDA context (kvlint.verify.compare._sglang_preload_shift): SGLang sizes the pool from that figure
#: (sglang@0.4.2.post2:python/sglang/srt/model_executor/model_runner.py::ModelRunner.init_torch_distributed returns it
#: as total_gpu_memory). The GPU total planned is that figure plus kvlint's pre-load usage. gt-358: 22.76 GB free on a
#: 23.59 GiB RTX 3090 under WSL2 (the Windows host held memory); +5.0 % from the card's total.
PRELOAD_FROM_LOG = ("gt-358",)
#: the SGLang cases of REPLAY (the others are TGI)
SGLANG_CASES = (
    "gt-005",
    "gt-232",
    "gt-250",
    "gt-251",
    "gt-252",
    "gt-264",
    "gt-265",
    "gt-277",
    "gt-297",
    "gt-298",
    "gt-312",
    "gt-358",
)
#: Scored cases whose miss above the 10 % tripwire is documented and not attributed to a source term: (the error
#: in % this version of kvlint gives, signed, where it is written up). They stay scored and printed; the exit status
#: fails on them when they move more than 1 point from that error either way, unless within 10 % (main()).
KNOWN_MISSES: dict[str, tuple[float, str]] = {
    # TGI 1.0, Llama-2-70B on 4 x A100-80GB: ~4 GiB per shard below TGI's own allocations, and the launcher flags
    # are in a screenshot the stored thread does not hold (docs/engine-memory-model.md §5, "gt-235")
    "gt-235": (13.8, "docs/engine-memory-model.md §5 (gt-235)"),
    # TGI 3.0.1, Llama-3.3-70B AWQ on 2 x RTX 3090: ~0.45 GiB per shard of a 2.1 GiB pool not attributed after the
    # FlashInfer workspace, the warmup logits, the Marlin reduction buffer and NCCL were read (§5, "gt-299")
    "gt-299": (21.7, "docs/engine-memory-model.md §5 (gt-299)"),
}
NOT_REPLAYABLE = {
    "gt-322": "SageMaker JumpStart deployment whose container limits (MAX_INPUT_LENGTH, MAX_TOTAL_TOKENS, "
    "MAX_BATCH_PREFILL_TOKENS) are not in the document; the launcher's defaults are assumed, and the warmup's prefill "
    "size sets the inferred figure — printed for information, not scored",
    "gt-286": "no model, GPU or flags in the report (the scheduler line only): not replayed",
    "gt-329": "Qwen2.5-7B-Instruct-AWQ at mem_fraction_static 0.82 on an unnamed 16 GB card (15.08 GB free before "
    "loading) with a 2026 SGLang build whose release the log does not print: not replayed",
    "gt-292": "Qwen3.8-27B NVFP4 (RadixArk) with a DFlash2 drafter on 2x RTX 5090: the model's config is not in the "
    "corpus or the catalogue and --mem-fraction-static is not in the stored excerpt: not replayed",
    "gt-293": "TGI 3.x log whose model (Qwen2.5-VL-3B or Qwen2.5-3B, the thread runs both) and GPU are not in the "
    "stored excerpt: not replayed",
    "gt-294": "MiMo-V2-Flash at TP 4 on an unnamed GPU, --mem-fraction-static not in the stored excerpt (a "
    "pull-request branch): not replayed",
    "gt-295": "MiMo-V2-Flash at TP 4 and --mem-fraction-static 0.7 on an unnamed GPU (SGLang main before the "
    "pull request's fix of the sliding-window cell size): not replayed",
    "gt-287": "figure quoted in prose from a pull-request branch (DeepSeek-V4-Flash with MTP on 8x L20; the L20 is "
    "not in the accelerator catalogue): not replayed",
    "gt-297": "SGLang main of 2025-10-07 (the 0.5.3 wheel's sizing) with the DeepSeek-V3.2 config standing in for "
    "V3.2-Exp: DSA on Blackwell, fp8 KV and DP attention set by SGLang (docs §3.3) — printed for information, not scored",
    "gt-298": "the pull request's branch (the 0.5.4 wheel's sizing), as gt-297 — printed for information, not scored",
    "gt-082": "the log's 2 shards (the README's command says --num-shard 1) on a 64 GiB AMD device (MI210 or an "
    "MI250/MI250X GCD), our reading: on one 192 GB MI300X kvlint gives 1,355,312 tokens on 1 shard (+69 %) and "
    "2,810,304 on 2 (+251 %); ROCm build; Llama-3.1-8B config stands in for Meta-Llama-3-8B — printed for "
    "information, not scored",
    "gt-005": "the FP8 checkpoint's config is not in the corpus; bf16 Qwen3-235B-A22B config with fp8 weights "
    "assumed (cell size and mem_fraction_static are exact; the +1.3 GiB is the TP4 pre-load context and/or the "
    "FP8 load, docs §5) — printed for information, not scored",
    "gt-083": "max_batch_total_tokens 17664 was set explicitly (benchmark settings), not inferred",
    "gt-234": "TGI 2.4.0 and max_input_tokens 9999 read from the log (see REPLAY), checkpoint not named (the "
    "Llama-3.1-70B config stands in) — printed for information, not scored. -16.6 % (-14.2 % before the FlashInfer "
    "workspace was counted); +54.7 % before the warmup "
    "logits were read (one vocab/shards copy instead of three full-vocabulary copies on a gathered LM head, §2.3)",
    "gt-236": "local 'mistral7b-free' checkpoint: the Mistral-7B-Instruct-v0.3 config stands in (Mistral-7B class) — "
    "printed for information, not scored. The reporter's TGI#1863 shows the deployment at 67 GB after warmup (weights "
    "+ KV only), so the warmup freed ~13.8 GiB where kvlint's prefill activation + logits give 7.1 (docs §5)",
    "gt-257": "launcher flags not shown (defaults assumed); the 0.7 GB nvidia-smi showed in use before the start "
    "is taken off the device (OTHER_PROCESS_GIB; +15.6 % without it): printed for information, not scored",
    "gt-265": "the reported figure is LMCache's GPU buffer ('max tokens=N', the run of the day before, same command), "
    "not SGLang's pool, whose line the stored excerpt cuts off; GPU not named (80 GB Hopper, our reading) — printed "
    "for information, not scored",
    "gt-232": "SGLang PR branch that lowers the KV budget for an AITER workspace, on a ~288 GB AMD Instinct "
    "(MI355X-class, our reading of the log's free memory) — printed for information, not scored",
    "gt-277": "a failure (no room for the KV pool at --mem-fraction-static 0.88, DeepSeek-V4-Hopper image): kvlint "
    "plans a pool where the engine had none, because it puts 103.4 GiB of weights per GPU (the official config's FP8 "
    "layers and FP4 experts) against the 125.65 GB the engine printed; which layers that image keeps wider on Hopper "
    "is not in the report — printed for information, not scored (docs §5)",
}


def predict(case_id: str) -> tuple[int | None, str]:
    """kvlint's predicted figure for one replayable case (tokens), and a note; (None, reason) otherwise."""
    from kvlint.accelerators import lookup
    from kvlint.engines import parse_command_line
    from kvlint.memory.sglang import plan_sglang_detailed
    from kvlint.memory.tgi import plan_tgi_detailed
    from kvlint.models import resolve_model

    spec = REPLAY.get(case_id)
    if spec is None:
        return None, NOT_REPLAYABLE.get(case_id, "failure case or no inferred figure (not replayed)")
    args, model_id, acc_id, version, gpus = spec
    m = resolve_model(model_id, model_dirs=MODEL_DIRS, allow_hub=False)
    acc = lookup(acc_id)
    assert acc is not None
    if case_id in SGLANG_CASES:
        import dataclasses

        if case_id == "gt-005":
            m = dataclasses.replace(
                m, quant_method="fp8", quant_config={"quant_method": "fp8"}, weight_bytes=None
            )
        s = parse_command_line(
            ["python", "-m", "sglang.launch_server", "--model-path", model_id, *args], version
        )
        total = acc.memory_bytes
        if case_id in PRELOAD_FROM_LOG:
            from kvlint.memory.sglang import preload_bytes

            total = int(_figures(case_id)["free_before_weights_gb"] * (1 << 30)) + preload_bytes(gpus)[0]
        sd = plan_sglang_detailed(
            s, m, total, gpus=gpus, gpu_name=acc.name, compute_capability=acc.compute_capability
        )
        return (
            sd.max_total_num_tokens,
            f"mfs {sd.mem_fraction_static}, cell {sd.plan.kv_bytes_per_token} B, "
            f"max_running_requests {sd.max_running_requests}",
        )
    s = parse_command_line(["text-generation-launcher", "--model-id", model_id, *args], version)
    s.version = version
    total = acc.memory_bytes - int(OTHER_PROCESS_GIB.get(case_id, 0.0) * (1 << 30))
    d = plan_tgi_detailed(
        s, m, total, gpus=gpus, gpu_name=acc.name, compute_capability=acc.compute_capability
    )
    return (
        d.max_batch_total_tokens,
        f"{d.plan.era}, block {d.plan.block_size}, prefill {d.max_batch_prefill_tokens}",
    )


def _figures(case_id: str) -> dict[str, Any]:
    """The figures of one case of the shared or the local cases file."""
    for path in (CASES, Path(__file__).resolve().parent / "groundtruth" / "cases.yaml"):
        if path.is_file():
            for c in yaml.safe_load(path.read_text()):
                if c["id"] == case_id:
                    return dict(c.get("figures") or {})
    raise KeyError(case_id)


def _reported(c: dict[str, Any]) -> int | None:
    f = c.get("figures") or {}
    for k in ("max_batch_total_tokens_inferred", "kv_tokens"):
        if f.get(k):
            return int(f[k])
    if c["id"] == "gt-265":
        return int(f["lmcache_gpu_buffer_max_tokens"])
    if c["id"] in ("gt-082", "gt-234", "gt-235", "gt-236", "gt-257", "gt-299"):
        return int(f["max_batch_total_tokens"])
    return None


def main(argv: list[str] | None = None) -> int:
    """Print one line per TGI/SGLang case; return 1 when a scored case is off by more than 10% (a documented miss,
    :data:`KNOWN_MISSES`, more than one point from its documented signed error) or no longer replays."""
    path = Path((argv or sys.argv[1:] or [str(CASES)])[0])
    if not path.is_file():
        print(
            f"accuracy_engines: no cases file at {path} (pass the shared groundtruth/cases.yaml)",
            file=sys.stderr,
        )
        return 2
    cases = yaml.safe_load(path.read_text())
    local = Path(__file__).resolve().parent / "groundtruth" / "cases.yaml"
    if local.is_file() and local.resolve() != path.resolve():
        cases += yaml.safe_load(local.read_text())
    bad = 0
    print(f"{'case':8} {'engine':6} {'outcome':7} {'reported':>9} {'kvlint':>9} {'err':>7}  note")
    for c in cases:
        if str(c.get("engine", "")).split()[0] not in ("tgi", "sglang"):
            continue
        cid = c["id"]
        rep = _reported(c)
        try:
            pred, note = predict(cid)
        except Exception as exc:  # a case that cannot be replayed must not stop the benchmark
            pred, note = None, f"not replayed: {type(exc).__name__}: {exc}"
        scored = cid in REPLAY and cid not in NOT_REPLAYABLE and rep and pred is not None
        err = f"{(pred - rep) / rep * 100:+.1f}%" if rep and pred is not None else "-"
        known = KNOWN_MISSES.get(cid)
        if scored and rep and pred is not None:
            pct = (pred - rep) / rep * 100
            # a documented miss passes only near its documented (signed) error: a swing to the other side is a
            # regression, however large the documented figure
            if abs(pct) > 10.0 and not (known and abs(pct - known[0]) <= 1.0):
                bad += 1
        elif cid in REPLAY and cid not in NOT_REPLAYABLE and rep:
            bad += 1  # a scored case that no longer replays (an exception, or no prediction) hides nothing
        tag = "SCORED" if scored else "info"
        if cid in REPLAY and cid not in NOT_REPLAYABLE and rep and not scored:
            tag = "SCORED, not replayed: fails"
        if scored and known:
            tag += f", known miss: {known[1]}"
        printed_mrr = (c.get("figures") or {}).get("max_running_requests")
        if printed_mrr is not None and pred is not None:
            note += f" (printed {printed_mrr})"
        print(
            f"{cid:8} {str(c['engine']).split()[0]:6} {c['outcome']:7} {rep or '-':>9} {pred if pred is not None else '-':>9} {err:>7}  "
            f"[{tag}] {note}; {NOT_REPLAYABLE.get(cid, '') if pred is not None else ''}".rstrip("; ")
        )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
