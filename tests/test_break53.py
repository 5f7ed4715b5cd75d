"""break53: hostile input to this session's new paths (OpenShift Template parameters, ...).

The characters an OpenShift Template's parameter substitution may add (kvlint.template_params.MAX_ADDED_CHARS,
4 MiB) were counted per Template: a file of many small Templates, each referencing a 4,000-character
parameter 64 x 16 times, added 4 MiB per Template (160 Templates in a 1.4 MB file: 690 MB held by
``kvlint check``). The budget is now the loaded text's, shared by all its Templates (a ``kind: List`` of them
too).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvlint.load import load_text
from kvlint.models import resolve_model
from kvlint.models.config import parse_config
from kvlint.models.weights import audio_params
from kvlint.template_params import MAX_ADDED_CHARS, MAX_SUBSTITUTED_CHARS


def _template(t: int, refs: int) -> dict[str, Any]:
    """A Template whose ConfigMap holds ``refs`` strings, each 16 references to a 4,000-character parameter
    (64,000 characters once substituted, under MAX_SUBSTITUTED_CHARS)."""
    data = {f"k{i}": "${A}" * 16 for i in range(refs)}
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{t}"}, "data": data}
    return {
        "apiVersion": "template.openshift.io/v1",
        "kind": "Template",
        "metadata": {"name": f"t{t}"},
        "parameters": [{"name": "A", "value": "a" * 4000}],
        "objects": [obj],
    }


def _chars(node: Any) -> int:
    if isinstance(node, dict):
        return sum(_chars(v) for v in node.values())
    if isinstance(node, list):
        return sum(_chars(v) for v in node)
    return len(node) if isinstance(node, str) else 0


def _substituted(docs: list[Any]) -> int:
    """Strings of the Templates' objects substituted (no ``${A}`` left in them)."""
    return sum(
        1
        for d in docs
        for o in d.data.get("objects", [])
        for v in o["data"].values()
        if isinstance(v, str) and "${A}" not in v
    )


def _per_template_refs() -> int:
    """Strings per Template: enough that each Template alone adds ~3/4 of MAX_ADDED_CHARS."""
    assert 16 * 4000 <= MAX_SUBSTITUTED_CHARS
    return (MAX_ADDED_CHARS * 3 // 4) // (16 * 4000 - 64)


def test_the_templates_of_one_file_share_the_added_characters() -> None:
    refs = _per_template_refs()
    text = "\n---\n".join(json.dumps(_template(t, refs)) for t in range(4))
    res = load_text(text, "templates.yaml")
    assert len(res.documents) == 4 and not res.findings
    total = sum(_chars(d.data) for d in res.documents)
    assert total <= len(text) + MAX_ADDED_CHARS, total  # was ~4 x 3 MiB
    # the first Template is substituted whole, and the budget left does not cover a second one whole
    assert _substituted(res.documents[:1]) == refs
    assert _substituted(res.documents) < 2 * refs


def test_a_list_of_templates_shares_them_too() -> None:
    refs = _per_template_refs()
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [_template(t, refs) for t in range(4)]})
    res = load_text(text, "list.json")
    assert len(res.documents) == 4
    assert sum(_chars(d.data) for d in res.documents) <= len(text) + MAX_ADDED_CHARS


def test_each_file_has_its_own() -> None:
    refs = _per_template_refs()
    for name in ("a.yaml", "b.yaml"):
        res = load_text(json.dumps(_template(0, refs)), name)
        assert _substituted(res.documents) == refs


# --- Gemma 3n's audio tower with absurd sizes --------------------------------------------------------------------

_GEMMA3N_AUDIO = {"model_type": "gemma3n_audio"}  # Gemma3nAudioConfig's class defaults (transformers 4.57.1)


@pytest.mark.parametrize(
    "over",
    [
        {"conf_num_hidden_layers": -1_000_000},
        {"conf_num_attention_heads": -1},
        {"conf_conv_kernel_size": -(10**15)},
        {"input_feat_size": -(10**9)},
        {"conf_num_hidden_layers": 2.5},
    ],
)
def test_a_gemma3n_audio_config_with_a_negative_size_is_refused(over: dict[str, Any]) -> None:
    """A conformer layer count of -1,000,000 priced the audio tower at -5.7e13 parameters, the model's weights
    below zero (it "fit" on any GPU); parse_config refuses it as it refuses the text model's sizes."""
    base = resolve_model("google/gemma-4-E2B-it", allow_hub=False)
    cfg = {**(base.config or {}), "audio_config": {**_GEMMA3N_AUDIO, **over}}
    key = next(iter(over))
    with pytest.raises(ValueError, match=f"audio_config.{key} is"):
        parse_config(cfg, model_id="test/gemma3n-audio", source="test")


def test_the_gemma3n_audio_count_is_never_negative() -> None:
    """What parse_config does not see (the stem's kernel heights inside ``sscp_conv_kernel_size``) counts no
    tower rather than a negative one."""
    for over in (
        {"sscp_conv_kernel_size": [[-3, 3], [3, 3]]},
        {"sscp_conv_kernel_size": [[3, 3], [-(10**12), 3]]},
        {"conf_num_hidden_layers": -1},
        {"conf_conv_kernel_size": -(10**15)},
    ):
        assert audio_params({"audio_config": {**_GEMMA3N_AUDIO, **over}}, 2048) >= 0, over


# --- the webhook: characters YAML does not read raw ----------------------------------------------------------------


def _review_rules(obj: dict[str, Any]) -> list[tuple[str, str]]:
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import lint_review, parse_review

    request = {
        "uid": "u-break53",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": obj["metadata"]["name"],
        "namespace": "default",
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": obj,
        "dryRun": False,
    }
    rev = parse_review(
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    )
    return sorted((d.rule, d.message) for d in lint_review(rev, webhook_options()).diagnostics)


ODD_CHARS = ["\x7f", "\x80", "\x85", "\x9f", "\u2028", "\u2029", "\ufffe", "\uffff"]


@pytest.mark.parametrize("ch", ODD_CHARS, ids=[f"U+{ord(c):04X}" for c in ODD_CHARS])
def test_a_review_reads_an_object_whose_strings_hold_characters_yaml_refuses_raw(ch: str) -> None:
    """The API server stores any Unicode in an env value or a free-form map's key (a CRD's
    ``x-kubernetes-preserve-unknown-fields``, a RayService's ``rayStartParams``); the webhook wrote them raw into
    the JSON text it reads with the YAML loader, which refused the object (KV001 "unacceptable character", or
    "while parsing a flow mapping" for a line break in a key) and the review denied it."""
    import copy

    from kvlint.webhook.worker import WARM_UP_OBJECT

    clean = _review_rules(copy.deepcopy(WARM_UP_OBJECT))
    assert not [r for r, _ in clean if r == "KV001"]
    for where in ("env value", "key"):
        obj = copy.deepcopy(WARM_UP_OBJECT)
        if where == "key":
            obj["metadata"]["annotations"] = {f"a{ch}b": "v"}
        else:
            c = obj["spec"]["template"]["spec"]["containers"][0]
            c["env"] = [{"name": "NOTE", "value": f"a{ch}b"}]
        assert _review_rules(obj) == clean, where


def test_the_text_reads_back_as_the_object() -> None:
    from kvlint.webhook.jsonload import dump_text

    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}}
    obj["data"] = {f"k{ch}": f"v{ch}{ch}w" for ch in [*ODD_CHARS, "\t", "\x00", "é", "\U0001f600", "\ufeff"]}
    res = load_text(dump_text(obj), "review.json")
    assert not res.findings and res.documents[0].data == obj
