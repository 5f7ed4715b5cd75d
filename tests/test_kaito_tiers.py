"""KAITO's parallelism tiers (kaito-project/kaito v0.12.0 pkg/model/interface.go ``configureParallelism``) on its
own example Workspaces and InferenceSets (fixtures/collected, from kaito-project/kaito examples/inference): a
preset under half a GPU of a multi-GPU SKU runs data-parallel, one that fits the node keeps TP = the node's GPUs,
and a MIG slice is one GPU. The expected engine arguments come from :func:`_kaito_tier`, KAITO's rule restated
here from its source, applied to kvlint's own figure for the model's weights."""

from __future__ import annotations

from pathlib import Path

from kvlint.models.weights import weight_bytes
from kvlint.pipeline import Options, run_check
from kvlint.workloads.kaito import KAITO_AZURE_SKUS, kaito_data_parallel

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
PHI4_MINI = (
    COLLECTED / "kaito-project__kaito__examples__inference__kaito_workspace_phi_4_mini_throughput.yaml"
)
GPT_OSS_20B = COLLECTED / "kaito-project__kaito__examples__inference__kaito_workspace_gpt_oss_20b.yaml"
MIG_SINGLE = (
    COLLECTED / "kaito-project__kaito__examples__inference__kaito_inferenceset_mig_single_strategy.yaml"
)
GIB = 1024**3


def _kaito_tier(model_bytes: int, gpus: int, gpu_mem_gib: int) -> dict[str, int]:
    """KAITO's first two tiers on one node, restated: data parallelism over the node's GPUs (TP 1) when the
    model's files take under half of one GPU (``modelFitsOnSingleGPU``: size x GPUs x 2 < the node's GPU memory,
    more than one GPU), else TP = the node's GPUs."""
    if gpus > 1 and model_bytes * gpus * 2 < gpu_mem_gib * GIB:
        return {"tp": 1, "dp": gpus}
    return {"tp": gpus, "dp": 1}


def _on_sku(src: Path, sku: str, tmp_path: Path) -> Path:
    """KAITO's example with its ``resource.instanceType`` set to ``sku`` (nothing else changed)."""
    text = src.read_text()
    old = next(line for line in text.splitlines() if line.strip().startswith("instanceType:"))
    out = tmp_path / src.name
    out.write_text(text.replace(old, old.split("instanceType:")[0] + f'instanceType: "{sku}"', 1))
    return out


def _planned(path: Path) -> tuple[dict[str, int], list[str], int]:
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.plan is not None, cr.plan_error
    assert cr.model is not None
    size = int(weight_bytes(cr.model, dtype_bytes=2)[0])
    tiers = {"tp": cr.plan.tensor_parallel_size, "dp": int(cr.plan.data_parallel_size or 1)}
    return tiers, [str(a) for a in cr.serving.container["args"]], size


def test_kaito_data_parallel_restates_kaitos_own_cases() -> None:
    """KAITO's unit cases for ``modelFitsOnSingleGPU`` (pkg/model/interface_test.go, v0.12.0): 8 GiB on four
    GPUs of 160 GiB in all fits half a GPU; 20 GiB (exactly half) and 30 GiB do not; one GPU never does."""
    assert kaito_data_parallel(4, 160, 8 * GIB)
    assert not kaito_data_parallel(4, 160, 20 * GIB)
    assert not kaito_data_parallel(4, 160, 30 * GIB)
    assert not kaito_data_parallel(1, 80, 8 * GIB)
    assert not kaito_data_parallel(4, 160, 0)


def test_small_preset_on_a_four_gpu_sku_runs_data_parallel(tmp_path: Path) -> None:
    """KAITO's Phi-4-mini Workspace on Standard_NC96ads_A100_v4 (four A100 80GB): the model takes under half of
    one GPU, so KAITO writes ``--data-parallel-size=4 --tensor-parallel-size=1`` and each GPU serves the whole
    model. kvlint planned TP 4 (each GPU a quarter of the weights, four times fewer KV tokens per engine than
    KAITO's replicas hold)."""
    path = _on_sku(PHI4_MINI, "Standard_NC96ads_A100_v4", tmp_path)
    tiers, args, size = _planned(path)
    want = _kaito_tier(size, *KAITO_AZURE_SKUS["Standard_NC96ads_A100_v4"])
    assert want == {"tp": 1, "dp": 4}
    assert tiers == want
    assert "--tensor-parallel-size=1" in args and "--data-parallel-size=4" in args
    assert not any(a == "--tensor-parallel-size=4" for a in args)


def test_v0_12_sku_table_has_the_two_gpu_a10(tmp_path: Path) -> None:
    """KAITO v0.12.0's SKU table added Standard_NV72ads_A10_v5 (two A10, 48 GiB): Phi-4-mini on it runs
    data-parallel at the A10's 0.82 utilization; gpt-oss-20b (KAITO's own A10 example, moved to the two-GPU size)
    takes more than half an A10 and keeps TP 2. kvlint's table was from before that release and did not know the
    size (no KAITO tiers applied)."""
    phi, phi_args, phi_size = _planned(_on_sku(PHI4_MINI, "Standard_NV72ads_A10_v5", tmp_path))
    assert phi == _kaito_tier(phi_size, 2, 48) == {"tp": 1, "dp": 2}
    assert "--gpu-memory-utilization=0.82" in phi_args
    gpt, _, gpt_size = _planned(_on_sku(GPT_OSS_20B, "Standard_NV72ads_A10_v5", tmp_path))
    assert gpt == _kaito_tier(gpt_size, 2, 48) == {"tp": 2, "dp": 1}


def test_a_mig_slice_is_one_gpu(tmp_path: Path) -> None:
    """KAITO's MIG InferenceSet for the mixed strategy (examples/inference/kaito_inferenceset_mig_mixed_strategy.yaml:
    the single-strategy example in fixtures/collected plus its ``resource.partition`` block, the only difference
    between the two files): the slice's GPU config has one GPU (``GetMIGGPUConfig``), so KAITO's command carries
    ``--tensor-parallel-size=1`` (tier 2 with one GPU) and never a data-parallel size."""
    mixed = tmp_path / "kaito_inferenceset_mig_mixed_strategy.yaml"
    text = MIG_SINGLE.read_text()
    assert "partition" not in text
    mixed.write_text(
        text.rstrip("\n")
        + '\n    resource:\n      partition:\n        mode: mig\n        profile: "2g.24gb"\n'
    )
    res = run_check([str(mixed)], Options(allow_hub=False))
    (cr,) = res.containers
    args = [str(a) for a in cr.serving.container["args"]]
    assert "--tensor-parallel-size=1" in args
    assert not any(a.startswith("--data-parallel-size") for a in args)
    assert cr.serving.container["resources"]["limits"] == {"nvidia.com/mig-2g.24gb": 1}


def _kaito_tp_config(
    tmp_path: Path, resource: str, preset: str = "deepseek-r1-distill-qwen-14b", tp: int = 2
) -> Path:
    """A Workspace whose inference config ConfigMap asks for tensor-parallel-size ``tp`` (KAITO's own
    examples/inference/kaito_workspace_custom_config.yaml, shortened) on the given ``resource:`` block."""
    out = tmp_path / "ws.yaml"
    out.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ds-inference-params}\ndata:\n"
        "  inference_config.yaml: |\n    vllm:\n      max-model-len: 8192\n"
        f"      tensor-parallel-size: {tp}\n"
        "---\napiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: ws}\n"
        f"resource:\n{resource}"
        f"inference:\n  preset: {{name: {preset}}}\n  config: ds-inference-params\n"
    )
    return out


def _kv403(path: Path, **kw: object) -> list:
    res = run_check([str(path)], Options(allow_hub=False, **kw))  # type: ignore[arg-type]
    return [d for d in res.diagnostics if d.rule == "KV403"]


def test_kv403_on_a_workspace_names_the_instance_type_not_a_resource_request(tmp_path: Path) -> None:
    """A Workspace has no ``nvidia.com/gpu`` to raise: KAITO requests the GPUs of ``resource.instanceType``.
    KV403's statement names the instance type and its GPU count, and its remedy is a VM size of the same GPU
    with as many GPUs as the engine's workers (from KAITO's SKU table), which re-checked has no KV403."""
    path = _kaito_tp_config(
        tmp_path, '  instanceType: "Standard_NC24ads_A100_v4"\n', preset="gemma-3-27b-instruct"
    )
    (kv403,) = _kv403(path)
    assert "resource.instanceType Standard_NC24ads_A100_v4: 1 GPU" in kv403.message
    assert "nvidia.com/gpu" not in kv403.message and "nvidia.com/gpu" not in (kv403.fix or "")
    same_gpu = [k for k, v in KAITO_AZURE_SKUS.items() if v[0] == 2 and "A100" in k]
    assert same_gpu and same_gpu[0] in (kv403.fix or "")
    path.write_text(path.read_text().replace("Standard_NC24ads_A100_v4", same_gpu[0]))
    assert not _kv403(path)


def test_kv403_on_a_workspace_names_no_size_kaito_runs_data_parallel(tmp_path: Path) -> None:
    """A 14B preset takes under half of a two-A100 VM: KAITO runs it data-parallel there (its tier 1), which the
    config's tensor-parallel-size multiplies (4 workers on 2 GPUs), so the remedy offers no larger VM size but
    says why; the re-check of that size shows it."""
    path = _kaito_tp_config(tmp_path, '  instanceType: "Standard_NC24ads_A100_v4"\n')
    (kv403,) = _kv403(path)
    assert "instanceType" not in (kv403.fix or "")
    assert (kv403.fix or "").startswith("lower the parallel sizes so their product is 1; ")
    assert "data-parallel" in (kv403.fix or "")
    two = [k for k, v in KAITO_AZURE_SKUS.items() if v[0] == 2 and "A100" in k]
    assert two
    path.write_text(path.read_text().replace("Standard_NC24ads_A100_v4", two[0]))
    (again,) = _kv403(path)
    assert "needs 4 GPUs" in again.message


def test_kv403_on_a_workspace_partition_names_its_count(tmp_path: Path) -> None:
    """A Workspace on existing nodes (``resource.partition``) requests ``partition.count`` GPUs: the remedy
    raises that count."""
    path = _kaito_tp_config(tmp_path, "  partition: {mode: none, count: 1}\n")
    (kv403,) = _kv403(path, accelerator="nvidia-a100-sxm4-80gb")
    assert "resource.partition.count: 1" in kv403.message
    assert "set resource.partition.count to 2" in (kv403.fix or "")


def test_kv403_idle_gpus_of_a_workspace_name_the_smaller_instance_type(tmp_path: Path) -> None:
    """The inference config's tensor-parallel-size 1 on a two-A100 VM leaves a GPU idle: the remedy is the
    one-A100 VM size, not a resource request the Workspace does not have."""
    path = _kaito_tp_config(
        tmp_path, '  instanceType: "Standard_NC48ads_A100_v4"\n', preset="gemma-3-27b-instruct", tp=1
    )
    (kv403,) = _kv403(path)
    assert kv403.severity == "warning"
    assert "resource.instanceType Standard_NC48ads_A100_v4: 2 GPUs" in kv403.message
    assert (kv403.fix or "").startswith("choose a resource.instanceType with 1 GPU (Standard_NC24ads_A100_v4")
    path.write_text(path.read_text().replace("Standard_NC48ads_A100_v4", "Standard_NC24ads_A100_v4"))
    assert not _kv403(path)
