"""The example hub id kvlint offers for an unresolved model path (KV502's "(model_paths: {PATH: ID})") is only
ever a catalogued model of the path's own family and architecture, or the placeholder <org>/<name>.

The LLaVA path is the one of vllm-project/aibrix samples/multimodality/vllm/llava-7b.yaml
(fixtures/pull/container-paths/llava-7b.yaml, fixtures/pull/SOURCE.md): when the catalogue held no LLaVA, no model
was to be suggested for it (it used to suggest meta-llama/Llama-3.1-8B-Instruct); now that llava-hf/llava-1.5-7b-hf
is catalogued the path resolves to it, and a directory of a family the catalogue lacks (made up here:
/models/blip2-opt-2.7b/) gets the placeholder."""

from __future__ import annotations

import re

import pytest

from kvlint.models import resolve_model
from kvlint.models.catalogue import list_index, same_family_suggestion
from kvlint.types import ModelUnavailable


def _example(path: str) -> str:
    with pytest.raises(ModelUnavailable) as exc:
        resolve_model(path, allow_hub=False)
    m = re.search(r"\(model_paths: \{" + re.escape(path) + r": (\S+?)\}\)", str(exc.value))
    assert m is not None, str(exc.value)
    return m.group(1)


def _arch(model_id: str) -> tuple[str, tuple[str, ...]]:
    spec = resolve_model(model_id, allow_hub=False)
    return spec.model_type, spec.architectures


def _family_members(name: str) -> list[str]:
    """Catalogued ids (and variant ids) whose repository name starts with the letters ``name`` starts with."""
    letters = re.match(r"[a-z]+", name.lower())
    assert letters is not None
    out = []
    for row in list_index():
        for mid in (row.id, *row.variants):
            head = re.match(r"[a-z]+", mid.split("/", 1)[-1].lower())
            if head is not None and head.group(0) == letters.group(0):
                out.append(mid)
    return out


def test_llava_path_resolves_and_an_uncatalogued_family_gets_no_model_of_another_architecture() -> None:
    assert resolve_model("/models/llava-1.5-7b-hf/", allow_hub=False).id == "llava-hf/llava-1.5-7b-hf"
    assert _family_members("blip2-opt-2.7b") == []  # the catalogue has no BLIP-2
    assert _example("/models/blip2-opt-2.7b/") == "<org>/<name>"


@pytest.mark.parametrize(
    "name",
    [
        "llava-v1.6-vicuna-7b-custom",
        "SmolLM2-135M-custom",
        "Meta-Llama-3-8B-ft",
        "Qwen3-32B-ft",
        "mixtral-x",
        "gemma-2-9b-x",
    ],
)
def test_a_suggestion_shares_the_architecture_of_every_catalogued_model_of_its_family(name: str) -> None:
    """Suggested only when the family's catalogued configs agree on model_type and architectures (read through
    the resolver, not the helper), and then it is one of them; otherwise nothing is suggested."""
    members = _family_members(name)
    archs = {_arch(m) for m in members}
    got = same_family_suggestion(name)
    if len(archs) == 1:
        assert got in members and _arch(got) in archs
        assert _example(f"/models/{name}") == got
    else:
        assert got is None and _example(f"/models/{name}") == "<org>/<name>"


def test_both_branches_are_exercised() -> None:
    """The parametrised names include a family with one architecture and one with several (so the test above
    checks a suggestion and a refusal, not only one of them)."""
    assert same_family_suggestion("SmolLM2-135M-custom") is not None
    assert len({_arch(m) for m in _family_members("Qwen3-32B-ft")}) > 1
