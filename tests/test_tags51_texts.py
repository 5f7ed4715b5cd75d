"""Finding texts quote what the manifest wrote once, in its own spelling (tags51)."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check


def _pod(tmp_path: Path, container: str, gpus: int = 1) -> Path:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        + container
        + f"    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n"
    )
    return p


def test_kv503_names_a_script_run_alone_once(tmp_path: Path) -> None:
    """A container whose command is a script's path alone: KV503 said "runs the script /usr/local/bin/run.sh
    (/usr/local/bin/run.sh)"; the brackets hold the whole command only when it says more than the path."""
    alone = _pod(tmp_path, "    image: vllm/vllm-openai:v0.11.0\n    command: [/usr/local/bin/run.sh]\n")
    msgs = [
        d.message for d in run_check([str(alone)], Options(allow_hub=False)).diagnostics if d.rule == "KV503"
    ]
    assert any("runs the script /usr/local/bin/run.sh;" in m for m in msgs), msgs
    assert not any("(/usr/local/bin/run.sh)" in m for m in msgs), msgs
    shell = _pod(
        tmp_path, "    image: vllm/vllm-openai:v0.11.0\n    command: [bash, /usr/local/bin/run.sh, a]\n"
    )
    msgs = [
        d.message for d in run_check([str(shell)], Options(allow_hub=False)).diagnostics if d.rule == "KV503"
    ]
    assert any("runs the script /usr/local/bin/run.sh (bash /usr/local/bin/run.sh a);" in m for m in msgs), (
        msgs
    )


def test_kv403_quotes_the_sglang_option_as_the_manifest_spells_it(tmp_path: Path) -> None:
    """fixtures/collected/zhaotyer__lws_usage__k8s_sglang.yaml writes ``--tensor-parallel-size 16`` (SGLang's alias
    of --tp-size) on an 8-GPU pod: KV403 said "--tp-size 16 needs 16 GPUs"; it quotes the manifest's word."""
    p = _pod(
        tmp_path,
        "    image: lmsysorg/sglang:v0.5.5\n"
        "    command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct,"
        " --tensor-parallel-size, '16']\n",
        gpus=8,
    )
    kv403 = [
        d.message for d in run_check([str(p)], Options(allow_hub=False)).diagnostics if d.rule == "KV403"
    ]
    assert kv403 and all("--tensor-parallel-size 16" in m and "--tp-size" not in m for m in kv403), kv403
    short = _pod(
        tmp_path,
        "    image: lmsysorg/sglang:v0.5.5\n"
        "    command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --tp-size, '16']\n",
        gpus=8,
    )
    kv403 = [
        d.message for d in run_check([str(short)], Options(allow_hub=False)).diagnostics if d.rule == "KV403"
    ]
    assert kv403 and all("--tp-size 16" in m for m in kv403), kv403
