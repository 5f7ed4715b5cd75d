"""Wrapper programs in a container's exec-form ``command:``/``args:`` list (branch wrap48): ``["nohup", "vllm",
"serve", ...]``, ``["/usr/bin/tini", "--", "python3", "-m", ...]``, ``["timeout", "3600",
"text-generation-launcher", ...]`` were KV503 "not a recognised engine command" (break48 read them in scripts only).
They are read with the script's one table of wrapper options (kvlint.engines.shell), and findings stay at the list
item of each argument."""

from __future__ import annotations

import json

import pytest

from kvlint.engines.command import _match_program
from kvlint.engines.shell import PROGRAM_WRAPPERS, commands
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

_SERVE = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "4"]

_PREFIXES = [
    ["nohup"],
    ["/usr/bin/nohup", "--"],
    ["/usr/bin/tini", "--"],
    ["tini", "-p", "SIGTERM", "--"],
    ["dumb-init", "--"],
    ["dumb-init", "-r", "15:2", "--"],
    ["timeout", "3600"],
    ["timeout", "-s", "KILL", "-k", "10", "1h"],
    ["numactl", "--interleave=all"],
    ["numactl", "-N", "0", "-m", "0"],
    ["taskset", "-c", "0-7"],
    ["stdbuf", "-oL"],
    ["setsid"],
    ["nice", "-n", "10"],
    ["ionice", "-c", "2", "-n", "0"],
    ["sudo", "-E", "-u", "vllm"],
    ["nohup", "numactl", "--interleave=all", "conda", "run", "-n", "serve"],
]


def _pod(items: list[str]) -> str:
    lines = "".join(f"    - {json.dumps(w)}\n" for w in items)
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
        "  containers:\n  - name: c\n    image: vllm/vllm-openai:v0.10.2\n    command:\n"
        f"{lines}    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )


@pytest.mark.parametrize("prefix", _PREFIXES, ids=lambda p: " ".join(p))
def test_an_exec_form_wrapper_leaves_the_engine_read_and_findings_at_their_item(prefix: list[str]) -> None:
    items = [*prefix, *_SERVE]
    result = run_documents(load_text(_pod(items), "p.yaml"), Options(allow_hub=False))
    codes = {d.rule: d for d in result.diagnostics}
    assert "KV503" not in codes, codes["KV503"].message
    # the "4" of --tensor-parallel-size: its own line of the list (the list starts at line 10)
    assert codes["KV403"].loc is not None and codes["KV403"].loc.line == 10 + len(items) - 1


@pytest.mark.parametrize(
    ("words", "engine", "start"),
    [
        (
            ["/usr/bin/tini", "--", "python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"],
            "vllm",
            5,
        ),
        (["timeout", "3600", "text-generation-launcher", "--model-id", "m"], "tgi", 3),
        (["dumb-init", "--", "python3", "-m", "sglang.launch_server", "--model-path", "m"], "sglang", 5),
    ],
)
def test_the_engine_index_counts_the_wrapper_words(words: list[str], engine: str, start: int) -> None:
    assert _match_program(words) == (engine, start, False)


@pytest.mark.parametrize(
    "words",
    [
        ["nohup"],
        ["tini", "--"],
        ["timeout", "3600"],
        ["nohup", "python", "train.py"],
        ["dumb-init", "--", "sleep", "infinity"],
        ["nohup", "conda", "install", "vllm"],
    ],
)
def test_a_wrapper_of_no_engine_is_no_engine(words: list[str]) -> None:
    assert _match_program(words) is None


def test_ten_thousand_wrappers_are_one_pass() -> None:
    # each wrapper moves the index forward (no recursion): no RecursionError, one engine found
    words = ["nohup", "timeout", "1h", "/usr/bin/tini", "--"] * 2000 + ["vllm", "serve", "m"]
    assert _match_program(words) == ("vllm", len(words) - 1, True)


@pytest.mark.parametrize("prefix", [p for p in _PREFIXES if "conda" not in p], ids=lambda p: " ".join(p))
def test_a_script_and_a_list_read_a_wrapper_alike(prefix: list[str]) -> None:
    # one table: the engine command a script's wrapper runs is the one the same words in a list run
    # (`nohup -- vllm serve m` in a script left `--` as the command's first word: KV503)
    words = [*prefix, "vllm", "serve", "m"]
    (script_words,) = list(commands(" ".join(words), {}))
    texts = [w.text for w in script_words]
    m, ms = _match_program(words), _match_program(texts)
    assert m is not None and ms is not None
    assert (m[0], words[m[1] :]) == (ms[0], texts[ms[1] :]) == ("vllm", ["m"])


def test_exec_is_no_program() -> None:
    # bash's exec is a builtin: a list the kubelet runs without a shell cannot start it
    assert "exec" not in PROGRAM_WRAPPERS
    assert _match_program(["exec", "vllm", "serve", "m"]) is None


# gosu/su-exec (user operand), runuser -u, chrt's priority operand, screen -dmS NAME, short-option clusters
_MORE = [
    ["gosu", "vllm"],
    ["su-exec", "1000:1000"],
    ["runuser", "-u", "vllm", "--"],
    ["chrt", "-f", "50"],
    ["chrt", "-T", "10", "-P", "20", "-d", "0"],
    ["screen", "-dmS", "serve"],
    ["screen", "-L", "-Logfile", "/tmp/serve.log", "-dm"],
    ["nice", "-n10"],
    ["stdbuf", "-oL", "-eL"],
]


@pytest.mark.parametrize("prefix", _MORE, ids=lambda p: " ".join(p))
def test_user_and_scheduling_wrappers_are_read_in_a_list_and_a_script(prefix: list[str]) -> None:
    words = [*prefix, "vllm", "serve", "m"]
    assert _match_program(words) == ("vllm", len(prefix) + 2, True)
    (script_words,) = list(commands(" ".join(words), {}))
    assert [w.text for w in script_words] == ["vllm", "serve", "m"]


@pytest.mark.parametrize(
    "prefix",
    [
        ["nice", "-n10"],
        ["nice", "-n", "10"],
        ["timeout", "-s", "KILL", "-k", "10", "1h"],
        ["timeout", "-sKILL", "3600"],
        ["stdbuf", "-oL", "-e", "L"],
        ["setsid"],
        ["nohup", "--"],
        ["taskset", "-c", "0"],
        ["ionice", "-c", "2", "-n", "0"],
        ["ionice", "-c2", "-n0"],
        ["chrt", "-o", "0"],
        ["runuser", "-u", "root", "--"],
    ],
    ids=lambda p: " ".join(p),
)
def test_the_wrapper_reading_agrees_with_the_installed_tool(prefix: list[str]) -> None:
    # the oracle: the tool itself (coreutils, util-linux, when installed) runs `printf` with the words kvlint says
    # follow the wrapper; kvlint's reading does not decide what the test expects
    import shutil
    import subprocess

    if shutil.which(prefix[0]) is None:
        pytest.skip(f"{prefix[0]} not installed")
    done = subprocess.run(
        [*prefix, "printf", "%s\\n", "serve", "m"], capture_output=True, text=True, timeout=30, check=False
    )
    if "not permitted" in done.stderr or "failed to set" in done.stderr:
        pytest.skip(f"{prefix[0]} cannot run here: {done.stderr.strip()}")
    # the tool ran printf with the words after the prefix: the command starts right after it
    assert (done.returncode, done.stdout) == (0, "serve\nm\n"), done.stderr
    assert _match_program([*prefix, "vllm", "serve", "m"]) == ("vllm", len(prefix) + 2, True)


_NESTED = [
    "bash -c 'vllm serve m --tensor-parallel-size 4'",
    'sh -c "vllm serve m --tensor-parallel-size 4"',
    "bash -ec 'set -u; vllm serve m --tensor-parallel-size 4'",
    "bash -e -c -- 'vllm serve m --tensor-parallel-size 4'",
    "setsid bash -c 'exec \"$@\"' sh vllm serve m --tensor-parallel-size 4",
    "nohup sh -c 'bash -c \"vllm serve m --tensor-parallel-size 4\"'",
]


@pytest.mark.parametrize("script", _NESTED)
def test_a_nested_shell_in_a_script_is_read_as_bash_runs_it(script: str, tmp_path) -> None:
    # `bash -c '...'` inside a script was one command `bash -c ...`: KV503 "the shell script starts no engine
    # directly". The oracle: bash itself runs the script with a `vllm` on PATH that prints its arguments
    import os
    import shutil
    import subprocess

    found = [[w.text for w in c] for c in commands(script, {})]
    engines = [c for c in found if _match_program(c) is not None]
    assert len(engines) == 1, found
    if shutil.which("bash") is None:
        pytest.skip("bash not installed")
    fake = tmp_path / "vllm"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf \'%s\\n\' "$a"; done\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=env, timeout=30, check=False
    )
    assert engines[0][1:] == done.stdout.split("\n")[:-1]


def test_a_nested_shell_finding_points_at_its_script_word(tmp_path) -> None:
    from kvlint.pipeline import run_check

    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
        "  containers:\n  - name: c\n    image: vllm/vllm-openai:v0.10.2\n"
        "    command: [/bin/sh, -c]\n    args:\n    - |\n      set -e\n"
        "      su-exec 1000 bash -c 'vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 4'\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (tmp_path / "p.yaml").write_text(text)
    result = run_check([str(tmp_path / "p.yaml")], Options(allow_hub=False))
    codes = {d.rule: d for d in result.diagnostics}
    assert "KV503" not in codes, codes["KV503"].message
    loc = codes["KV403"].loc
    assert loc is not None and loc.line == 13
    # the quoted script word of `bash -c`, where the engine command is
    line = text.splitlines()[12]
    assert line[loc.column - 1 :].startswith("'vllm serve"), line[loc.column - 1 :]


def test_ten_thousand_nested_shells_stay_bounded() -> None:
    # each level re-runs its positional words as the next `bash -c` (linear text, unbounded nesting in bash):
    # kvlint reads three levels at most, then the command as written
    unit = 'bash -c \'"$0" "$@"\''
    (words,) = list(commands(" ".join([unit] * 10_000) + " vllm serve m", {}))
    assert words[0].text == "bash" and len(words) < 10


def test_a_shell_without_a_script_is_a_command() -> None:
    assert [[w.text for w in c] for c in commands("bash -c", {})] == [["bash", "-c"]]
    assert [[w.text for w in c] for c in commands("bash run.sh", {})] == [["bash", "run.sh"]]


@pytest.mark.parametrize(
    "shell_options",
    [
        ["-o", "pipefail"],
        ["-eo", "pipefail"],
        ["+O", "extglob"],
        ["--rcfile", "/dev/null"],
        ["-e", "-o", "errexit"],
    ],
    ids=lambda o: " ".join(o),
)
def test_a_shell_whose_options_take_a_value_before_c_is_read(shell_options: list[str]) -> None:
    """bash(1) reads ``-o NAME``/``+O NAME`` (and ``--rcfile FILE``) with the next word: ``bash -o pipefail -c
    SCRIPT`` runs SCRIPT. Both readers stopped at ``pipefail`` (not an option) and found no ``-c``: the exec-form
    list and a script's nested shell were KV503. Each form is run by bash first, to show it runs the script."""
    import shutil
    import subprocess

    bash = shutil.which("bash")
    if bash is not None:
        ran = subprocess.run(
            [bash, *shell_options, "-c", "echo ran"], capture_output=True, text=True, timeout=30, check=False
        )
        assert ran.stdout.strip() == "ran", ran.stderr
    script = "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 4"
    # the exec-form list: the engine read, KV403 (TP 4 on one GPU) at the script's item
    items = ["bash", *shell_options, "-c", script]
    result = run_documents(load_text(_pod(items), "p.yaml"), Options(allow_hub=False))
    codes = {d.rule: d for d in result.diagnostics}
    assert "KV503" not in codes, codes["KV503"].message
    assert "KV403" in codes
    # a script's nested shell
    nested = f"su-exec app bash {' '.join(shell_options)} -c '{script}'"
    assert [[w.text for w in c] for c in commands(nested, {})] == [script.split()]
