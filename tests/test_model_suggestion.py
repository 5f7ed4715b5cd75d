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
from kvlint.models.catalogue import _param_sizes, list_index, same_family_suggestion
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


def _words(name: str) -> list[str]:
    """The words of ``name`` (split at - _ .) before the first one that starts with a digit."""
    out = []
    for word in re.split(r"[-_.]", name.lower()):
        if not word or word[0].isdigit():
            break
        out.append(word)
    return out


def _family_members(name: str) -> list[str]:
    """Catalogued ids (and variant ids) whose repository name's words before its first number begin ``name``'s:
    ``Mixtral-8x7B-v0.1`` for ``mixtral-x``, not ``gpt-oss-20b`` for ``gpt2``."""
    want = _words(name)
    assert want
    out = []
    for row in list_index():
        for mid in (row.id, *row.variants):
            head = _words(mid.split("/", 1)[-1])
            if head and want[: len(head)] == head:
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
        "gpt2",
        "gpt-j-6b",
        "gpt-neox-20b",
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


def test_a_gpt2_directory_is_not_offered_gpt_oss() -> None:
    """fishingpvalues/aihomelab vllm-deployment.yaml (fixtures/collected; source in its INDEX.csv) serves
    ``vllm serve /models/gpt2``. "gpt" began both the path's name and the catalogued ``openai/gpt-oss-20b`` and
    ``-120b``, the only catalogued "gpt" models, so KV502 offered ``/models/gpt2: openai/gpt-oss-20b``: GPT-2
    (GPT2LMHeadModel, 124M parameters) mapped to a 21B mixture of experts (GptOssForCausalLM). Likewise GPT-J and
    GPT-NeoX directories. A catalogued model is of a path's family only when its words before its first number
    begin the path's (gpt-oss: gpt, oss); gpt-oss directories still get it."""
    assert {"openai/gpt-oss-20b", "openai/gpt-oss-120b"} <= {row.id for row in list_index()}
    for name in ("gpt2", "gpt-j-6b", "gpt-neox-20b", "gpt2-medium"):
        assert same_family_suggestion(name) is None, name
        assert _example(f"/models/{name}") == "<org>/<name>"
    assert same_family_suggestion("gpt-oss-20b-custom") in ("openai/gpt-oss-20b", "openai/gpt-oss-120b")
    assert same_family_suggestion("mixtral-x") is not None  # the family's name alone still is the family


def test_a_path_naming_its_size_is_offered_a_model_of_that_size_only() -> None:
    """review51F: with the family by words (fresh51) a ``deepseek-r1-70b`` directory became of the DeepSeek-R1
    family (catalogued deepseek-ai/DeepSeek-R1 and -0528, one architecture), and KV502 offered
    ``deepseek-ai/DeepSeek-R1-0528``, a 671B mixture of experts, for what the name says is a 70B model (the
    Llama distillation); ``meta-llama_llama-3.2-1b-instruct`` got Meta-Llama-3.1-8B-Instruct. A name that states
    its parameter count gets a model stating the same count, or the placeholder."""
    assert _param_sizes("deepseek-r1-70b-gh200") == {"70b"} and _param_sizes("mixtral-8x7b") == {"8x7b"}
    assert not _param_sizes("gpt2") and not _param_sizes("deepseek-r1")
    assert same_family_suggestion("DeepSeek-R1") is not None  # the name states no size: the family's model
    for name in ("deepseek-r1-70b", "deepseek-r1-70b-gh200", "meta-llama_llama-3.2-1b-instruct"):
        got = same_family_suggestion(name)
        assert got is None, (name, got)
    for name, size in (
        ("mistral-7b", "7b"),
        ("deepseek-coder-6.7b-instruct", "6.7b"),
        ("smollm2-135m", "135m"),
    ):
        got = same_family_suggestion(name)
        assert got is not None and size in _param_sizes(got.split("/", 1)[-1].lower()), (name, got)
