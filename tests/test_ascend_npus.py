"""Huawei Ascend NPUs: KV403 counts a vLLM engine's workers against the pod's NPUs, one NPU a worker, as
vllm-ascend binds them (vllm-project/vllm-ascend v0.11.0rc1 ``vllm_ascend/worker/worker_v1.py::NPUWorker.
_init_device``: local rank r on ``npu:r``), and the container is still not sized (not a CUDA/ROCm GPU).

The object is AIBrix's vllm-ascend sample of fixtures/collected: ``--tensor-parallel-size 2`` on one
``huawei.com/Ascend910``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.gpu_resources import ASCEND_NPU_RESOURCES, NON_GPU_RESOURCES
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import summarise

SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "collected"
    / "vllm-project__aibrix__samples__vllm-ascend__job.yaml"
)


def _run(text: str):  # type: ignore[no-untyped-def]
    return run_documents(load_text(text, "job.yaml"), Options(allow_hub=False))


def _kv403(text: str) -> list[str]:
    return [d.message for d in _run(text).diagnostics if d.rule == "KV403"]


def test_tp2_on_one_ascend910_is_reported() -> None:
    text = SAMPLE.read_text()
    assert text.count('huawei.com/Ascend910: "1"') == 2 and "--tensor-parallel-size 2" in text
    (msg,) = _kv403(text)
    assert "needs 2 NPUs but the pod requests 1 (huawei.com/Ascend910: 1)" in msg
    assert "local rank 1" in msg


@pytest.mark.parametrize("resource", sorted(ASCEND_NPU_RESOURCES))
def test_every_ascend_resource_counts_npus(resource: str) -> None:
    text = SAMPLE.read_text().replace("huawei.com/Ascend910:", f"{resource}:")
    (msg,) = _kv403(text)
    assert f"({resource}: 1)" in msg
    # two NPUs hold the two workers; four leave two idle (a warning, not an error)
    assert _kv403(text.replace(f'{resource}: "1"', f'{resource}: "2"')) == []
    (idle,) = _kv403(text.replace(f'{resource}: "1"', f'{resource}: "4"'))
    assert "uses only 2; 2 NPUs sit idle" in idle


def test_the_idle_npu_remedy_speaks_of_npu_workers() -> None:
    # the remedy that uses all four NPUs adds the /dev/shm KV404 requires: of NPU workers, not "GPU worker"
    text = SAMPLE.read_text().replace('huawei.com/Ascend910: "1"', 'huawei.com/Ascend910: "4"')
    (idle,) = [d for d in _run(text).diagnostics if d.rule == "KV403"]
    assert idle.fix is not None and "to use all 4" in idle.fix, idle.fix
    assert "GPU" not in idle.fix and "more than one NPU worker" in idle.fix, idle.fix


def test_npu_slices_are_not_whole_npus() -> None:
    # HAMi's memory share of one NPU and MindCluster's virtual NPU are not counted as NPUs
    for name in ("huawei.com/Ascend910B-memory", "huawei.com/Ascend910-4c"):
        assert name not in ASCEND_NPU_RESOURCES
        assert _kv403(SAMPLE.read_text().replace("huawei.com/Ascend910:", f"{name}:")) == []


def test_ascend_container_is_still_not_sized() -> None:
    assert NON_GPU_RESOURCES["huawei.com/Ascend910"] == "ascend"
    result = _run(SAMPLE.read_text())
    assert not any(d.rule.startswith("KV1") for d in result.diagnostics)
    # a custom image on an Ascend NPU is not sized on a CUDA GPU either
    custom = SAMPLE.read_text().replace(
        "quay.io/ascend/vllm-ascend:v0.11.0rc1-a3", "registry.example/serving:1"
    )
    summary = summarise(_run(custom))
    assert summary.not_sized.get("not a CUDA/ROCm GPU") == 1, summary


def test_tgi_on_an_npu_is_not_counted() -> None:
    # TGI has no Ascend build: its shards are not compared with NPUs
    text = SAMPLE.read_text().replace(
        "vllm serve Qwen-2.5-0.5B \\",
        "text-generation-launcher --model-id Qwen/Qwen2.5-0.5B --num-shard 2 \\",
    )
    assert _kv403(text) == []


@pytest.mark.parametrize(
    "name",
    [
        "huawei.com/Ascend910B-memory",
        "huawei.com/Ascend910B3-core",
        "huawei.com/Ascend910-4c",
        "huawei.com/ascend-1980",
    ],
)
def test_ascend_plugin_names_are_not_misspelt_gpus(name: str) -> None:
    # KV409 compares unknown resources with the GPU resources by spelling: the Ascend plugins' other names
    # (HAMi's shares, MindCluster's virtual NPUs) and CCE's whole NPU are close to the NPU names but not misspelt
    text = SAMPLE.read_text().replace("huawei.com/Ascend910:", f"{name}:")
    assert not [d for d in _run(text).diagnostics if d.rule == "KV409"]
