"""vLLM architectures removed after a release: KV502 says the container stops at start-up and names the release."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kvlint.models.config import (
    VLLM_REMOVED_ARCHITECTURES,
    VLLM_REMOVED_TRANSFORMERS_CLASSES,
    vllm_removed_architecture,
)
from kvlint.pipeline import Options, run_check
from kvlint.rules.runner import check_container

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LINEAR = FIXTURES / "models" / "linear"
REMOVED = FIXTURES / "models" / "removed"
REGISTRY = FIXTURES / "engines" / "vllm_registry"
M1 = "MiniMaxAI/MiniMax-M1-80k"
BAICHUAN = "local/tonggu-7b"  # fixtures/models/removed/local--tonggu-7b: BaichuanForCausalLM


def _kv502(
    tmp_path: Path, tag: str, model: str = M1, arch: str = "MiniMaxM1ForCausalLM", tp: int = 8
) -> list:
    manifest = tmp_path / "m1.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m1}\nspec:\n  template:\n    spec:\n"
        f"      containers:\n        - name: vllm\n          image: vllm/vllm-openai:{tag}\n"
        f'          args: ["--model", "{model}", "--tensor-parallel-size", "{tp}"]\n'
        f"          resources: {{limits: {{nvidia.com/gpu: {tp}}}}}\n"
    )
    opts = Options(model_dirs=(str(LINEAR), str(REMOVED)), allow_hub=False, accelerator="h200")
    cr = next(c for c in run_check([str(manifest)], opts).containers if c.serving.engine == "vllm")
    assert cr.model is not None and arch in cr.model.architectures
    return [d for d in check_container(cr, opts) if d.rule == "KV502"]


def _registry_table() -> dict[str, str]:
    """``_PREVIOUSLY_SUPPORTED_MODELS`` as vllm 0.34.0's registry.py writes it (the fixture's verbatim excerpt)."""
    text = (REGISTRY / "previously_supported_0.34.0.txt").read_text()
    table_text = text.split("# --- lines 883-939\n", 1)[1].split("# --- lines 1300-1331\n", 1)[0]
    (node,) = (
        n
        for n in ast.parse(table_text).body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_PREVIOUSLY_SUPPORTED_MODELS"
    )
    table = ast.literal_eval(node.value)
    assert isinstance(table, dict)
    return table


def _transformers_classes() -> set[str]:
    text = (REGISTRY / "transformers_5.16.1_classes.txt").read_text()
    return {line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")}


def test_table_is_vllm_registry_table() -> None:
    table = _registry_table()
    assert len(table) == 52
    assert VLLM_REMOVED_ARCHITECTURES == table
    assert list(VLLM_REMOVED_ARCHITECTURES) == list(table)  # every entry, in the registry's order


def test_transformers_classes_are_the_ones_read() -> None:
    assert VLLM_REMOVED_TRANSFORMERS_CLASSES == _transformers_classes()
    assert VLLM_REMOVED_TRANSFORMERS_CLASSES < set(VLLM_REMOVED_ARCHITECTURES)


def test_refusal_quoted_as_the_registry_words_it() -> None:
    """The words KV502 quotes (and the tests below look for) are the registry's ``_raise_for_unsupported`` f-string."""
    text = (REGISTRY / "previously_supported_0.34.0.txt").read_text()
    assert 'f"Model architecture {arch} was supported in vLLM until "' in text
    assert 'f"v{previous_version}, and is not supported anymore. "' in text


@pytest.mark.parametrize("arch", sorted(set(_registry_table()) - _transformers_classes()))
def test_every_entry_after_its_last_release(arch: str) -> None:
    last = _registry_table()[arch]
    major, minor, patch = (int(x) for x in last.split("."))
    assert vllm_removed_architecture((arch,), last) is None
    assert vllm_removed_architecture((arch,), f"{major}.{minor}.{patch + 1}") == (arch, last)
    assert vllm_removed_architecture((arch,), None) == (arch, last)


@pytest.mark.parametrize("arch", sorted(_transformers_classes()))
def test_transformers_classes_not_claimed(arch: str) -> None:
    assert vllm_removed_architecture((arch,), None) is None


def test_baichuan_end_to_end(tmp_path: Path) -> None:
    last = _registry_table()["BaichuanForCausalLM"]
    major, minor, _ = (int(x) for x in last.split("."))
    (d,) = _kv502(tmp_path, f"v{major}.{minor + 1}.0", BAICHUAN, "BaichuanForCausalLM", 1)
    assert d.severity == "error"
    assert (
        f"Model architecture BaichuanForCausalLM was supported in vLLM until v{last}, and is not supported anymore"
        in d.message
    )
    assert _kv502(tmp_path, f"v{last}", BAICHUAN, "BaichuanForCausalLM", 1) == []


def test_minimax_m1_after_its_last_release_is_an_error(tmp_path: Path) -> None:
    last = VLLM_REMOVED_ARCHITECTURES["MiniMaxM1ForCausalLM"]
    major, minor, _ = (int(x) for x in last.split("."))
    after = _kv502(tmp_path, f"v{major}.{minor + 1}.0")
    assert len(after) == 1 and after[0].severity == "error"
    assert f"was supported in vLLM until v{last}, and is not supported anymore" in after[0].message
    assert _kv502(tmp_path, f"v{last}") == []


@pytest.mark.parametrize(
    ("archs", "version", "gone"),
    [
        (("MiniMaxText01ForCausalLM",), "0.23.0", False),
        (("MiniMaxText01ForCausalLM",), "0.23.1", True),
        (("MiniMaxM1ForCausalLM",), None, True),  # unknown version: the newest read
        (("MiniMaxForCausalLM",), "0.34.0", False),  # the transformers port: not claimed
        (("LlamaForCausalLM",), "0.34.0", False),
        (("QWenLMHeadModel", "LlamaForCausalLM"), "0.34.0", False),  # vLLM serves the second
        (("MllamaForConditionalGeneration", "Grok1ForCausalLM"), "0.34.0", False),  # transformers first
        (("Grok1ForCausalLM", "Plamo2ForCausalLM"), "0.25.0", False),  # 0.25.0 still serves Plamo2
        (("Grok1ForCausalLM", "Plamo2ForCausalLM"), "0.27.0", True),
    ],
)
def test_removed_architecture_by_release(archs: tuple[str, ...], version: str | None, gone: bool) -> None:
    assert (vllm_removed_architecture(archs, version) is not None) is gone


def test_unknown_version_says_it_is_assumed(tmp_path: Path) -> None:
    (d,) = _kv502(tmp_path, "latest")
    assert "(assumed: the newest release read)" in d.message and d.severity == "error"
