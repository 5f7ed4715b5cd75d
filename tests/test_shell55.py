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


# -- 2. a variable holding another's unknown value; a script kvlint does not read -----------------------------------


def _words(script: str, sh: bool = False) -> list[tuple[str, bool]]:
    """The words (text, unresolved) kvlint reads for the ``vllm`` command of ``script``, after ``vllm``."""
    from kvlint.engines.shell import commands

    (words,) = [c for c in commands(script, {}, sh=sh) if c and c[0].text == "vllm"]
    return [(w.text, w.unresolved) for w in words[1:]]


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize(
    "script",
    [
        "A=$(cat tp.txt); B=$A; A=1; vllm serve m --tensor-parallel-size $B",
        'A=$(cat tp.txt); B="$A"; unset A; vllm serve m --tensor-parallel-size $B',
        "A=$(cat tp.txt); export B=$A; A=$(echo 1); vllm serve m --tensor-parallel-size $B",
    ],
)
def test_a_copy_of_an_unknown_value_stays_unknown_when_the_original_changes(
    shell: str, script: str, tmp_path: Path
) -> None:
    """``B=$A`` copies A's value when it runs (bash(1) "PARAMETERS"; dash the same): assigning or unsetting A after
    does not change B. kvlint kept B as the text ``${A}`` and, once A was 1, said that the size came from A, and
    (the mark of A's unknown value gone) that A was not set at all. B is the unknown value now."""
    (tmp_path / "tp.txt").write_text("4\n")
    assert _ran(shell, script, tmp_path)[-1] == "4"
    (*_, (text, unresolved)) = _words(script, sh=shell == "dash")
    assert unresolved and text == "$B"
    from kvlint.engines.shell import commands

    (cmd,) = [c for c in commands(script, {}, sh=shell == "dash") if c and c[0].text == "vllm"]
    assert "B" in cmd.maybe_set  # set, to a value kvlint does not know


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize(
    "script",
    [
        "TP=2; . ./env.sh; vllm serve m --tensor-parallel-size $TP",
        "TP=2; set -a; . ./env.sh; set +a; vllm serve m --tensor-parallel-size $TP",
        'TP=2; eval "$(cat env.sh)"; vllm serve m --tensor-parallel-size $TP',
        "TP=2; eval $(cat env.sh); vllm serve m --tensor-parallel-size $TP",
        'TP=2; S=$(cat env.sh); eval "$S"; vllm serve m --tensor-parallel-size $TP',
        ". ./env.sh; vllm serve m --tensor-parallel-size ${TP:-1}",
    ],
)
def test_a_script_kvlint_does_not_read_may_set_any_variable(shell: str, script: str, tmp_path: Path) -> None:
    """``. FILE`` runs the file's commands in the current shell (bash(1) and dash(1), "."), and so does eval of a
    command's output: the file here sets TP=4, which is what the engine gets. kvlint does not read the file: it read
    TP as the 2 assigned before (and ``${TP:-1}`` as 1), where it must leave it unknown."""
    (tmp_path / "env.sh").write_text("TP=4\n")
    assert _ran(shell, script, tmp_path)[-1] == "4"
    (*_, (text, unresolved)) = _words(script, sh=shell == "dash")
    assert unresolved and "TP" in text


def test_bash_source_is_read_as_dot(tmp_path: Path) -> None:
    """``source`` is bash's name for ``.`` (dash 0.5.12 has none: "source: not found", TP stays 2; ``sh`` may be
    either, so kvlint leaves TP unknown for both)."""
    (tmp_path / "env.sh").write_text("TP=4\n")
    script = "TP=2; source ./env.sh; vllm serve m --tensor-parallel-size $TP"
    assert _ran("bash", script, tmp_path)[-1] == "4"
    assert _words(script)[-1] == ("$TP", True)
    assert _words(script, sh=True)[-1] == ("$TP", True)


def test_what_is_assigned_after_the_file_is_known_again() -> None:
    """Only what the file may set is unknown: a value assigned after it is the one the engine gets."""
    assert _words(". /etc/profile.d/env.sh; TP=2; vllm serve m --tensor-parallel-size $TP")[-1] == (
        "2",
        False,
    )
    # an eval string that only holds an unknown value among its words is read: it sets nothing here
    assert _words('L=$(cat f); TP=2; eval "echo $L"; vllm serve m --tensor-parallel-size $TP')[-1] == (
        "2",
        False,
    )


_SOURCED_POD = """apiVersion: v1
kind: ConfigMap
metadata: {{name: vllm-env}}
data:
  env.sh: |
    TP=2
    MAX_LEN=8192
---
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
  volumes:
  - name: cfg
    configMap: {{name: vllm-env}}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    command: [bash, -c]
    args:
    - |
      TP=1
      {read} {path}
      vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size $TP --max-model-len $MAX_LEN
    volumeMounts:
    - {{name: cfg, mountPath: /config}}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize("read", [".", "source"])
def test_a_sourced_file_kvlint_reads_gives_its_values(tmp_path: Path, read: str) -> None:
    """``. /config/env.sh`` where /config is a ConfigMap of the same inputs: kvlint reads the file in the shell as
    bash does (its TP=2 replaces the script's TP=1: KV403 on one GPU), where another file's settings are unknown."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    # what bash does with the same file
    (tmp_path / "env.sh").write_text("TP=2\nMAX_LEN=8192\n")
    assert (
        _ran("bash", f"TP=1; {read} ./env.sh; vllm serve m --tensor-parallel-size $TP", tmp_path)[-1] == "2"
    )
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(_SOURCED_POD.format(read=read, path="/config/env.sh"))
    res = run_check([str(manifest)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.serving is not None and cr.serving.get("tensor_parallel_size") == 2
    assert cr.serving.get("max_model_len") == 8192
    assert any(d.rule == "KV403" for d in res.diagnostics)
    # a file the ConfigMap does not hold: unknown, not the script's TP=1 nor the ConfigMap's
    manifest.write_text(_SOURCED_POD.format(read=read, path="/etc/profile.d/env.sh"))
    (cr,) = run_check([str(manifest)], Options(allow_hub=False)).containers
    assert cr.serving is not None and "tensor_parallel_size" in cr.serving.unresolved


def test_a_sourced_file_leaves_the_size_unknown_in_the_pod() -> None:
    """End to end: the tensor-parallel size after ``. /config/env.sh`` is not vLLM's 2 (KV403 would compare that with
    the GPUs) but unknown, and the container is not sized."""
    cfg = _pod(
        "TP=2; . /config/env.sh; vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size $TP", gpus=4
    )
    assert "tensor_parallel_size" not in cfg.flags and "tensor_parallel_size" in cfg.unresolved  # type: ignore[attr-defined]


# -- 3. bash's &> and &>> ---------------------------------------------------------------------------------------------

REDIRECTIONS = [
    "vllm serve m &> vllm.log --max-model-len 4096",
    "vllm serve m &>>vllm.log --tensor-parallel-size 2 --max-model-len 4096",
    "vllm serve m&>vllm.log --max-model-len 4096",
    'vllm serve "m"&>vllm.log --max-model-len 4096',
    "vllm serve m 2&>vllm.log --max-model-len 4096",
    "vllm serve m >& vllm.log --max-model-len 4096",
    "exec vllm serve m --max-model-len 4096 &> /tmp/vllm.log",
]


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize("script", REDIRECTIONS)
def test_the_engine_gets_the_words_each_shell_gives_it(shell: str, script: str, tmp_path: Path) -> None:
    """bash reads ``&>FILE``/``&>>FILE`` as one redirection of both outputs (bash(1) "REDIRECTION"), and ``>& FILE``
    the same; dash (POSIX) reads ``&`` (the command before it in the background) then ``>FILE`` (an empty command),
    so the options after it never reach the engine. kvlint read every script the dash way. (``>& FILE`` is a dash
    syntax error, "Bad fd number": nothing runs, which kvlint does not model; left out for dash.)"""
    if shell == "dash" and ">& " in script:
        pytest.skip("a syntax error in dash")
    got = _ran(shell, script + "; wait", tmp_path)
    want = [w for w, _u in _words(script, sh=shell == "dash")]
    assert want == got


def test_bash_c_reads_the_options_after_an_and_redirection() -> None:
    """End to end, ``bash -c``: the tensor-parallel size after ``&>>`` reaches vLLM (KV403 on one GPU)."""
    cfg = _pod("vllm serve Qwen/Qwen2.5-7B-Instruct &>> /tmp/vllm.log --tensor-parallel-size 2")
    assert cfg.get("tensor_parallel_size") == 2  # type: ignore[attr-defined]


# -- 4. a model the script quotes so that the shell does not expand it ---------------------------------------------

_MODEL_POD = """apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    command: [{shell}, -c]
    env: [{{name: MODEL, value: Qwen/Qwen2.5-7B-Instruct}}]
    args:
    - |
      {script}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize(
    "script,literal",
    [
        ("vllm serve '$MODEL' --max-model-len 4096", "$MODEL"),
        ("vllm serve \\$MODEL --max-model-len 4096", "$MODEL"),
        ("vllm serve --model '${MODEL}' --max-model-len 4096", "${MODEL}"),
        ('vllm serve "$MODEL" --max-model-len 4096', None),
    ],
)
def test_a_quoted_model_reference_is_the_text_the_engine_gets(
    shell: str, script: str, literal: str | None, tmp_path: Path
) -> None:
    """Single quotes (and a backslash) keep ``$MODEL`` from the shell (bash(1) "QUOTING"; dash the same): vLLM is
    asked for a model named ``$MODEL`` and fails. kvlint said the model was "only known when the container runs"
    (the exec-form reading alone knew a literal reference); now KV502 says the engine gets the text and why."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    env = _shim(tmp_path)
    out = Path(env["ARGV_OUT"])
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} not installed")
    subprocess.run(
        [path, "-c", script], env={**env, "MODEL": "Qwen/Qwen2.5-7B-Instruct"}, check=False, timeout=60
    )
    got = out.read_bytes().decode().split("\0")[:-1]
    assert (literal in got) if literal else "Qwen/Qwen2.5-7B-Instruct" in got
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(_MODEL_POD.format(shell=shell if shell == "bash" else "sh", script=script))
    result = run_check([str(manifest)], Options(allow_hub=False))
    kv502 = [d for d in result.diagnostics if d.rule == "KV502"]
    if literal is None:
        assert not any("as written" in d.message or "only known" in d.message for d in kv502)
        return
    (d,) = kv502
    assert "the script quotes it" in d.message and f"'{literal}'" in d.message, d.message
    assert "only known when the container runs" not in d.message
    from kvlint.sizing import sizing_of

    # the summary's reason: the model is unknown (a text the engine refuses), not a template left unrendered
    assert [sizing_of(cr) for cr in result.containers] == ["model unknown"]


# -- 5. wrappers: script -c, unbuffer, coproc --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    [
        'script -q -c "vllm serve m --tensor-parallel-size 2 --max-model-len 4096" /dev/null',
        'script /dev/null -qc "vllm serve m --tensor-parallel-size 2 --max-model-len 4096"',
        'script -q --command="vllm serve m --tensor-parallel-size 2 --max-model-len 4096" /dev/null',
        "script -q -O /dev/null -c 'vllm serve m --tensor-parallel-size 2 --max-model-len 4096'",
    ],
)
def test_script_c_runs_its_command(script: str, tmp_path: Path) -> None:
    """util-linux's ``script -c CMD`` runs CMD with ``$SHELL -c`` on a pseudo-terminal (a way to keep vLLM's coloured
    logs, seen in a public launcher: ``script -q -c "vllm serve ..." "$LOG_FILE"``); its options are read anywhere
    (getopt_long permutes). kvlint read the container as running ``script``, "not a recognised engine command"."""
    if shutil.which("script") is None:
        pytest.skip("util-linux script not installed")
    got = _ran("bash", script + " < /dev/null", tmp_path)
    assert got == ["serve", "m", "--tensor-parallel-size", "2", "--max-model-len", "4096"]
    assert [w for w, _u in _words(script)] == got


def test_script_without_c_runs_no_engine() -> None:
    from kvlint.engines.shell import commands

    assert [[w.text for w in c] for c in commands("script -q /tmp/typescript", {})] == [
        ["script", "-q", "/tmp/typescript"]
    ]


def test_an_exec_form_script_c_is_read() -> None:
    """``command: [script, -q, -c, "vllm serve ...", /dev/null]``: the kubelet runs script, which gives the string to a
    shell; the size in it reaches vLLM."""
    (doc,) = load_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.11.0\n"
        "    command: [script, -q, -c, 'vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2', /dev/null]\n"
        "    resources: {limits: {nvidia.com/gpu: 2}}\n",
        "p.yaml",
    ).documents
    cfg = parse_container(doc.data["spec"]["containers"][0])
    assert cfg is not None and cfg.get("tensor_parallel_size") == 2


def test_unbuffer_runs_its_command() -> None:
    """expect's ``unbuffer [-p] program [args]`` runs the program on a pseudo-terminal (expect's unbuffer(1)):
    the engine's words are after it (not installed here: read against its manual)."""
    assert _words("unbuffer vllm serve m --max-model-len 4096 | tee /tmp/log") == [
        ("serve", False),
        ("m", False),
        ("--max-model-len", False),
        ("4096", False),
    ]
    cfg = _pod("unbuffer -p vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2", gpus=2)
    assert cfg.get("tensor_parallel_size") == 2  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "script",
    [
        "setpriv --reuid=$(id -u) --regid=$(id -g) --clear-groups vllm serve m --tensor-parallel-size 2",
        "setpriv --reuid $(id -u) --regid $(id -g) --keep-groups --nnp -- vllm serve m --tensor-parallel-size 2",
    ],
)
def test_setpriv_runs_its_command(script: str, tmp_path: Path) -> None:
    """util-linux's ``setpriv [options] PROGRAM [ARGS]`` (a privilege drop in entrypoints: ``exec setpriv --reuid=app
    --regid=app --init-groups python ...``) runs the program after its options, a valued long option's value the next
    word when not attached. kvlint read ``setpriv`` as the command ("not a recognised engine command")."""
    if shutil.which("setpriv") is None:
        pytest.skip("util-linux setpriv not installed")
    got = _ran("bash", script, tmp_path)
    assert got == ["serve", "m", "--tensor-parallel-size", "2"]
    assert [w for w, _u in _words(script.replace("$(id -u)", "0").replace("$(id -g)", "0"))] == got


@pytest.mark.parametrize(
    "script",
    [
        "coproc vllm serve m --tensor-parallel-size 2; wait",
        "coproc VL { vllm serve m --tensor-parallel-size 2; }; wait",
        "coproc { vllm serve m --tensor-parallel-size 2; }; wait",
    ],
)
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_coproc_runs_its_command_in_bash_only(shell: str, script: str, tmp_path: Path) -> None:
    """bash's ``coproc [NAME] COMMAND`` runs COMMAND (bash(1) "Coprocesses"; NAME only before a compound command);
    dash has no such reserved word ("coproc: not found"): the engine never starts."""
    got = _ran(shell, script, tmp_path)
    from kvlint.engines.shell import commands

    read = [c for c in commands(script, {}, sh=shell == "dash") if c and c[0].text == "vllm"]
    if shell == "bash":
        assert got == ["serve", "m", "--tensor-parallel-size", "2"]
        (words,) = read
        assert [w.text for w in words[1:]] == got
    else:
        assert got == [] and read == []


# -- 6. version ranges: uv's tool runner, SGLang ---------------------------------------------------------------------


def _engine_run(tmp_path: Path, image: str, install: str, command: str) -> tuple[str | None, list[str]]:
    """The release kvlint reads for a Pod whose ``sh -c`` script runs ``install`` then ``command``, and its KV208s."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        f"    image: {image}\n    command: [/bin/sh, -c]\n    args:\n    - |\n      {install}\n      {command}\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    return cr.serving.version, [d.message for d in r.diagnostics if d.rule == "KV208"]


def _newest(versions: tuple[str, ...], spec: str) -> str:
    """The newest of ``versions`` ``spec`` admits, by packaging (independent of kvlint's reading)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    return max((v for v in versions if Version(v) in SpecifierSet(spec)), key=Version)


def test_a_uv_tool_runner_within_a_range_runs_the_newest_release_in_it(tmp_path: Path) -> None:
    """``uvx --from "vllm>=0.9,<0.10" vllm serve``: uv resolves the tool's own environment, the newest release the range
    admits (as pip does). kvlint said "unpinned" and assumed the newest vLLM it models; now the newest it models in
    the range, with KV208's note that a later one in the range may run, and a uvx fix."""
    from kvlint.engines.vllm_flags_data import VERSIONS

    version, msgs = _engine_run(
        tmp_path,
        "python:3.12",
        "true",
        'uvx --from "vllm>=0.9,<0.10" vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192',
    )
    assert version == _newest(VERSIONS, ">=0.9,<0.10")
    (msg,) = msgs
    assert "within the range >=0.9,<0.10" in msg and "unpinned" not in msg, msg
    # a tool runner's environment is its own: the image's release in the range is not kept
    version, _ = _engine_run(
        tmp_path,
        "vllm/vllm-openai:v0.9.1",
        "true",
        'uvx --from "vllm>=0.9,<0.10" vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192',
    )
    assert version == _newest(VERSIONS, ">=0.9,<0.10")


@pytest.mark.parametrize(
    "install,command",
    [
        ('pip install "sglang[all]>=0.4.6,<0.4.7"', "python3 -m sglang.launch_server --model-path M"),
        ("true", 'uvx --from "sglang[all]>=0.4.6,<0.4.7" python -m sglang.launch_server --model-path M'),
    ],
)
def test_an_sglang_range_is_read_as_its_newest_modelled_release(
    tmp_path: Path, install: str, command: str
) -> None:
    """SGLang's releases read as vLLM's: a range names the newest modelled release in it (was: no release, KV208
    "the tag 3.12 names no SGLang release", the newest SGLang assumed)."""
    from kvlint.engines.sglang_flags_data import VERSIONS

    command = command.replace(" M", " Qwen/Qwen2.5-7B-Instruct --context-length 8192")
    version, msgs = _engine_run(tmp_path, "python:3.12", install, command)
    assert version == _newest(VERSIONS, ">=0.4.6,<0.4.7")
    (msg,) = msgs
    assert "installs SGLang within the range" in msg, msg


def test_an_sglang_range_the_image_release_satisfies_keeps_it(tmp_path: Path) -> None:
    """pip without -U keeps an installed release the range admits ("Requirement already satisfied")."""
    from packaging.version import Version

    from kvlint.engines.sglang_flags_data import VERSIONS

    carried = min((v for v in VERSIONS if Version("0.4") <= Version(v) < Version("0.5")), key=Version)
    assert carried != _newest(VERSIONS, ">=0.4,<0.5")  # (so that keeping it is told from upgrading)
    version, msgs = _engine_run(
        tmp_path,
        f"lmsysorg/sglang:v{carried}",
        'pip install "sglang[all]>=0.4,<0.5"',
        "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --context-length 8192",
    )
    assert version == carried and msgs == []


RAY_MISTRAL = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "collected"
    / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__mistral-7b__ray-service.yaml"
)


@pytest.mark.parametrize(
    "image,spec,kept",
    [
        ("rayproject/ray-ml:2.9.0", ">=0.5,<0.6", False),  # the Ray image carries no vLLM
        (
            "rayproject/ray-llm:2.46.0-py311-cu124",
            ">=0.8,<0.9",
            True,
        ),  # carries 0.8.5, which the range admits
        ("rayproject/ray-llm:2.46.0-py311-cu124", ">=0.9,<0.10", False),  # 0.8.5 is outside: replaced
    ],
)
def test_a_ray_runtime_env_range_is_read_as_pip_reads_it(
    tmp_path: Path, image: str, spec: str, kept: bool
) -> None:
    """GKE's Ray Serve sample (``runtime_env.pip: ["vllm==0.4.3"]``) with a range instead: Ray builds a virtualenv over
    the image's packages (``--system-site-packages``) and pip installs into it, keeping the image's vLLM when the range
    admits it, else the newest release in the range. kvlint read only exact pins (a range: the image's release, or
    KV208's assumed newest)."""
    from kvlint.engines.images import engine_release
    from kvlint.engines.vllm_flags_data import VERSIONS
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    text = RAY_MISTRAL.read_text()
    assert 'pip: ["vllm==0.4.3"]' in text and "image: rayproject/ray-ml:2.9.0" in text
    out = tmp_path / "ray-service.yaml"
    out.write_text(
        text.replace('pip: ["vllm==0.4.3"]', f'pip: ["vllm{spec}"]').replace(
            "image: rayproject/ray-ml:2.9.0", f"image: {image}"
        )
    )
    res = run_check([str(out)], Options(allow_hub=False))
    versions = {cr.serving.version for cr in res.containers if cr.serving is not None}
    want = engine_release(image, "vllm", None) if kept else _newest(VERSIONS, spec)
    assert versions == {want}, versions
    notes = [d.message for d in res.diagnostics if d.rule == "KV504" and d.message.startswith("vLLM ")]
    assert bool(notes) is not kept and all(f"within the range {spec}" in n for n in notes), notes


@pytest.mark.parametrize(
    "hook",
    [
        '"$(conda shell.bash hook)"',
        '"$(/opt/conda/bin/conda shell.bash hook)"',
        '"$(micromamba shell hook -s bash)"',
        '"$(pyenv init -)"',
    ],
)
def test_a_tool_shell_hook_sets_only_its_own_names(hook: str) -> None:
    """``eval "$(conda shell.bash hook)"`` (conda's documented way to ``conda activate`` in a script) defines conda's
    functions and sets its CONDA_* variables and PATH: the size the script set before it stays known, where an eval
    of any other command's output makes every variable unknown."""
    script = f"TP=2; CONDA_PREFIX=/x; eval {hook}; vllm serve m --tensor-parallel-size $TP $CONDA_PREFIX"
    assert _words(script)[-2:] == [("2", False), ("$CONDA_PREFIX", True)]
    assert _words(script.replace(hook, '"$(cat /etc/setup)"'))[-2][1] is True


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_python_environment_activation_keeps_the_scripts_values(shell: str, tmp_path: Path) -> None:
    """``. venv/bin/activate`` (a real one, made by ``python -m venv``) sets VIRTUAL_ENV, PATH and PS1, not the
    script's own settings: the size set before it stays known (the engine gets 2), where another file's settings are
    unknown."""
    import sys

    made = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")],
        capture_output=True,
        timeout=120,
    )
    if made.returncode != 0:
        pytest.skip("python -m venv is not available")
    script = "TP=2; . ./venv/bin/activate; vllm serve m --tensor-parallel-size $TP"
    got = _ran(shell, script, tmp_path)
    assert got[-1] == "2"
    assert _words(script, sh=shell == "dash")[-1] == ("2", False)
