"""Variables kvlint cannot know, against bash itself (the harness of tests/test_shell_state50.py: a ``vllm`` on
``PATH`` that prints its arguments): a value the script gives a variable through a builtin or a loop kvlint does not
run is not the value it held before. Offline; bash and coreutils' env only (skipped without them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kvlint.engines.shell import ShellArg, commands
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shell_array_writes import _agrees  # noqa: E402
from test_shell_state50 import _bash  # noqa: E402

#: each assigns A (or the name a builtin fills without one) a value other than the 1 it held
BUILTIN_WRITES = [
    "A=1; read A <<< 2; vllm serve m --max-model-len=$A",
    "A=1; read -r -p x A B <<< '2 3'; vllm serve m --max-model-len=$A",
    "A=1; while read A; do break; done <<< 2; vllm serve m --max-model-len=$A",
    "A=1; if read A <<< 2; then :; fi; vllm serve m --max-model-len=$A",
    "REPLY=1; read <<< 2; vllm serve m --max-model-len=$REPLY",
    "A=1; for A in 2 3; do :; done; vllm serve m --max-model-len=$A",
    "A=1; select A in 2; do break; done <<< 1 2>/dev/null; vllm serve m --max-model-len=$A",
    "A=1; getopts a: A -a 3; vllm serve m --max-model-len=$A $OPTARG",
    "A=1; printf -v A %s 2; vllm serve m --max-model-len=$A",
    "A=1; printf -vA %s 2; vllm serve m --max-model-len=$A",
    "A=1; mapfile A <<< 2; vllm serve m --max-model-len=$A",
    "MAPFILE=1; readarray <<< 2; vllm serve m --max-model-len=$MAPFILE",
]


@pytest.mark.parametrize("script", BUILTIN_WRITES)
def test_a_variable_a_builtin_or_loop_assigns_is_not_its_old_value(script: str, tmp_path: Path) -> None:
    """``A=1; read A``: bash passes the line read, kvlint passed ``--max-model-len=1`` (the value before): the
    variable is unknown after ``read``, ``for``/``select``, ``getopts``, ``printf -v``, ``mapfile``."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    assert argv[3] != "--max-model-len=1"  # (the script does change the value)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    words = [(w.text, w.unresolved) for w in engine]
    assert _agrees(words, argv), (argv, words)
    assert words[3][1], words


def test_printf_without_v_assigns_nothing(tmp_path: Path) -> None:
    """``printf %s A`` prints; A keeps its value (bash's too)."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    script = "A=1; printf %s A >/dev/null; vllm serve m --max-model-len=$A"
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert [w.text for w in engine] == argv


#: A is set to a value kvlint does not read (8192 in bash): ``${A:-4096}``/``${A-4096}`` is that value, not 4096
UNKNOWN_NOT_UNSET = [
    "A=$(printf 8192); vllm serve m --max-model-len=${A:-4096}",
    "A=`printf 8192`; vllm serve m --max-model-len=${A-4096}",
    'A="$(printf 8192)"; vllm serve m "--max-model-len=${A:-4096}"',
    "read A <<< 8192; vllm serve m --max-model-len=${A:-4096}",
    "for A in 8192; do :; done; vllm serve m --max-model-len=${A:-4096}",
    "export A=$(printf 8192); bash -c 'vllm serve m --max-model-len=${A:-4096}'",
    "A=$(printf 8192); eval 'vllm serve m --max-model-len=${A:-4096}'",
    "f() { vllm serve m --max-model-len=${A:-4096}; }; A=$(printf 8192); f",
    "A=$(printf 8192) bash -c 'vllm serve m --max-model-len=${A:-4096}'",
    "A=$(printf 8192) nohup sh -c 'vllm serve m --max-model-len=${A:-4096}' 2>/dev/null",
]

#: ... and where bash takes the default all the same: kvlint takes it too
UNSET_AFTER_ALL = [
    "A=$(printf 8192); unset A; vllm serve m --max-model-len=${A:-4096}",
    "A=$(printf 8192); A=; vllm serve m --max-model-len=${A:-4096}",
    "(A=$(printf 8192)); vllm serve m --max-model-len=${A:-4096}",
    "A=$(printf 8192); bash -c 'vllm serve m --max-model-len=${A:-4096}'",
    "vllm serve m --max-model-len=${LEN:-4096}",
    "A=$(printf 8192) env -i PATH=\"$PATH\" bash -c 'vllm serve m --max-model-len=${A:-4096}'",
]


def _engine(script: str, env: dict[str, str], unknown: tuple[str, ...] = ()) -> list[tuple[str, bool]]:
    (engine,) = [
        c for c in commands(script, env, [ShellArg("bash")], unknown=unknown) if c and c[0].text == "vllm"
    ]
    return [(w.text, w.unresolved) for w in engine]


@pytest.mark.parametrize("script", UNKNOWN_NOT_UNSET)
def test_a_variable_set_to_an_unknown_value_does_not_take_the_default(script: str, tmp_path: Path) -> None:
    """``A=$(cmd); ... ${A:-4096}``: A is set (bash passes what cmd printed); kvlint dropped A and passed 4096, a
    known-wrong value. The reference is now unresolved, as written."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    assert argv[3] == "--max-model-len=8192"
    words = _engine(script, env)
    assert _agrees(words, argv), (argv, words)
    assert words[3][1] and "4096" in words[3][0], words


@pytest.mark.parametrize("script", UNSET_AFTER_ALL)
def test_a_variable_unset_takes_the_default(script: str, tmp_path: Path) -> None:
    """Unset again, empty, set in a subshell only, not exported to a child, never set: the default, as bash."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    assert [t for t, _u in _engine(script, env)] == argv


@pytest.mark.parametrize("unknown", [("LEN",), ("*",)])
def test_a_container_variable_kvlint_cannot_read_does_not_take_the_default(
    unknown: tuple[str, ...], tmp_path: Path
) -> None:
    """LEN from a Secret (``valueFrom.secretKeyRef``; ``*``: an ``envFrom`` kvlint did not read) is set when the
    container runs: bash passes its value, not the default."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    script = "vllm serve m --max-model-len=${LEN:-4096} --port ${PORT-8000}"
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, {**env, "LEN": "8192"})
    words = _engine(script, env, unknown)
    assert _agrees(words, argv), (argv, words)
    assert words[3] == ("--max-model-len=${LEN:-4096}", True)
    assert words[5] == (("8000", False) if unknown == ("LEN",) else ("${PORT-8000}", True))


_SECRET_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: ["bash", "-c"]
        args: ['vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len=${LEN:-4096}']
        env:
        - {name: LEN, %s}
        resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(
    ("source", "read"),
    [("valueFrom: {secretKeyRef: {name: s, key: k}}", False), ("value: '8192'", True)],
)
def test_the_pipeline_takes_a_secret_variable_as_unknown(source: str, read: bool) -> None:
    """End to end: the container's LEN from a Secret leaves --max-model-len unknown (KV503, vLLM's default
    assumed), where it was sized at the script's default 4096; a literal value is read."""
    result = run_documents(load_text(_SECRET_MANIFEST % source, "d.yaml"), Options(allow_hub=False))
    kv503 = [d.message for d in result.diagnostics if d.rule == "KV503"]
    assert any("${LEN:-4096}" in m for m in kv503) is not read, kv503


#: defaults that are themselves expansions (bash(1) "Parameter Expansion": the word after ``:-`` is expanded)
EXPANDED_DEFAULTS = [
    "vllm serve m --max-model-len=${X:-${D:-8192}}",
    "D=8192; vllm serve m --max-model-len=${X:-${D:-1}}",
    "vllm serve m --max-model-len=${X:-$(printf 8192)}",
    "vllm serve m ${X:-$(printf '%s\\n' --max-model-len 8192)}",
    'vllm serve m "--max-model-len=${X:-"$(printf 8192)"}"',
    "vllm serve m --max-model-len=${X-`printf 8192`}",
    "set --; vllm serve m --max-model-len=${1:-$(printf 8192)}",
]


@pytest.mark.parametrize("script", EXPANDED_DEFAULTS)
def test_a_default_holding_an_expansion_is_not_its_text(script: str, tmp_path: Path) -> None:
    """``${X:-${D:-1}}`` passed the text ``${D:-1}`` (unresolved-looking, read as a variable's value), ``${X:-$(echo
    1)}`` the two words ``$(echo`` and ``1)``: bash expands the default. kvlint leaves the reference unresolved."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    assert "8192" in " ".join(argv[3:])
    words = _engine(script, env)
    assert _agrees(words, argv), (argv, words)
    assert len(words) == 4 and words[3][1], words


@pytest.mark.parametrize(
    "script",
    [
        "X=8192; vllm serve m --max-model-len=${X:-${D:-1}}",
        "X=8192; vllm serve m --max-model-len=${X-$(printf 1)}",
        "vllm serve m --max-model-len=${X:-'$5'}",
        'vllm serve m --max-model-len=${X:-"8 192"}',
    ],
)
def test_a_default_not_taken_or_literal_is_read(script: str, tmp_path: Path) -> None:
    """X set: its value, whatever the default; a single-quoted default is its text (``'$5'`` is $5)."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    assert [t for t, _u in _engine(script, env)] == argv


#: POSIX scripts (dash 0.5.12 runs them as bash does): a variable set to a value kvlint does not read, a default that
#: is an expansion, a variable a builtin assigns
DASH_SCRIPTS = [
    "A=$(printf 8192); vllm serve m --max-model-len=${A:-4096}",
    "read A <<EOF\n8192\nEOF\nvllm serve m --max-model-len=${A:-4096}",
    "A=1; for A in 8192; do :; done; vllm serve m --max-model-len=$A",
    "A=1; read A <<EOF\n8192\nEOF\nvllm serve m --max-model-len=$A",
    "vllm serve m --max-model-len=${X:-${D:-8192}}",
    "vllm serve m --max-model-len=${X-$(printf 8192)}",
]


@pytest.mark.parametrize("script", DASH_SCRIPTS)
def test_under_dash_the_same_values_are_unknown(script: str, tmp_path: Path) -> None:
    """``sh -c`` (dash in Debian and Ubuntu images): dash passes 8192 as bash does; kvlint leaves it unresolved."""
    dash = shutil.which("dash")
    if dash is None or shutil.which("env") is None:
        pytest.skip("no dash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    _bash("true", tmp_path, env)  # (writes the vllm that prints its arguments)
    ran = subprocess.run([dash, "-c", script], env=env, capture_output=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    argv = [a.decode() for a in ran.stdout.partition(b"\1")[0].split(b"\0")[:-1]]
    assert argv[3] == "--max-model-len=8192"
    (engine,) = [c for c in commands(script, env, [ShellArg("sh")], sh=True) if c and c[0].text == "vllm"]
    words = [(w.text, w.unresolved) for w in engine]
    assert _agrees(words, argv), (argv, words)
    assert words[3][1], words
