"""Hub ids of real manifests that kvlint could not size offline, catalogued in branch sizing53.

Three of the ids pass 51 and pass 52 collected (README: "were not searched for") have a config.json in a public
repository that keeps a model directory (kvlint/models/sources/github-model-dirs.yaml): ``facebook/opt-1.3b``
(SqueezeAILab/SqueezeLLM's ``models/opt-1.3b/``), ``Qwen/Qwen2.5-VL-3B-Instruct`` (a download of the Hub repository
with its safetensors index, whose total size is the entry's weight bytes) and ``google/gemma-4-E4B-it`` (a local
save of the Hub checkpoint, transformers 5.12.1). Each resolves offline from the stored bytes, and the manifests that
name them (fixtures/collected) are sized.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from kvlint.models.resolve import resolve_model
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import SIZED, outcomes

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
SOURCES = ROOT / "kvlint" / "models" / "sources" / "github-model-dirs.yaml"

#: id -> (its layers, hidden size, KV heads as the stored config says them, the collected manifest naming it)
ADDED = {
    "facebook/opt-1.3b": (
        24,
        2048,
        None,
        "ArchanaChetan07__ai-inference-observability-platform__k8s__manifests.yaml",
    ),
    "Qwen/Qwen2.5-VL-3B-Instruct": (36, 2048, 2, "helixml__llms-on-k8s__vision__vision-chat-deployment.yaml"),
    "google/gemma-4-E4B-it": (42, 2560, 2, "justinsb__training__deploy__vllm.yaml"),
}


def _entry(model_id: str) -> dict:
    entries = yaml.safe_load(SOURCES.read_text())["entries"]
    return next(e for e in entries if e["id"] == model_id)


@pytest.mark.parametrize("model_id", sorted(ADDED))
def test_the_id_resolves_offline_from_the_cited_bytes(model_id: str) -> None:
    layers, hidden, kv_heads, _ = ADDED[model_id]
    entry = _entry(model_id)
    stored = ROOT / "fixtures" / "models" / "catalogue" / entry["dir"] / "config.json"
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == entry["config_sha256"]
    assert entry["source"]["kind"] == "github" and len(entry["source"]["commit"]) == 40
    spec = resolve_model(model_id, allow_hub=False)
    text = spec.config.get("text_config") or spec.config
    assert (text["num_hidden_layers"], text["hidden_size"]) == (layers, hidden)
    if kv_heads is not None:
        assert text["num_key_value_heads"] == kv_heads


def test_the_vl_3b_weight_bytes_are_its_safetensors_index_total() -> None:
    entry = _entry("Qwen/Qwen2.5-VL-3B-Instruct")
    assert entry["weight_bytes"]["value"] == 7_509_245_952
    assert "model.safetensors.index.json" in entry["weight_bytes"]["citation"]


@pytest.mark.parametrize("model_id", sorted(ADDED))
def test_the_collected_manifest_naming_it_is_sized(model_id: str) -> None:
    path = COLLECTED / ADDED[model_id][3]
    assert model_id in path.read_text()
    result = run_check([str(path)], Options(allow_hub=False))
    served = [
        cr for cr in result.containers if cr.serving.model is not None and cr.serving.model.value == model_id
    ]
    assert served, model_id
    assert set(outcomes(served)) <= set(SIZED), outcomes(served)
