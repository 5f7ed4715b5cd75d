"""A ``<...>`` placeholder to fill in by hand inside a container's script (branch shell54).

deanlorenz/llm-d-workload-variant-autoscaler ``hack/vllm-benchmark-deployment.yaml`` (fixtures/collected) runs
``vllm serve <model-id> --trust-remote-code ...`` in ``bash -c``. bash reads ``<model-id`` as input from a file
``model-id`` and ``>`` as output to the next word (POSIX XCU 2.7 "Redirection"), and stops before running vLLM
("model-id: No such file or directory"). kvlint dropped both as redirections, with the ``--trust-remote-code`` the
``>`` took, and said "the vLLM command names no model: vLLM would start its built-in default model". It now keeps
the placeholder as the word the author meant (KV502 then names it as a placeholder) and says, as a KV503 warning,
that the command as written fails. The shells decide: each script runs in bash and dash with a ``vllm`` that records
its arguments."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.shell import commands
from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = (
    ROOT
    / "fixtures"
    / "collected"
    / "deanlorenz__llm-d-workload-variant-autoscaler__hack__vllm-benchmark-deployment.yaml"
)

SCRIPTS = [
    ("vllm serve <model-id> \\\n  --trust-remote-code \\\n  --port 8000", "<model-id>"),
    ("vllm serve m --served-model-name <name> --port 8000", "<name>"),
    ("vllm serve <org/model>", "<org/model>"),
    # a redirection after the placeholder: `>` then a redirection operator, a syntax error in both shells (review54D)
    ("vllm serve <model-id> 2>&1 | tee log", "<model-id>"),
    ("vllm serve <org/model-name> >log 2>&1", "<org/model-name>"),
    ("vllm serve <model-id> <in.txt", "<model-id>"),
    # real redirections: no placeholder
    ("vllm serve m <in.txt>>out.log", ""),
    ("vllm serve m <in.txt >out.log --port 8000", ""),
    ("vllm serve m --port 8000 < in.txt > out.log", ""),
    ("vllm serve m <in.txt> out.log", ""),
    ("vllm serve m --port 8000 <in.txt>out.log", ""),
]


def _ran(shell: str, script: str, tmp_path: Path) -> list[str] | None:
    shim = tmp_path / "bin" / "vllm"
    shim.parent.mkdir(exist_ok=True)
    shim.write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
    shim.chmod(0o755)
    (tmp_path / "in.txt").write_text("")
    out = tmp_path / "argv"
    out.unlink(missing_ok=True)
    env = {"PATH": f"{shim.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}", "ARGV_OUT": str(out)}
    subprocess.run([shell, "-c", script], env=env, cwd=tmp_path, check=False, timeout=60, capture_output=True)
    return out.read_bytes().decode().split("\0")[:-1] if out.exists() else None


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize(("script", "placeholder"), SCRIPTS)
def test_a_placeholder_is_told_apart_from_a_redirection(
    shell: str, script: str, placeholder: str, tmp_path: Path
) -> None:
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} not installed")
    (command,) = [c for c in commands(script, {}, sh=shell == "dash") if c and c[0].text == "vllm"]
    ran = _ran(path, script, tmp_path)
    assert command.fill_in == placeholder
    if placeholder:
        assert ran is None  # the shell stops at the redirection: vLLM never starts
        assert placeholder in [w.text for w in command]
    else:
        assert [w.text for w in command[1:]] == ran


def test_the_collected_manifest_says_the_command_fails_and_names_the_placeholder() -> None:
    res = run_check([str(FIXTURE)], Options(allow_hub=False))
    messages = [(d.rule, d.severity, d.message) for d in res.diagnostics]
    assert not [m for _, _, m in messages if "built-in default model" in m]
    (note,) = [(s, m) for r, s, m in messages if r == "KV503" and "<model-id>" in m]
    assert note[0] == "warning" and "fails before vLLM starts" in note[1]
    assert [m for r, _, m in messages if r == "KV502" and "placeholder <model-id>" in m]
    (cr,) = res.containers
    # the words after the placeholder are read: --trust-remote-code was the `>`'s target
    assert cr.serving.get("trust_remote_code") is True


@pytest.mark.parametrize("placeholder", ["<org/model>", "<your-org/your-model-name>", "<model-id>"])
def test_kv502_names_a_placeholder_that_spans_the_model_path(tmp_path: Path, placeholder: str) -> None:
    """A hub id to fill in by hand holds a ``/`` (``<org/model>``): the placeholder is the whole id, not two path
    components ``<org`` and ``model>``; KV502 said "no config.json for model '<org/model>'" and counted it as a
    model unknown, where ``<model-id>`` is a placeholder (review54D)."""
    path = tmp_path / "deploy.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: server\n          image: vllm/vllm-openai:v0.10.1\n"
        f'          command: [bash, -c, "vllm serve {placeholder} --port 8000"]\n'
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    res = run_check([str(path)], Options(allow_hub=False))
    (kv502,) = [d for d in res.diagnostics if d.rule == "KV502"]
    assert f"holds the placeholder {placeholder}" in kv502.message, kv502.message
