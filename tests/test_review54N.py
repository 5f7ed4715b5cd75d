"""Review of branch newuser54 (merge 7cf6d147): defects found in what it merged, each with the test that failed
before its fix."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

SGLANG_72B_ON_H200 = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: sg
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H200
      containers:
      - name: sglang
        image: lmsysorg/sglang:{tag}
        command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-72B-Instruct",
                  "--max-running-requests", "100000"]
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def test_kv703_is_not_the_cause_when_no_kv_pool_is_left(tmp_path: Path) -> None:
    """A 72B model on one H200: its 135 GiB of weights load (139 GiB free) but leave no KV pool under SGLang's
    default --mem-fraction-static, so SGLang raises "Not enough memory" (KV701) before it builds the
    request-to-token table (sglang@0.5.5 ModelRunner.init_memory_pool). newuser54 silenced KV703 only when the
    weights and the pool fill the whole GPU; here KV703 still blamed the table beside KV701."""
    for tag in ("v0.5.5", "v0.5.23"):
        f = tmp_path / f"sg-{tag}.yaml"
        f.write_text(SGLANG_72B_ON_H200.format(tag=tag))
        rules = {d.rule for d in run_check([str(f)], Options(allow_hub=False)).diagnostics}
        assert "KV701" in rules and "KV703" not in rules, (tag, rules)


def test_kv703_still_reported_when_the_pool_exists(tmp_path: Path) -> None:
    """The same table on a model whose weights leave a pool: KV703 is the finding (the table is what fails)."""
    f = tmp_path / "sg.yaml"
    f.write_text(
        SGLANG_72B_ON_H200.format(tag="v0.5.5").replace(
            "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-7B-Instruct"
        )
    )
    f.write_text(f.read_text().replace('"100000"', '"1000000"'))
    rules = {d.rule for d in run_check([str(f)], Options(allow_hub=False)).diagnostics}
    assert "KV703" in rules and "KV701" not in rules and "KV101" not in rules, rules
