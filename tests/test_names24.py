"""Where real manifests name the model and the GPU in ways kvlint reads only with care: modelcar-maker's
``org--name`` image tags, directories named with the dots dropped, OpenShift AI hardware profiles, the article
before an accelerator family's name, and ties among "did you mean" suggestions."""

from __future__ import annotations

from pathlib import Path

import yaml

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
JHARMISON = COLLECTED / "trees/jharmison-redhat-openshift-setup/charts/kserve-vllm-model/values.yaml"
PARASOL = COLLECTED / "charts/parasol-insurance-ic-shared-llm"


def _modelcar_isvc(tmp_path: Path, uri: str) -> list[str]:
    """The Parasol insurance InferenceService + its vLLM ServingRuntime (fixtures/collected/charts), with the
    modelcar image replaced by ``uri`` (kvlint cannot render the jharmison chart without helm, so its
    ``values.model.uri`` is linted in this real InferenceService of the same OpenShift AI shape)."""
    isvc = PARASOL / "inference-service-granite-modelcar.yaml"
    old = "oci://registry.redhat.io/rhelai1/modelcar-granite-3-1-8b-instruct:1.5"
    text = isvc.read_text()
    assert text.count(old) == 1
    out = tmp_path / "isvc.yaml"
    out.write_text(text.replace(old, uri))
    return [str(out), str(PARASOL / "serving-runtime-vllm-granite-modelcar.yaml")]


def test_modelcar_maker_tag_of_the_jharmison_chart_names_its_quantized_granite(tmp_path):
    """jharmison-redhat/openshift-setup serves ``oci://quay.io/jharmison/models:redhatai--granite-3_1-8b-
    instruct-quantized_w8a8-modelcar``: modelcar-maker's tag for a hub id (``/`` -> ``--``, ``.`` -> ``_``,
    lower case; its helpers.normalize). kvlint reads it back through the catalogue to
    RedHatAI/granite-3.1-8b-instruct-quantized.w8a8 (KV505 says so) instead of "model unknown" (KV502)."""
    from kvlint.models import catalogue

    uri = yaml.safe_load(JHARMISON.read_text())["model"]["uri"]
    assert uri == "oci://quay.io/jharmison/models:redhatai--granite-3_1-8b-instruct-quantized_w8a8-modelcar"
    res = run_check(_modelcar_isvc(tmp_path, uri), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "RedHatAI/granite-3.1-8b-instruct-quantized.w8a8"
    assert cr.model.quant_method is not None
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    kv505 = [d for d in res.diagnostics if d.rule == "KV505"]
    assert kv505 and "modelcar-maker" in kv505[0].message
    # the id reads back to the tag it came from (the convention, not a loose match)
    assert catalogue.modelcar_maker_tag(cr.model.id) + "-modelcar" == uri.rsplit(":", 1)[1]


def test_modelcar_maker_tags_read_back_only_through_the_catalogue(tmp_path):
    """Variants: the commented-out Mistral tag of the same values.yaml, a catalogued id spelled the same way,
    and tags naming nothing catalogued (KV502 then says the spelling and what to set, without guessing)."""
    from kvlint.models.resolve import oci_named_model

    text = JHARMISON.read_text()
    mistral = "oci://quay.io/jharmison/models:redhatai--mistral-small-3_1-24b-instruct-2503-fp8-dynamic-modelcar"
    assert f"# uri: {mistral}" in text
    assert oci_named_model(mistral)[0] == "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic"
    assert oci_named_model("oci://q.io/a/models:qwen--qwen3-8b-modelcar")[0] == "Qwen/Qwen3-8B"
    # the wrong org for a catalogued name, and a made-up model: not read
    assert oci_named_model("oci://q.io/a/models:nobody--qwen3-8b-modelcar") is None
    assert oci_named_model("oci://q.io/a/models:redhatai--granite-9_9-8b-instruct-modelcar") is None
    res = run_check(
        _modelcar_isvc(tmp_path, "oci://q.io/a/models:redhatai--granite-9_9-8b-instruct-modelcar"),
        Options(allow_hub=False),
    )
    (cr,) = res.containers
    assert cr.model is None
    (kv502,) = [d for d in res.diagnostics if d.rule == "KV502"]
    assert "org--name" in kv502.message and "redhatai/granite-9_9-8b-instruct" in kv502.message
    assert "kvlint.io/model" in kv502.message
