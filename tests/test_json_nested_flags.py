"""JSON-valued vLLM flags in nested-object form end in ``}}``, as a Go/Helm template action does
(``--hf-overrides '{"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}'``). kvlint's command parser took every
word with ``}}`` for an unrendered template: ``--flag={...}}`` was dropped, and ``--flag '{...}}'`` kept as raw
text, never validated (vLLM refuses a malformed one at start-up, KV206). Templates are still left alone."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.engines.shell import json_braces, unresolved

_VLLM = "vllm/vllm-openai:v0.11.0"
_MODEL = "Qwen/Qwen2.5-7B"  # kvlint's catalogue: max_position_embeddings 131072
_YARN = {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768}


def _pod(args: list[str]) -> str:
    c = {"name": "c", "image": _VLLM, "args": args, "resources": {"limits": {"nvidia.com/gpu": 1}}}
    return json.dumps(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [c]}}
    )


def _check(tmp_path, args: list[str]) -> list[dict]:
    p = tmp_path / "pod.yaml"
    p.write_text(_pod(args))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--accelerator", "h100", "--format", "json", str(p)]
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return json.loads(r.output)["diagnostics"]


def _plan_kv(*words: str) -> dict:
    r = CliRunner().invoke(
        main,
        ["plan", "--offline", "--engine-version", "0.11.0", "--accelerator", "h100", "--format", "json", "--"]
        + ["vllm", "serve", _MODEL, *words],
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return json.loads(r.output)["kv"]


@pytest.mark.parametrize(
    "words",
    [
        ["--hf-overrides=" + json.dumps({"rope_scaling": _YARN})],
        ["--hf-overrides", json.dumps({"rope_scaling": _YARN})],
    ],
    ids=["equals", "separate"],
)
def test_nested_hf_overrides_rope_scaling_is_read(words):
    """vLLM 0.11.0 ``_get_and_verify_max_len``: for ``rope_type`` yarn the derived length is the override's
    ``original_max_position_embeddings`` times its ``factor`` (the model's own 131072 without the override).
    The ``--hf-overrides={...}}`` word was dropped whole before (planned with 131072)."""
    base = _plan_kv()
    kv = _plan_kv(*words)
    expected = int(_YARN["original_max_position_embeddings"] * _YARN["factor"])
    assert base["derived_max_model_len"] != expected
    assert kv["derived_max_model_len"] == expected
    assert kv["max_model_len"] == expected


@pytest.mark.parametrize("form", ["equals", "separate"])
def test_malformed_nested_speculative_config_gets_the_flat_forms_finding(tmp_path, form):
    bad = '{"method": "ngram", "num_speculative_tokens": 4, "extra": {"prompt_lookup_max": 4}}}'
    flat_bad = '{"method": "ngram", "num_speculative_tokens": 4}}'  # not nested: one brace too many
    for value in (bad, flat_bad):
        args = ["--model", _MODEL]
        args += ["--speculative-config=" + value] if form == "equals" else ["--speculative-config", value]
        kv206 = [d for d in _check(tmp_path, args) if d["rule"] == "KV206"]
        assert kv206 and "--speculative-config" in kv206[0]["message"], value
        # the release's own argparse error (optional_type(json.loads), 0.10.1 on), as for every JSON option
        assert "cannot be converted to" in kv206[0]["message"] and "(Extra data)" in kv206[0]["message"], (
            value
        )


def test_deeply_nested_object_value_is_kv206_not_kept_as_text(tmp_path):
    """An object nested past Python's ``json`` depth that ends in ``}}`` was kept as raw text; it is now the
    flat form's KV206 (``json_braces`` does not parse it: it starts ``{"``)."""
    deep = '{"a": ' * 5000 + "1" + "}" * 5000
    diags = _check(tmp_path, ["--model", _MODEL, "--hf-overrides", deep])
    kv206 = [d for d in diags if d["rule"] == "KV206"]
    assert kv206 and "--hf-overrides" in kv206[0]["message"] and "nested too deeply" in kv206[0]["message"]
    assert not any(d["rule"] in ("KV502", "KV503") for d in diags)


@pytest.mark.parametrize(
    "args",
    [
        ["--hf-overrides={{ .Values.hfOverrides }}"],
        ["--hf-overrides", "{{ toJson .Values.hfOverrides }}"],
        ["--hf-overrides", '{"rope_scaling": {{ toJson .Values.rope }}}'],
        ["--speculative-config={{ .Values.spec | toJson }}"],
    ],
)
def test_helm_template_value_is_left_alone(tmp_path, args):
    diags = _check(tmp_path, ["--model", _MODEL, *args])
    assert not any(d["rule"] in ("KV206", "KV205", "KV503") for d in diags), diags


def test_json_braces_tells_json_from_a_template():
    assert json_braces('{"rope_scaling": {"factor": 4}}')
    assert json_braces('{ "a" {"b": 1}}')  # malformed JSON object: the engine's parser says so
    assert json_braces('[{"a": {"b": 1}}]')
    assert not json_braces("{{ .Values.x }}")
    assert not json_braces('{"a": {{ .Values.x }}}')
    assert not json_braces("x }}")
    assert not json_braces("[" * 5000 + "{}}")  # not JSON, depth read bounded (RecursionError is "not JSON")
    assert not unresolved('{"pass_config": {"fuse_allreduce_rms": false}}')
    assert unresolved("{{ .Values.x }}") and unresolved("${X}}}") and unresolved('{"a": {"b": "$X"}}')
