"""Each GPU the scheduling constraints leave (``Placement.candidates``) is re-planned on its own device: the part of
that board the container gets (an AMD compute partition, a MIG slice), not the part of the smallest board the
placement was sized on (review of branch gpus55: ``kvlint.pipeline._with_candidates`` kept the first board's
``memory_bytes_override``, so a 32 GiB MI325X CPX partition was judged as the MI300X's 24 GiB one)."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import resolve_placement
from kvlint.cli import main
from kvlint.load import load_text
from kvlint.types import Placement

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {{key: {key}, operator: In, values: [{values}]}}
  containers:
  - name: a
    image: {image}
    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "32768", --gpu-memory-utilization, "0.7"]
    resources: {{limits: {{{resource}: 1}}}}
"""
_AMD = {
    "key": "amd.com/gpu.product-name",
    "image": "rocm/vllm:rocm6.4.1_vllm_0.10.0_20250812",
    "resource": "amd.com/cpx_nps4",
}


def _check(tmp_path, name: str, **fields: str) -> list[dict]:
    f = tmp_path / f"{name}.yaml"
    f.write_text(_POD.format(name=name, **fields))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", str(f)]
    )
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)["diagnostics"]


def test_each_candidate_board_is_judged_on_its_own_compute_partition(tmp_path) -> None:
    """The same pod pinned to each board alone is the reference: the MI300X's CPX partition has no room for the KV
    cache (KV102), the MI325X's fits. Allowed both, the verdict per board must say the same."""
    alone = {
        board: {d["rule"] for d in _check(tmp_path, board, values=f"AMD_Instinct_{board}", **_AMD)}
        for board in ("MI300X", "MI325X")
    }
    assert "KV102" in alone["MI300X"] and "KV102" not in alone["MI325X"]
    diags = _check(tmp_path, "both", values="AMD_Instinct_MI300X, AMD_Instinct_MI325X", **_AMD)
    (kv102,) = [d for d in diags if d["rule"] == "KV102"]
    assert "AMD Instinct MI300X fails (KV102)" in kv102["message"]
    assert "AMD Instinct MI325X fits" in kv102["message"]


def _placement(values: list[str], resource: str, key: str) -> Placement:
    """The placement of a container asking one ``resource`` on nodes whose ``key`` is In ``values``."""
    text = yaml.safe_dump(
        {
            "kind": "Pod",
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
                            ]
                        }
                    }
                },
                "containers": [{"name": "a", "resources": {"limits": {resource: 1}}}],
            },
        }
    )
    spec = load_text(text, "p.yaml").documents[0].data["spec"]
    return resolve_placement(spec, spec["containers"][0], {})


def test_a_candidate_gets_its_own_mig_slice_and_amd_partition() -> None:
    """candidate_placement sizes the candidate's own part: 1g.18gb is 16 GiB on an H200, 17.5 GiB on a GH200 144GB
    (the catalogue's MIG tables); an MI325X's CPX partition is its memory / 8."""
    from kvlint.accelerators.placement import candidate_placement

    p = _placement(
        ["NVIDIA-H200", "NVIDIA-GH200-144G-HBM3e"], "nvidia.com/mig-1g.18gb", "nvidia.com/gpu.product"
    )
    assert len(p.candidates) == 2 and p.accelerator is not None and p.accelerator.id == "nvidia-h200-141gb"
    for acc in p.candidates:
        prof, _ = cat.mig_profile(acc.id, "1g.18gb")
        assert prof is not None
        assert candidate_placement(p, acc).memory_bytes == prof.memory_bytes
    q = _placement(
        ["AMD_Instinct_MI300X", "AMD_Instinct_MI325X"], "amd.com/cpx_nps4", "amd.com/gpu.product-name"
    )
    big = cat.require("amd-instinct-mi325x")
    on_big = candidate_placement(q, big)
    assert on_big.memory_bytes == big.memory_bytes // 8 // 4096 * 4096
    assert on_big.accelerator is big and on_big.candidates == ()
