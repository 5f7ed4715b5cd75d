"""A team's own GPU knowledge (.kvlint.yaml ``accelerators`` and ``fleet``), ``--gpu-memory`` without
``--accelerator``, and the fleet verdict when a workload names no GPU.

Manifests are real public ones from fixtures/collected (sources in its INDEX.csv): an AKS Deployment that
selects its GPU pool by ``kubernetes.azure.com/agentpool: "gpua10"`` and SGLang's own k8s example, which
names no GPU at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.accelerators import lookup, parse_quantity
from kvlint.accelerators.site import DEFAULT_FLEET
from kvlint.config import ConfigError, apply_config, parse_config
from kvlint.options import Options
from kvlint.pipeline import run_check

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
AKS = COLLECTED / "bhajian__redhat__llm-d-vllm-aks__manifest__vllm-redhat-llama8b.yaml"
SGLANG = COLLECTED / "sgl-project__sglang__docker__k8s-sglang-service.yaml"


def _options(config_text: str, tmp_path: Path, **kw: object) -> Options:
    path = tmp_path / ".kvlint.yaml"
    path.write_text(config_text)
    return apply_config(Options(allow_hub=False, **kw), parse_config(config_text, str(path)))  # type: ignore[arg-type]


def _container(result, name: str | None = None):
    return next(c for c in result.containers if name is None or c.container_name == name)


def test_an_aks_agentpool_label_is_mapped_to_its_gpu(tmp_path: Path) -> None:
    opts = _options(
        """
accelerators:
  node_labels:
    kubernetes.azure.com/agentpool: {gpua10: nvidia-a10}
model_paths:
  RedHatAI/Llama-3.1-8B-Instruct: meta-llama/Llama-3.1-8B-Instruct
""",
        tmp_path,
    )
    result = run_check([str(AKS)], opts)
    cr = _container(result, "vllm")
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-a10"
    assert "kubernetes.azure.com/agentpool=gpua10" in cr.placement.how and ".kvlint.yaml" in cr.placement.how
    assert cr.plan is not None and cr.plan.total_bytes == lookup("nvidia-a10").memory_bytes  # type: ignore[union-attr]
    assert not any(d.rule == "KV501" for d in result.diagnostics)


def test_without_the_mapping_the_same_pod_gets_a_fleet_verdict(tmp_path: Path) -> None:
    opts = _options(
        "model_paths: {RedHatAI/Llama-3.1-8B-Instruct: meta-llama/Llama-3.1-8B-Instruct}\n", tmp_path
    )
    result = run_check([str(AKS)], opts)
    cr = _container(result, "vllm")
    assert cr.placement is not None and cr.placement.accelerator is None
    assert [e.accelerator.id for e in cr.fleet] == list(DEFAULT_FLEET)
    kv501 = next(d for d in result.diagnostics if d.rule == "KV501")
    assert "planned on kvlint's default fleet" in kv501.message


def test_a_custom_accelerator_behind_a_compute_class(tmp_path: Path) -> None:
    """A GPU the catalogue lacks, declared with its CUDA total and compute capability, behind a GKE
    ComputeClass label (the label key is GKE's; the class name is the team's own)."""
    manifest = tmp_path / "deploy.yaml"
    text = SGLANG.read_text().replace(
        "      containers:",
        "      nodeSelector:\n        cloud.google.com/compute-class: gpu-rtx4000sff\n      containers:",
        1,
    )
    assert "compute-class" in text
    manifest.write_text(text)
    opts = _options(
        """
accelerators:
  custom:
    - id: acme-rtx-4000-sff-ada
      name: NVIDIA RTX 4000 SFF Ada Generation
      memory: 19.67GiB
      compute_capability: "8.9"
  node_labels:
    cloud.google.com/compute-class: {gpu-rtx4000sff: acme-rtx-4000-sff-ada}
""",
        tmp_path,
    )
    cr = _container(run_check([str(manifest)], opts))
    acc = cr.placement.accelerator
    assert acc is not None and acc.id == "acme-rtx-4000-sff-ada" and acc.bf16 and acc.fp8
    assert cr.plan is not None and cr.plan.total_bytes == parse_quantity("19.67GiB")


def test_a_pinned_node_name(tmp_path: Path) -> None:
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(
        SGLANG.read_text().replace("      containers:", "      nodeName: gpu-node-7\n      containers:", 1)
    )
    opts = _options("accelerators:\n  node_names: {gpu-node-7: h100}\n", tmp_path)
    cr = _container(run_check([str(manifest)], opts))
    assert cr.placement.accelerator is not None and cr.placement.accelerator.id == "nvidia-h100-sxm5-80gb"
    assert "nodeName gpu-node-7" in cr.placement.how


def test_gpu_memory_without_accelerator_is_a_generic_gpu() -> None:
    total = parse_quantity("23.55GiB")
    result = run_check([str(SGLANG)], Options(allow_hub=False, gpu_memory_bytes=total))
    cr = _container(result)
    acc = cr.placement.accelerator
    assert acc is not None and acc.id == "generic" and acc.memory_bytes == total
    assert "--gpu-memory without --accelerator" in cr.placement.how and "bf16 assumed" in cr.placement.how
    assert cr.plan is not None and cr.plan.total_bytes == total
    assert not cr.fleet  # sized on the generic GPU, not on a fleet


def test_default_fleet_verdicts_match_plans_on_each_gpu() -> None:
    result = run_check([str(SGLANG)], Options(allow_hub=False))
    cr = _container(result)
    assert len(cr.fleet) == len(DEFAULT_FLEET)
    for entry in cr.fleet:
        direct = _container(
            run_check([str(SGLANG)], Options(allow_hub=False, accelerator=entry.accelerator.id))
        )
        assert direct.plan is not None and entry.detail is not None
        assert entry.detail.plan.capacity_tokens == direct.plan.capacity_tokens
        errors = {
            d.rule
            for d in run_check(
                [str(SGLANG)], Options(allow_hub=False, accelerator=entry.accelerator.id)
            ).diagnostics
            if d.severity == "error"
        }
        if entry.verdict == "fits":
            assert not errors & {"KV101", "KV102", "KV103", "KV701"}
    kv501 = next(d for d in result.diagnostics if d.rule == "KV501")
    assert kv501.severity == "warning"
    t4 = next(e for e in cr.fleet if e.accelerator.id == "nvidia-t4")
    assert t4.verdict == "fails" and "Tesla T4" in kv501.message.split("fails on", 1)[1]


def test_json_report_carries_the_fleet(tmp_path: Path) -> None:
    from kvlint.report.jsonout import render_json

    text = render_json(run_check([str(SGLANG)], Options(allow_hub=False)))
    workload = next(w for w in json.loads(text)["workloads"] if w["engine"] == "sglang")
    assert workload["plan"] is None
    assert {e["accelerator"] for e in workload["fleet"]} == set(DEFAULT_FLEET)
    assert all(e["verdict"] in ("fits", "risky", "fails", "unknown") for e in workload["fleet"])


@pytest.mark.parametrize(
    ("fleet", "severity"),
    [("[t4]", "error"), ("[h100, h200]", "info"), ("[t4, h200]", "warning")],
)
def test_a_configured_fleet_decides_the_severity(tmp_path: Path, fleet: str, severity: str) -> None:
    opts = _options(f"fleet: {fleet}\n", tmp_path)
    kv501 = next(d for d in run_check([str(SGLANG)], opts).diagnostics if d.rule == "KV501")
    assert kv501.severity == severity
    assert "the configured fleet" in kv501.message


def test_config_errors_name_the_key_and_line(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"\.kvlint\.yaml:3:\d+: accelerators\.node_labels\.agentpool\.gpunp: unknown accelerator",
    ):
        parse_config(
            "accelerators:\n  node_labels:\n    agentpool: {gpunp: no-such-gpu}\n",
            str(tmp_path / ".kvlint.yaml"),
        )
    with pytest.raises(ConfigError, match="already an accelerator id"):
        parse_config("accelerators:\n  custom: [{id: h100, memory: 80GiB}]\n", str(tmp_path / ".kvlint.yaml"))
    with pytest.raises(ConfigError, match="memory"):
        parse_config("accelerators:\n  custom: [{id: mine, memory: lots}]\n", str(tmp_path / ".kvlint.yaml"))
    with pytest.raises(ConfigError, match=r"fleet\[1\]: unknown accelerator"):
        parse_config("fleet: [h100, b9000]\n", str(tmp_path / ".kvlint.yaml"))
