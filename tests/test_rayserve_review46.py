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


def _newest_modelled(lo: str, hi: str) -> str:
    """The newest vLLM release kvlint models in [lo, hi), by packaging over the modelled releases."""
    from packaging.version import Version

    from kvlint.engines.vllm_flags_data import VERSIONS

    return max((v for v in VERSIONS if Version(lo) <= Version(v) < Version(hi)), key=Version)


_NEWEST_06 = _newest_modelled("0.6", "0.7")


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


# The vLLM release a runtime_env installs. engine46 read only a list ``pip`` entry spelled ``vllm==X`` exactly; pip
# compares project names case-insensitively, ``vllm[audio]==0.8.5`` installs vLLM 0.8.5, and Ray's runtime_env takes
# ``pip: {packages: [...]}`` and ``uv`` (list or dict) too (ray-project/ray python/ray/_private/runtime_env/
# validation.py parse_and_validate_pip, parse_and_validate_uv): those fell back to "release unknown" (KV208).


@pytest.mark.parametrize(
    ("runtime_env", "pin"),
    [
        ({"pip": ["vllm==0.4.3"]}, "0.4.3"),
        ({"pip": ["VLLM==0.8.5"]}, "0.8.5"),
        ({"pip": ["vllm[audio]==0.8.5"]}, "0.8.5"),
        ({"pip": ["vllm[audio, video] === 0.8.5"]}, "0.8.5"),
        ({"pip": ['vllm==0.8.5; python_version >= "3.9"']}, "0.8.5"),
        ({"pip": {"packages": ["ray[serve]", "vllm==0.6.3.post1"], "pip_check": False}}, "0.6.3.post1"),
        ({"uv": ["vllm==0.10.2"]}, "0.10.2"),
        ({"uv": {"packages": ["vllm==0.10.2"]}}, "0.10.2"),
        (
            {"pip": ["vllm @ https://example.com/w/vllm-0.6.3+cu118-cp38-abi3-manylinux1_x86_64.whl"]},
            "0.6.3",
        ),
        ({"pip": ["vllm>=0.6"]}, None),
        # shell55: a range pip installs the newest release of (in Ray's virtualenv over an image carrying no vLLM),
        # taken as the newest kvlint models in it
        ({"pip": ["vllm==0.6.*"]}, _NEWEST_06),
        ({"pip": ["vllm>=0.6,==0.6.3"]}, "0.6.3"),
        ({"pip": ["vllm-extra==0.6.3"]}, None),
        ({"pip": ["vllm @ git+https://github.com/vllm-project/vllm"]}, None),
        ({"pip": "requirements.txt"}, None),
        ({"pip": {"packages": "vllm==0.6.3"}}, None),
        ({"pip": [["vllm==0.6.3"], 3, None]}, None),
        ({"pip": ["vllm==99999999999999999999.0"]}, None),
        ({"pip": ["vllm==" + "1" * 100000]}, None),
        ({"pip": ["vllm @ " + "/" * 100000 + "vllm-0.6.3-a-b-c.whl"]}, None),
        (None, None),
    ],
)
def test_release_a_runtime_env_pins(runtime_env: object, pin: str | None) -> None:
    from kvlint.workloads.rayserve import _pinned_vllm

    assert _pinned_vllm(runtime_env)[0] == pin


def test_release_from_an_extras_pin_sizes_that_release(tmp_path: Path) -> None:
    res = _run(tmp_path, 'pip: ["vllm==0.4.3"]', 'pip: {packages: ["vLLM[audio]==0.8.5"], pip_check: false}')
    (cr,) = res.containers
    assert cr.serving is not None and cr.serving.version == "0.8.5"
    assert not [d for d in res.diagnostics if d.rule == "KV208"]


# The program's environment. engine46 str()-ed each runtime_env.env_vars value and put it on the command line as a
# word of its own: an unquoted ``TENSOR_PARALLELISM: 2`` (which Ray refuses: parse_and_validate_env_vars raises
# TypeError unless every key and value is a string) was sized as TP 2, and a value spelled like an option became
# one (``MODEL_ID: "--max-model-len"`` was read as vLLM's --max-model-len option, the container named after it).


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ('TENSOR_PARALLELISM: "2"', "TENSOR_PARALLELISM: 2", 37),
        ('TENSOR_PARALLELISM: "2"', "TENSOR_PARALLELISM: true", 37),
        ('MODEL_ID: "mistralai/Mistral-7B-Instruct-v0.3"', 'MODEL_ID: ["a", "b"]', 36),
        ('TENSOR_PARALLELISM: "2"', 'TENSOR_PARALLELISM: "2"\n          OTHER: null', 38),
    ],
)
def test_env_vars_ray_refuses_are_not_sized(tmp_path: Path, old: str, new: str, line: int) -> None:
    res = _run(tmp_path, old, new)
    assert not _sized(res)
    (d,) = [
        d for d in res.diagnostics if d.rule == "KV503" and "Dict[str, str]" in (d.message + (d.fix or ""))
    ]
    assert d.loc is not None and d.loc.line == line


def test_model_spelled_like_an_option_is_not_an_option(tmp_path: Path) -> None:
    res = _run(tmp_path, '"mistralai/Mistral-7B-Instruct-v0.3"', '"--max-model-len"')
    assert not _sized(res)
    assert not [d for d in res.diagnostics if d.rule == "KV206"]
    (d,) = [d for d in res.diagnostics if d.rule == "KV503" and "--max-model-len" in d.message]
    assert d.loc is not None and d.loc.line == 36


def test_tensor_parallelism_spelled_like_an_option_stays_its_value(tmp_path: Path) -> None:
    res = _run(tmp_path, 'TENSOR_PARALLELISM: "2"', 'TENSOR_PARALLELISM: "--enforce-eager"')
    (cr,) = res.containers
    assert cr.serving is not None and cr.serving.get("enforce_eager") is None
    (d,) = [d for d in res.diagnostics if d.rule == "KV206"]
    assert "--enforce-eager" in d.message and "--tensor-parallel-size" in d.message
