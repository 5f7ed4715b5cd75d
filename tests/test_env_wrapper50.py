"""``env`` as a wrapper program, against the real ``env`` (GNU coreutils) and bash: an exec-form list that runs ``env
-S STRING`` runs STRING's words (was KV503 "not a recognised engine command"); a wrapper program that looks the
engine up in an environment without ``PATH`` (``env -i``, ``env -u PATH``) searches only ``/bin:/usr/bin`` and fails
with status 127 (was read as serving). Offline; skipped without bash or env."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.command import parse_container
from kvlint.engines.shell import commands, list_env_split

LISTS = [
    ["env", "-S", "vllm serve m --max-model-len 4096"],
    ["env", "-S", "vllm serve", "m", "--max-model-len", "4096"],
    ["env", "-SA=1 vllm serve m"],
    ["env", "--split-string=vllm serve 'm n'", "x"],
    ["env", "-u", "X", "-S", "-u Y vllm serve m", "z"],
    ["nohup", "env", "-S", "vllm serve m"],
]


def _shim(tmp_path: Path) -> dict[str, str]:
    shim = tmp_path / "vllm"
    shim.write_text("#!/bin/sh\nprintf '%s\\0' vllm \"$@\"\n")
    shim.chmod(0o755)
    return {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.mark.parametrize("argv", LISTS)
def test_an_exec_form_env_split_string_runs_the_words_env_runs(argv: list[str], tmp_path: Path) -> None:
    if shutil.which(argv[0]) is None or shutil.which("env") is None:
        pytest.skip("no env here")
    env = _shim(tmp_path)
    ran = subprocess.run(
        [shutil.which(argv[0]) or argv[0], *argv[1:]], env=env, capture_output=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr
    real = [a.decode() for a in ran.stdout.split(b"\0")[:-1]]
    split = list_env_split(argv)
    assert split is not None
    texts = [t for t, _k in split]
    assert texts[texts.index("vllm") :] == real
    # each word of the string points at the list item holding it
    assert all(argv[k] == t or t in argv[k] or argv[k].startswith("-") for t, k in split)


def test_an_exec_form_env_split_string_is_read_as_the_engine_it_runs() -> None:
    cfg = parse_container(
        {
            "name": "e",
            "image": "vllm/vllm-openai:v0.8.5",
            "command": ["env", "-S", "vllm serve m --max-model-len 4096"],
        }
    )
    assert cfg is not None and not isinstance(cfg, list)
    assert cfg.model is not None and cfg.model.value == "m"
    assert not [f for f in cfg.findings if f.rule == "KV503"]
    assert cfg.flags["max_model_len"].value == 4096


#: scripts whose ``vllm`` a wrapper program looks up without PATH (True) or with it (False)
NO_PATH = [
    ("env -i vllm serve m", True),
    ("env -u PATH vllm serve m", True),
    ("env -iu X vllm serve m", True),
    ("env -i A=1 nohup vllm serve m", True),
    ("exec -c nohup vllm serve m", True),
    ("env -i PATH=$PATH vllm serve m", False),
    ("env -u PATH PATH=$PATH vllm serve m", False),
    ("exec -c vllm serve m", False),  # bash looks it up with its own PATH, then clears the environment
    ("env -u X vllm serve m", False),
    ("A=1 vllm serve m", False),
]


@pytest.mark.parametrize(("script", "gone"), NO_PATH)
def test_a_wrapper_without_path_looks_the_engine_up_where_bash_and_env_do(
    script: str, gone: bool, tmp_path: Path
) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = _shim(tmp_path)  # the shim is outside /bin:/usr/bin, as vllm is in the images (/usr/local/bin)
    ran = subprocess.run(
        [shutil.which("bash") or "bash", "-c", script], env=env, capture_output=True, timeout=60
    )
    assert ran.returncode == (127 if gone else 0), ran.stderr
    (engine,) = [c for c in commands(script, env) if c and c[0].text == "vllm"]
    assert engine.no_path is gone


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (["env", "-i", "vllm", "serve", "m"], True),
        (["/usr/bin/env", "-u", "PATH", "nohup", "vllm", "serve", "m"], True),
        (["sh", "-c", "env -i vllm serve m"], True),
        (["sh", "-c", "exec env -i text-generation-launcher --model-id m"], True),
        (["env", "-i", "PATH=/usr/local/bin:/usr/bin", "vllm", "serve", "m"], False),
        (["env", "-i", "/usr/local/bin/vllm", "serve", "m"], False),
        (
            ["sh", "-c", "env -i bash -c 'vllm serve m'"],
            False,
        ),  # bash sets a default PATH with /usr/local/bin
        (["env", "-i", "python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], False),
        # sudo looks the command up in its secure_path (Ubuntu's and Debian's sudoers hold /usr/local/bin)
        (["env", "-i", "sudo", "-u", "app", "vllm", "serve", "m"], False),
        (["env", "-u", "PATH", "sudo", "nohup", "vllm", "serve", "m"], False),
        (["sh", "-c", "env -i sudo -E vllm serve m"], False),
        (["sh", "-c", "env -i sudo env -i vllm serve m"], True),
        # dumb-init is linked against musl (Yelp/dumb-init#46), whose execvp searches /usr/local/bin without PATH
        (["env", "-i", "/usr/bin/dumb-init", "--", "vllm", "serve", "m"], False),
        (["sh", "-c", "env -i dumb-init -- vllm serve m"], False),
        (["env", "-u", "PATH", "dumb-init", "-r", "15:2", "vllm", "serve", "m"], False),
        # the lookup is the last wrapper's: env's (glibc) after dumb-init, dumb-init's after env
        (["env", "-i", "dumb-init", "--", "env", "vllm", "serve", "m"], True),
        (["sh", "-c", "env -i dumb-init env nohup vllm serve m"], True),
        (["sh", "-c", "dumb-init env -i dumb-init vllm serve m"], False),
    ],
)
def test_an_engine_env_cannot_find_is_a_kv503_error(command: list[str], error: bool) -> None:
    cfg = parse_container({"name": "e", "image": "vllm/vllm-openai:v0.8.5", "command": command})
    assert cfg is not None and not isinstance(cfg, list)
    kv503 = [f for f in cfg.findings if f.rule == "KV503"]
    if error:
        assert kv503 and kv503[0].severity == "error" and "/bin:/usr/bin" in kv503[0].message
        assert cfg.model is None
    else:
        assert not kv503 and cfg.model is not None


#: env -S strings with ${NAME} (env.c build_argv: the value of NAME in env's environment, before its -u/-i, not
#: split; not inside single quotes)
VARIABLE_STRINGS = [
    'vllm serve ${MODEL} --x "${B}" y${MODEL}',
    "vllm serve '${MODEL}' ${MODEL}",
    "-u MODEL vllm serve ${MODEL}",
]


@pytest.mark.parametrize("string", VARIABLE_STRINGS)
def test_env_split_string_expands_variables_as_env_does(string: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {**_shim(tmp_path), "MODEL": "m n", "B": 'x"y'}
    argv = ["env", "-S", string]
    ran = subprocess.run([shutil.which("env") or "env", *argv[1:]], env=env, capture_output=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    real = [a.decode() for a in ran.stdout.split(b"\0")[:-1]]
    split = list_env_split(argv, env)
    assert split is not None
    texts = [t for t, _k in split]
    assert texts[texts.index("vllm") :] == real
    # in a script, as bash runs env
    script = "env -S '" + string.replace("'", "'\"'\"'") + "'"
    ran = subprocess.run(
        [shutil.which("bash") or "bash", "-c", script], env=env, capture_output=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    (engine,) = [c for c in commands(script, env) if c and c[0].text == "vllm"]
    assert [w.text for w in engine] == [a.decode() for a in ran.stdout.split(b"\0")[:-1]]


SU = [
    'su root -c \'vllm serve m "$0" "$@"\' a b',
    "su -c 'vllm serve m' root",
    "su --command='vllm serve m' root",
    "su -p root -c 'vllm serve m $X'",
]


@pytest.mark.parametrize("script", SU)
def test_su_runs_its_c_command_with_the_users_shell_as_runuser_does(script: str, tmp_path: Path) -> None:
    """util-linux su is runuser's su-common.c (same options, ``-u`` refused): ``su app -c 'vllm serve m'`` was read as
    the command `su`, not the engine it runs."""
    bash, su = shutil.which("bash"), shutil.which("su")
    if bash is None or su is None or os.geteuid() != 0:
        pytest.skip("no su here, or not root")
    env = {**_shim(tmp_path), "X": "x"}
    ran = subprocess.run([bash, "-c", script], env=env, capture_output=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    real = [a.decode() for a in ran.stdout.split(b"\0")[:-1]]
    (engine,) = [c for c in commands(script, env) if c and c[0].text == "vllm"]
    assert [w.text for w in engine] == real


def test_su_refuses_u_and_runs_nothing() -> None:
    assert [[w.text for w in c] for c in commands("su -u app vllm serve m", {})] == []
