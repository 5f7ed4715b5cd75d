"""The fixes kvlint gives on a KubeAI Model say where the Model sets what they name: a pod's GPU count is the
count after the colon of ``resourceProfile`` (KubeAI api/k8s/v1/model_types.go, ModelSpec.ResourceProfile:
"nvidia-gpu-l4:2 - 2x NVIDIA L4 GPUs"), and which GPU it gets is the profile's nodeSelector in the KubeAI
installation's ``resourceProfiles``. A Model has no ``nvidia.com/gpu`` and no ``nodeSelector`` to edit; the fixes
said "(and 2 GPUs per pod)" and "add a nodeSelector" with nothing more.

Data: KubeAI's own Models (substratusai/kubeai, fixtures/collected, sources in its INDEX.csv): the 70B FP8 Model of
its prefix-hash benchmark on one H100 (KV105 proposes tensor parallelism over two GPUs) and the RTX 4070 Model on a
profile of the chart's values that names no catalogued GPU (KV501).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
BENCH_70B = (
    COLLECTED
    / "substratusai__kubeai__benchmarks__multi-turn-chat-k6__scenarios__least-load-vs-prefix-hash-70b-8r__model.yaml"
)
RTX4070 = COLLECTED / "substratusai__kubeai__manifests__models__deepseek-r1-distill-qwen-1.5b-rtx4070.yaml"
STACK = COLLECTED / "vllm-project__production-stack__tutorials__assets__values-23-SR.yaml"
OPTS = Options(allow_hub=False)


def _one(path: Path, rule: str):  # noqa: ANN202 - Diagnostic
    (d,) = [d for d in run_check([str(path)], OPTS).diagnostics if d.rule == rule]
    return d


def test_gpu_count_in_a_fix_is_said_as_the_resource_profile_count() -> None:
    d = _one(BENCH_70B, "KV105")
    assert "--tensor-parallel-size 2 (and 2 GPUs per pod)" in d.fix, d.fix  # the premise: a fix naming GPUs
    assert d.fix.endswith(
        "(for this KubeAI Model: the GPUs per pod are the count after the colon of resourceProfile, as in "
        "nvidia-gpu-h100:2)"
    ), d.fix


def test_kv403_gpu_count_is_said_as_the_resource_profile_count() -> None:
    """KV403's "request 1 GPU" on the 70B Model given two H100s (its resourceProfile's count changed from 1 to 2,
    the one change) and no tensor parallelism."""
    from kvlint.load import load_text
    from kvlint.pipeline import run_documents

    text = BENCH_70B.read_text()
    assert text.count("nvidia-gpu-h100:1") == 1
    r = run_documents(load_text(text.replace("nvidia-gpu-h100:1", "nvidia-gpu-h100:2"), "model.yaml"), OPTS)
    (d,) = [d for d in r.diagnostics if d.rule == "KV403"]
    assert d.fix.startswith("request 1 GPU,"), d.fix
    assert (
        "(for this KubeAI Model: the GPUs per pod are the count after the colon of resourceProfile" in d.fix
    )


def test_node_selector_in_a_fix_is_said_as_the_profiles_node_selector(tmp_path: Path) -> None:
    # a chart profile whose GPU is not in the catalogue (nvidia-gpu-a16), in the RTX 4070 Model's place
    model = tmp_path / "model.yaml"
    model.write_text(RTX4070.read_text().replace("nvidia-gpu-rtx4070-8gb", "nvidia-gpu-a16"))
    d = _one(model, "KV501")
    assert d.fix.startswith("name the GPU (l4 in these examples): a nodeSelector"), d.fix
    assert "for this KubeAI Model: which GPU a pod gets is the resource profile's" in d.fix, d.fix
    assert "resourceProfiles of the KubeAI installation's Helm values" in d.fix


def test_chart_values_keep_their_own_heading() -> None:
    """production-stack values still say "in these values" (the heading is the term's, not the Model's)."""
    d = _one(STACK, "KV501")
    assert "(in these values: node selection is the entry's nodeSelectorTerms or affinity" in d.fix, d.fix
    assert "KubeAI" not in d.fix


def test_models_chart_catalog_entries_are_named_as_entries(tmp_path: Path) -> None:
    """The KubeAI ``models`` chart's values (fixtures/helm/kubeai, the chart's own values.yaml): each Model is a
    ``catalog`` entry the user edits there, so the fix names the entry's resourceProfile, and says that the
    profiles' nodeSelectors are in the other chart's values (kubeai's ``resourceProfiles``), not these. The
    chart's RTX 4070 entries are given the A16 profile, whose GPU is not in the catalogue (a KV501)."""
    chart = Path(__file__).resolve().parents[1] / "fixtures/helm/kubeai/charts/models"
    copy = tmp_path / "models"
    shutil.copytree(chart, copy)
    values = copy / "values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("nvidia-gpu-rtx4070-8gb", "nvidia-gpu-a16"))
    r = run_check([str(values)], OPTS)
    kv105 = [d for d in r.diagnostics if d.rule == "KV105" and "GPUs per pod" in d.fix]
    kv501 = [d for d in r.diagnostics if d.rule == "KV501" and d.fix.startswith("name the GPU (")]
    assert kv105 and kv501  # the premise: fixes naming a GPU count and a nodeSelector
    for d in kv105:
        assert d.fix.endswith(
            "(for this catalog entry of the KubeAI models chart: the GPUs per pod are the count after the colon "
            "of the entry's resourceProfile, as in nvidia-gpu-h100:2)"
        ), d.fix
    for d in kv501:
        assert "(for this catalog entry of the KubeAI models chart: which GPU a pod gets" in d.fix, d.fix
        assert "(the kubeai chart's, not these models chart values)" in d.fix, d.fix
    assert not any("for this KubeAI Model" in (d.fix or "") for d in r.diagnostics)
