"""Hub resolution through the real ``huggingface_hub`` code against a local fake Hub on 127.0.0.1
(``HF_ENDPOINT``): config.json download, safetensors-header weight bytes (range requests only), the
index file's total_size, malformed JSON, a server that never answers (timeout, not a hang), and the
per-run memo. The fake Hub is tests/fakehub.py. Fixture config: fixtures/hub/config.json (see
fixtures/hub/SOURCE.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakehub import FakeHub, llama_shapes, one_commit, safetensors_header, serve

from kvlint.models import clear_cache, resolve_model
from kvlint.types import ModelUnavailable

ROOT = Path(__file__).resolve().parent.parent
CONFIG = (ROOT / "fixtures" / "hub" / "config.json").read_bytes()
COMMIT = "a" * 40


HEADER, TENSOR_BYTES, PARAMS = safetensors_header(llama_shapes(json.loads(CONFIG)))
INDEX = json.dumps({"metadata": {"total_size": 2471645608}, "weight_map": {}}).encode()

#: repo -> files the fake Hub serves (the safetensors "file" is its header only: nothing else is read)
REPOS: dict[str, dict[str, bytes]] = {
    "acme-lab/single-file": {"config.json": CONFIG, "model.safetensors": HEADER},
    "acme-lab/sharded": {"config.json": CONFIG, "model.safetensors.index.json": INDEX},
    "acme-lab/bad-json": {"config.json": b'{"model_type": "llama",\n  "hidden_size": }'},
    "acme-lab/no-weights": {"config.json": CONFIG},
}


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub of tests/fakehub.py serving :data:`REPOS` (``acme-lab/sharded`` also at tag ``v1.0``);
    yields its state (``requests``: every request received)."""
    import huggingface_hub.constants as hfc

    clear_cache()
    state = FakeHub({r: one_commit(files, COMMIT) for r, files in REPOS.items()})
    state.repos["acme-lab/sharded"].refs["v1.0"] = COMMIT
    gen = serve(state)
    next(gen)
    monkeypatch.setenv("HF_ENDPOINT", state.endpoint)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hfc, "HF_HUB_OFFLINE", False)
    yield state
    gen.close()
    clear_cache()


def test_single_file_weight_bytes_from_safetensors_header(hub: FakeHub) -> None:
    spec = resolve_model("acme-lab/single-file")
    assert spec.num_layers == json.loads(CONFIG)["num_hidden_layers"]
    assert spec.weight_bytes == TENSOR_BYTES and spec.param_count == PARAMS
    assert (
        spec.weight_bytes_source is not None
        and "safetensors headers of model.safetensors" in spec.weight_bytes_source
    )
    assert "BF16" in spec.weight_bytes_source
    # only ranged GETs of model.safetensors: the weights themselves are never fetched
    gets = [
        (q.path, q.range) for q in hub.requests if q.method == "GET" and q.path.endswith("/model.safetensors")
    ]
    assert gets and all(r and r.startswith("bytes=0-") for _p, r in gets)
    # memoised per run: no further requests
    n = len(hub.requests)
    assert resolve_model("acme-lab/single-file") is spec and len(hub.requests) == n


def test_sharded_weight_bytes_from_index_total_size(hub: FakeHub) -> None:
    spec = resolve_model("acme-lab/sharded")
    assert spec.weight_bytes == 2471645608
    assert "model.safetensors.index.json metadata.total_size" in (spec.weight_bytes_source or "")


def test_no_safetensors_leaves_weights_to_the_estimate(hub: FakeHub) -> None:
    spec = resolve_model("acme-lab/no-weights")
    assert spec.weight_bytes is None and spec.num_layers > 0


def test_malformed_config_names_model_and_position(hub: FakeHub) -> None:
    with pytest.raises(ModelUnavailable) as ei:
        resolve_model("acme-lab/bad-json")
    msg = str(ei.value)
    assert "acme-lab/bad-json" in msg and "malformed JSON" in msg and ":2:" in msg


def test_revision_pinning_reaches_the_hub(hub: FakeHub) -> None:
    spec = resolve_model("acme-lab/sharded", revision="v1.0")
    assert spec.source.endswith("@v1.0")
    assert any("/resolve/v1.0/config.json" in q.path for q in hub.requests)


def test_unresponsive_hub_times_out(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Hub holds the request 60 s (tests/fakehub.py): kvlint's own timeout (HF_HUB_ETAG_TIMEOUT 1 s and its
    wall-clock deadline) ends it, not the Hub. Judged by who ended the hold, not by the time taken: a loaded
    machine stretches the wait, and a client without a timeout waits out the hold, which the Hub counts."""
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "1")
    with pytest.raises(ModelUnavailable) as ei:
        resolve_model("acme-lab/slow-model")
    assert any("/slow-model/" in q.path for q in hub.requests)  # the request reached the hold
    assert hub.holds_ended_by_hub == 0
    assert "acme-lab/slow-model" in str(ei.value) and "--model-dir" in str(ei.value)
