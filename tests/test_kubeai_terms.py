"""The fixes of a KubeAI Model are said in the terms of what the user edits, for the device its resource profile
requests.

* A TPU profile (``google-tpu-v5e-2x2:4``) counts TPU chips: KV403's "request 8 chips per pod (google.com/tpu)"
  was left without the Model's terms, and the GPU wording ("the GPUs per pod are the count after the colon") was
  the only one there was. KubeAI's own TPU Model (substratusai/kubeai manifests/models/llama-3.1-8b-instruct-tpu.yaml,
  fixtures/collected, source in its INDEX.csv) with its TP raised past the chips it gets, on vLLM's own
  executor (its Ray backend dropped).
* A CPU profile's Model gets a GPU only from a GPU profile, which also picks the CUDA image.
* Models that helm renders from the KubeAI ``models`` chart (fixtures/helm/kubeai: the chart's own values) were
  said "for this KubeAI Model" while the same values read directly said "for this catalog entry": the user edits
  the entry either way.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_check, run_documents
from kvlint.workloads.kubeai import KUBEAI_CATALOG_TERMS, KUBEAI_MODEL_TERMS, kubeai_terms

ROOT = Path(__file__).resolve().parents[1]
TPU_MODEL = (
    ROOT / "fixtures/collected/substratusai__kubeai__manifests__models__llama-3.1-8b-instruct-tpu.yaml"
)
RENDERED = ROOT / "fixtures/helm/kubeai/rendered/models.yaml"
CHART = ROOT / "fixtures/helm/kubeai"
OPTS = Options(allow_hub=False)
GPU_COUNT_PHRASE = KUBEAI_MODEL_TERMS[0].phrase


def test_tpu_profile_fix_names_the_chips_of_the_resource_profile() -> None:
    text = TPU_MODEL.read_text()
    assert "resourceProfile: google-tpu-v5e-2x2:4" in text
    # TP raised past the 4 chips, on vLLM's own executor (with Ray's, the workers may be placed on other hosts)
    derived = text.replace("--tensor-parallel-size=4\n", "--tensor-parallel-size=8\n").replace(
        "    - --distributed-executor-backend=ray\n", ""
    )
    assert len(derived) == len(text) - len("    - --distributed-executor-backend=ray\n")
    r = run_documents(load_text(derived, "model.yaml"), OPTS)
    (kv403,) = [d for d in r.diagnostics if d.rule == "KV403"]
    assert "chips per pod (google.com/tpu)" in kv403.fix, kv403.fix
    tpu_phrase = kubeai_terms("tpu")[0].phrase
    assert kv403.fix.endswith(f"(for this KubeAI Model: {tpu_phrase})"), kv403.fix
    assert "the TPU chips per pod are the count after the colon of resourceProfile" in tpu_phrase
    assert not any(GPU_COUNT_PHRASE in d.fix for d in r.diagnostics)


def test_cpu_profile_model_is_told_how_a_gpu_is_requested() -> None:
    text = TPU_MODEL.read_text()
    derived = text.replace("resourceProfile: google-tpu-v5e-2x2:4", "resourceProfile: cpu:1")
    assert derived != text
    r = run_documents(load_text(derived, "model.yaml"), OPTS)
    (kv501,) = [d for d in r.diagnostics if d.rule == "KV501"]
    assert "CPU build" in kv501.message, kv501.message
    assert kv501.fix.endswith(f"(for this KubeAI Model: {kubeai_terms('cpu')[0].phrase})"), kv501.fix
    assert not any(GPU_COUNT_PHRASE in d.fix for d in r.diagnostics)


def test_terms_of_a_gpu_profile_are_unchanged() -> None:
    assert (
        kubeai_terms("gpu") == KUBEAI_MODEL_TERMS
        and kubeai_terms("gpu", catalog=True) == KUBEAI_CATALOG_TERMS
    )
    assert {t.heading for t in kubeai_terms("tpu", catalog=True)} == {KUBEAI_CATALOG_TERMS[0].heading}


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
@pytest.mark.parametrize("given", [CHART, RENDERED], ids=["chart", "helm-output-beside-the-chart"])
def test_models_rendered_by_the_models_chart_name_the_catalog_entry(given: Path) -> None:
    r = run_check([str(given)], OPTS)
    termed = [d for d in r.diagnostics if d.object.startswith("Model/") and "(for this " in d.fix]
    assert termed, "no fix of the rendered Models names a term"
    assert all(
        d.loc is not None and d.loc.file.endswith("charts/models/templates/models.yaml") for d in termed
    )
    for d in termed:
        assert "(for this catalog entry of the KubeAI models chart: " in d.fix, d.fix
        assert "for this KubeAI Model" not in d.fix
