"""Findings carry what they are (kvlint.types.Mark) from where they are made to the code that counts them:
kvlint.sizing.unread tells a Helm values file, a kustomization, a kustomize patch, an empty render, a failed
``helm template`` and an unread-settings note apart by it, not by its message's wording, which quotes a file's own
keys. Real loader, pipeline and streaming run, offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint import stream
from kvlint.checkrun import run_paths
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import unread
from kvlint.types import Mark

OFFLINE = Options(allow_hub=False)


def _write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def _unread(path: str) -> list[str]:
    return [why for _, why in unread(run_check([path], OFFLINE))]


def test_a_values_key_that_reads_like_a_kustomization_is_still_a_values_file(tmp_path: Path) -> None:
    """The values reason quotes the key that holds ``image.repository``; a key worded "is a kustomization" made
    the values file a "kustomization not built"."""
    path = _write(
        tmp_path / "v" / "values-a.yaml",
        '"is a kustomization":\n  image:\n    repository: vllm/vllm-openai\n    tag: v0.11.0\n',
    )
    (d,) = run_check([path], OFFLINE).diagnostics
    assert d.rule == "KV002" and d.mark is Mark.HELM_VALUES and "is a kustomization" in d.message
    assert _unread(path) == ["Helm values file not rendered"]


def test_a_values_key_named_like_a_gpu_resource_is_not_a_gpu_limit(tmp_path: Path) -> None:
    """Values that name no engine count as not read only when the reason is a serving chart's GPU limit (or the
    llm-d model URI, or keys left for --set); a top-level key named ``nvidia.com/gpu`` holding an app's image is
    neither, and was counted because the GPU's name stood in the message."""
    path = _write(
        tmp_path / "v" / "values-b.yaml", '"nvidia.com/gpu":\n  image:\n    repository: example/app\n'
    )
    (d,) = run_check([path], OFFLINE).diagnostics
    assert d.rule == "KV002" and d.mark is Mark.HELM_VALUES and "nvidia.com/gpu" in d.message
    assert _unread(path) == []
    # a GPU limit in the serving chart's shape is counted, engine named or not
    gpu = _write(
        tmp_path / "g" / "values-c.yaml",
        "model: example/model\nresources:\n  limits:\n    nvidia.com/gpu: 1\n",
    )
    (d,) = run_check([gpu], OFFLINE).diagnostics
    assert d.mark is Mark.SERVING_VALUES
    assert _unread(gpu) == ["Helm values file not rendered"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_marks_survive_the_streaming_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """Diagnostics of a streaming run are pickled (worker processes, the compact store): the mark goes with them."""
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    _write(tmp_path / "k" / "kustomization.yaml", "resources: [deploy.yaml]\n")
    _write(
        tmp_path / "k" / "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n",
    )
    _write(
        tmp_path / "v" / "values-a.yaml",
        '"is a kustomization":\n  image:\n    repository: vllm/vllm-openai\n',
    )
    for path in (tmp_path / "k" / "kustomization.yaml", tmp_path / "v" / "values-a.yaml"):
        result = run_paths([str(path)], OFFLINE, no_config=True, jobs=jobs).result
        marks = {d.mark for d in result.diagnostics if d.rule == "KV002"}
        assert marks == ({Mark.KUSTOMIZATION} if path.name.startswith("kustom") else {Mark.HELM_VALUES})
        assert [why for _, why in unread(result)] == (
            ["kustomization not built"]
            if path.name.startswith("kustom")
            else ["Helm values file not rendered"]
        )
