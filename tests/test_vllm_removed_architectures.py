"""vLLM architectures removed after a release: KV502 says the container stops at start-up and names the release."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.models.config import VLLM_REMOVED_ARCHITECTURES, vllm_removed_architecture
from kvlint.pipeline import Options, run_check
from kvlint.rules.runner import check_container

LINEAR = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "linear"
M1 = "MiniMaxAI/MiniMax-M1-80k"


def _kv502(tmp_path: Path, tag: str) -> list:
    manifest = tmp_path / "m1.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m1}\nspec:\n  template:\n    spec:\n"
        f"      containers:\n        - name: vllm\n          image: vllm/vllm-openai:{tag}\n"
        f'          args: ["--model", "{M1}", "--tensor-parallel-size", "8"]\n'
        "          resources: {limits: {nvidia.com/gpu: 8}}\n"
    )
    opts = Options(model_dirs=(str(LINEAR),), allow_hub=False, accelerator="h200")
    cr = next(c for c in run_check([str(manifest)], opts).containers if c.serving.engine == "vllm")
    assert cr.model is not None and "MiniMaxM1ForCausalLM" in cr.model.architectures
    return [d for d in check_container(cr, opts) if d.rule == "KV502"]


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
    ],
)
def test_removed_architecture_by_release(archs: tuple[str, ...], version: str | None, gone: bool) -> None:
    assert (vllm_removed_architecture(archs, version) is not None) is gone


def test_unknown_version_says_it_is_assumed(tmp_path: Path) -> None:
    (d,) = _kv502(tmp_path, "latest")
    assert "(assumed: the newest release read)" in d.message and d.severity == "error"
