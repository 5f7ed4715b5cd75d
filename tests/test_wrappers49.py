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
    "tmux {sock} new -d -e M=q 'vllm serve $M'",
    "tmux {sock} new -d -eM=q -- 'vllm serve \"$M\"'",
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


class _Counting(list):  # type: ignore[type-arg]
    """A script's words that count how often they are read."""

    reads = 0

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        type(self).reads += 1
        return super().__getitem__(i)


def _script_reads(n: int) -> int:
    # the words `tmux new tmux new ... vllm serve m` stepped over as commands() steps over them
    from kvlint.engines.shell import ShellArg, wrapper_step

    _Counting.reads = 0
    words = _Counting(ShellArg(t) for t in ["tmux", "new"] * n + ["vllm", "serve", "m"])
    h, end = 0, len(words)
    while h < end and list.__getitem__(words, h).text == "tmux":
        step = wrapper_step(words, h, end, "tmux")
        assert step is not None and step.script is None
        h, end = step.after, step.end
    assert list.__getitem__(words, h).text == "vllm" and end == len(words)
    return _Counting.reads


def _list_reads(n: int, monkeypatch: pytest.MonkeyPatch) -> int:
    from kvlint.engines import shell

    count = [0]
    get = shell._ListWords.__getitem__

    def counted(self: shell._ListWords, i: int) -> object:
        count[0] += 1
        return get(self, i)

    monkeypatch.setattr(shell._ListWords, "__getitem__", counted)
    items = ["tmux", "new"] * n + ["vllm", "serve", "m"]
    cfg = parse_container(LDict({"name": "c", "image": "vllm/vllm-openai:v0.10.0", "command": items}))
    assert cfg is not None and cfg.model is not None and cfg.model.value == "m"
    return count[0]


def test_nested_tmux_reads_each_word_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    # each tmux looked for the `;` ending its command from its own words to the end: `tmux new` nested 2,000 times
    # in an exec-form list took 11 s (4,000 in a script 9 s), quadratic in the words; a 1.5 MB object holds far more
    assert _script_reads(800) < 2.5 * _script_reads(400)
    assert _list_reads(800, monkeypatch) < 2.5 * _list_reads(400, monkeypatch)


_LOGINS = ["-l", "-", "--login", "-l -w VLLM_X", "--whitelist-environment=A,VLLM_X -l", ""]


def _runuser_or_skip() -> str:
    runuser = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
    if runuser is None or os.geteuid() != 0:
        pytest.skip("no runuser here, or not root")
    return runuser


@pytest.mark.parametrize("login", _LOGINS)
def test_runuser_login_gives_the_script_a_login_environment(login: str, tmp_path: Path) -> None:
    # util-linux su-common.c modify_environment: -l, --login or a lone - clears the environment but TERM and the
    # -w names (then HOME, SHELL, USER, LOGNAME, PATH of the user); the container's VLLM_X was read into the script
    runuser = _runuser_or_skip()
    env, out = _shim(tmp_path)
    shim = str(tmp_path / "bin" / "vllm")
    user = "- root" if login == "-" else f"{login} root"
    script = f"{runuser} {user} -c 'exec {shim} serve \"${{VLLM_X-unset}}\"'"
    subprocess.run(
        ["bash", "-c", script], env={**env, "VLLM_X": "c"}, capture_output=True, timeout=60, check=True
    )
    argv, variable = _ran(out)
    (read,) = _read(script, {**env, "VLLM_X": "c"})
    assert read[1:] == argv[1:]
    items = [runuser, *user.split(), "-c", f"exec {shim} serve m"]
    container = LDict(
        {
            "name": "c",
            "image": "vllm/vllm-openai:v0.10.0",
            "command": items,
            "env": [{"name": "VLLM_X", "value": "c"}, {"name": "PATH", "value": env["PATH"]}],
        }
    )
    subprocess.run(items, env={**env, "VLLM_X": "c"}, capture_output=True, timeout=60, check=True)
    argv, variable = _ran(out)
    cfg = parse_container(container)
    assert cfg is not None and cfg.model is not None and [cfg.model.value] == argv[2:]
    assert cfg.env.get("VLLM_X", "unset") == variable


@pytest.mark.parametrize(
    "options", ["-u root -l --", "-u root -c 'vllm serve m' --", "-s /bin/sh -u root --"]
)
def test_runuser_refuses_user_with_a_shell_option(options: str, tmp_path: Path) -> None:
    # "options --{shell,fast,command,session-command,login} and --user are mutually exclusive": nothing runs
    runuser = _runuser_or_skip()
    env, out = _shim(tmp_path)
    script = f"{runuser} {options} vllm serve m"
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, timeout=60, check=False)
    assert done.returncode != 0 and not out.exists()
    assert _read(script, env) == []


@pytest.mark.parametrize(
    "items",
    [
        ["new", "-d", "-e", "VLLM_X=5", "vllm", "serve", "m"],
        ["new", "-d", "-eVLLM_X=6", "vllm serve m"],
        ["new", "-d", "-e", "VLLM_X=7", "-e", "A=1", "--", "bash", "-c", "exec vllm serve m"],
    ],
    ids=lambda items: " ".join(items),
)
def test_tmux_new_e_sets_the_environment_its_command_runs_with(items: list[str], tmp_path: Path) -> None:
    # tmux 3.2+ new-session -e VARIABLE=value: the session's command runs with it (the container's VLLM_X was read)
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("no tmux here")
    env, out = _shim(tmp_path)
    argv = [tmux, "-S", f"{tmp_path}/sock", "-f", "/dev/null", *items]
    try:
        subprocess.run(argv, env={**env, "VLLM_X": "c"}, capture_output=True, timeout=60, check=True)
        for _ in range(600):  # the session's command runs in the server, after tmux returns
            if out.exists() and "VLLM_X=" in out.read_text():
                break
            time.sleep(0.05)
    finally:
        subprocess.run([tmux, "-S", f"{tmp_path}/sock", "kill-server"], capture_output=True, timeout=60)
    ran, variable = _ran(out)
    container = LDict(
        {
            "name": "c",
            "image": "vllm/vllm-openai:v0.10.0",
            "command": argv,
            "env": [{"name": "VLLM_X", "value": "c"}, {"name": "PATH", "value": env["PATH"]}],
        }
    )
    cfg = parse_container(container)
    assert cfg is not None and cfg.model is not None and [cfg.model.value] == ran[2:]
    assert cfg.env.get("VLLM_X", "unset") == variable
