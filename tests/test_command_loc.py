"""Where a container's engine command is (``ServingConfig.command_loc``, the position of the findings about the
command as a whole, such as KV202's "no --max-model-len"): the program that starts the engine, not its first
argument. It pointed at the first argument (``--host`` of an args-only container, the ``--model-path`` after
``python3 -m sglang.launch_server``, the ``--host`` in the middle of a ``sh -c`` script's line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Loc

_HEAD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: engine\n"
_GPU = "    resources: {limits: {nvidia.com/gpu: 1}}\n"


def _at(text: str, needle: str, occurrence: int = 0) -> tuple[int, int]:
    """(line, column), 1-based, of the ``occurrence``-th ``needle`` in ``text`` (a quoted flow scalar's position
    is its opening quote)."""
    pos = -1
    for _ in range(occurrence + 1):
        pos = text.index(needle, pos + 1)
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _command_loc(tmp_path: Path, body: str) -> tuple[str, Loc]:
    text = _HEAD + body + _GPU
    p = tmp_path / "pod.yaml"
    p.write_text(text)
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    loc = cr.serving.command_loc
    assert loc is not None
    # the findings about the command as a whole are there (KV501: kvlint cannot tell which GPU the pod lands
    # on; KV202: no --max-model-len / --context-length)
    whole = [d for d in r.diagnostics if d.rule in ("KV202", "KV501")]
    assert whole and all(d.loc == loc for d in whole), [(d.message, d.loc) for d in whole]
    return text, loc


@pytest.mark.parametrize(
    ("body", "needle", "occurrence"),
    [
        # command + args: the program's first word in command
        (
            '    image: vllm/vllm-openai:v0.11.0\n    command: ["vllm", "serve"]\n'
            '    args: ["--host", "0.0.0.0", "--model", "meta-llama/Llama-3.1-8B-Instruct"]\n',
            '"vllm"',
            0,
        ),
        (
            "    image: lmsysorg/sglang:v0.5.5\n"
            '    command: ["python3", "-m", "sglang.launch_server", "--host", "0.0.0.0",'
            ' "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]\n',
            '"python3"',
            0,
        ),
        # the program named in args (no command)
        (
            '    image: vllm/vllm-openai:v0.11.0\n    args: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",'
            ' "--host", "0.0.0.0"]\n',
            '"vllm"',
            0,
        ),
        # args only, the image's ENTRYPOINT is the program: the args: key
        (
            "    image: vllm/vllm-openai:v0.11.0\n    args:\n    - --host\n    - 0.0.0.0\n"
            "    - --model\n    - meta-llama/Llama-3.1-8B-Instruct\n",
            "args:",
            0,
        ),
        (
            "    image: ghcr.io/huggingface/text-generation-inference:3.3.0\n"
            '    args: ["--hostname", "0.0.0.0", "--model-id", "meta-llama/Llama-3.1-8B-Instruct"]\n',
            "args:",
            0,
        ),
        # a shell script: the program's word in the script, not its first option
        (
            '    image: vllm/vllm-openai:v0.11.0\n    command: ["/bin/sh", "-c"]\n    args:\n    - |\n'
            "      echo starting\n"
            "      exec python3 -m vllm.entrypoints.openai.api_server --host 0.0.0.0 --model "
            "meta-llama/Llama-3.1-8B-Instruct\n",
            "python3",
            0,
        ),
    ],
    ids=["command-vllm-serve", "command-python-m", "args-program", "args-entrypoint", "args-tgi", "shell"],
)
def test_the_command_is_where_its_program_is(tmp_path: Path, body: str, needle: str, occurrence: int) -> None:
    text, loc = _command_loc(tmp_path, body)
    assert (loc.line, loc.column) == _at(text, needle, occurrence), text


def test_no_args_at_all_keeps_the_containers_position(tmp_path: Path) -> None:
    # TGI configured by its environment alone: no command line anywhere; the findings stay at the container
    p = tmp_path / "pod.yaml"
    p.write_text(
        _HEAD + "    image: ghcr.io/huggingface/text-generation-inference:3.3.0\n"
        "    env: [{name: MODEL_ID, value: meta-llama/Llama-3.1-8B-Instruct}]\n" + _GPU
    )
    (cr,) = run_check([str(p)], Options(allow_hub=False)).containers
    assert cr.serving.command_loc is None


def test_a_command_merged_from_two_documents_stays_with_the_workloads_arguments() -> None:
    # kserve/kserve's multi-node Hugging Face runtime starts `python -m huggingfaceserver ... $0 $@` in its script;
    # the InferenceService's args come last. The findings about the command belong to the InferenceService's file
    # (its args), not to the runtime's script that every InferenceService using it shares.
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    isvc = fixtures / "kserve" / "huggingface-isvc.yaml"
    runtime = fixtures / "load" / "kserve__kserve__config__runtimes__kserve-huggingfaceserver-multinode.yaml"
    r = run_check([str(isvc), str(runtime)], Options(allow_hub=False))
    (cr,) = [
        c
        for c in r.containers
        if c.workload.name == "huggingface-llama3" and c.serving.container_name == "kserve-container"
    ]
    assert cr.serving.command_loc is not None and cr.serving.command_loc.file == str(isvc)
