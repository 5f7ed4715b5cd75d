"""The vLLM capacity findings agree with each other and with the plan: KV202's example length is one that
fits (KV103's remedy when the default does not), KV105 says start-up most likely fails when the central estimate already does,
and no remedy proposes a context too short to serve (below MIN_USEFUL_MAX_MODEL_LEN). Real pipeline runs on
Llama-3.1-8B-Instruct (bundled catalogue) on an L4; lengths are derived from each run's own plan."""

from __future__ import annotations

import re
from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.remedies import MIN_USEFUL_MAX_MODEL_LEN
from kvlint.types import CheckResult


def _check(tmp_path: Path, *args: str, name: str = "d.yaml") -> CheckResult:
    p = tmp_path / name
    argv = ", ".join(f'"{a}"' for a in ("--model", "meta-llama/Llama-3.1-8B-Instruct", *args))
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  nodeSelector:\n"
        "    cloud.google.com/gke-accelerator: nvidia-l4\n  containers:\n  - name: vllm\n"
        f"    image: vllm/vllm-openai:v0.11.0\n    args: [{argv}]\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


def _by_rule(r: CheckResult, rule: str) -> list:
    return [d for d in r.diagnostics if d.rule == rule]


def test_kv202_example_is_the_length_kv103_proposes_and_it_fits(tmp_path: Path) -> None:
    r = _check(tmp_path)
    (kv103,) = _by_rule(r, "KV103")
    (kv202,) = _by_rule(r, "KV202")
    proposed = re.search(r"--max-model-len (\d+) fits", kv103.fix)
    example = re.search(r"e\.g\. --max-model-len (\d+)", kv202.fix)
    assert proposed and example and proposed.group(1) == example.group(1)
    applied = _check(tmp_path, "--max-model-len", example.group(1), name="fixed.yaml")
    assert not {"KV103", "KV105"} & {d.rule for d in applied.diagnostics}


def test_kv202_keeps_32768_where_it_plainly_fits(tmp_path: Path) -> None:
    r = _check(tmp_path, "--tensor-parallel-size", "1", "--kv-cache-dtype", "fp8_e4m3", name="fp8.yaml")
    (cr,) = r.containers
    (kv202,) = _by_rule(r, "KV202")
    low_tokens = cr.plan.num_blocks_low * cr.plan.block_size
    if low_tokens >= 1.25 * 32768:
        assert "e.g. --max-model-len 32768" in kv202.fix
    else:  # the plan says 32768 does not plainly fit: a smaller example, which fits
        assert "the largest that fits robustly" in kv202.fix


def test_kv105_says_most_likely_fails_when_the_central_estimate_already_fails(tmp_path: Path) -> None:
    (cr,) = _check(tmp_path, "--max-model-len", "8192").containers
    p = cr.plan
    central, high = p.capacity_tokens, p.kv_cache_bytes_high // p.kv_bytes_per_token
    length = (central + high) // 2  # above the central capacity, within the band's upper end
    assert central < length < high
    r = _check(tmp_path, "--max-model-len", str(length), name="edge.yaml")
    (kv105,) = _by_rule(r, "KV105")
    assert kv105.severity == "warning" and "most likely fails" in kv105.message
    assert not _by_rule(r, "KV103")
    # inside the band but above the central estimate's fit: the plain warning
    r = _check(tmp_path, "--max-model-len", str(int(central * 0.95)), name="flip.yaml")
    (kv105,) = _by_rule(r, "KV105")
    assert kv105.severity == "warning" and "may fail on some nodes" in kv105.message


def test_no_remedy_proposes_a_context_too_short_to_serve(tmp_path: Path) -> None:
    """Lower gpu-memory-utilization until the KV cache holds fewer than MIN_USEFUL_MAX_MODEL_LEN tokens:
    whatever the capacity findings say, no fix offers a --max-model-len below it, and every capacity
    finding still has a fix."""
    tried = 0
    for hundredths in range(80, 60, -1):
        r = _check(
            tmp_path, "--gpu-memory-utilization", f"{hundredths / 100:.2f}", name=f"u{hundredths}.yaml"
        )
        (cr,) = r.containers
        if not (0 < cr.plan.capacity_tokens < 4 * MIN_USEFUL_MAX_MODEL_LEN):
            continue
        tried += 1
        capacity = [d for d in r.diagnostics if d.rule in ("KV102", "KV103", "KV104", "KV105", "KV202")]
        assert capacity
        for d in capacity:
            assert d.fix
            for n in re.findall(r"--max-model-len (\d+)", d.fix):
                assert int(n) >= MIN_USEFUL_MAX_MODEL_LEN, d.fix
    assert tried


def test_kv603_states_certainty_only_beyond_the_band(tmp_path: Path) -> None:
    """TGI: max_total_tokens above the predicted max_batch_total_tokens but inside the band's upper end is
    'most likely' a failure; above the upper end it is certain. The thresholds come from the run's plan."""
    src = Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "KV603" / "tgi.yaml"
    first = src.read_text().split("\n---\n")[0]

    def kv603(total: int) -> list:
        p = tmp_path / f"t{total}.yaml"
        p.write_text(first.replace('"32000"', f'"{total - 768}"').replace('"32768"', f'"{total}"'))
        r = run_check([str(p)], Options(allow_hub=False))
        return [d for d in r.diagnostics if d.rule == "KV603"], r.containers[0].plan_detail

    _, d = kv603(32768)
    p = d.plan
    central, high = d.max_batch_total_tokens, p.num_blocks_high * p.block_size
    (inside,), _ = kv603((central + high) // 2)
    assert inside.severity == "error" and "most likely exits" in inside.message
    (beyond,), _ = kv603(high + 4096)
    assert "TGI exits with" in beyond.message and "most likely" not in beyond.message
    assert "cuda_memory_fraction 1 × wiggle room" in beyond.message


def test_kv202_names_the_length_vllm_uses_for_a_longrope_model(tmp_path: Path) -> None:
    """Phi-4-mini (LongRoPE): with no --max-model-len vLLM uses original_max_position_embeddings, and KV202
    quotes that length (the plan's), with the per-request KV at it, not the extended 131,072."""
    p = tmp_path / "phi.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: phi\nspec:\n  nodeSelector:\n"
        "    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.11.0\n    args: [--model, microsoft/Phi-4-mini-instruct]\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    (kv202,) = _by_rule(r, "KV202")
    model_cfg = cr.model.config
    original = (
        model_cfg.get("original_max_position_embeddings")
        or model_cfg["rope_scaling"]["original_max_position_embeddings"]
    )
    assert cr.plan.max_model_len == original < model_cfg["max_position_embeddings"]
    assert f"({original} tokens, of the {model_cfg['max_position_embeddings']:,}" in kv202.message


def _sglang(tmp_path: Path, mfs: str, tag: str) -> CheckResult:
    p = tmp_path / f"s-{tag}-{mfs}.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        f"  containers:\n  - name: sglang\n    image: lmsysorg/sglang:{tag}\n    command: [python3, -m, "
        "sglang.launch_server, --model-path, meta-llama/Llama-3.1-8B-Instruct, --mem-fraction-static, "
        f'"{mfs}", --context-length, "8192"]\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n'
    )
    return run_check([str(p)], Options(allow_hub=False))


def _tiny_pool(tmp_path: Path, tag: str) -> CheckResult:
    """The run whose KV pool holds 2..6 tokens: bisection on mem_fraction_static for the first positive
    pool, then steps of about one token (131,072 B of 21 GiB) upwards."""
    lo, hi = 0.5, 0.95
    for _ in range(30):
        mid = (lo + hi) / 2
        pool = _sglang(tmp_path, f"{mid:.10f}", tag).containers[0].plan_detail
        lo, hi = (lo, mid) if pool.max_total_num_tokens > 0 else (mid, hi)
    for k in range(12):
        r = _sglang(tmp_path, f"{hi + k * 6e-6:.10f}", tag)
        if 2 <= r.containers[0].plan_detail.max_total_num_tokens <= 6:
            return r
    raise AssertionError("no fraction gives a pool of 2..6 tokens")


def test_sglang_pool_of_a_few_tokens_is_kv701_before_0_5_14_and_kv702_after(tmp_path: Path) -> None:
    """A mem_fraction_static that leaves a pool of a handful of tokens: SGLang up to 0.5.13 asserts 'Memory
    pool size is too small' (max_req_input_len = pool - 6 <= 0), later releases start and cap requests. The
    fraction is found on kvlint's own plan, not hard-coded."""
    old = _tiny_pool(tmp_path, "v0.4.6.post1-cu124")
    tokens = old.containers[0].plan_detail.max_total_num_tokens
    (kv701,) = _by_rule(old, "KV701")
    assert "Memory pool size is too small" in kv701.message and f"only {tokens} tokens" in kv701.message
    assert not _by_rule(old, "KV702")
    new = _tiny_pool(tmp_path, "v0.5.23")
    assert not _by_rule(new, "KV701")
    (kv702,) = _by_rule(new, "KV702")
    assert "warns 'KV pool holds" in kv702.message


def test_kv101_weights_that_fit_the_device_fail_at_the_kv_check_not_while_loading() -> None:
    """vLLM loads weights larger than its budget when they fit the device, then stops at the KV-cache check
    ('No available memory for the cache blocks'); KV101 said 'loading fails with CUDA out of memory' for
    every case, and offered no --gpu-memory-utilization. Weights larger than the device still run out of
    memory while loading, and no utilization can help them."""
    from kvlint.capacity.plan_command import plan_command

    opts = Options(allow_hub=False, accelerator="nvidia-l4", engine_version="0.11.0")
    base = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "4096"]
    low = plan_command([*base, "--gpu-memory-utilization", "0.6"], opts)
    (kv101,) = [d for d in low.diagnostics if d.rule == "KV101"]
    assert "No available memory for the cache blocks" in kv101.message
    assert "CUDA out of memory" not in kv101.message
    m = re.search(r"--gpu-memory-utilization (0\.\d\d) fits", kv101.fix or "")
    assert m, kv101.fix
    assert plan_command([*base, "--gpu-memory-utilization", m.group(1)], opts).verdict == "ok"

    big = plan_command(
        ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct", "--max-model-len", "4096"], opts
    )
    (kv101,) = [d for d in big.diagnostics if d.rule == "KV101"]
    assert "loading fails with CUDA out of memory" in kv101.message
    assert "--gpu-memory-utilization" not in (kv101.fix or "")


def _neuron_pod(tmp_path: Path, resource: str, count: int, tp: int, instance: str | None = None) -> list:
    """A vLLM Neuron pod (made up for a test): the AWS Neuron DLC image, --device neuron, ``count`` of
    ``resource``; its diagnostics."""
    selector = f"      nodeSelector: {{node.kubernetes.io/instance-type: {instance}}}\n" if instance else ""
    path = tmp_path / "neuron.yaml"
    path.write_text(
        "# made up for a test\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: n}\nspec:\n  template:\n"
        "    spec:\n" + selector + "      containers:\n      - name: vllm\n"
        "        image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.24.1\n"
        f'        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "{tp}", '
        '"--device", "neuron"]\n'
        f"        resources: {{limits: {{{resource}: {count}}}}}\n"
    )
    return run_check([str(path)], Options(allow_hub=False)).diagnostics


def test_kv403_counts_neuroncores_not_gpus(tmp_path: Path) -> None:
    """KV403 called NeuronCores GPUs and quoted CUDA's world-size error. vLLM on Neuron shards the model over
    tensor-parallel-size NeuronCores (the Neuron model's tp_degree), so TP 8 on ``aws.amazon.com/neuroncore: 2``
    is 8 NeuronCores against 2; ``aws.amazon.com/neuron`` counts devices, 2 NeuronCores each on inf2 (AWS's
    Inferentia2 architecture page), so 4 devices give TP 8 its cores, and on an unnamed instance type the
    devices are not compared. No KV404 either: vLLM drives all NeuronCores from one process on Neuron; KV501
    says why Neuron is not sized."""
    (d,) = [d for d in _neuron_pod(tmp_path, "aws.amazon.com/neuroncore", 2, 8) if d.rule == "KV403"]
    assert "needs 8 NeuronCores but the pod gets 2" in d.message and "GPU" not in d.message
    assert "World size" not in d.message and "request 8 NeuronCores" in d.fix
    (d,) = [
        d for d in _neuron_pod(tmp_path, "aws.amazon.com/neuron", 1, 8, "inf2.48xlarge") if d.rule == "KV403"
    ]
    assert (
        "needs 8 NeuronCores but the pod gets 2" in d.message and "2 NeuronCores per inf2 device" in d.message
    )
    assert d.fix.startswith("request 4 devices (aws.amazon.com/neuron)")
    fits = _neuron_pod(tmp_path, "aws.amazon.com/neuron", 4, 8, "inf2.48xlarge")
    assert not [d for d in fits if d.rule in ("KV403", "KV404")]
    unknown = _neuron_pod(tmp_path, "aws.amazon.com/neuron", 1, 8)
    assert not [d for d in unknown if d.rule in ("KV403", "KV404")]
    (why,) = [d for d in unknown if d.rule == "KV501"]
    assert (
        "--device neuron" in why.message
        and "Neuron SDK" in why.message
        and "not in its accelerator" in why.message
    )
    assert "AWS Neuron accelerator" in why.fix


def test_kv105_tgi_remedy_names_which_concurrency_it_quotes(tmp_path: Path) -> None:
    """GKE's Llama 3 70B TGI sample (bitsandbytes-nf4 on two L4, TGI 2.1.1): KV105's remedy lowers
    MAX_TOTAL_TOKENS to what the low end of kvlint's band holds. It printed "fits at the low end of kvlint's band,
    3.27x", but 3.27x was the predicted max_batch_total_tokens over the limit; at the low end it is 1.00x. Both
    figures are now named, and both re-derive from a re-check of the remedy."""
    p = tmp_path / "tgi.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: llm}\nspec:\n"
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  containers:\n  - name: llm\n"
        "    image: ghcr.io/huggingface/text-generation-inference:2.1.1\n"
        "    args: [--model-id, meta-llama/Meta-Llama-3-70B-Instruct, --num-shard, '2', --max-input-tokens, '2048',"
        " --quantize, bitsandbytes-nf4]\n    resources: {limits: {nvidia.com/gpu: 2}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (kv105,) = _by_rule(r, "KV105")
    m = re.search(
        r"--max-total-tokens (\d+) and --max-input-tokens \d+ \(re-planned: ([\d.]+)x concurrent requests of "
        r"that length at kvlint's prediction, max_batch_total_tokens ([\d,]+); ([\d.]+)x at the low end",
        kv105.fix or "",
    )
    assert m, kv105.fix
    target = int(m.group(1))
    p.write_text(p.read_text().replace("'2048',", f"'2048', --max-total-tokens, '{target}',"))
    (cr,) = run_check([str(p)], Options(allow_hub=False)).containers
    assert cr.plan is not None
    tokens = cr.plan.num_blocks * cr.plan.block_size
    assert int(m.group(3).replace(",", "")) == tokens
    assert float(m.group(2)) == round(tokens / target, 2)
    assert float(m.group(4)) == round(cr.plan.num_blocks_low * cr.plan.block_size / target, 2)
    assert float(m.group(4)) < float(m.group(2))
