"""``${X-default}`` (no colon) takes the default only when X is unset; ``${X:-default}`` also when X is empty
(bash(1), Parameter Expansion: "Omitting the colon results in a test only for a parameter that is unset"). kvlint
took the default for a variable set to the empty string in both forms: ``--gpu-memory-utilization ${GPU_UTIL-0.9}``
with ``GPU_UTIL=""`` was read as 0.9, where the shell passes no word at all."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kvlint.engines.shell import commands

_SCRIPT = 'echo ${X-d} ${X:-d} "${X-d}" "${X:-d}" ${X-"a b"} "${X:-"a b"}"'


def _words(env: dict[str, str]) -> list[str]:
    (cmd,) = list(commands(_SCRIPT, env))
    return [a.text for a in cmd]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"X": ""}, ["echo", "d", "", "d", "a b"]),  # set but empty: only the colon forms take the default
        ({}, ["echo", "d", "d", "d", "d", "a b", "a b"]),  # unset: every form takes it
        ({"X": "v"}, ["echo", "v", "v", "v", "v", "v", "v"]),
    ],
)
def test_colon_and_no_colon_defaults(env, expected):
    assert _words(env) == expected


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
@pytest.mark.parametrize("env", [{"X": ""}, {}, {"X": "v"}])
def test_as_bash_expands_them(env):
    """The same words as bash itself gives (each word printed in brackets, so empty quoted words count)."""
    out = subprocess.run(
        ["bash", "-c", _SCRIPT.replace("echo", "printf '[%s]' echo", 1)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == "".join(f"[{w}]" for w in _words(env))


def test_engine_flag_from_a_set_but_empty_variable_is_not_the_default(tmp_path):
    """``GPU_UTIL: ""`` in the container's env: ``${GPU_UTIL-0.9}`` is no word, so vLLM's argparse sees
    ``--gpu-memory-utilization`` followed by the next option and stops ("expected one argument"): KV206, where
    kvlint planned 0.9 in silence."""
    from kvlint.pipeline import Options, run_check

    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.9.2\n    command: [sh, -c]\n"
        '    args: ["vllm serve Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization ${GPU_UTIL-0.9} --max-model-len 8192"]\n'
        '    env: [{name: GPU_UTIL, value: ""}]\n'
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    res = run_check([str(pod)], Options(allow_hub=False, accelerator="h100"))
    found = [d for d in res.diagnostics if d.rule == "KV206"]
    assert found and "--gpu-memory-utilization" in found[0].message, [d.message for d in res.diagnostics]
