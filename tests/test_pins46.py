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


@pytest.mark.parametrize(("req", "pin"), CASES)
def test_the_rayservice_reader_reads_a_pin_as_pip_does(req: str, pin: str | None) -> None:
    assert _pinned_vllm({"pip": ["ray[serve]", req]})[0] == pin
    assert _pinned_vllm({"uv": {"packages": [req]}})[0] == pin


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
