"""GKE's Ray Serve sample programs in a RayService: what only looks like them (review46B).

engine46 reads ``ai-ml.gke-ray.rayserve.llm.serve:model`` as GoogleCloudPlatform/kubernetes-engine-samples'
published program when ``runtime_env.working_dir`` is that repository's archive; it tested the URL as a substring,
so any URL that contains the text (another host's path, a ``user@`` part) was read as the published program."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
MISTRAL = (
    COLLECTED
    / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__mistral-7b__ray-service.yaml"
)
ARCHIVE = "https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/archive/main.zip"


def _run(tmp_path: Path, old: str, new: str):  # type: ignore[no-untyped-def]
    text = MISTRAL.read_text()
    assert old in text
    out = tmp_path / "ray-service.yaml"
    out.write_text(text.replace(old, new))
    return run_check([str(out)], Options(allow_hub=False))


def _sized(res) -> bool:  # type: ignore[no-untyped-def]
    return any(cr.serving is not None and cr.serving.model is not None for cr in res.containers)


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/github.com/GoogleCloudPlatform/kubernetes-engine-samples/archive/main.zip",
        "https://github.com@evil.example/GoogleCloudPlatform/kubernetes-engine-samples/archive/main.zip",
        "https://evil.example/x.zip?github.com/GoogleCloudPlatform/kubernetes-engine-samples/",
        "https://github.com/GoogleCloudPlatform/kubernetes-engine-samples-fork/archive/main.zip",
        "https://github.com/someone/kubernetes-engine-samples/archive/main.zip",
        "file:///github.com/GoogleCloudPlatform/kubernetes-engine-samples/archive/main.zip",
        "https://[::1/GoogleCloudPlatform/kubernetes-engine-samples/archive/main.zip",
    ],
)
def test_a_url_that_only_looks_like_the_archive_is_not_the_sample(tmp_path: Path, url: str) -> None:
    res = _run(tmp_path, ARCHIVE, url)
    assert not _sized(res)
    assert [d for d in res.diagnostics if d.rule == "KV503" and "Python code" in d.message]


@pytest.mark.parametrize(
    "url",
    [
        ARCHIVE,
        "https://github.com/googlecloudplatform/Kubernetes-Engine-Samples/archive/refs/heads/main.zip",
        "https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/archive/91b8ed04.zip",
    ],
)
def test_the_archive_at_any_ref_is_the_sample(tmp_path: Path, url: str) -> None:
    assert _sized(_run(tmp_path, ARCHIVE, url))
