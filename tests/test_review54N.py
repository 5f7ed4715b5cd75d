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


TGI_UNPLANNABLE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: t
spec:
  template:
    spec:
      containers:
      - name: tgi
        image: ghcr.io/huggingface/text-generation-inference:3.3.6
        args: ["--model-id", "meta-llama/Llama-3.1-8B-Instruct"]
        env:
        - name: ATTENTION
          value: bogus
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def test_kv501_fix_does_not_say_it_fits_none_when_no_gpu_could_be_planned(tmp_path: Path) -> None:
    """newuser54's KV501 fix "it fits none of these GPUs as configured, so once its GPU is named the capacity
    findings there say what to change" was given whenever no fleet GPU fits, also when kvlint planned none of
    them (every verdict "unknown": here TGI's shards refuse ATTENTION=bogus, a plan error on each GPU). Nothing is
    known to fail there, and no capacity finding follows; the fix is the plain "name the GPU"."""
    f = tmp_path / "t.yaml"
    f.write_text(TGI_UNPLANNABLE)
    (kv501,) = [d for d in run_check([str(f)], Options(allow_hub=False)).diagnostics if d.rule == "KV501"]
    assert "unknown on " in kv501.message and "fails on " not in kv501.message, kv501.message
    assert (kv501.fix or "").startswith("name the GPU ("), kv501.fix


def test_kv703_is_not_the_cause_when_the_weights_exceed_the_free_memory_but_not_the_gpu(
    tmp_path: Path,
) -> None:
    """Weights of 139.5 GiB on one H200 (139.72 GiB in total, about 139.3 GiB free before loading): they do not
    load (KV101, which compares them with the free memory), so SGLang never builds the request-to-token table.
    newuser54 silenced KV703 only when the weights fill the whole GPU; between the free memory and the total it
    still blamed the table beside KV101. The weights are the checkpoint's size as its safetensors index states it."""
    import json
    import shutil

    models = Path(__file__).resolve().parents[1] / "fixtures" / "models"
    own = tmp_path / "models" / "acme--heavy"
    shutil.copytree(models / "acme--tiny-qwen3", own)
    index = json.loads((own / "model.safetensors.index.json").read_text())
    index["metadata"]["total_size"] = int(139.5 * 2**30)
    (own / "model.safetensors.index.json").write_text(json.dumps(index))
    f = tmp_path / "sg.yaml"
    f.write_text(SGLANG_72B_ON_H200.format(tag="v0.5.5").replace("Qwen/Qwen2.5-72B-Instruct", "acme/heavy"))
    diags = run_check([str(f)], Options(allow_hub=False, model_dirs=(str(tmp_path / "models"),))).diagnostics
    rules = {d.rule for d in diags}
    (kv101,) = [d for d in diags if d.rule == "KV101"]
    assert "139.50 GiB" in kv101.message and "H200" in kv101.message, kv101.message
    assert "KV703" not in rules, rules


def test_kv501_says_why_kvlint_could_plan_the_container_on_no_fleet_gpu(tmp_path: Path) -> None:
    """With every fleet GPU "unknown" (TGI's shards refuse ATTENTION=bogus, a plan error on each), KV501 listed the
    eight GPU names with no reason and "— it fits none of them", and no other finding said why: the reason is now
    said once for the GPUs it shares (newuser54's grouping), and the verdict is that kvlint planned none of them."""
    f = tmp_path / "t.yaml"
    f.write_text(TGI_UNPLANNABLE)
    diags = run_check([str(f)], Options(allow_hub=False)).diagnostics
    (kv501,) = [d for d in diags if d.rule == "KV501"]
    text = " ".join(kv501.message.split())
    assert text.count("'bogus'") == 1 and "(all: " in text, text
    assert "it fits none of them" not in text and "could plan it on none of them" in text, text
