"""One reader of pip requirement pins (pin46): a container script's ``pip install`` and a RayService's
``runtime_env.pip``/``uv`` list read a requirement as pip does (kvlint.engines.requirements.read_requirement).

Before, each had its own regular expression, and they disagreed: the script reader refused ``vllm===0.8.5``,
``"vllm == 0.8.5"``, ``vllm @ URL`` and a wheel path that pip installs, the RayService reader a bare wheel URL, a
percent-encoded wheel name and ``==v0.8.5``, and it took ``vllm==0.8.5;garbage`` (which pip refuses) for a pin."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.command import _pip_install, _pip_pinned
from kvlint.engines.requirements import MAX_REQUIREMENT_CHARS, read_requirement
from kvlint.pipeline import Options, run_check
from kvlint.workloads.rayserve import _pinned_vllm

WHEEL = "vllm-0.8.5-cp38-abi3-manylinux1_x86_64.whl"

# (requirement, release pinned of vLLM or None); the same for both readers
CASES = [
    ("vllm==0.8.5", "0.8.5"),
    ("VLLM==0.8.5", "0.8.5"),
    ("vllm===0.8.5", "0.8.5"),
    ("vllm == 0.8.5", "0.8.5"),
    ("vllm[audio]==0.8.5", "0.8.5"),
    ("vllm[audio, video] === 0.8.5", "0.8.5"),
    ("vllm==v0.8.5", "0.8.5"),
    ("vllm==0.6.3.post1", "0.6.3.post1"),
    ('vllm==0.8.5; sys_platform == "linux"', "0.8.5"),
    (f"vllm @ https://example.com/w/{WHEEL}", "0.8.5"),
    (f"vllm@https://example.com/w/{WHEEL}", "0.8.5"),
    (f"https://example.com/w/{WHEEL}", "0.8.5"),
    ("https://example.com/w/vllm-0.8.5%2Bcu118-cp38-abi3-manylinux1_x86_64.whl", "0.8.5"),
    (f"./{WHEEL}", "0.8.5"),
    ("vllm", None),
    ("vllm>=0.8", None),
    ("vllm==0.8.*", None),
    ("vllm>=0.8,==0.8.5", None),
    ("vllm==0.8.5;garbage", None),  # pip: "Invalid requirement"
    ("vllm==0.8.5 junk", None),
    ("vllm-extra==0.8.5", None),
    ("sglang==0.4.6", None),
    ("vllm @ https://example.com/w/sglang-0.4.6-py3-none-any.whl", None),  # pip refuses the mismatch
    ("vllm @ git+https://github.com/vllm-project/vllm", None),
    ("vllm==99999999999999999999.0", None),
    ("vllm==" + "1" * 100_000, None),
]


@pytest.mark.parametrize(("req", "pin"), CASES)
def test_the_script_reader_reads_a_pin_as_pip_does(req: str, pin: str | None) -> None:
    assert _pip_pinned(["pip", "install", "--quiet", req], "vllm") == pin


def _newest_08() -> str:
    """The newest vLLM 0.8.x kvlint models, by packaging over the modelled releases."""
    from packaging.version import Version

    from kvlint.engines.vllm_flags_data import VERSIONS

    return max((v for v in VERSIONS if Version("0.8") <= Version(v) < Version("0.9")), key=Version)


#: shell55: the ranges among CASES, which the RayService reader reads as pip installs them in Ray's virtualenv over an
#: image carrying no vLLM (the newest release kvlint models in the range), as the script reader's pip install does
RANGED = {"vllm==0.8.*": _newest_08(), "vllm>=0.8,==0.8.5": "0.8.5"}


@pytest.mark.parametrize(("req", "pin"), CASES)
def test_the_rayservice_reader_reads_a_pin_as_pip_does(req: str, pin: str | None) -> None:
    pin = RANGED.get(req, pin)
    assert _pinned_vllm({"pip": ["ray[serve]", req]})[0] == pin
    assert _pinned_vllm({"uv": {"packages": [req]}})[0] == pin
    if req in RANGED:
        assert _pip_install(["pip", "install", req], "vllm") == pin


def test_project_names_compare_as_pep_503_normalises_them() -> None:
    got = read_requirement("SGLang[all]==0.4.6.post1")
    assert got is not None and got.project == "sglang" and got.release == "0.4.6.post1"
    assert _pip_pinned(["uv", "pip", "install", "SGLang[all]==0.4.6.post1"], "sglang") == "0.4.6.post1"


def test_an_upgrade_of_any_unpinned_spelling_is_read_as_an_upgrade() -> None:
    assert _pip_install(["pip", "install", "-U", "vllm>=0.8"], "vllm") == ""
    assert _pip_install(["pip", "install", "-U", "vllm[audio] >= 0.8"], "vllm") == ""
    assert _pip_install(["pip", "install", "-U", "vllm===0.8.5"], "vllm") == "0.8.5"
    assert _pip_install(["pip", "install", "-U", "vllm-extra"], "vllm") is None


def test_overlong_text_is_not_read() -> None:
    req = "vllm==0.8.5;" + " " * MAX_REQUIREMENT_CHARS + 'os_name == "posix"'
    assert read_requirement(req) is None
    assert read_requirement(req[: MAX_REQUIREMENT_CHARS - 100] + 'os_name == "posix"') is not None


def test_a_script_installing_a_wheel_sets_the_release(tmp_path: Path) -> None:
    m = tmp_path / "p.yaml"
    m.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.10.2\n    command: [/bin/bash, -c]\n    args:\n    - |\n"
        f"      pip install 'vllm @ https://example.com/w/{WHEEL}'\n"
        "      python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-0.5B-Instruct\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    res = run_check([str(m)], Options(allow_hub=False))
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.serving.version == "0.8.5"


# A RayService's runtime_env.pip pin is installed by Ray over the worker image's Python environment, so it is the
# release that runs, as a script's pip pin is: it took only --engine-version's place, and a vLLM release image as the
# worker image kept its tag's release (0.10.2 here, the pin 0.8.5 unread).
COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
MISTRAL = (
    COLLECTED
    / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__mistral-7b__ray-service.yaml"
)


def _rayservice(tmp_path: Path, image: str, pin: str, engine_version: str | None = None):  # type: ignore[no-untyped-def]
    text = MISTRAL.read_text()
    assert "rayproject/ray-ml:2.9.0" in text and 'pip: ["vllm==0.4.3"]' in text
    out = tmp_path / "ray-service.yaml"
    out.write_text(
        text.replace("rayproject/ray-ml:2.9.0", image).replace('pip: ["vllm==0.4.3"]', f"pip: [{pin!r}]")
    )
    return run_check([str(out)], Options(allow_hub=False, engine_version=engine_version))


@pytest.mark.parametrize("engine_version", [None, "0.9.2"])
def test_a_rayservice_pin_wins_over_a_release_images_tag(tmp_path: Path, engine_version: str | None) -> None:
    res = _rayservice(tmp_path, "vllm/vllm-openai:v0.10.2", "vllm==0.8.5", engine_version)
    (cr,) = [cr for cr in res.containers if cr.serving is not None]
    assert cr.serving.version == "0.8.5"


def test_without_a_pin_the_release_images_tag_still_decides(tmp_path: Path) -> None:
    res = _rayservice(tmp_path, "vllm/vllm-openai:v0.10.2", "transformers==4.45.0", "0.9.2")
    (cr,) = [cr for cr in res.containers if cr.serving is not None]
    assert cr.serving.version == "0.10.2"


def test_the_crash_fallback_keeps_the_rayservice_pin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parser bug is reported as KV503 and the container keeps the release the main path would give it."""
    import kvlint.engines as engines

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("parser bug")

    monkeypatch.setattr(engines, "parse_container", boom)
    res = _rayservice(tmp_path, "rayproject/ray-ml:2.9.0", "vllm==0.8.5")
    (cr,) = [cr for cr in res.containers if cr.serving is not None]
    assert cr.serving.version == "0.8.5"
    assert [d for d in res.diagnostics if d.rule == "KV503" and "parser bug" in d.message]


def test_kv208_on_a_rayservice_pin_names_the_pin_not_the_image_tag(tmp_path: Path) -> None:
    """A pinned release outside those kvlint models is the pin's to check: KV208 said "check the image tag" at the
    worker image (vllm/vllm-openai:v0.10.2, whose release no longer runs)."""
    res = _rayservice(tmp_path, "vllm/vllm-openai:v0.10.2", "vllm==0.3.3")
    (d,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert "vLLM 0.3.3, installed by the application's runtime_env.pip at line 34" in d.message
    assert d.loc is not None and d.loc.line == 34
    assert "image tag" not in d.fix and "runtime_env.pip pins" in d.fix
