"""A local HTTP server speaking the part of the Hugging Face Hub's API that kvlint's code paths use, for tests
that run the real ``huggingface_hub`` client against it through ``HF_ENDPOINT`` (no mocks):

* ``GET /api/models/{org}/{name}[/revision/{rev}]`` (``HfApi.model_info``): ``id``, ``sha``, ``gated``,
  ``private``, ``siblings``;
* ``HEAD``/``GET /{org}/{name}/resolve/{rev}/{file}`` (``hf_hub_download``, safetensors header range reads):
  ``X-Repo-Commit``, ``ETag``, ``Content-Length``, ``Range`` -> 206.

Errors are answered as huggingface.co answers them, with the ``X-Error-Code`` header the client maps to its
exceptions: an unknown or private repository without a token 401 ``RepoNotFound`` (404 with a token), an
unknown revision 404 ``RevisionNotFound``, a missing file 404 ``EntryNotFound``, a gated repository 401
``GatedRepo`` without a token and 403 ``GatedRepo`` with a token lacking access. Repositories whose name starts
with ``slow`` are not answered until the server stops (at most 60 s): only the client's own timeout ends
a request to one.

The repositories, revisions and files are what each test registers; safetensors "files" are headers only
(:func:`safetensors_header`), so nothing but a header can ever be read.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote


@dataclass
class Repo:
    """A fake Hub repository: ``refs`` (branch or tag -> commit sha), ``files`` (commit sha -> name -> bytes),
    ``gated``/``private`` and the one ``token`` that may read it then."""

    refs: dict[str, str]
    files: dict[str, dict[str, bytes]]
    gated: bool = False
    private: bool = False
    token: str | None = None

    def commit_of(self, rev: str) -> str | None:
        if rev in self.refs:
            return self.refs[rev]
        return rev if rev in self.files else None


def one_commit(files: dict[str, bytes], commit: str, **kw: Any) -> Repo:
    """A repository with a single commit on ``main``."""
    return Repo(refs={"main": commit}, files={commit: files}, **kw)


def commit_sha(label: str) -> str:
    """A 40-hex commit sha for a test label (the sha1 of the label)."""
    return hashlib.sha1(label.encode()).hexdigest()


@dataclass
class Request:
    method: str
    path: str
    range: str | None
    authorization: str | None


@dataclass
class FakeHub:
    """The server's state: ``repos`` by id, and every request received (``requests``)."""

    repos: dict[str, Repo] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    endpoint: str = ""
    #: set when the server stops: ends the requests to ``slow*`` repositories held until then
    stopping: threading.Event = field(default_factory=threading.Event)
    #: requests to ``slow*`` repositories whose 60 s hold ran out (the server, not the client, ended them),
    #: counted before the answer-less close the client sees
    holds_ended_by_hub: int = 0


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _send(
            self, code: int, body: bytes = b"", headers: dict[str, str] | None = None, head: bool = False
        ) -> None:
            self.send_response(code)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body and not head:
                self.wfile.write(body)

        def _error(self, code: int, error_code: str, head: bool) -> None:
            body = json.dumps({"error": error_code}).encode()
            self._send(code, body, {"X-Error-Code": error_code, "Content-Type": "application/json"}, head)

        def _access(self, repo: Repo | None, head: bool, gated_check: bool) -> bool:
            auth = self.headers.get("Authorization")
            token = auth.split(" ", 1)[1] if auth and " " in auth else None
            if repo is None or (repo.private and token != repo.token):
                self._error(404 if token else 401, "RepoNotFound", head)
                return False
            if gated_check and repo.gated and token != repo.token:
                self._error(403 if token else 401, "GatedRepo", head)
                return False
            return True

        def _route(self, head: bool) -> None:
            path = self.path.split("?")[0]
            hub.requests.append(
                Request(self.command, path, self.headers.get("Range"), self.headers.get("Authorization"))
            )
            parts = [unquote(p) for p in path.strip("/").split("/")]
            if len(parts) >= 2 and parts[1].startswith("slow"):
                if not hub.stopping.wait(60):
                    hub.holds_ended_by_hub += 1
                return
            if parts[:1] == ["api"] and len(parts) >= 4 and parts[1] == "models":
                repo_id = f"{parts[2]}/{parts[3]}"
                rev = parts[5] if len(parts) >= 6 and parts[4] == "revision" else "main"
                repo = hub.repos.get(repo_id)
                if not self._access(repo, head, gated_check=False):
                    return
                assert repo is not None
                commit = repo.commit_of(rev)
                if commit is None:
                    self._error(404, "RevisionNotFound", head)
                    return
                info = {
                    "id": repo_id,
                    "modelId": repo_id,
                    "sha": commit,
                    "private": repo.private,
                    "gated": "manual" if repo.gated else False,
                    "siblings": [{"rfilename": f} for f in sorted(repo.files[commit])],
                }
                self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, head)
                return
            if len(parts) >= 5 and parts[2] == "resolve":
                repo_id, rev, fname = f"{parts[0]}/{parts[1]}", parts[3], "/".join(parts[4:])
                repo = hub.repos.get(repo_id)
                if not self._access(repo, head, gated_check=True):
                    return
                assert repo is not None
                commit = repo.commit_of(rev)
                if commit is None:
                    self._error(404, "RevisionNotFound", head)
                    return
                files = repo.files[commit]
                if fname not in files:
                    self._error(404, "EntryNotFound", head)
                    return
                data = files[fname]
                code = 200
                rng = self.headers.get("Range")
                if rng and not head:
                    a, _, b = rng.split("=", 1)[1].partition("-")
                    data = data[int(a) : int(b) + 1 if b else None]
                    code = 206
                etag = '"' + hashlib.sha1(files[fname]).hexdigest() + '"'
                self._send(code, data, {"X-Repo-Commit": commit, "ETag": etag}, head)
                if head:
                    return
                return
            self._error(404, "RepoNotFound", head)

        def do_HEAD(self) -> None:  # noqa: N802 - http.server API
            self._route(True)

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            self._route(False)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


class _Server(ThreadingHTTPServer):
    """Quiet about clients that drop a kept-alive connection (``huggingface_hub`` closes its shared client
    after any connection error); anything else is printed as usual."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def serve(hub: FakeHub) -> Iterator[FakeHub]:
    """Run ``hub`` on 127.0.0.1 (a free port) while the generator is suspended; ``hub.endpoint`` is its URL."""
    srv = _Server(("127.0.0.1", 0), _handler(hub))
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    hub.endpoint = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        yield hub
    finally:
        hub.stopping.set()
        srv.shutdown()
        srv.server_close()


def llama_shapes(cfg: dict[str, Any]) -> dict[str, list[int]]:
    """Tensor name -> shape of a Llama-layout checkpoint of ``cfg`` (embedding, per-layer attention and gated
    MLP projections and norms, final norm); nothing else of the architecture is modelled."""
    h, inter, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    hd = cfg.get("head_dim") or h // cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads", cfg["num_attention_heads"]) * hd
    q = cfg["num_attention_heads"] * hd
    shapes: dict[str, list[int]] = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h]}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes |= {
            p + "self_attn.q_proj.weight": [q, h],
            p + "self_attn.k_proj.weight": [kv, h],
            p + "self_attn.v_proj.weight": [kv, h],
            p + "self_attn.o_proj.weight": [h, q],
            p + "mlp.gate_proj.weight": [inter, h],
            p + "mlp.up_proj.weight": [inter, h],
            p + "mlp.down_proj.weight": [h, inter],
            p + "input_layernorm.weight": [h],
            p + "post_attention_layernorm.weight": [h],
        }
    return shapes


def safetensors_header(
    shapes: dict[str, list[int]], dtype: str = "BF16", nbytes: int = 2
) -> tuple[bytes, int, int]:
    """A safetensors file reduced to its header (8-byte little-endian length + JSON; no tensor data) for
    ``shapes``. Returns (bytes, total tensor bytes, parameter count), both computed from the shapes."""
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


def sharded(
    shapes: dict[str, list[int]], shards: int, dtype: str = "BF16", nbytes: int = 2
) -> tuple[dict[str, bytes], int, int]:
    """``shards`` safetensors headers plus ``model.safetensors.index.json`` (weight_map, metadata.total_size) for
    ``shapes`` split in order. Returns (files, total tensor bytes, parameter count)."""
    names = list(shapes)
    per = -(-len(names) // shards)
    files: dict[str, bytes] = {}
    weight_map: dict[str, str] = {}
    total = params = 0
    for i in range(shards):
        part = {n: shapes[n] for n in names[i * per : (i + 1) * per]}
        fname = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        raw, b, p = safetensors_header(part, dtype, nbytes)
        files[fname] = raw
        weight_map |= dict.fromkeys(part, fname)
        total += b
        params += p
    files["model.safetensors.index.json"] = json.dumps(
        {"metadata": {"total_size": total}, "weight_map": weight_map}
    ).encode()
    return files, total, params
