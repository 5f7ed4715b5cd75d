"""`kvlint check --cluster`: the GPU comes from the live nodes the pod can schedule on, read through the real
kubernetes client from a local API server (the `api` fixture of test_cluster.py serves fixtures/cluster/nodes.json)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from test_cluster import api  # noqa: F401  (pytest fixture)

from kvlint.cli import main

POD = Path(__file__).resolve().parents[1] / "fixtures" / "cluster" / "pod-gpu-count-8.yaml"


def test_check_without_cluster_cannot_tell_the_gpu() -> None:
    res = CliRunner().invoke(main, ["check", "--offline", "--format", "json", str(POD)])
    data = json.loads(res.output)
    assert data["workloads"][0]["accelerator"] is None
    assert "KV501" in {d["rule"] for d in data["diagnostics"]}


def test_check_with_cluster_takes_the_gpu_from_the_nodes(api: str) -> None:  # noqa: F811
    res = CliRunner().invoke(
        main,
        [
            "check",
            "--offline",
            "--format",
            "json",
            "--cluster",
            "--kubeconfig",
            api,
            "--context",
            "test-ctx",
            str(POD),
        ],
    )
    assert res.exit_code in (0, 1), res.output
    data = json.loads(res.output)
    w = data["workloads"][0]
    assert w["accelerator"] == "nvidia-a100-sxm4-80gb"
    assert w["plan"] is not None and w["plan"]["memory"]["total_bytes"] > 79 * 2**30
    assert "KV501" not in {d["rule"] for d in data["diagnostics"]}


def test_cluster_unreachable_is_a_usage_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main, ["check", "--offline", "--cluster", "--kubeconfig", str(tmp_path / "missing"), str(POD)]
    )
    assert res.exit_code == 2
    assert "--cluster" in res.output and "Traceback" not in res.output
