"""uv's runners in front of the engine (branch shell54): ``uvx [OPTIONS] COMMAND``, ``uv tool run``, ``uv run``.

vLLM's quickstart (vllm-project/vllm ``docs/getting_started/quickstart.md``, docs.vllm.ai) runs vLLM with ``uv run
--with vllm vllm ...``; launch scripts pin it with ``uvx --from vllm==0.19.1 vllm serve $MODEL_PATH ...`` or run
``nohup env CUDA_VISIBLE_DEVICES=3 uvx --from vllm==0.15.0 vllm serve ...`` in the background. kvlint did not know
the runner: "the shell script starts no engine directly; the container runs `uvx --from vllm==0.10.1 ...`, not a
recognised engine command", the container unread. The runner's options are read as uv's CLI declares them
(astral-sh/uv@26a9dd4b ``crates/uv-cli/src/lib.rs``: ``ToolRunArgs``, ``RunArgs``, ``GlobalArgs``), the engine
after them, and the release it runs is the one the runner installs (``--from``/``--with`` requirements,
``COMMAND@VERSION``), not the image's, as a script's ``pip install vllm==X`` is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

OFF = Options(allow_hub=False)
IMAGE = "vllm/vllm-openai:v0.9.2"


def _run(tmp_path: Path, run: str, image: str = IMAGE):  # type: ignore[no-untyped-def]
    path = tmp_path / "deploy.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  selector:\n"
        "    matchLabels: {app: chat}\n  template:\n    metadata:\n      labels: {app: chat}\n    spec:\n"
        "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
        f"        - name: server\n          image: {image}\n          {run}\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    return run_check([str(path)], OFF)


def _script(script: str) -> str:
    return f"command: [bash, -c, {json.dumps(script)}]"


@pytest.mark.parametrize(
    ("run", "release"),
    [
        (_script("uvx --from vllm==0.10.1 vllm serve Qwen/Qwen3-0.6B --tensor-parallel-size 2"), "0.10.1"),
        (
            _script(
                "nohup env CUDA_VISIBLE_DEVICES=0 uvx -p 3.12 --torch-backend=cu128 --from 'vllm[runai]==0.10.1' "
                "vllm serve Qwen/Qwen3-0.6B --tensor-parallel-size 2 > /tmp/vllm.log 2>&1 &\nwait"
            ),
            "0.10.1",
        ),
        (
            _script("uv tool run --from vllm==0.11.0 vllm serve Qwen/Qwen3-0.6B --tensor-parallel-size 2"),
            "0.11.0",
        ),
        ('command: [uvx, "vllm@0.10.1", serve, Qwen/Qwen3-0.6B, --tensor-parallel-size, "2"]', "0.10.1"),
        (
            "command: [uv, run, -w, 'vllm==0.11.0,bitsandbytes', --, python, -m, vllm.entrypoints.openai.api_server, "
            "--model, Qwen/Qwen3-0.6B, --tensor-parallel-size, '2']",
            "0.11.0",
        ),
    ],
)
def test_the_engine_behind_a_uv_runner_is_read_at_the_release_it_installs(
    tmp_path: Path, run: str, release: str
) -> None:
    res = _run(tmp_path, run)
    (cr,) = res.containers
    assert cr.serving.engine == "vllm" and cr.serving.model is not None
    assert cr.serving.version == release
    # the options after the engine are read: TP 2 on one GPU
    assert [d for d in res.diagnostics if d.rule == "KV403"]


def test_uv_run_without_the_engine_runs_the_environment_as_it_is(tmp_path: Path) -> None:
    (cr,) = _run(tmp_path, _script("uv run --no-sync vllm serve Qwen/Qwen3-0.6B")).containers
    assert cr.serving.engine == "vllm" and cr.serving.version == "0.9.2"


def test_an_unpinned_tool_runner_leaves_the_release_unknown(tmp_path: Path) -> None:
    res = _run(tmp_path, _script("uvx vllm serve Qwen/Qwen3-0.6B"))
    (cr,) = res.containers
    assert cr.serving.version is None
    (kv208,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert kv208.severity == "warning" and "uv's tool runner, unpinned" in kv208.message
    assert "uvx --from vllm==X" in (kv208.fix or "")


def test_a_word_after_an_option_uv_does_not_declare_is_the_command(tmp_path: Path) -> None:
    # an option uv does not declare is read as a flag (uv itself refuses it): `x` is the command, no engine
    res = _run(tmp_path, _script("uvx --no-such-option x vllm serve Qwen/Qwen3-0.6B"))
    (cr,) = res.containers
    assert cr.serving.model is None


@pytest.mark.parametrize(
    ("run", "runner"),
    [
        # a wrapper before the runner (exec form and script): the runner, not a pip upgrade, installs the engine
        ("command: [nohup, uvx, vllm, serve, Qwen/Qwen3-0.6B]", "uvx"),
        (_script("timeout 3600 uvx vllm serve Qwen/Qwen3-0.6B"), "uvx"),
        # `uv tool run`: the fix names the runner as written (`uv --from vllm==X` is no uv command)
        (_script("uv tool run --from vllm vllm serve Qwen/Qwen3-0.6B"), "uv tool run"),
        ("command: [/usr/bin/env, uv, tool, run, vllm, serve, Qwen/Qwen3-0.6B]", "uv tool run"),
    ],
)
def test_kv208_names_the_unpinned_uv_runner_wherever_it_stands(tmp_path: Path, run: str, runner: str) -> None:
    res = _run(tmp_path, run)
    (kv208,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert "uv's tool runner, unpinned" in kv208.message and "pip" not in kv208.message
    assert f"({runner} --from vllm==X" in (kv208.fix or "")


@pytest.mark.parametrize(
    ("run", "release"),
    [
        # uv reads the command word as the tool's requirement and runs the executable its package name names
        # (crates/uv/src/commands/tool/mod.rs Target::parse, tool/run.rs): extras and a PEP 508 pin included
        (_script("uvx 'vllm[audio]@0.10.1' serve Qwen/Qwen3-0.6B --tensor-parallel-size 2"), "0.10.1"),
        (_script("uvx vllm==0.11.0 serve Qwen/Qwen3-0.6B --tensor-parallel-size 2"), "0.11.0"),
        (
            'command: [uv, tool, run, "vllm[audio]==0.10.1", serve, Qwen/Qwen3-0.6B, --tensor-parallel-size, "2"]',
            "0.10.1",
        ),
    ],
)
def test_the_tool_runners_command_word_is_a_requirement(tmp_path: Path, run: str, release: str) -> None:
    res = _run(tmp_path, run)
    (cr,) = res.containers
    assert cr.serving.engine == "vllm" and cr.serving.version == release
    assert [d for d in res.diagnostics if d.rule == "KV403"]


@pytest.mark.parametrize(
    ("run", "release"),
    [
        # uv's global options before the subcommand (GlobalArgs are `global = true` in crates/uv-cli/src/lib.rs)
        (
            _script(
                "uv --no-cache tool run --from vllm==0.10.1 vllm serve Qwen/Qwen3-0.6B --tensor-parallel-size 2"
            ),
            "0.10.1",
        ),
        (
            "command: [uv, --directory, /app, run, --with, 'vllm==0.11.0', vllm, serve, Qwen/Qwen3-0.6B, "
            "--tensor-parallel-size, '2']",
            "0.11.0",
        ),
    ],
)
def test_uv_global_options_before_the_runner(tmp_path: Path, run: str, release: str) -> None:
    res = _run(tmp_path, run)
    (cr,) = res.containers
    assert cr.serving.engine == "vllm" and cr.serving.version == release
    assert [d for d in res.diagnostics if d.rule == "KV403"]


def test_an_unpinned_tool_runner_after_global_options_is_named_as_written(tmp_path: Path) -> None:
    res = _run(tmp_path, _script("uv -q tool run vllm serve Qwen/Qwen3-0.6B"))
    (kv208,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert "uv's tool runner, unpinned" in kv208.message and "(uv tool run --from vllm==X" in (
        kv208.fix or ""
    )
