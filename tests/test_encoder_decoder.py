"""Encoder-decoder models (T5): kvlint reads the config, says per engine what the engine does with it, and does
not size it. vLLM cannot load T5 at all (an error: the container fails at start-up); TGI serves it on its
non-flash Seq2SeqLM path, which reserves no KV cache (a warning, not sized). Neither says "no config.json".
Fixture: fixtures/models/seq2seq/acme--tiny-t5 (hand-written, see fixtures/models/SOURCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.models.config import NotDecoderLLM, parse_config

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "models"
SEQ2SEQ = FIX / "seq2seq"

_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: t5
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
      containers:
        - name: server
          image: {image}
          args: {args}
          resources:
            limits:
              nvidia.com/gpu: "1"
"""


def _check(tmp_path: Path, image: str, args: list[str]) -> tuple[int, list[dict]]:
    manifest = tmp_path / "t5.yaml"
    manifest.write_text(_DEPLOYMENT.format(image=image, args=json.dumps(args)))
    r = CliRunner().invoke(
        main,
        ["check", "--offline", "--no-config", "--model-dir", str(SEQ2SEQ), "--format", "json", str(manifest)],
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    report = json.loads(r.output)
    return r.exit_code, [d for d in report["diagnostics"] if d["rule"] == "KV502"]


def test_parse_config_names_an_encoder_decoder() -> None:
    t5 = json.loads((SEQ2SEQ / "acme--tiny-t5" / "config.json").read_text())
    with pytest.raises(NotDecoderLLM) as e:
        parse_config(t5, model_id="acme/tiny-t5", source="t")
    assert (e.value.model_type, e.value.encoder_decoder) == ("t5", True)
    bert = json.loads((FIX / "encoder" / "config.json").read_text())
    with pytest.raises(NotDecoderLLM) as e:
        parse_config(bert, model_id="enc", source="t")
    assert (e.value.model_type, e.value.encoder_decoder) == ("bert", False)


def test_vllm_cannot_serve_t5_is_an_error(tmp_path: Path) -> None:
    code, kv502 = _check(
        tmp_path, "vllm/vllm-openai:v0.11.0", ["--model", "acme/tiny-t5", "--max-model-len", "512"]
    )
    assert len(kv502) == 1, kv502
    d = kv502[0]
    assert d["severity"] == "error"
    assert "vLLM cannot serve it" in d["message"] and "T5ForConditionalGeneration" in d["message"]
    assert "no config.json" not in d["message"]
    assert code == 1


def test_tgi_serves_t5_unsized_with_the_reason(tmp_path: Path) -> None:
    code, kv502 = _check(
        tmp_path,
        "ghcr.io/huggingface/text-generation-inference:1.2",
        ["--model-id", "acme/tiny-t5", "--max-total-tokens", "2048"],
    )
    assert len(kv502) == 1, kv502
    d = kv502[0]
    assert d["severity"] == "warning"
    assert "non-flash Seq2SeqLM" in d["message"] and "no config.json" not in d["message"]
    assert "--max-batch-total-tokens" in d["fix"]
    assert code == 0


def test_gemma4_per_layer_embeddings_are_counted() -> None:
    """Gemma 4 E-models (per-layer embeddings, hidden_size_per_layer_input) as vLLM builds them: the PLE table
    (vocab_size_per_layer_input x layers x ple) and its projections count as weights. Compared with the same config without those keys, built
    from a catalogued Gemma 4 config (hidden_size_per_layer_input 0 there)."""
    from kvlint.models import resolve_model
    from kvlint.models.weights import param_count

    base = resolve_model("google/gemma-4-26B-A4B", allow_hub=False)

    def spec(**text: object):  # a fresh copy each time: a spec keeps the dict it was parsed from
        cfg = json.loads(json.dumps(base.config))
        cfg["text_config"].update({"enable_moe_block": False, "num_kv_shared_layers": 0, **text})
        return parse_config(cfg, model_id=f"g4{sorted(text.items())}", source="t")

    plain = spec()
    ple = spec(hidden_size_per_layer_input=256, vocab_size_per_layer_input=262144)
    L, h = plain.num_layers, plain.hidden_size
    table = 262144 * L * 256
    assert param_count(ple) - param_count(plain) > table  # the table, plus its projections and norms
    # per layer: input gate h x ple and projection ple x h (ReplicatedLinear) and a norm of h; once: the
    # projection h x (layers x ple) and a norm of ple
    assert param_count(ple) - param_count(plain) == table + h * L * 256 + L * (2 * h * 256 + h) + 256


def test_gemma4_double_wide_mlp_on_kv_shared_layers() -> None:
    """Gemma 4 E2B's use_double_wide_mlp: the KV-shared layers' MLPs are twice as wide (vLLM gemma4.py
    Gemma4DecoderLayer). On the dense Gemma 4 31B config with 4 KV-shared layers, the flag adds 4 gated MLPs of
    the base width."""
    from kvlint.models import resolve_model
    from kvlint.models.weights import param_count

    base = resolve_model("google/gemma-4-31B-it", allow_hub=False)

    def spec(wide: bool):
        cfg = json.loads(json.dumps(base.config))
        cfg["text_config"].update({"num_kv_shared_layers": 4, "use_double_wide_mlp": wide})
        return parse_config(cfg, model_id=f"g4-wide-{wide}", source="t")

    narrow, wide = spec(False), spec(True)
    assert sum(layer.kv_shared for layer in narrow.layers) == 4
    assert param_count(wide) - param_count(narrow) == 4 * 3 * narrow.hidden_size * narrow.intermediate_size


def test_an_encoder_config_is_named_not_missing(tmp_path: Path) -> None:
    """An encoder-only config (BERT) was read: KV502 says it is not a decoder LLM, not "no config.json"."""
    models = tmp_path / "models" / "acme--bert"
    models.mkdir(parents=True)
    (models / "config.json").write_text((FIX / "encoder" / "config.json").read_text())
    manifest = tmp_path / "bert.yaml"
    manifest.write_text(
        _DEPLOYMENT.format(image="vllm/vllm-openai:v0.11.0", args=json.dumps(["--model", "acme/bert"]))
    )
    r = CliRunner().invoke(
        main,
        [
            "check",
            "--offline",
            "--no-config",
            "--model-dir",
            str(tmp_path / "models"),
            "--format",
            "json",
            str(manifest),
        ],
    )
    kv502 = [d for d in json.loads(r.output)["diagnostics"] if d["rule"] == "KV502"]
    assert len(kv502) == 1, kv502
    assert "'bert' model, not a decoder LLM" in kv502[0]["message"]
    assert "no config.json" not in kv502[0]["message"]
