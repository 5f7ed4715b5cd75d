"""A bare ``$ARGS`` in an engine command judged by what the command's reading knows: a variable the script sets
from a command (``ARGS=$(cat /etc/vllm/args)``, the shape of a script reading its options from a mounted file, as
``NEURON_CONFIG=$(cat /config/...json)`` in fixtures/collected/manu-joy__rosa-llm-driven-deployment__...yaml) may
hold any words, where the container's env alone said it was unset; an ``envFrom`` ConfigMap kvlint read defines only
its keys, where any ``envFrom`` counted as possibly setting every name. Checked against bash itself (the harness of
tests/test_shell_state50.py: a ``vllm`` on ``PATH`` that prints its arguments)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from kvlint.engines.shell import commands
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shell_state50 import _bash  # noqa: E402

_MODEL = "Qwen/Qwen2.5-7B-Instruct"

_MANIFEST = """\
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
        args: [%s]
        resources: {limits: {nvidia.com/gpu: 4}}
%s"""

#: a ConfigMap among the inputs that the container's envFrom names (its keys are all it defines)
_CONFIGMAP = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: engine}
data:
  HF_HOME: /models/hf
%s"""

_ENV_FROM = "        envFrom: [{configMapRef: {name: engine}}]\n"


def _findings(script: str, container: str = "", extra: str = "") -> dict[str, list[str]]:
    text = _MANIFEST % (json.dumps(script), container) + extra
    out: dict[str, list[str]] = {}
    for d in run_documents(load_text(text, "d.yaml"), Options(allow_hub=False)).diagnostics:
        out.setdefault(d.rule, []).append(f"{d.severity}: {d.message}")
    return out


def _need_bash() -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")


@pytest.mark.parametrize(
    "script",
    [
        f"ARGS=$(cat @ARGS_FILE@); vllm serve {_MODEL} $ARGS",
        f"read -r ARGS < @ARGS_FILE@; vllm serve {_MODEL} $ARGS",
        f'ARGS="$(cat @ARGS_FILE@)"; exec vllm serve {_MODEL} ${{ARGS}}',
    ],
)
def test_a_variable_the_script_sets_from_a_file_may_hold_the_engine_options(
    script: str, tmp_path: Path
) -> None:
    """bash passes the file's words to vLLM (four here: the tensor-parallel size and the context), so the
    settings are not taken at vLLM's defaults: no KV403 "tensor-parallel-size 1 uses only 1" nor KV202 "no
    --max-model-len" on 4 GPUs (both were given: the script's ARGS was read as unset), and the KV503 warning says
    the script sets it."""
    _need_bash()
    args = tmp_path / "args"
    args.write_text("--tensor-parallel-size 4 --max-model-len 8192\n")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script.replace("@ARGS_FILE@", str(args)), tmp_path, env)
    assert argv[3:] == ["--tensor-parallel-size", "4", "--max-model-len", "8192"], argv
    got = _findings(script.replace("@ARGS_FILE@", "/etc/vllm/args"))
    assert "KV403" not in got and "KV202" not in got, got
    (msg,) = got["KV503"]
    assert msg.startswith("warning: the vLLM command's arguments are not all known"), msg
    assert "the script sets ARGS to a value kvlint does not read" in msg and "not sized" in msg, msg


def test_the_shell_reading_says_which_referenced_variables_may_be_set() -> None:
    """:attr:`ShellCommand.maybe_set`: the names the command's unresolved words reference that the shell holds as set
    to an unknown value (the script's ``$(...)``, a container env name given as unknown, ``*`` for any name), not
    those merely unset."""
    script = "A=$(cat /f); B=1; vllm serve m $A $B $C ${D}"
    (engine,) = [c for c in commands(script, {}) if c and c[0].text == "vllm"]
    assert engine.maybe_set == {"A"}
    (engine,) = [c for c in commands(script, {}, unknown=("D",)) if c and c[0].text == "vllm"]
    assert engine.maybe_set == {"A", "D"}
    (engine,) = [c for c in commands(script, {}, unknown=("*",)) if c and c[0].text == "vllm"]
    assert "*" in engine.maybe_set
    # a later literal assignment makes the name known again: bash expands it (the word is resolved)
    (engine,) = [c for c in commands("A=$(cat /f); A=--x; vllm serve m $A", {}) if c and c[0].text == "vllm"]
    assert engine.maybe_set == frozenset() and engine[-1].text == "--x"


def test_an_envfrom_configmap_kvlint_read_defines_only_its_keys(tmp_path: Path) -> None:
    """``envFrom`` a ConfigMap among the inputs that has no ARGS key: the kubelet sets only its keys, so bash expands
    ``$ARGS`` to nothing and vLLM runs at its defaults: KV403 and KV202 stand, an info says what was assumed (any
    envFrom counted as setting ARGS: a KV503 warning and the container not sized)."""
    _need_bash()
    script = f"vllm serve {_MODEL} $ARGS"
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "HF_HOME": "/models/hf"}
    argv, _environ = _bash(script, tmp_path, env)
    assert argv == ["vllm", "serve", _MODEL]
    got = _findings(script, _ENV_FROM, _CONFIGMAP % "")
    assert "KV403" in got and "KV202" in got, got
    (msg,) = got["KV503"]
    assert msg.startswith("info: $ARGS expands to arguments kvlint cannot see (not set"), msg
    # the ConfigMap's own ARGS is read, and bash splits it into the engine's options: TP 4 on 4 GPUs
    got = _findings(script, _ENV_FROM, _CONFIGMAP % "  ARGS: --tensor-parallel-size 4 --max-model-len 8192\n")
    assert "KV403" not in got and "KV202" not in got and "KV503" not in got, got
    # a ConfigMap not among the inputs may set any name: not the defaults
    got = _findings(script, _ENV_FROM)
    assert "KV403" not in got and "KV202" not in got, got
    assert any("it may come from the container's envFrom" in m for m in got["KV503"]), got


@pytest.mark.parametrize(
    ("script", "read_as_default"),
    [
        # the outer shell puts A's value (the file's) into the nested script: not the default
        ('A=$(cat @ARGS_FILE@); sh -c "vllm serve m --max-model-len ${A:-4096}"', False),
        # passed as written, and A not exported: unset in the nested shell, which takes the default
        ("A=$(cat @ARGS_FILE@); sh -c 'vllm serve m --max-model-len ${A:-4096}'", True),
    ],
)
def test_a_value_the_outer_script_does_not_know_stays_unknown_in_a_nested_script(
    script: str, read_as_default: bool, tmp_path: Path
) -> None:
    """``sh -c "... ${A:-4096}"`` after ``A=$(cat f)``: the outer shell expands the reference before the nested
    shell runs, so vLLM gets the file's value (8192 here), not 4096, which kvlint read there (the nested reading took
    A as unset); a single-quoted script gets the default, as bash gives it."""
    _need_bash()
    args = tmp_path / "args"
    args.write_text("8192\n")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script.replace("@ARGS_FILE@", str(args)), tmp_path, env)
    assert argv[-1] == ("4096" if read_as_default else "8192"), argv
    (engine,) = [c for c in commands(script.replace("@ARGS_FILE@", "/f"), {}) if c and c[0].text == "vllm"]
    last = engine[-1]
    assert (last.text == "4096" and not last.unresolved) is read_as_default, (last.text, last.unresolved)


def test_a_bare_word_the_outer_script_sets_from_a_file_is_not_unset_in_a_nested_script(
    tmp_path: Path,
) -> None:
    """``ARGS=$(cat f); sh -c "vllm serve M $ARGS"``: bash gives vLLM the file's words through the nested shell; the
    container is not taken at vLLM's defaults (KV403 and KV202 were given: the nested reading took ARGS as unset)."""
    _need_bash()
    args = tmp_path / "args"
    args.write_text("--tensor-parallel-size 4 --max-model-len 8192\n")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    script = f'ARGS=$(cat @ARGS_FILE@); sh -c "vllm serve {_MODEL} $ARGS"'
    argv, _environ = _bash(script.replace("@ARGS_FILE@", str(args)), tmp_path, env)
    assert argv[3:] == ["--tensor-parallel-size", "4", "--max-model-len", "8192"], argv
    got = _findings(script.replace("@ARGS_FILE@", "/etc/vllm/args"))
    assert "KV403" not in got and "KV202" not in got, got
    assert any("arguments are not all known" in m for m in got["KV503"]), got
