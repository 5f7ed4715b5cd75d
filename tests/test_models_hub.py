"""Hub resolution through the real ``huggingface_hub`` code against a local fake Hub on 127.0.0.1
(``HF_ENDPOINT``): config.json download, safetensors-header weight bytes (range requests only), the
index file's total_size, malformed JSON, a server that never answers (timeout, not a hang), and the
per-run memo. Fixture config: fixtures/hub/config.json (see fixtures/hub/SOURCE.md)."""

from __future__ import annotations

import hashlib
import json
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kvlint.models import clear_cache, resolve_model
from kvlint.types import ModelUnavailable

ROOT = Path(__file__).resolve().parent.parent
CONFIG = (ROOT / "fixtures" / "hub" / "config.json").read_bytes()
COMMIT = "a" * 40


def _safetensors_header(cfg: dict[str, Any], dtype: str = "BF16", nbytes: int = 2) -> tuple[bytes, int, int]:
    """A safetensors header (no tensor data) for a Llama-shaped checkpoint of ``cfg``: 8-byte little-endian
    length + JSON. Returns (header bytes, total tensor bytes, parameter count) computed from the shapes."""
    h, inter, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    hd = cfg.get("head_dim") or h // cfg["num_attention_heads"]
    kv = cfg["num_key_value_heads"] * hd
    shapes: dict[str, list[int]] = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h]}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes |= {
            p + "self_attn.q_proj.weight": [h, h],
            p + "self_attn.k_proj.weight": [kv, h],
            p + "self_attn.v_proj.weight": [kv, h],
            p + "self_attn.o_proj.weight": [h, h],
            p + "mlp.gate_proj.weight": [inter, h],
            p + "mlp.up_proj.weight": [inter, h],
            p + "mlp.down_proj.weight": [h, inter],
            p + "input_layernorm.weight": [h],
            p + "post_attention_layernorm.weight": [h],
        }
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    off = params = 0
    for name, shape in shapes.items():
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n * nbytes]}
        off += n * nbytes
        params += n
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw, off, params


HEADER, TENSOR_BYTES, PARAMS = _safetensors_header(json.loads(CONFIG))
INDEX = json.dumps({"metadata": {"total_size": 2471645608}, "weight_map": {}}).encode()

#: repo -> files the fake Hub serves (the safetensors "file" is its header only: nothing else is read)
REPOS: dict[str, dict[str, bytes]] = {
    "acme-lab/single-file": {"config.json": CONFIG, "model.safetensors": HEADER},
    "acme-lab/sharded": {"config.json": CONFIG, "model.safetensors.index.json": INDEX},
    "acme-lab/bad-json": {"config.json": b'{"model_type": "llama",\n  "hidden_size": }'},
    "acme-lab/no-weights": {"config.json": CONFIG},
}


class _FakeHub(BaseHTTPRequestHandler):
    """``/{org}/{name}/resolve/{rev}/{file}`` like huggingface.co: HEAD with X-Repo-Commit/ETag/size,
    GET with optional ``Range`` (206), 404 + ``X-Error-Code`` for missing repos/files; ``/slow/`` repos
    never answer within the client's timeout."""

    requests: list[tuple[str, str, str | None]] = []

    def _route(self, body: bool) -> None:
        parts = self.path.split("?")[0].strip("/").split("/")
        type(self).requests.append((self.command, self.path, self.headers.get("Range")))
        if len(parts) >= 5 and parts[2] == "resolve":
            repo, fname = f"{parts[0]}/{parts[1]}", "/".join(parts[4:])
        else:
            repo, fname = "", ""
        if repo.startswith("acme-lab/slow"):
            time.sleep(3)
            return
        files = REPOS.get(repo)
        if files is None or fname not in files:
            self.send_response(404)
            self.send_header("X-Error-Code", "RepoNotFound" if files is None else "EntryNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = files[fname]
        code = 200
        rng = self.headers.get("Range")
        if rng and body:
            a, _, b = rng.split("=", 1)[1].partition("-")
            data = data[int(a) : int(b) + 1 if b else None]
            code = 206
        self.send_response(code)
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", '"' + hashlib.sha1(files[fname]).hexdigest() + '"')
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server API
        self._route(False)

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self._route(True)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, str | None]]]:
    import huggingface_hub.constants as hfc

    clear_cache()
    _FakeHub.requests = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _FakeHub)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{srv.server_address[1]}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hfc, "HF_HUB_OFFLINE", False)
    yield _FakeHub.requests
    srv.shutdown()
    srv.server_close()
    clear_cache()


def test_single_file_weight_bytes_from_safetensors_header(hub: list[tuple[str, str, str | None]]) -> None:
    spec = resolve_model("acme-lab/single-file")
    assert spec.num_layers == json.loads(CONFIG)["num_hidden_layers"]
    assert spec.weight_bytes == TENSOR_BYTES and spec.param_count == PARAMS
    assert (
        spec.weight_bytes_source is not None
        and "safetensors headers of model.safetensors" in spec.weight_bytes_source
    )
    assert "BF16" in spec.weight_bytes_source
    # only ranged GETs of model.safetensors: the weights themselves are never fetched
    gets = [(p, r) for m, p, r in hub if m == "GET" and p.endswith("/model.safetensors")]
    assert gets and all(r and r.startswith("bytes=0-") for _p, r in gets)
    # memoised per run: no further requests
    n = len(hub)
    assert resolve_model("acme-lab/single-file") is spec and len(hub) == n


def test_sharded_weight_bytes_from_index_total_size(hub: list[tuple[str, str, str | None]]) -> None:
    spec = resolve_model("acme-lab/sharded")
    assert spec.weight_bytes == 2471645608
    assert "model.safetensors.index.json metadata.total_size" in (spec.weight_bytes_source or "")


def test_no_safetensors_leaves_weights_to_the_estimate(hub: list[tuple[str, str, str | None]]) -> None:
    spec = resolve_model("acme-lab/no-weights")
    assert spec.weight_bytes is None and spec.num_layers > 0


def test_malformed_config_names_model_and_position(hub: list[tuple[str, str, str | None]]) -> None:
    with pytest.raises(ModelUnavailable) as ei:
        resolve_model("acme-lab/bad-json")
    msg = str(ei.value)
    assert "acme-lab/bad-json" in msg and "malformed JSON" in msg and ":2:" in msg


def test_revision_pinning_reaches_the_hub(hub: list[tuple[str, str, str | None]]) -> None:
    spec = resolve_model("acme-lab/sharded", revision="v1.0")
    assert spec.source.endswith("@v1.0")
    assert any("/resolve/v1.0/config.json" in p for _m, p, _r in hub)


def test_unresponsive_hub_times_out(
    hub: list[tuple[str, str, str | None]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "1")
    t0 = time.monotonic()
    with pytest.raises(ModelUnavailable) as ei:
        resolve_model("acme-lab/slow-model")
    assert time.monotonic() - t0 < 15
    assert "acme-lab/slow-model" in str(ei.value) and "--model-dir" in str(ei.value)
