"""One wrapper table for scripts and exec-form lists (branch tidy49). A wrapper named by its path in a script
(``/usr/bin/env A=1 vllm serve m``) was not read; ``env`` in an exec-form list was KV503 (``["env", "A=1", "vllm",
...]``) and its ``-u NAME`` took NAME for the program (``["/usr/bin/env", "-u", "FOO", "bash", "-c", ...]``);
``tmux new -d 'vllm serve m'`` and ``runuser app -c 'vllm serve m'`` were not read; ``"$0"`` gave an extra empty
word. Each case is run by the real tool where it is installed (a ``vllm`` on ``PATH`` that prints the arguments
it was given and the variable ``VLLM_X``), and the engine command kvlint reads must be the one that ran."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kvlint.engines.command import parse_container
from kvlint.engines.shell import commands
from kvlint.source import LDict

_SHIM = '#!/bin/sh\n{{ printf "%s\\n" vllm "$@"; printf "VLLM_X=%s\\n" "${{VLLM_X-unset}}"; }} > "{out}"\n'


def _shim(tmp_path: Path) -> tuple[dict[str, str], Path]:
    out = tmp_path / "out"
    shim = tmp_path / "bin" / "vllm"
    shim.parent.mkdir()
    shim.write_text(_SHIM.format(out=out))
    shim.chmod(0o755)
    return {"PATH": f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}"}, out


def _ran(out: Path) -> tuple[list[str], str]:
    lines = out.read_text().splitlines()
    return lines[:-1], lines[-1].partition("=")[2]


def _read(script: str, env: dict[str, str]) -> list[list[str]]:
    return [[w.text for w in cmd] for cmd in commands(script, env)]


_BASH = [
    "/usr/bin/env A=1 vllm serve m",
    "/usr/bin/env -u X --unset=Y /usr/bin/nohup vllm serve m",
    "/usr/bin/timeout 1h /usr/bin/stdbuf -oL vllm serve m",
    'bash -c \'"$0" "$@"\' vllm serve m',
    'bash -c \'exec "$0" serve "$1"x\' vllm m',
    "bash -c 'vllm serve \"$1\" $2' _ m ''",
]


@pytest.mark.parametrize("script", _BASH)
def test_a_script_reads_the_command_bash_runs(script: str, tmp_path: Path) -> None:
    bash = shutil.which("bash")
    first = script.split()[0]
    if bash is None or shutil.which(first) is None:
        pytest.skip(f"no {first} here")
    env, out = _shim(tmp_path)
    subprocess.run([bash, "-c", script], env=env, capture_output=True, timeout=60, check=True)
    assert _read(script, env) == [_ran(out)[0]]


_TMUX = [
    "tmux {sock} new -d 'vllm serve m --x \"a b\"'",
    "tmux {sock} new-session -d -s x -- vllm serve 'a b'",
    "tmux {sock} new-session -ds x -n w vllm serve m \\; set -g status off",
    "tmux {sock} -c 'vllm serve m'",
]


@pytest.mark.parametrize("script", _TMUX)
def test_tmux_runs_one_argument_with_the_shell_and_several_as_they_are(script: str, tmp_path: Path) -> None:
    bash, tmux = shutil.which("bash"), shutil.which("tmux")
    if bash is None or tmux is None:
        pytest.skip("no tmux here")
    env, out = _shim(tmp_path)
    # a server of its own (a socket in tmp_path, no configuration file), killed after
    sock = f"-S {tmp_path}/sock -f /dev/null"
    script = script.format(sock=sock)
    try:
        subprocess.run([bash, "-c", script], env=env, capture_output=True, timeout=60, check=False)
        for _ in range(600):  # the session's command runs in the server, after tmux returns
            if out.exists() and out.read_text().endswith("\n") and "VLLM_X=" in out.read_text():
                break
            time.sleep(0.05)
    finally:
        subprocess.run([tmux, "-S", f"{tmp_path}/sock", "kill-server"], capture_output=True, timeout=60)
    assert _read(script, env) == [_ran(out)[0]]


def test_tmux_running_no_session_command_is_tmux_s_own() -> None:
    assert _read("tmux ls", {}) == [["tmux", "ls"]]
    assert _read("tmux new -d", {}) == [["tmux", "new", "-d"]]  # the default shell: no command of its own


_RUNUSER = [
    'runuser root -c \'vllm serve m "$0" "$@"\' a b',
    "runuser -c 'vllm serve m' root",
    "runuser --command='vllm serve m' root",
    "runuser -u root -- vllm serve m --x",
    "runuser -u root vllm serve m",
]


@pytest.mark.parametrize("script", _RUNUSER)
def test_runuser_runs_its_command_or_the_users_shell_with_c(script: str, tmp_path: Path) -> None:
    bash, runuser = shutil.which("bash"), shutil.which("runuser")
    if bash is None or runuser is None or os.geteuid() != 0:
        pytest.skip("no runuser here, or not root")
    env, out = _shim(tmp_path)
    subprocess.run([bash, "-c", script], env=env, capture_output=True, timeout=60, check=True)
    assert _read(script, env) == [_ran(out)[0]]


_LISTS = [
    ["env", "VLLM_X=1", "vllm", "serve", "m"],
    ["/usr/bin/env", "-u", "VLLM_X", "vllm", "serve", "m"],
    ["env", "-i", "PATH={path}", "vllm", "serve", "m"],
    ["env", "-u", "FOO", "VLLM_X=2", "bash", "-c", 'vllm serve "$VLLM_X"'],
    ["/usr/bin/env", "-u", "FOO", "bash", "-c", "vllm serve m"],
    ["tini", "--", "bash", "-c", "vllm serve m"],
    ["nohup", "env", "VLLM_X=3", "bash", "-c", 'exec "$0" serve "$@"', "vllm", "m"],
]


@pytest.mark.parametrize("items", _LISTS, ids=lambda items: " ".join(items))
def test_an_exec_form_list_reads_the_engine_and_environment_the_list_runs(
    items: list[str], tmp_path: Path
) -> None:
    env, out = _shim(tmp_path)
    items = [w.format(path=env["PATH"]) for w in items]
    if shutil.which(items[0], path=env["PATH"]) is None:
        pytest.skip(f"no {items[0]} here")
    # the kubelet runs the list without a shell, with the container's env
    subprocess.run(items, env={**env, "VLLM_X": "c"}, capture_output=True, timeout=60, check=True)
    argv, variable = _ran(out)
    container = LDict(
        {
            "name": "c",
            "image": "vllm/vllm-openai:v0.10.0",
            "command": items,
            "env": [{"name": "VLLM_X", "value": "c"}, {"name": "PATH", "value": env["PATH"]}],
        }
    )
    cfg = parse_container(container)
    assert cfg is not None and not [f.rule for f in cfg.findings if f.rule == "KV503"]
    assert cfg.model is not None and [cfg.model.value] == argv[2:]
    assert cfg.env.get("VLLM_X", "unset") == variable


@pytest.mark.parametrize(
    "argv",
    [
        ["/usr/bin/env", "VLLM_X=1", "vllm", "serve", "m"],
        ["env", "-u", "FOO", "VLLM_X=1", "vllm", "serve", "m"],
        ["nohup", "env", "VLLM_X=1", "vllm", "serve", "m"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_a_typed_command_reads_its_env_wrapper_by_the_same_table(argv: list[str]) -> None:
    # `kvlint plan -- ...`: the assignments of an env behind a path or other wrappers reach the engine's
    # environment (the list reader now strips them: they were refused, or would have been dropped)
    from kvlint.engines.command import parse_command_line

    cfg = parse_command_line(argv)
    assert cfg.model is not None and cfg.model.value == "m"
    assert cfg.env == {"VLLM_X": "1"}
