"""vLLM's CI uploads each development build under the placeholder name ``vllm-1.0.0.dev-...whl`` (or
``1.0.0.dev+cuXXX``) to ``<commit>/``, ``nightly/`` and ``1.0.0.dev/`` of its wheel bucket (vllm-project/vllm
.buildkite/upload-wheels.sh: "If the version contains "dev", rename it to v1.0.0.dev for consistency"): the file
name's 1.0.0.dev0 is no vLLM release, the wheel holds a development build of main
(kvlint.engines.requirements._wheel, kvlint.engines.command._pip_install)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.requirements import read_requirement
from kvlint.options import Options
from kvlint.pipeline import run_check

COMMIT = "33f460b17a54acb3b6cc0b03f4a17876cff5eafd"
WHEEL = "vllm-1.0.0.dev-cp38-abi3-manylinux1_x86_64.whl"


def _run(tmp_path: Path, install: str) -> tuple[str | None, list[str]]:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        "    image: vllm/vllm-openai:v0.11.0\n    command: [/bin/sh, -c]\n    args:\n    - |\n"
        f"      {install}\n      vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    return cr.serving.version, [d.message for d in r.diagnostics if d.rule == "KV208"]


@pytest.mark.parametrize(
    "location",
    [
        f"https://wheels.vllm.ai/nightly/{WHEEL}",
        f"https://vllm-wheels.s3.us-west-2.amazonaws.com/nightly/{WHEEL}",
        f"vllm @ https://wheels.vllm.ai/{COMMIT}/vllm-1.0.0.dev%2Bcu118-cp38-abi3-manylinux1_x86_64.whl",
        f"./{WHEEL}",
    ],
)
def test_the_placeholder_name_pins_no_release(location: str) -> None:
    pin = read_requirement(location)
    assert pin is not None and pin.project == "vllm" and pin.release is None, pin


def test_a_real_development_version_in_a_wheel_name_is_still_read() -> None:
    # only vLLM's placeholder is no release: another project's 1.0.0.dev0, and vLLM's own wheel names, are read
    assert read_requirement("./vllm-0.8.5-cp38-abi3-manylinux1_x86_64.whl").release == "0.8.5"  # type: ignore[union-attr]
    assert read_requirement("./other-1.0.0.dev0-py3-none-any.whl").release == "1.0.0.dev0"  # type: ignore[union-attr]


def test_installing_the_nightly_wheel_runs_a_development_build(tmp_path: Path) -> None:
    version, (msg,) = _run(tmp_path, f"pip install https://wheels.vllm.ai/nightly/{WHEEL}")
    assert version is None
    assert "the nightly build of vLLM (its main branch's last commit)" in msg, msg
    assert "a development version, no release, in place of the vLLM 0.11.0" in msg, msg
    assert "1.0.0.dev0" not in msg, msg


def test_a_local_placeholder_wheel_is_a_build_of_main(tmp_path: Path) -> None:
    version, (msg,) = _run(
        tmp_path, f"wget -q https://wheels.vllm.ai/nightly/{WHEEL} && pip install ./{WHEEL}"
    )
    assert version is None
    assert "a build of vLLM's main branch (the wheel name vLLM's CI gives each one, 1.0.0.dev)" in msg, msg


def test_a_commit_wheel_names_its_commit(tmp_path: Path) -> None:
    version, (msg,) = _run(tmp_path, f"pip install https://wheels.vllm.ai/{COMMIT}/{WHEEL}")
    assert version is None
    assert f"the build of vLLM's commit {COMMIT[:12]}" in msg, msg
