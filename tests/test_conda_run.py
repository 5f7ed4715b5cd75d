"""``conda run -n ENV PROGRAM ...`` (and ``mamba run``, ``micromamba run``) runs PROGRAM in that environment with
its arguments as given (conda ``conda/cli/main_run.py``: ``executable_call`` is ``nargs=REMAINDER`` after the
run options ``-n/--name``, ``-p/--prefix``, ``--cwd``, ``-s/--no-capture-output/--live-stream``, ``-v``, an optional
``--``). kvlint read an engine started so only behind ``&`` in a script; alone (the container's command, or a
script's last command) it was KV503 "not a recognised engine command" and the container was not sized."""

from __future__ import annotations

import pytest

from kvlint.engines.command import parse_command_line

_SERVE = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]


@pytest.mark.parametrize(
    "prefix",
    [
        ["conda", "run", "-n", "serve"],
        ["/opt/conda/bin/conda", "run", "--no-capture-output", "-n", "serve"],
        ["conda", "run", "--name=serve", "--cwd", "/app", "-s", "--"],
        ["micromamba", "run", "-p", "/opt/env"],
        ["mamba", "run", "-v", "-n", "base"],
    ],
)
def test_engine_behind_conda_run_is_read(prefix):
    cfg = parse_command_line([*prefix, *_SERVE])
    assert cfg is not None and cfg.engine == "vllm"
    assert cfg.model is not None and cfg.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert cfg.get("max_model_len") == 8192


def test_sglang_module_behind_micromamba_run():
    cfg = parse_command_line(
        [
            "micromamba",
            "run",
            "-n",
            "base",
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "m",
            "--tp",
            "2",
        ]
    )
    assert cfg is not None and cfg.engine == "sglang" and cfg.get("tp_size") == 2


@pytest.mark.parametrize(
    "words",
    [
        ["conda", "install", "-y", "vllm"],  # packaging: runs nothing
        ["conda", "run", "-n", "serve"],  # no program
        ["conda", "run", "-n", "serve", "python", "train.py"],  # a program that is no engine
    ],
)
def test_not_an_engine_stays_unread(words):
    with pytest.raises(ValueError, match="not an engine command"):
        parse_command_line(words)


def test_a_pod_whose_script_ends_with_conda_run_is_sized(tmp_path):
    from kvlint.pipeline import Options, run_check

    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.9.2\n    command: [bash, -c]\n"
        '    args: ["conda run -n serve vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192"]\n'
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    res = run_check([str(pod)], Options(allow_hub=False, accelerator="h100"))
    assert not [d for d in res.diagnostics if d.rule == "KV503"], [d.message for d in res.diagnostics]
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.serving.get("max_model_len") == 8192 and c.plan is not None
