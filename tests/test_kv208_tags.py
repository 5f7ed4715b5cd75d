"""KV208 on an image tag that names no engine release kvlint can read. A build of the engine's own repository
that is not a release (vllm/vllm-openai:nightly-<sha>, as in production-stack's values) moves like `latest`:
warning. An image whose tags are its own releases (LMCache's dates, NGC) or a private build's name pins a build,
but kvlint still assumed the newest vLLM: info. Before, both were planned with the newest release and nothing
said so. A release tag, or --engine-version, leaves KV208 out."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Diagnostic

COLLECTED = Path(__file__).resolve().parent.parent / "fixtures" / "collected"


def _kv208(tmp_path: Path, image: str, **opts: object) -> list[Diagnostic]:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n"
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  containers:\n"
        f"  - name: vllm\n    image: {image}\n"
        '    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]\n'
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False, **opts))  # type: ignore[arg-type]
    return [d for d in r.diagnostics if d.rule == "KV208"]


def test_nightly_build_of_the_engine_repository_is_unpinned(tmp_path: Path) -> None:
    (d,) = _kv208(tmp_path, "vllm/vllm-openai:nightly-0123abcd")
    assert d.severity == "warning"
    assert "nightly-0123abcd" in d.message and "assumed" in d.message, d.message
    assert "vllm/vllm-openai:v" in d.fix  # a release tag of the same image
    assert d.loc is not None and d.loc.line == 9  # the image line


def test_build_with_its_own_tags_says_the_release_is_assumed(tmp_path: Path) -> None:
    (d,) = _kv208(tmp_path, "lmcache/vllm-openai:2025-05-27-v1")
    assert d.severity == "info"
    assert "2025-05-27-v1" in d.message and "assumed" in d.message, d.message
    assert "--engine-version" in d.fix and "vllm/vllm-openai" not in d.fix


def test_release_tag_or_engine_version_leaves_kv208_out(tmp_path: Path) -> None:
    assert _kv208(tmp_path, "vllm/vllm-openai:v0.11.0") == []
    assert _kv208(tmp_path, "lmcache/vllm-openai:2025-05-27-v1", engine_version="0.9.0") == []


def test_production_stack_values_with_lmcache_release_tags() -> None:
    # production-stack's tests/assets/values-06-session-routing.yaml: lmcache/vllm-openai:v0.3.9post2 (an LMCache
    # release, not a vLLM one) was planned as the newest vLLM without a word
    f = COLLECTED / "vllm-project__production-stack__tests__assets__values-06-session-routing.yaml"
    r = run_check([str(f)], Options(allow_hub=False))
    (d,) = [d for d in r.diagnostics if d.rule == "KV208"]
    assert d.severity == "info" and "v0.3.9post2" in d.message
    assert d.loc is not None and d.loc.line == 7  # the entry's image (its repository line, as for latest)


def test_moving_tag_of_a_build_with_its_own_tags_is_a_warning(tmp_path: Path) -> None:
    # production-stack's tutorials/assets/values-14-vllm-v1.yaml runs lmcache/vllm-openai:latest-nightly
    f = COLLECTED / "vllm-project__production-stack__tutorials__assets__values-14-vllm-v1.yaml"
    (d,) = [d for d in run_check([str(f)], Options(allow_hub=False)).diagnostics if d.rule == "KV208"]
    assert d.severity == "warning" and "latest-nightly" in d.message
    assert (
        "lmcache/vllm-openai" in d.fix and "vllm/vllm-openai:v" not in d.fix
    )  # its own tags, not vLLM's image


def test_a_tag_word_naming_a_moving_build_is_a_warning(tmp_path: Path) -> None:
    # production-stack's values-01-minimal-amd-example.yaml runs rocm/vllm:instinct_main (ROCm's main-branch build)
    (d,) = _kv208(tmp_path, "rocm/vllm:instinct_main")
    assert d.severity == "warning" and "instinct_main" in d.message
    (d,) = _kv208(tmp_path, "lmcache/vllm-openai:2025-05-27-v1")  # a date is no such word
    assert d.severity == "info"
