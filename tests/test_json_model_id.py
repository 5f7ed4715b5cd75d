"""The JSON report's ``model_id`` is null exactly where docs/formats.md says: a container naming no model, a
serving-runtime template (``sizing`` ``runtime template``) and a multi-node group's worker sized with its leader
(``sizing`` ``leader``). Real manifests of fixtures/collected (sources in its INDEX.csv): LeaderWorkerSet's basic
vLLM example, RBG's aggregated leader-worker SGLang example and an OME vLLM ClusterServingRuntime. The workers'
``model`` repeats the leader's argument while their ``model_id`` was null, a case the format page left out."""

from __future__ import annotations

import json
from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.report import render

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
FILES = [
    COLLECTED / "kubernetes-sigs__lws__docs__examples__leaderworkerset__basic__vllm.yaml",
    COLLECTED / "sgl-project__rbg__examples__inference__agg-leader-worker.yaml",
    COLLECTED / "sgl-project__ome__config__runtimes__vllm__llama-3-1-8b-instruct-rt.yaml",
]


def _model_id_paragraph() -> str:
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    start = text.index("`model_id` the model kvlint")
    return " ".join(text[start : text.index("\n`gpus`", start)].split())


def test_null_model_ids_are_the_documented_cases() -> None:
    report = json.loads(render("json", run_check([str(f) for f in FILES], Options(allow_hub=False))))
    why_null = set()
    for w in report["workloads"]:
        if w["model_id"] is None and w["model"] is not None:
            why_null.add(w["sizing"])
        if w["model_id"] is not None:
            assert w["sizing"] not in ("leader", "runtime template"), w
    # every case the corpus shows here is one the page names, by its `sizing` value
    assert why_null == {"leader", "runtime template"}, why_null
    doc = _model_id_paragraph()
    assert "null when the container names no model" in doc
    for sizing in sorted(why_null):
        assert f"`sizing` `{sizing}`" in doc, (sizing, doc)
