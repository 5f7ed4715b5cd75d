"""A ``--num-gpu-blocks-override`` whose KV cache does not fit the GPU beside the weights and the rest of the engine is
a KV101 error at the flag's value. vLLM sizes every KV cache tensor from the override, whatever memory is left
(``vllm/v1/core/kv_cache_utils.py::may_override_num_blocks``, ``get_kv_cache_config_from_groups``), and allocates it
with ``torch.zeros`` (``GPUModelRunner._allocate_kv_cache_tensors``). Before, an override below 2^31 of ten times the
GPU was planned, and simulated, as a roomy KV cache, with no finding."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kvlint.load import load_text
from kvlint.memory.vllm import VllmPlanDetail
from kvlint.pipeline import run_documents
from kvlint.types import ContainerResult, Diagnostic, MemoryPlan
from kvlint.webhook.request_options import webhook_options


def _run(*args: str, gpu: str = "nvidia-l4") -> tuple[str, list[Diagnostic], ContainerResult]:
    """The manifest's text, the findings and the container's result for a Deployment running vLLM 0.11.0 with
    ``args`` on one GPU (GKE's accelerator label ``gpu``)."""
    container = {
        "name": "engine",
        "image": "vllm/vllm-openai:v0.11.0",
        "args": ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192", *args],
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "override", "namespace": "default"},
        "spec": {"template": {"spec": {
            "nodeSelector": {"cloud.google.com/gke-accelerator": gpu}, "containers": [container]}}},
    }  # fmt: skip
    text = json.dumps(obj, indent=1)
    result = run_documents(load_text(text, "override.json"), webhook_options())
    (cr,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    return text, list(result.diagnostics), cr


def _plan(gpu: str) -> MemoryPlan:
    """The plan of the same container with no override (what vLLM measures is the same with one)."""
    _, found, cr = _run(gpu=gpu)
    assert cr.plan is not None and not [d for d in found if d.severity == "error"], found
    return cr.plan


def _most_that_fit(plan: MemoryPlan) -> int:
    """The largest override whose blocks, with the weights and the other terms at the optimistic end of the band
    (``budget - weights - kv_cache_bytes_high``, at least 0), fit the device."""
    others = max(0, plan.budget_bytes - plan.weights_bytes - plan.kv_cache_bytes_high)
    return (plan.total_bytes - plan.weights_bytes - others) // plan.bytes_per_block


@pytest.mark.parametrize("gpu", ["nvidia-l4", "nvidia-h100-80gb"])
def test_an_override_past_the_gpu_is_a_kv101_error_at_its_value(gpu: str) -> None:
    plan = _plan(gpu)
    most = _most_that_fit(plan)
    # the blocks with the weights and the non-torch memory are more than the device: the allocation fails; the
    # smallest override past `most` may still allocate, and then leave too little for the activation and graphs
    alloc = (plan.total_bytes - plan.weights_bytes - plan.non_torch_bytes) // plan.bytes_per_block + 1
    tries = [
        (2**31 - 1, "allocating the KV cache fails"),
        (max(alloc, most + 1), "allocating the KV cache fails"),
    ]
    if most + 1 < alloc:
        tries.append((most + 1, "the KV cache allocates, but leaves"))
    else:
        assert gpu == "nvidia-l4", (most, alloc)  # the H100's band leaves room for the second outcome
    for n, outcome in tries:
        text, found, cr = _run("--num-gpu-blocks-override", str(n), gpu=gpu)
        kv101 = [d for d in found if d.rule == "KV101"]
        assert len(kv101) == 1, (n, [(d.rule, d.message) for d in found])
        d = kv101[0]
        assert d.severity == "error" and f"{n:,} x {plan.bytes_per_block:,} bytes" in d.message, d.message
        assert outcome in d.message, d.message
        at = [i + 1 for i, t in enumerate(text.splitlines()) if t.strip() == f'"{n}"']
        assert d.loc is not None and at and d.loc.line == at[0], (d.loc, at)
        # the other capacity rules stay quiet: one verdict per plan
        assert not [f for f in found if f.rule in ("KV102", "KV103", "KV104", "KV105")], found
        # the remedy it offers is re-checked: that override gives no KV101, KV103 or KV105
        fix = d.fix or ""
        assert fix.startswith("--num-gpu-blocks-override "), fix
        offered = fix.split()[1]
        assert int(offered) <= most, (offered, most)
        _, again, _ = _run("--num-gpu-blocks-override", offered, gpu=gpu)
        assert not [f for f in again if f.rule in ("KV101", "KV103", "KV105")], again


def test_an_override_that_fits_the_gpu_is_no_kv101() -> None:
    plan = _plan("nvidia-l4")
    for n in (_most_that_fit(plan), 2000):
        _, found, cr = _run("--num-gpu-blocks-override", str(n))
        assert not [d for d in found if d.rule == "KV101"], (n, found)
        assert isinstance(cr.plan_detail, VllmPlanDetail) and cr.plan is not None
        assert cr.plan.num_blocks == n  # the override is the block count vLLM uses


def test_plan_and_simulate_say_the_engine_does_not_start() -> None:
    """``kvlint plan`` gave "verdict: ok" and ``kvlint simulate`` ran the traffic on 2 x 10^9 blocks as if vLLM
    served it."""
    from kvlint.cli import main

    command = ["--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192",
               "--num-gpu-blocks-override", "2000000000"]  # fmt: skip
    r = CliRunner().invoke(main, ["plan", "--accelerator", "l4", "--engine-version", "0.11.0", *command])
    assert r.exit_code == 1 and "error KV101" in r.output and "verdict: fail" in r.output, r.output
    r = CliRunner().invoke(
        main, ["simulate", "--accelerator", "l4", "--engine-version", "0.11.0", "--requests", "20", *command]
    )
    assert r.exit_code == 0 and "vLLM does not start" in r.output and "KV101" in r.output, r.output


def test_the_plan_verdict_of_compare_and_fleet_cells_fails_with_such_an_override() -> None:
    """The memory plan's own verdict (:func:`kvlint.memory.stage.fit_assessment`, the ``fits`` column of ``kvlint
    plan --compare`` and ``--sweep`` and the fleet a pod with no named GPU is planned on) said ``fits`` for an
    override of ten times the GPU, and ``risky`` for 2,000 blocks that hold a max-model-len request (it read
    the measured KV cache minus the override's bytes as a null block); now the override's blocks decide: 300
    blocks of 16 tokens hold no 8,192-token request."""
    from kvlint.memory.stage import fit_assessment

    plan = _plan("nvidia-l4")
    most = _most_that_fit(plan)
    for n, verdict in (
        (most * 10, "fails"),
        (most + 1, "fails"),
        (most, "fits"),
        (2000, "fits"),
        (300, "fails"),
    ):
        _, _, cr = _run("--num-gpu-blocks-override", str(n))
        assert isinstance(cr.plan_detail, VllmPlanDetail)
        got, reason = fit_assessment(cr.plan_detail)
        assert got == verdict, (n, got, reason)
        if verdict == "fails":
            assert reason is not None and f"--num-gpu-blocks-override {n:,}" in reason, reason
