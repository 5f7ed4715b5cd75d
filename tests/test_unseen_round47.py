"""Real public manifests kvlint had not seen (new-user pass 47, fixtures/collected: AIBrix's samples, regression and
benchmark deployments, OME's ClusterServingRuntimes). What a first run on them showed to be wrong, each checked on
the file itself; the general cases are in tests/test_sglang_multinode_attn_dp.py and tests/test_sglang.py."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
OME = "sgl-project__ome__config__runtimes__srt__"


def _run(name: str):  # type: ignore[no-untyped-def]
    return run_check([str(COLLECTED / name)], Options(allow_hub=False)).diagnostics


def test_ome_kimi_k2_wide_ep_decoder_is_not_refused() -> None:
    """The decoder of OME's Kimi-K2 P/D runtime: a LeaderWorkerSet of worker.size 11 + 1 pods of 8 GPUs, SGLang with
    ``--tp-size`` and ``--dp-size`` ``$(PARALLELISM_SIZE)`` (96), ``--enable-dp-attention``, ``--nnodes
    $(LWS_GROUP_SIZE)`` (12). kvlint said "--tp-size 96 needs 96 GPUs but the pod requests 8" (KV403) and "--tp-size
    96 does not divide the 64 attention heads" (KV401): 96 ranks on 96 GPUs, attention TP 1."""
    diags = _run(OME + "kimi-k2-pd-rt.yaml")
    assert not [d for d in diags if d.rule in ("KV401", "KV402", "KV403")], [
        (d.rule, d.message) for d in diags if d.rule.startswith("KV40")
    ]
    assert not [d for d in diags if d.severity == "error"]


def test_ome_gemma3_context_length_names_the_rope_factor() -> None:
    """OME's gemma-3-12b-it SGLang runtime: KV202 quoted "(1048576 tokens, max_position_embeddings)", but the config
    says 131072; SGLang multiplies it by the linear rope_scaling factor 8."""
    (kv202,) = [d for d in _run(OME + "google__gemma-3-12b-it-rt.yaml") if d.rule == "KV202"]
    assert "1048576 tokens, max_position_embeddings 131072 × rope_scaling factor 8" in kv202.message, (
        kv202.message
    )


def test_kv404_on_an_ascend_build_names_vllms_queue_not_nccl() -> None:
    """AIBrix's vllm-ascend StormService (TP 2, no memory-backed /dev/shm): KV404 said "2 GPU workers ... NCCL fails or
    hangs"; vllm-ascend's ranks talk over HCCL, not NCCL, while vLLM's own shared-memory message queues to its worker
    processes (the multiprocessing executor every platform's V1 engine uses) still live in /dev/shm."""
    (kv404,) = [d for d in _run("vllm-project__aibrix__samples__vllm-ascend__job.yaml") if d.rule == "KV404"]
    assert "NCCL" not in kv404.message and "GPU workers" not in kv404.message, kv404.message
    assert kv404.message.startswith("2 vLLM worker processes (--tensor-parallel-size 2)"), kv404.message
    assert "shared-memory message queues" in kv404.message, kv404.message


def test_kv501_on_a_non_cuda_build_named_on_a_cuda_gpu_names_the_build() -> None:
    """AIBrix's AWS Neuron P/D pool (no model kvlint can read) checked with ``--accelerator h100``: KV501 said
    "capacity rules skipped: the pod runs on NVIDIA H100 80GB HBM3, and kvlint's memory model is for CUDA/ROCm GPUs",
    which contradicts itself; what is not CUDA is the image's build."""
    diags = run_check(
        [str(COLLECTED / "vllm-project__aibrix__samples__disaggregation__neuron__pool.yaml")],
        Options(allow_hub=False, accelerator="h100"),
    ).diagnostics
    kv501 = [d.message for d in diags if d.rule == "KV501"]
    assert kv501 and all("the pod runs on NVIDIA H100" not in m for m in kv501), kv501
    assert all("AWS Neuron build of vllm" in m for m in kv501), kv501
