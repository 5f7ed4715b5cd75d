"""Tests for kvlint.models: config parsing, catalogue, parameter counts, weight bytes, resolution.

Reference data: ../shared/corpus/models (INDEX.csv, facts.yaml) via the bundled catalogue and
fixtures/models, fixtures/hub (see their SOURCE.md). Hub tests drive the real ``huggingface_hub``
against a temporary cache (offline) and a tiny local HTTP server (gated / 404), never the network.
"""

from __future__ import annotations

import csv
import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kvlint.models import catalogue, clear_cache, parse_config, resolve_model
from kvlint.models.build_catalogue import parse_cited_params
from kvlint.models.weights import param_breakdown, param_count, weight_bytes
from kvlint.types import ModelSpec, ModelUnavailable

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
CORPUS = SHARED / "corpus/models"
DATA = ROOT / "kvlint" / "data" / "models"


def _index_rows() -> dict[str, dict[str, str]]:
    """INDEX.csv rows keyed by catalogue directory (bundled copy of the corpus when ../shared is absent)."""
    path = CORPUS / "INDEX.csv"
    if not path.exists():  # pragma: no cover - repository copy without the shared corpus
        pytest.skip("corpus INDEX.csv not available")
    rows = {}
    for r in csv.DictReader(path.open()):
        rows[r["model"]] = r
    return rows


def _kv_bytes_full(spec: ModelSpec, dtype_bytes: int = 2) -> int:
    """Per-token KV bytes treating sliding/chunked/cross layers as full (the INDEX.csv convention)."""
    total = 0
    for ly in spec.layers:
        if ly.kind == "mla":
            total += ly.head_size * dtype_bytes
        elif ly.kind in ("full", "sliding", "chunked", "cross"):
            total += ly.kv_heads * (ly.head_size + ly.head_size_v) * dtype_bytes
    return total


ALL_ENTRIES = catalogue.list_entries()
#: Entries built from the shared corpus (facts.yaml); the others come from kvlint/models/extra_sources.yaml.
ENTRIES = [e for e in ALL_ENTRIES if "facts.yaml" in str(e.source.get("copied_from"))]
EXTRA_ENTRIES = [e for e in ALL_ENTRIES if e not in ENTRIES]
ENTRY_IDS = [e.id for e in ENTRIES]


@pytest.fixture(autouse=True)
def _fresh_memo():
    clear_cache()
    yield
    clear_cache()


def _spec(entry_id: str) -> ModelSpec:
    return resolve_model(entry_id, allow_hub=False)


# -------------------------------------------------------------------------------------------------
# catalogue and parsing of every corpus model


def test_catalogue_covers_the_whole_corpus():
    dirs = sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.exists() else None
    assert len(ENTRIES) == 52
    if dirs is not None:
        assert sorted(e.dir for e in ENTRIES) == dirs
        for e in ENTRIES:  # configs are byte-identical copies
            assert (DATA / e.dir / "config.json").read_bytes() == (
                CORPUS / e.dir / "config.json"
            ).read_bytes()
    for e in ENTRIES:  # corpus entries: a GitHub source with its commit and the repository's licence
        assert e.source.get("repo") and e.source.get("commit") and e.source.get("fidelity")
        assert e.source.get("licence") and e.source["licence"] != "unknown"


@pytest.mark.parametrize("model_id", ENTRY_IDS)
def test_every_corpus_model_parses_and_kv_matches_index(model_id):
    spec = _spec(model_id)
    row = _index_rows()[model_id] if model_id in _index_rows() else None
    assert spec.num_layers == len(spec.layers)
    assert spec.hidden_size > 0 and spec.vocab_size > 0
    if row is None:  # jeevanchaps: INDEX.csv names it by its GitHub repo
        row = next(r for r in _index_rows().values() if r["source"].startswith("jeevanchaps/"))
    # Exceptions to "sliding/chunked as full": none; INDEX.csv already counts every KV layer as full.
    assert _kv_bytes_full(spec) == int(row["kv_bytes_per_token_bf16_full_attention"])
    assert spec.num_attention_heads == int(row["heads"])
    assert spec.max_position_embeddings == int(row["max_position_embeddings"])


@pytest.mark.parametrize("model_id", ENTRY_IDS)
def test_param_count_formula_matches_citations(model_id):
    entry = catalogue.lookup(model_id)
    assert entry is not None
    if entry.param_count is None:
        pytest.skip("no cited parameter count in facts.yaml")
    spec = _spec(model_id)
    computed = param_count(spec)
    # Kimi-K2's cited "1T total" is rounded to one significant figure (the formula gives 1.026e12).
    tol = 0.03 if model_id == "moonshotai/Kimi-K2-Instruct" else 0.02
    assert abs(computed - entry.param_count) / entry.param_count < tol, (computed, entry.param_count)
    if entry.param_count_exact:
        assert spec.param_count == entry.param_count  # cited exact counts are carried as-is


@pytest.mark.parametrize("model_id", [e.id for e in ENTRIES if e.weight_bytes])
def test_weight_bytes_uses_checkpoint_size_and_formula_agrees(model_id):
    spec = _spec(model_id)
    entry = catalogue.lookup(model_id)
    assert entry is not None and spec.weight_bytes == entry.weight_bytes
    ck = 2 if spec.torch_dtype in ("bfloat16", "float16") else 4
    wb, src = weight_bytes(spec, dtype_bytes=ck)
    assert wb == entry.weight_bytes and "total_size" in src
    # the architecture estimate (without the checkpoint size) lands within 2% of the real size
    est = ModelSpec(**{**spec.__dict__, "weight_bytes": None, "weight_bytes_source": None})
    ewb, esrc = weight_bytes(est, dtype_bytes=ck)
    assert esrc.startswith("estimated")
    assert abs(ewb - entry.weight_bytes) / entry.weight_bytes < 0.02, (ewb, entry.weight_bytes)


def test_parse_cited_params():
    assert parse_cited_params(8030261248) == (8030261248, True)
    assert parse_cited_params("11B (10.6)") == (10_600_000_000, False)
    assert parse_cited_params("1B (1.23B)") == (1_230_000_000, False)
    assert parse_cited_params("17B activated / 400B total") == (400_000_000_000, False)
    assert parse_cited_params("7.6B (non-embedding 6.5B)") == (7_600_000_000, False)
    assert parse_cited_params(None) == (None, False)


# -------------------------------------------------------------------------------------------------
# layer kinds and config quirks


def _kinds(spec: ModelSpec) -> dict[str, int]:
    out: dict[str, int] = {}
    for ly in spec.layers:
        out[ly.kind] = out.get(ly.kind, 0) + 1
    return out


def test_mla_layers():
    spec = _spec("deepseek-ai/DeepSeek-V3")
    assert spec.is_mla and _kinds(spec) == {"mla": 61}
    ly = spec.layers[0]
    assert (ly.kv_heads, ly.head_size, ly.head_size_v) == (1, 576, 0)
    assert any("num_nextn_predict_layers" in n for n in spec.notes)
    assert spec.quant_method == "fp8" and spec.num_experts == 256
    assert spec.rope_scaling and spec.rope_scaling["rope_type"] == "yarn"


def test_gemma_sliding_patterns():
    g2 = _spec("google/gemma-2-9b")
    assert [ly.kind for ly in g2.layers[:4]] == ["sliding", "full", "sliding", "full"]
    assert g2.sliding_window == 4096 and g2.head_size == 256 and g2.tie_word_embeddings
    g3 = _spec("google/gemma-3-1b-it")
    assert [ly.kind for ly in g3.layers[:6]] == ["sliding"] * 5 + ["full"]
    assert g3.layers[0].window == 512
    med = _spec("google/medgemma-27b-it")  # text_config + layer_types
    assert _kinds(med) == {"sliding": 52, "full": 10} and med.layers[5].kind == "full"
    assert med.text_config.get("model_type") == "gemma3_text" and med.model_type == "gemma3_text"


def test_gpt_oss_alternates_and_has_no_dtype():
    spec = _spec("openai/gpt-oss-20b")
    assert [ly.kind for ly in spec.layers[:2]] == ["sliding", "full"] and spec.layers[0].window == 128
    assert spec.torch_dtype is None and spec.quant_method == "mxfp4"
    wb, src = weight_bytes(spec, dtype_bytes=2)
    # experts at 0.5 + 1/32 B/param, the rest bf16: ~13.8 GB (the published gpt-oss-20b checkpoint is ~13.8 GB)
    assert 13.0e9 < wb < 14.5e9 and "mxfp4" in src


def test_hybrid_models():
    nh = _spec("nvidia/Nemotron-H-56B-Base-8K")
    k = _kinds(nh)
    assert k["full"] == 10 and k["mamba"] > 0 and k["full"] + k["mamba"] + k.get("none", 0) == 118
    ms = next(ly for ly in nh.layers if ly.kind == "mamba")
    # Mamba-2: conv (16384 + 2*8*256) * 3 + ssm 256*64*256, bf16
    assert ms.state_bytes == ((16384 + 2 * 8 * 256) * 3 + 256 * 64 * 256) * 2
    nano = _spec("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    ms = next(ly for ly in nano.layers if ly.kind == "mamba")
    assert ms.state_bytes == (4096 + 2 * 8 * 128) * 3 * 2 + 64 * 64 * 128 * 4  # ssm state float32 per config
    qn = _spec("Qwen/Qwen3-Next-80B-A3B-Thinking")
    assert _kinds(qn) == {"mamba": 36, "full": 12} and qn.layers[3].kind == "full"
    sup = _spec("nvidia/Llama-3_3-Nemotron-Super-49B-v1")
    assert _kinds(sup) == {"full": 49, "none": 31} and sup.num_kv_heads == 8


def test_multimodal_and_chunked():
    ml = _spec("meta-llama/Llama-3.2-11B-Vision-Instruct")
    assert _kinds(ml) == {"full": 32, "cross": 8} and ml.layers[3].kind == "cross"
    l4 = _spec("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert _kinds(l4) == {"chunked": 36, "full": 12}
    assert l4.layers[0].window == 8192 and l4.layers[3].kind == "full"
    assert l4.num_experts == 16 and l4.hidden_size == 5120


def test_qwen2_sliding_window_off_and_head_dim_precedence():
    q = _spec("Qwen/Qwen2.5-7B")
    assert _kinds(q) == {"full": 28} and q.sliding_window is None
    assert any("use_sliding_window=false" in n for n in q.notes)
    dev = _spec("mistralai/Devstral-Small-2507")
    assert dev.head_size == 128  # head_dim wins over 5120/32 = 160


def test_synthetic_variants_of_real_configs():
    base = json.loads((DATA / "mistralai--Mistral-7B-Instruct-v0.3" / "config.json").read_text())
    # Mistral-7B-v0.1 style: one window on every layer
    s = parse_config({**base, "sliding_window": 4096}, model_id="m", source="t")
    assert _kinds(s) == {"sliding": 32} and s.sliding_window == 4096
    # kv-head aliases and Falcon multi_query
    s = parse_config({**base, "num_key_value_heads": None, "n_head_kv": 4}, model_id="m", source="t")
    assert s.num_kv_heads == 4
    s = parse_config({**base, "model_type": "falcon", "multi_query": True}, model_id="m", source="t")
    assert s.num_kv_heads == 1
    # model_max_length overrides, otherwise the smallest candidate key
    s = parse_config({**base, "seq_length": 4096}, model_id="m", source="t")
    assert (s.max_position_embeddings, s.max_len_key) == (4096, "seq_length")
    s = parse_config({**base, "model_max_length": 65536}, model_id="m", source="t")
    assert (s.max_position_embeddings, s.max_len_key) == (65536, "model_max_length")
    # rope_parameters (newer transformers) and legacy 'type'
    s = parse_config({**base, "rope_parameters": {"type": "linear", "factor": 2.0}}, model_id="m", source="t")
    assert s.rope_scaling == {"type": "linear", "factor": 2.0, "rope_type": "linear"}


def test_not_a_decoder_is_a_clear_error():
    cfg = json.loads((FIX / "models" / "encoder" / "config.json").read_text())
    with pytest.raises(ValueError, match="not a decoder"):
        parse_config(cfg, model_id="enc", source="x")
    with pytest.raises(ValueError, match="num_hidden_layers"):
        parse_config({"model_type": "llama"}, model_id="empty", source="x")
    with pytest.raises(ValueError):
        parse_config([], model_id="list", source="x")  # type: ignore[arg-type]


# -------------------------------------------------------------------------------------------------
# weight bytes by quantization


def test_weight_bytes_quantization_rates():
    llama = _spec("meta-llama/Llama-3.1-8B")
    parts = param_breakdown(llama)
    assert parts["embed"] == 2 * 128256 * 4096
    bf16, src = weight_bytes(llama, dtype_bytes=2)
    assert bf16 == 2 * param_count(llama) and src.startswith("estimated") and "8.03e+09" in src
    fp8, src = weight_bytes(llama, dtype_bytes=2, quantization="fp8")
    lin = parts["linear"] + parts["experts"]
    assert fp8 == lin + 2 * (param_count(llama) - lin) and "online" in src
    # bitsandbytes 8-bit checkpoint of Llama-3.1-8B-Instruct: cited total_size 9086705888
    bnb = _spec("jeevanchaps/Meta-Llama3.1-8B-Instruct-assessment")
    est = ModelSpec(**{**bnb.__dict__, "weight_bytes": None})
    assert abs(weight_bytes(est, dtype_bytes=2)[0] - 9086705888) / 9086705888 < 0.01
    # AWQ g128 and GPTQ 4-bit g128 ~0.52 B/param on linear weights
    awq = ModelSpec(
        **{**llama.__dict__, "quant_method": "awq", "quant_config": {"bits": 4, "group_size": 128}}
    )
    a, src = weight_bytes(awq, dtype_bytes=2)
    assert a == int(lin * (0.5 + 2.5 / 128) + 2 * (param_count(llama) - lin)) and "awq" in src
    ct = ModelSpec(
        **{
            **llama.__dict__,
            "quant_method": "compressed-tensors",
            "quant_config": {
                "config_groups": {"g0": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}
            },
        }
    )
    assert weight_bytes(ct, dtype_bytes=2)[0] == fp8
    # block-fp8 checkpoint: 1 + 4/128^2 B/param
    q3 = _spec("Qwen/Qwen3-32B-FP8")
    p3 = param_breakdown(q3)
    exp = int(
        (p3["linear"] + p3["experts"]) * (1 + 4 / 16384) + 2 * (p3["embed"] + p3["other"] + p3["vision"])
    )
    assert weight_bytes(q3, dtype_bytes=2)[0] == exp
    # ModelOpt FP8 via hf_quant_config.json
    mo = _spec("nvidia/Llama-3.1-70B-Instruct-FP8")
    assert mo.quant_method == "modelopt" and weight_bytes(mo, dtype_bytes=2)[0] < 0.55 * 2 * param_count(mo)


def test_weight_bytes_dtype_change_scales_checkpoint():
    spec = _spec("google/gemma-2b-it")
    wb, src = weight_bytes(spec, dtype_bytes=4)
    assert wb == 2 * 5012344832 and "scaled" in src


# -------------------------------------------------------------------------------------------------
# catalogue lookup


def test_lookup_variants_and_case():
    e = catalogue.lookup("META-LLAMA/meta-llama-3.1-8b-instruct")
    assert e is not None and e.base_id == "meta-llama/Llama-3.1-8B" and "eos_token_id" in e.notes[0]
    assert catalogue.lookup("meta-llama--Llama-3.1-8B").id == "meta-llama/Llama-3.1-8B"  # type: ignore[union-attr]
    assert catalogue.lookup("nobody/nothing") is None and catalogue.lookup("") is None
    q = resolve_model("Qwen/Qwen2.5-72B-Instruct", allow_hub=False)
    assert q.max_position_embeddings == 32768 and q.id == "Qwen/Qwen2.5-72B-Instruct"
    assert resolve_model("Qwen/Qwen2.5-72B", allow_hub=False).max_position_embeddings == 131072


# -------------------------------------------------------------------------------------------------
# resolution: local dirs, model_paths, container paths


def test_local_directory_and_model_dirs(tmp_path):
    d = FIX / "models" / "acme--tiny-qwen3"
    spec = resolve_model(str(d))
    assert (
        spec.model_type == "qwen3"
        and spec.weight_bytes == 1192099840
        and "total_size" in (spec.weight_bytes_source or "")
    )
    spec = resolve_model("acme/tiny-qwen3", model_dirs=[str(FIX / "models")], allow_hub=False)
    assert spec.source.endswith("acme--tiny-qwen3/config.json")
    # <org>/<name>/config.json layout
    (tmp_path / "acme" / "other").mkdir(parents=True)
    shutil.copy(d / "config.json", tmp_path / "acme" / "other" / "config.json")
    assert resolve_model("acme/other", model_dirs=[str(tmp_path)], allow_hub=False).num_layers == 28


def test_model_paths_mapping():
    spec = resolve_model("/models/llama", model_paths={"/models/llama": "meta-llama/Llama-3.1-8B-Instruct"})
    assert spec.id == "meta-llama/Llama-3.1-8B-Instruct"
    spec = resolve_model("/mnt/m/acme--tiny-qwen3", model_paths={"/mnt/m": str(FIX / "models")})
    assert spec.model_type == "qwen3"


def test_container_path_unavailable_explains_mapping():
    with pytest.raises(ModelUnavailable) as ei:
        resolve_model("/models/llama-3")
    msg = str(ei.value)
    assert (
        "/models/llama-3" in msg
        and "model_paths" in msg
        and "kvlint.io/model" in msg
        and "--model-dir" in msg
    )


def test_malformed_and_non_decoder_local_configs():
    with pytest.raises(ModelUnavailable, match=r"config.json:3:\d+ was read but refused: malformed JSON"):
        resolve_model(str(FIX / "models" / "broken"))
    with pytest.raises(ModelUnavailable, match="not a decoder"):
        resolve_model(str(FIX / "models" / "encoder"))


def test_memoised():
    a = resolve_model("meta-llama/Llama-3.1-8B", allow_hub=False)
    assert resolve_model("meta-llama/Llama-3.1-8B", allow_hub=False) is a


# -------------------------------------------------------------------------------------------------
# hub through huggingface_hub (real library, local cache / local HTTP server)


def _make_cache(root: Path, repo: str, rev: str = "0123456789abcdef0123456789abcdef01234567") -> Path:
    org, name = repo.split("/")
    base = root / f"models--{org}--{name}"
    snap = base / "snapshots" / rev
    snap.mkdir(parents=True)
    shutil.copy(FIX / "hub" / "config.json", snap / "config.json")
    (base / "refs").mkdir()
    (base / "refs" / "main").write_text(rev)
    return snap


def test_hub_offline_warm_cache(tmp_path, monkeypatch):
    _make_cache(tmp_path, "acme-lab/tiny-llama")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = resolve_model("acme-lab/tiny-llama")
    assert spec.num_layers == 16 and spec.head_size == 64 and spec.source.startswith("huggingface hub")


def test_hub_offline_cache_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable, match="HF_HUB_OFFLINE is set and the model is not in the local"):
        resolve_model("acme-lab/missing-model")


class _HubStub(BaseHTTPRequestHandler):
    """Answers like the Hub's resolve endpoint does for gated / missing repos (X-Error-Code header)."""

    def _answer(self) -> None:
        if "/gated-model/" in self.path:
            code, err = 403, "GatedRepo"
        elif "/no-config/" in self.path:
            code, err = 404, "EntryNotFound"
        else:
            code, err = 404, "RepoNotFound"
        self.send_response(code)
        self.send_header("X-Error-Code", err)
        self.send_header("X-Error-Message", err)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_HEAD = _answer
    do_GET = _answer

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture()
def hub_server(tmp_path, monkeypatch):
    import huggingface_hub.constants as hfc

    srv = ThreadingHTTPServer(("127.0.0.1", 0), _HubStub)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{srv.server_address[1]}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hfc, "HF_HUB_OFFLINE", False)  # the library reads this at import time
    yield
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize(
    "repo, reason",
    [
        ("acme-lab/gated-model", "gated"),
        ("acme-lab/unknown-model", "no such repository"),
        ("acme-lab/no-config", "has no config.json"),
    ],
)
def test_hub_errors(hub_server, repo, reason):
    with pytest.raises(ModelUnavailable) as ei:
        resolve_model(repo)
    assert reason in str(ei.value) and repo in str(ei.value)
    if reason == "gated":
        assert "HF_TOKEN" in str(ei.value)


def test_hub_network_failure_is_memoised(tmp_path, monkeypatch):
    import huggingface_hub.constants as hfc

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: connection refused
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hfc, "HF_HUB_OFFLINE", False)
    # the first look-up's own probe finds the hub down: "is unreachable", not "earlier in this run" (newuser54:
    # `kvlint models show` of one id said it was found unreachable earlier in a run that had asked nothing before)
    with pytest.raises(
        ModelUnavailable, match=r"Hub is unreachable \(cannot connect to 127\.0\.0\.1:9"
    ) as first:
        resolve_model("acme-lab/first")
    assert "earlier" not in str(first.value)
    with pytest.raises(ModelUnavailable, match="unreachable earlier in this run"):
        resolve_model("acme-lab/second")
    # a warm cache still works once the network is known to be down
    _make_cache(tmp_path, "acme-lab/cached")
    assert resolve_model("acme-lab/cached").num_layers == 16


def test_hub_disabled():
    with pytest.raises(ModelUnavailable, match="hub access is disabled"):
        resolve_model("acme-lab/whatever", allow_hub=False)


def test_help_import_is_light():
    import subprocess
    import sys

    code = "import sys, kvlint.models; print('huggingface_hub' in sys.modules, 'yaml' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split()[0] == "False"


# -------------------------------------------------------------------------------------------------
# extra catalogue entries (kvlint/models/extra_sources.yaml; config bytes in fixtures/plan/models)


def _extra_sources() -> list[dict]:
    import yaml

    return yaml.safe_load((ROOT / "kvlint" / "models" / "extra_sources.yaml").read_text())["entries"]


def _all_source_entries() -> list[dict]:
    """Entries of extra_sources.yaml and of every kvlint/models/sources/*.yaml list, with their config_dir."""
    from kvlint.models.build_catalogue import EXTRA_CONFIG_DIR, load_extra_sources, source_files

    out = []
    for f in source_files():
        for x in load_extra_sources(f):
            out.append({**x, "_config_dir": x["config_path"].parent.parent, "_list": f.name})
    assert out and all(x["_config_dir"] for x in out)
    assert any(x["_config_dir"] == EXTRA_CONFIG_DIR for x in out)
    return out


def test_extra_entries_are_byte_identical_and_cited():
    import hashlib

    extras = _all_source_entries()
    assert sorted(e.id for e in EXTRA_ENTRIES) == sorted(x["id"] for x in extras)
    assert len(ALL_ENTRIES) == len(ENTRIES) + len(extras)
    for x in extras:
        data = (DATA / x["dir"] / "config.json").read_bytes()
        assert data == (x["_config_dir"] / x["dir"] / "config.json").read_bytes()
        assert hashlib.sha256(data).hexdigest() == x["config_sha256"]
        e = catalogue.lookup(x["id"])
        assert e is not None and e.source["fidelity"] == x["fidelity"]["level"]
        assert e.source["licence"] == x["source"]["licence"]
        if x["source"].get("kind", "github") == "github":
            assert e.source["commit"] == x["source"]["commit"] and len(e.source["commit"]) == 40


def _kv_from_fields(cfg: dict) -> int:
    """bf16 KV bytes/token straight from config.json fields: 2 x layers x kv_heads x head_dim x 2."""
    t = cfg.get("text_config") or cfg
    head_dim = t.get("head_dim") or t["hidden_size"] // t["num_attention_heads"]
    return 2 * t["num_hidden_layers"] * t["num_key_value_heads"] * head_dim * 2


@pytest.mark.parametrize("model_id", [x["id"] for x in _extra_sources()] + ["Qwen/Qwen2.5-1.5B-Instruct"])
def test_extra_entries_parse_and_kv_matches_fields(model_id):
    entry = catalogue.lookup(model_id)
    assert entry is not None
    cfg = json.loads((DATA / entry.dir / "config.json").read_text())
    spec = _spec(model_id)
    assert spec.num_layers == len(spec.layers) == (cfg.get("text_config") or cfg)["num_hidden_layers"]
    assert _kv_bytes_full(spec) == _kv_from_fields(cfg)


def test_extra_entries_known_shapes():
    # gt-064's sizing memo states Qwen3-VL-30B-A3B: 48 layers x 4 KV heads x 128 = 96 KiB/token in bf16.
    vl = _spec("Qwen/Qwen3-VL-30B-A3B-Instruct")
    assert (vl.num_layers, vl.num_kv_heads, vl.head_size) == (48, 4, 128)
    assert _kv_bytes_full(vl) == 96 * 1024
    # The Instruct variant keeps the base dims but carries the Instruct max_position_embeddings.
    base, inst = _spec("Qwen/Qwen2.5-1.5B"), _spec("Qwen/Qwen2.5-1.5B-Instruct")
    assert base.max_position_embeddings == 131072 and inst.max_position_embeddings == 32768
    assert _kv_bytes_full(base) == _kv_bytes_full(inst)


def test_extra_sources_checksum_mismatch_is_a_clear_error(tmp_path):
    from kvlint.models.build_catalogue import CatalogueBuildError, load_extra_sources

    x = _extra_sources()[0]
    (tmp_path / x["dir"]).mkdir()
    (tmp_path / x["dir"] / "config.json").write_text("{}")
    bad = tmp_path / "extra.yaml"
    import yaml

    bad.write_text(yaml.safe_dump({"entries": [x]}))
    with pytest.raises(CatalogueBuildError, match="sha256"):
        load_extra_sources(bad, tmp_path)
    bad.write_text(yaml.safe_dump({"entries": [{"id": "a/b", "dir": "a--b"}]}))
    with pytest.raises(CatalogueBuildError, match="config_sha256"):
        load_extra_sources(bad, tmp_path)


def test_build_reproduces_bundled_catalogue(tmp_path):
    from kvlint.models.build_catalogue import build

    if not CORPUS.exists():  # pragma: no cover - repository copy without the shared corpus
        pytest.skip("corpus not available")
    n = build(CORPUS, tmp_path)
    assert n == len(ALL_ENTRIES)
    assert (tmp_path / "index.yaml").read_text() == (DATA / "index.yaml").read_text()
    for e in ALL_ENTRIES:
        for name in ("config.json", "entry.json", "hf_quant_config.json"):
            if (DATA / e.dir / name).exists() or (tmp_path / e.dir / name).exists():
                assert (tmp_path / e.dir / name).read_bytes() == (DATA / e.dir / name).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == sorted(
        p.name for p in DATA.iterdir() if p.is_dir()
    )


# The Pythia model card's table (EleutherAI/pythia-* README, quoted e.g. by github.com/shimo-lab/modelmap's
# model-card mirror): layers / model dim / heads and non-embedding parameters of four sizes. GPT-NeoX's MLP is
# 4 x hidden wide (transformers GPTNeoXConfig: intermediate_size 4 x hidden_size in every Pythia config).
PYTHIA_CARD = [  # (layers, hidden, heads, non-embedding parameters)
    (6, 512, 8, 18_915_328),
    (12, 768, 12, 85_056_000),
    (24, 1024, 16, 302_311_424),
    (16, 2048, 8, 805_736_448),
]


@pytest.mark.parametrize(("layers", "hidden", "heads", "non_embedding"), PYTHIA_CARD)
def test_gpt_neox_param_count_counts_every_bias(layers, hidden, heads, non_embedding):
    # A GPT-NeoX config written for the test (no Pythia config.json is stored): vLLM's gpt_neox.py gives the fused
    # query_key_value, dense, dense_h_to_4h and dense_4h_to_h their biases and both LayerNorms a bias, so
    # the non-embedding count is 12 h^2 + 13 h per layer plus the final LayerNorm's 2 h. The count must come
    # out at the card's figure; without the biases it falls short by 11 h per layer (+ h).
    cfg = {
        "architectures": ["GPTNeoXForCausalLM"],
        "model_type": "gpt_neox",
        "hidden_size": hidden,
        "intermediate_size": 4 * hidden,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "vocab_size": 50304,
        "max_position_embeddings": 2048,
        "rotary_pct": 0.25,
        "use_parallel_residual": True,
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
    }
    spec = parse_config(cfg, model_id="test/gpt-neox", source="test")
    parts = param_breakdown(spec)
    assert param_count(spec) - parts["embed"] == non_embedding
    assert parts["embed"] == 2 * 50304 * hidden  # embed_in and an untied embed_out (bias=False)
    # attention_bias false (a newer transformers GPTNeoXConfig key) drops query_key_value's and dense's biases
    no_bias = parse_config({**cfg, "attention_bias": False}, model_id="test/gpt-neox", source="test")
    assert param_count(spec) - param_count(no_bias) == layers * 4 * hidden


def test_gpt_neox_rotary_cache_uses_rotary_pct():
    from kvlint.memory import vllm

    cfg = {
        "architectures": ["GPTNeoXForCausalLM"],
        "model_type": "gpt_neox",
        "hidden_size": 512,
        "intermediate_size": 2048,
        "num_attention_heads": 8,
        "num_hidden_layers": 6,
        "vocab_size": 50304,
        "max_position_embeddings": 2048,
        "rotary_pct": 0.25,
    }
    spec = parse_config(cfg, model_id="test/gpt-neox", source="test")
    full = parse_config({**cfg, "rotary_pct": 1.0}, model_id="test/gpt-neox-full", source="test")
    # rotary_dim = head_size x rotary_pct (vllm gpt_neox.py GPTNeoXAttention): a quarter of the full cache
    assert 4 * vllm._rotary_cache_bytes(spec, 2) == vllm._rotary_cache_bytes(full, 2)
    assert vllm._rotary_cache_bytes(full, 2) == 2048 * spec.head_size * 2
