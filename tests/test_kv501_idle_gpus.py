"""KV501's fleet plan names the GPUs the engine uses when the pod has more (KV403 reports the rest idle).

A TP 1 vLLM pod requesting 8 GPUs without a GPU type was "planned on kvlint's default fleet with 8 GPU(s) per pod:
fits on NVIDIA L4 (35,072 KV tokens ...)", figures of one engine on one GPU, read as the pod's eight. No expected
figure here: the sizes come from kvlint's own plans of the same pod with TP 1 and TP 8."""

from __future__ import annotations

import re
from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check


def _kv501(tmp_path: Path, gpus: int, *args: str) -> tuple[str, set[str]]:
    p = tmp_path / f"pod-{gpus}-{len(args)}.yaml"
    argv = ", ".join(
        f'"{a}"' for a in ("--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", *args)
    )
    p.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
        f"        args: [{argv}]\n        resources:\n          limits:\n            nvidia.com/gpu: {gpus}\n"
        "        volumeMounts: [{name: shm, mountPath: /dev/shm}]\n"
        "      volumes: [{name: shm, emptyDir: {medium: Memory}}]\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (d,) = [d for d in r.diagnostics if d.rule == "KV501"]
    return d.message, {d.rule for d in r.diagnostics}


def _l4_tokens(message: str) -> int:
    m = re.search(r"NVIDIA L4 \(([\d,]+) KV tokens", message)
    assert m, message
    return int(m.group(1).replace(",", ""))


def test_tp1_on_an_eight_gpu_pod_says_the_engine_uses_one(tmp_path: Path) -> None:
    idle, rules = _kv501(tmp_path, 8)
    assert "KV403" in rules
    assert "with 8 GPUs per pod, of which tensor-parallel-size 1 uses 1 (KV403):" in idle
    # the figures are the one-GPU engine's: the same as a one-GPU pod's, not an eight-GPU engine's
    one, rules_one = _kv501(tmp_path, 1)
    assert "KV403" not in rules_one and "with 1 GPU per pod:" in one and "of which" not in one
    assert _l4_tokens(idle) == _l4_tokens(one)
    all8, rules8 = _kv501(tmp_path, 8, "--tensor-parallel-size", "8")
    assert "KV403" not in rules8 and "with 8 GPUs per pod:" in all8 and "of which" not in all8
    assert _l4_tokens(all8) > _l4_tokens(idle)
