"""Model references that name their model without being a hub id kvlint holds: Hugging Face cache folders,
directories named after a catalogued model, unchanged re-uploads and AMD's -FP8-KV builds. Each is read from
the string alone (nothing on disk) and, except the cache layout, stated as an ASSUMPTION. The references are
the ones real manifests use (fixtures/collected and the shared corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.models import resolve_model
from kvlint.pipeline import Options, run_check
from kvlint.types import ModelUnavailable

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"


def test_a_hugging_face_cache_folder_is_its_repository() -> None:
    # InftyAI/llmaz docs/examples/multi-nodes/service.yaml
    spec = resolve_model("/workspace/models/models--meta-llama--Meta-Llama-3.1-8B-Instruct", allow_hub=False)
    assert spec.id == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert "Hugging Face cache folder of meta-llama/Meta-Llama-3.1-8B-Instruct" in spec.notes[0]
    assert "ASSUMPTION" not in spec.notes[0]
    sha = "0e9e39f249a16976918f6564b8830bc894c89659"
    pinned = resolve_model(
        f"/root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/{sha}",
        allow_hub=False,
    )
    assert pinned.id == "meta-llama/Llama-3.1-8B-Instruct"
    assert any(sha in n for n in pinned.notes)  # the snapshot's commit is the requested revision


def test_a_directory_named_after_a_catalogued_model_is_an_assumption() -> None:
    # vllm-project/aibrix samples/disaggregation/sglang: --model-path /models/Qwen3-8B
    spec = resolve_model("/models/Qwen3-8B", allow_hub=False)
    assert spec.id == "Qwen/Qwen3-8B"
    assert spec.notes[0].startswith("ASSUMPTION (path named after the model): /models/Qwen3-8B was not read")
    # the webhook never looks paths up on its own disk; the name alone still says it
    assert resolve_model("/models/Qwen3-8B", allow_hub=False, allow_local_paths=False).id == "Qwen/Qwen3-8B"


@pytest.mark.parametrize("ref", ["/mnt/models", "/data/model", "/var/mdl/YOUR-MODEL-PATH", "$(MODEL_PATH)"])
def test_folder_names_that_say_nothing_stay_unknown(ref: str) -> None:
    with pytest.raises(ModelUnavailable):
        resolve_model(ref, allow_hub=False)


def test_an_unchanged_re_upload_under_another_publisher() -> None:
    # bhajian/redhat llm-d-vllm-aks: --model RedHatAI/Llama-3.1-8B-Instruct
    spec = resolve_model("RedHatAI/Llama-3.1-8B-Instruct", allow_hub=False)
    base = resolve_model("meta-llama/Llama-3.1-8B-Instruct", allow_hub=False)
    assert spec.id == "RedHatAI/Llama-3.1-8B-Instruct" and "derived from name" in spec.source
    assert spec.notes[0].startswith("ASSUMPTION (derived from name): RedHatAI/Llama-3.1-8B-Instruct")
    assert "unchanged re-upload of meta-llama/Llama-3.1-8B-Instruct" in spec.notes[0]
    assert (spec.num_layers, spec.num_kv_heads, spec.hidden_size) == (
        base.num_layers,
        base.num_kv_heads,
        base.hidden_size,
    )
    assert spec.weight_bytes is None  # no checkpoint size is claimed for a copy kvlint has not read


def test_amd_fp8_kv_builds_are_fp8() -> None:
    # substratusai/kubeai manifests/models/llama-3.1-70b-instruct-fp8-mi300x.yaml
    spec = resolve_model("amd/Llama-3.1-70B-Instruct-FP8-KV", allow_hub=False)
    assert spec.quant_method == "fp8" and spec.notes[0].startswith("ASSUMPTION (derived from name)")
    assert "-FP8-KV" in spec.notes[0]


@pytest.mark.parametrize(
    ("ref", "hub_id"),
    [
        # sgl-project/sglang docs/references/multi_node_deployment/lws_pd/lws-examples/p.yaml: --model-path
        # /work/models on the hostPath /data1/maas_hosted_models/models/DeepSeek-R1-0528/deepseek_r1_0528
        (
            "/data1/maas_hosted_models/models/DeepSeek-R1-0528/deepseek_r1_0528",
            "deepseek-ai/DeepSeek-R1-0528",
        ),
        ("/models/qwen3_8b", "Qwen/Qwen3-8B"),
        ("/models/llama-3-1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct"),
    ],
)
def test_a_directory_spelling_the_name_with_underscores_or_dashes_is_the_same_assumption(
    ref: str, hub_id: str
) -> None:
    """A folder may spell the repository name with ``_`` (or ``-`` for a dot), as OCI model images do
    (``catalogue.repository_name_match(loose=True)``); the note says the spelling was read loosely."""
    spec = resolve_model(ref, allow_hub=False, allow_local_paths=False)
    assert spec.id == hub_id
    assert spec.notes[0].startswith(f"ASSUMPTION (path named after the model): {ref} was not read")
    assert "'.', '_' and '-' read alike" in spec.notes[0]
    # spelled exactly, the note does not claim a loose reading
    assert "read alike" not in resolve_model("/models/Qwen3-8B", allow_hub=False).notes[0]


@pytest.mark.parametrize("ref", ["/models/llama-31-8b-instruct", "/models/qwen3_8b_finetune_v2"])
def test_a_loose_spelling_still_needs_every_part_of_the_name(ref: str) -> None:
    # a dropped dot joins digits (a "did you mean" only, catalogue.dots_dropped_match); extra words name another model
    with pytest.raises(ModelUnavailable):
        resolve_model(ref, allow_hub=False, allow_local_paths=False)


def test_sglang_lws_prefill_example_is_sized_from_its_host_path() -> None:
    """SGLang's LWS prefill example serves ``--model-path /work/models`` from the hostPath
    ``/data1/maas_hosted_models/models/DeepSeek-R1-0528/deepseek_r1_0528``: KV502 (model unknown) for the leader
    and its worker until the host folder's underscore spelling was read as the catalogued name."""
    path = (
        COLLECTED
        / "sgl-project__sglang__docs__references__multi_node_deployment__lws_pd__lws-examples__p.yaml"
    )
    res = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    served = [c for c in res.containers if c.serving is not None]
    assert len(served) == 2 and {c.model.id for c in served if c.model} == {"deepseek-ai/DeepSeek-R1-0528"}
    (d,) = [d for d in res.diagnostics if d.rule == "KV505"]
    assert "'deepseek_r1_0528' is, with '.', '_' and '-' read alike, the repository name" in d.message


def test_a_storage_uri_spelling_the_name_loosely_says_so() -> None:
    from kvlint.models.resolve import resolve_stored_model

    spec = resolve_stored_model("s3://bucket/models/qwen3_8b", "/mnt/models", allow_hub=False)
    assert spec is not None and spec.id == "Qwen/Qwen3-8B"
    assert (
        "its last component 'qwen3_8b' is, with '.', '_' and '-' read alike, the repository name"
        in spec.notes[0]
    )
    exact = resolve_stored_model("s3://bucket/models/Qwen3-8B", "/mnt/models", allow_hub=False)
    assert (
        exact is not None
        and "'Qwen3-8B' is the repository name of the catalogued Qwen/Qwen3-8B only" in (exact.notes[0])
    )
    org = resolve_stored_model("s3://bucket/models/Qwen--Qwen3-8B", "/mnt/models", allow_hub=False)
    assert org is not None and "'Qwen--Qwen3-8B' is the <org>--<name> spelling" in org.notes[0]
