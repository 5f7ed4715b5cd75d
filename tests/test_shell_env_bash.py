"""The environment a ``sh -c`` script gives the engine (:attr:`kvlint.engines.shell.ShellCommand.environ`, which
becomes ``ServingConfig.env``) against bash itself: each script runs in bash with a ``vllm`` on ``PATH`` that prints
its environment (``env``), and the environment kvlint reads for that command must be the one printed. Prefix
assignments reach that command only, ``export``/``declare -x`` later commands, a plain ``NAME=value`` of a variable
the shell did not inherit or export reaches none, ``unset``/``export -n``/``env -u``/``env -i``/``exec -c`` take
variables out. Offline; bash and coreutils' env only (skipped without them)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.command import parse_container
from kvlint.engines.shell import commands
from kvlint.load import load_text

SCRIPTS = [
    "VLLM_USE_V1=0 vllm serve m",
    "env VLLM_USE_V1=0 vllm serve m",
    "/usr/bin/env A=1 vllm serve m",
    "export VLLM_USE_V1=0; vllm serve m",
    "export VLLM_USE_V1=0 A B=2\nvllm serve m",
    "env -u X vllm serve m",
    "env -i PATH=$PATH A=1 vllm serve m",
    "env --unset=X -u VLLM_USE_V1 vllm serve m",
    "A=1; vllm serve m",
    "VLLM_USE_V1=0; vllm serve m",
    "A=1 true; vllm serve m",
    "A=1; export A; vllm serve m",
    "export A; A=5; vllm serve m",
    "unset X; vllm serve m",
    "unset -v X VLLM_USE_V1; X=2; vllm serve m",
    "export -n X; vllm serve m",
    "declare -x B=2; vllm serve m",
    "declare +x X=2; vllm serve m",
    "typeset -rx R=1; vllm serve m",
    "readonly R=1; vllm serve m",
    "A=1 exec -c vllm serve m",
    "A=1 exec vllm serve m",
    "A=1 nohup vllm serve m",
    "A=1 env -u A B=2 vllm serve m",
    "A=1 eval 'vllm serve m'",
    "export Z=3; bash -c 'vllm serve m'",
    "Z=3 bash -c 'export Q=1; unset X; vllm serve m'",
    "Z=3; bash -c 'Y=1; vllm serve m'",
    "if true; then VLLM_USE_V1=0 vllm serve m; fi",
    "A=$(echo 1); export B=$(echo 2); vllm serve m",
]

#: what bash and the shim add of their own (the shell level, the working directory, the last argument)
_SHELL_OWN = ("SHLVL", "PWD", "OLDPWD", "_")


def _ran(script: str, tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    shim = tmp_path / "vllm"
    shim.write_text(f"#!/bin/sh\nexec {shutil.which('env')} -0\n")
    shim.chmod(0o755)
    ran = subprocess.run(
        [shutil.which("bash") or "bash", "-c", script], env=env, capture_output=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr
    pairs = [p.decode() for p in ran.stdout.split(b"\0") if p]
    return {k: v for k, _, v in (p.partition("=") for p in pairs) if k not in _SHELL_OWN}


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_engine_gets_the_environment_bash_gives_it(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "VLLM_USE_V1": "1", "X": "x"}
    real = _ran(script, tmp_path, env)
    engine = [c for c in commands(script, env) if c and c[0].text == "vllm"]
    assert len(engine) == 1
    assert engine[0].environ is not None
    read = {k: v for k, v in engine[0].environ.get()[0].items() if k not in _SHELL_OWN}
    # a command substitution's output is unknown: kvlint leaves the variable out rather than guess it
    assert read == {k: v for k, v in real.items() if not (k in ("A", "B") and "$(" in script)}


def _container(script: str) -> dict:
    return {
        "name": "engine",
        "image": "vllm/vllm-openai:v0.8.5",
        "command": ["/bin/sh", "-c", script],
        "env": [{"name": "VLLM_USE_V1", "value": "1"}, {"name": "X", "value": "x"}],
    }


@pytest.mark.parametrize(
    ("script", "v1"),
    [
        ("VLLM_USE_V1=0 vllm serve m", "0"),
        ("env VLLM_USE_V1=0 vllm serve m", "0"),
        ("export VLLM_USE_V1=0\nexec vllm serve m", "0"),
        ("VLLM_USE_V1=0; vllm serve m", "0"),  # inherited, so exported: bash passes the new value on
        ("VLLM_USE_V1=0 true; vllm serve m", "1"),  # that command's only
        ("env -u VLLM_USE_V1 vllm serve m", None),
        ("unset VLLM_USE_V1; vllm serve m", None),
    ],
)
def test_the_serving_config_reads_the_environment_the_script_gives_the_engine(
    script: str, v1: str | None
) -> None:
    cfg = parse_container(_container(script))
    assert cfg is not None and not isinstance(cfg, list)
    assert cfg.env.get("VLLM_USE_V1") == v1
    assert cfg.env.get("X") == "x"


def test_a_variable_the_script_sets_is_located_at_its_assignment(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: engine\n"
        "    image: vllm/vllm-openai:v0.8.5\n    env: [{name: VLLM_USE_V1, value: '1'}]\n"
        "    command:\n    - /bin/sh\n    - -c\n    - |\n      set -e\n      export VLLM_USE_V1=0\n"
        "      exec vllm serve m\n"
    )
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    (doc,) = load_text(text, str(path)).documents
    cfg = parse_container(doc.data["spec"]["containers"][0])
    assert cfg is not None and not isinstance(cfg, list)
    loc = cfg.env_locs["VLLM_USE_V1"]
    assert cfg.env["VLLM_USE_V1"] == "0" and loc is not None
    line = text.splitlines()[loc.line - 1]
    assert line[loc.column - 1 :].startswith("VLLM_USE_V1=0")


def test_thousands_of_exports_and_nested_shells_stay_bounded() -> None:
    script = "".join(f"export A{i}={i}\n" for i in range(3000)) + "sh -c 'B=1; :'\n" * 3000 + "vllm serve m\n"
    engine = [c for c in commands(script, {"PATH": "/bin"}) if c and c[0].text == "vllm"]
    env = engine[0].environ.get()[0]  # type: ignore[union-attr]
    assert env["A2999"] == "2999" and len(env) == 3001
