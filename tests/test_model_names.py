"""Model references that name their model without being a hub id kvlint holds: Hugging Face cache folders,
directories named after a catalogued model, unchanged re-uploads and AMD's -FP8-KV builds. Each is read from
the string alone (nothing on disk) and, except the cache layout, stated as an ASSUMPTION. The references are
the ones real manifests use (fixtures/collected and the shared corpus)."""

from __future__ import annotations

import pytest

from kvlint.models import resolve_model
from kvlint.types import ModelUnavailable


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
