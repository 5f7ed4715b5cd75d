"""The engine command as the shell runs it (branch shell55).

Each script runs in the real bash and dash with a ``vllm`` on ``PATH`` that records its arguments (as
``tests/test_shell_redirections54.py`` does); kvlint's reading of the same script must agree with what the engine
got, or say that it cannot see it. Offline; a shell the machine lacks is skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.command import parse_container
from kvlint.load import load_text


def _shim(tmp_path: Path) -> dict[str, str]:
    """A ``PATH`` whose ``vllm`` writes its arguments, NUL-separated, to ``$ARGV_OUT``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "vllm"
    shim.write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
    shim.chmod(0o755)
    return {
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "ARGV_OUT": str(tmp_path / "argv"),
    }


def _ran(shell: str, script: str, tmp_path: Path) -> list[str]:
    """The arguments the ``vllm`` of ``script`` gets when ``shell -c script`` runs in ``tmp_path``."""
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} not installed")
    env = _shim(tmp_path)
    out = Path(env["ARGV_OUT"])
    out.unlink(missing_ok=True)
    subprocess.run([path, "-c", script], env=env, cwd=tmp_path, check=False, timeout=60, capture_output=True)
    return out.read_bytes().decode().split("\0")[:-1] if out.exists() else []


def _pod(script: str, shell: str = "bash", image: str = "vllm/vllm-openai:v0.9.1", gpus: int = 1) -> object:
    """The serving config kvlint reads for a Pod running ``script`` with ``shell -c``."""
    quoted = script.replace("'", "''")
    (doc,) = load_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: engine\n"
        f"    image: {image}\n    command: [{shell}, -c]\n    args: ['{quoted}']\n"
        f"    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n",
        "p.yaml",
    ).documents
    cfg = parse_container(doc.data["spec"]["containers"][0])
    assert cfg is not None
    return cfg


# -- 1. an unquoted command substitution among the engine's words --------------------------------------------------

SUBSTITUTIONS = [
    "vllm serve Qwen/Qwen2.5-7B-Instruct $(cat args.txt)",
    "vllm serve Qwen/Qwen2.5-7B-Instruct `cat args.txt`",
    "vllm serve Qwen/Qwen2.5-7B-Instruct $(< args.txt)",
    'ARGS=(--port 8000); ARGS+=($(cat args.txt)); vllm serve Qwen/Qwen2.5-7B-Instruct "${ARGS[@]}"',
]


@pytest.mark.parametrize("script", SUBSTITUTIONS)
def test_a_command_substitution_is_words_kvlint_cannot_see(script: str, tmp_path: Path) -> None:
    """bash splits the output of ``$(cat args.txt)`` into the engine's options (bash(1) "Command Substitution", "Word
    Splitting"): here a tensor-parallel size of 2. kvlint does not run the command, so it must not take the size at
    vLLM's default of 1 (nor call the substitution one unknown word, KV205): the size is unknown (KV503, not sized)."""
    (tmp_path / "args.txt").write_text("--tensor-parallel-size 2 --max-model-len 4096\n")
    got = _ran("bash", script, tmp_path)
    assert "--tensor-parallel-size" in got and "2" in got  # what the engine really received
    cfg = _pod(script)
    assert "tensor_parallel_size" not in cfg.flags and "tensor_parallel_size" in cfg.unresolved  # type: ignore[attr-defined]
    rules = {f.rule for f in cfg.findings}  # type: ignore[attr-defined]
    assert "KV205" not in rules and "KV503" in rules
    why = [f.message for f in cfg.findings if f.rule == "KV503"]  # type: ignore[attr-defined]
    assert any("output of a command" in m for m in why), why


@pytest.mark.parametrize(
    "script,image",
    [
        ("text-generation-launcher --model-id Qwen/Qwen2.5-7B-Instruct $(cat args.txt)",
         "ghcr.io/huggingface/text-generation-inference:2.4.0"),
        ("python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct `cat args.txt`",
         "lmsysorg/sglang:v0.4.6"),
    ],
)  # fmt: skip
def test_a_command_substitution_in_tgi_and_sglang_leaves_the_layout_unknown(script: str, image: str) -> None:
    """TGI and SGLang took the substitution for nothing and sized the container at one shard / tp 1."""
    cfg = _pod(script, "sh", image)
    assert any(f.rule == "KV503" for f in cfg.findings)  # type: ignore[attr-defined]
    assert not ({"num_shard", "tp_size"} & set(cfg.flags))  # type: ignore[attr-defined]
    assert {"num_shard", "tp_size"} & set(cfg.unresolved)  # type: ignore[attr-defined]


def test_an_arithmetic_substitution_is_one_number_not_unseen_words(tmp_path: Path) -> None:
    """``$((...))`` is one number, never options: not read as unseen words (the engine gets a stray positional)."""
    got = _ran("bash", "N=3; vllm serve Qwen/Qwen2.5-7B-Instruct $((N))", tmp_path)
    assert got == ["serve", "Qwen/Qwen2.5-7B-Instruct", "3"]
    cfg = _pod("vllm serve Qwen/Qwen2.5-7B-Instruct $((N+1))")
    assert "tensor_parallel_size" not in cfg.unresolved  # type: ignore[attr-defined]

