"""When vLLM 0.34.0 turns its extensible KV cache off (docs/engine-memory-model.md §1.2.5 item 1), read in the 0.34.0
wheel: ``vllm/config/vllm.py::VllmConfig._resolve_extensible_kv_cache`` (``--kv-cache-memory-bytes``,
``--num-gpu-blocks-override``, ``--enable-elastic-ep``, a connector sharing the cache through legacy CUDA IPC or its
own memory pool, on ROCm one that registers it for RDMA, and by default one exporting FABRIC handles without an IMEX
channel) and the connectors' ``kv_cache_access`` (``vllm/distributed/kv_transfer/kv_connector/v1/``). Off, the
utilization defaults to 0.92 instead of 1.0 and the pool is the estimate-based one. Configs: fixtures/plan/models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.engines.vllm import parse_vllm_argv
from kvlint.memory.versions import parse_version
from kvlint.memory.vllm import (
    extensible_kv_cache,
    extensible_kv_cache_unsupported,
    kv_cache_access,
    plan_vllm_detailed,
    release_switches,
    settings_from_config,
)
from kvlint.models import resolve_model

GiB = 1 << 30
MODEL = resolve_model(
    str(Path(__file__).resolve().parent.parent / "fixtures" / "plan" / "models" / "meta-llama--Llama-3.1-8B"),
    allow_hub=False,
)
H100 = ("NVIDIA H100 80GB HBM3", "9.0", int(79.19 * GiB))
MI300X = ("AMD Instinct MI300X", None, int(191.98 * GiB))
NIXL = {"kv_connector": "NixlConnector", "kv_role": "kv_both"}


def _settings(*flags: str, version: str = "0.34.0"):
    return settings_from_config(parse_vllm_argv(["meta-llama/Llama-3.1-8B", *flags], version=version))


def _plan(*flags: str, gpu: tuple = H100, version: str = "0.34.0"):
    name, cc, total = gpu
    return plan_vllm_detailed(
        _settings(*flags, version=version), MODEL, total, gpu_name=name, compute_capability=cc
    ).plan


def _ktc(cfg: dict) -> tuple[str, str]:
    return "--kv-transfer-config", json.dumps(cfg)


def test_connector_access_restates_each_connectors_kv_cache_access() -> None:
    assert kv_cache_access(None) == frozenset()
    assert kv_cache_access("{not json") == frozenset()
    assert kv_cache_access(NIXL) == {"registers", "exports_fabric"}
    assert kv_cache_access(json.dumps(NIXL)) == {"registers", "exports_fabric"}
    assert kv_cache_access({**NIXL, "kv_buffer_device": "cpu"}) == frozenset()
    assert kv_cache_access({"kv_connector": "NixlPushConnector"}) == {"registers", "exports_fabric"}
    assert kv_cache_access({"kv_connector": "LMCacheMPConnector"}) == {"legacy_ipc"}
    assert kv_cache_access({"kv_connector": "MooncakeConnector"}) == {"registers"}
    assert kv_cache_access({"kv_connector": "LMCacheConnectorV1"}) == frozenset()
    assert kv_cache_access({"kv_connector": "OffloadingConnector"}) == frozenset()
    # an external class: kvlint does not import it
    assert (
        kv_cache_access({"kv_connector": "LMCacheMPConnector", "kv_connector_module_path": "x.y"})
        == frozenset()
    )
    multi = {
        "kv_connector": "MultiConnector",
        "kv_connector_extra_config": {
            "connectors": [NIXL, {"kv_connector": "OffloadingConnector", "kv_connector_extra_config": {}}]
        },
    }
    assert kv_cache_access(multi) == {"registers", "exports_fabric"}
    pool = {"kv_connector": "LMCacheConnectorV1", "kv_connector_extra_config": {"custom_mem_pool": True}}
    assert kv_cache_access(pool) == {"custom_mem_pool"}
    child_pool = {"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": [pool]}}
    assert kv_cache_access(child_pool) == {"custom_mem_pool"}


@pytest.mark.parametrize(
    "flags, reason",
    [
        (("--kv-cache-memory-bytes", "20000000000"), "kv_cache_memory_bytes overrides"),
        (("--num-gpu-blocks-override", "1000"), "num_gpu_blocks_override overrides"),
        (("--enable-elastic-ep", "--enable-expert-parallel"), "elastic EP scale-up skips warmup"),
        (_ktc({"kv_connector": "LMCacheMPConnector", "kv_role": "kv_both"}), "legacy CUDA IPC"),
        (
            _ktc(
                {"kv_connector": "LMCacheConnectorV1", "kv_connector_extra_config": {"custom_mem_pool": True}}
            ),
            "custom_mem_pool allocates the KV cache",
        ),
    ],
)
def test_unsupported_settings_turn_it_off(flags: tuple[str, ...], reason: str) -> None:
    s = _settings(*flags)
    rel = release_switches(parse_version("0.34.0"))
    assert reason in (extensible_kv_cache_unsupported(s) or "")
    assert not extensible_kv_cache(s, rel)
    p = _plan(*flags)
    assert p.gpu_memory_utilization == 0.92
    assert any(a.startswith("extensible KV cache off: ") and reason in a for a in p.assumptions)
    # the default plan has the cache on and says nothing of the kind
    on = _plan()
    assert on.gpu_memory_utilization == 1.0 and not any(
        "extensible KV cache off" in a for a in on.assumptions
    )


def test_nixl_turns_it_off_by_default_unless_asked_for() -> None:
    """A connector exporting FABRIC handles (NIXL, kv_buffer_device on the GPU) turns it off when unset, [assumed]
    without an IMEX channel; --enable-extensible-kv-cache keeps it on (vLLM then warns), and NIXL staging through
    host memory (kv_buffer_device cpu) leaves it on."""
    off = _plan(*_ktc(NIXL))
    assert off.gpu_memory_utilization == 0.92
    assert any("IMEX channel" in a for a in off.assumptions)
    asked = _plan(*_ktc(NIXL), "--enable-extensible-kv-cache")
    assert asked.gpu_memory_utilization == 1.0
    host = _plan(*_ktc({**NIXL, "kv_buffer_device": "cpu"}))
    assert host.gpu_memory_utilization == 1.0
    # the pool is then the estimate-based one, the same as with the flag
    assert off.kv_cache_bytes == _plan(*_ktc(NIXL), "--no-enable-extensible-kv-cache").kv_cache_bytes


def test_rocm_connectors_that_register_the_cache_turn_it_off() -> None:
    """On ROCm, UCX/RDMA cannot register driver-mapped memory: Mooncake (REGISTERS) turns it off there, not on CUDA.
    The vendor is known only once the GPU is, after the GPU-independent prelude."""
    flags = _ktc({"kv_connector": "MooncakeConnector", "kv_role": "kv_producer"})
    assert _plan(*flags).gpu_memory_utilization == 1.0
    rocm = _plan(*flags, gpu=MI300X)
    assert rocm.gpu_memory_utilization == 0.92
    assert any("on ROCm, UCX and RDMA cannot yet register" in a for a in rocm.assumptions)
    assert _plan(gpu=MI300X).gpu_memory_utilization == 1.0
    s = _settings(*flags)
    assert extensible_kv_cache_unsupported(s) is None
    assert extensible_kv_cache_unsupported(s, "amd") is not None


def test_releases_before_0_34_are_unchanged() -> None:
    """0.33.0 has no extensible KV cache: the connector settings do not move its default utilization."""
    for flags in ((), _ktc(NIXL), ("--enable-elastic-ep", "--enable-expert-parallel")):
        p = _plan(*flags, version="0.33.0")
        assert p.gpu_memory_utilization == 0.92
        assert not any("extensible KV cache off" in a for a in p.assumptions)


_MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  selector:
    matchLabels: {app: llama}
  template:
    metadata:
      labels: {app: llama}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.34.0
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192",
                 "--kv-cache-memory-bytes", "20000000000",
                 "--enable-extensible-kv-cache"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def test_asking_for_it_where_unsupported_is_refused(tmp_path: Path) -> None:
    """VllmConfig._resolve_extensible_kv_cache raises "enable_extensible_kv_cache: REASON." when the flag was given
    and a setting rules the cache out: KV206 at the flag, which is dropped (the plan sizes the cache without it)."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    cfg = parse_vllm_argv(
        ["meta-llama/Llama-3.1-8B", "--enable-extensible-kv-cache", "--kv-cache-memory-bytes", "20G"],
        version="0.34.0",
    )
    (f,) = [f for f in cfg.findings if f.rule == "KV206"]
    assert "'enable_extensible_kv_cache: it sizes the KV cache from measured memory, which" in f.message
    assert "enable_extensible_kv_cache" not in cfg.flags
    # without the conflicting setting, or left unset, nothing is refused
    assert not parse_vllm_argv(["m", "--enable-extensible-kv-cache"], version="0.34.0").findings
    assert not parse_vllm_argv(["m", *_ktc(NIXL), "--enable-extensible-kv-cache"], version="0.34.0").findings
    assert not parse_vllm_argv(["m", "--kv-cache-memory-bytes", "20G"], version="0.34.0").findings
    elastic = parse_vllm_argv(["m", "--enable-elastic-ep", "--enable-extensible-kv-cache"], version="0.34.0")
    assert any("elastic EP scale-up" in f.message for f in elastic.findings if f.rule == "KV206")
    path = tmp_path / "v034.yaml"
    path.write_text(_MANIFEST, encoding="utf-8")
    found = [d for d in run_check([str(path)], Options(allow_hub=False)).diagnostics if d.rule == "KV206"]
    assert len(found) == 1 and found[0].severity == "error"
    loc = found[0].loc
    assert loc is not None and _MANIFEST.splitlines()[loc.line - 1][loc.column - 1 :].startswith(
        '"--enable-extensible-kv-cache"'
    )


@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--kv-cache-memory-bytes", "0"),
        ("--kv-cache-memory-bytes", "20G"),
        ("--num-gpu-blocks-override", "4096"),
        ("--enable-elastic-ep",),
        ("--no-enable-elastic-ep",),
        _ktc(NIXL),
        _ktc({"kv_connector": "LMCacheMPConnector"}),
        _ktc({**NIXL, "kv_connector_extra_config": {"custom_mem_pool": True}}),
        ("--kv-transfer-config.kv_connector=LMCacheMPConnector",),
    ],
)
def test_the_parser_refuses_the_flag_for_the_reason_the_plan_reads(flags: tuple[str, ...]) -> None:
    """The parser's KV206 on --enable-extensible-kv-cache and the plan read the same settings (one mapping,
    settings_from_flags): it is refused exactly when the plan's settings without it give a reason, in those
    words."""
    asked = parse_vllm_argv(["m", *flags, "--enable-extensible-kv-cache"], version="0.34.0")
    refused = [f for f in asked.findings if f.rule == "KV206" and "enable_extensible_kv_cache:" in f.message]
    why = extensible_kv_cache_unsupported(_settings(*flags))
    assert [f"'enable_extensible_kv_cache: {why}.'" in f.message for f in refused] == ([True] if why else [])


_ROCM_SHARED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-1b-mi300x
spec:
  replicas: 2
  selector:
    matchLabels: {app: llama-1b-mi300x}
  template:
    metadata:
      labels: {app: llama-1b-mi300x}
    spec:
      nodeSelector:
        amd.com/gpu.device-id: 74b5
      containers:
        - name: vllm
          image: vllm/vllm-openai-rocm:v0.34.0
          args: ["--model", "meta-llama/Llama-3.2-1B-Instruct", "--max-model-len", "8192",
                 "--kv-transfer-config", '{"kv_connector": "MooncakeConnector", "kv_role": "kv_producer"}']
          resources:
            limits:
              amd.com/gpu: 1
"""


def test_kv106_on_rocm_agrees_with_the_plan(tmp_path: Path) -> None:
    """On ROCm a connector that registers the KV cache (Mooncake) turns the extensible KV cache off, which the plan
    knows once the GPU is (resolve_startup): KV106 on two engines sharing the MI300X says what the plan says, the
    release default utilization and vLLM's free-memory check, whether it reads the plan's figure or, with no plan,
    works the default out itself. Sharing is set on the placement (no ROCm sharing label exists to write)."""
    from dataclasses import replace

    from kvlint.memory.versions import default_gpu_memory_utilization
    from kvlint.options import Options
    from kvlint.pipeline import run_check
    from kvlint.rules.runner import check_container

    path = tmp_path / "rocm.yaml"
    path.write_text(_ROCM_SHARED, encoding="utf-8")
    options = Options(allow_hub=False)
    (cr,) = run_check([str(path)], options).containers
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.vendor == "amd" and cr.plan is not None
    util = cr.plan.gpu_memory_utilization
    assert util == default_gpu_memory_utilization(parse_version("0.34.0"))
    shared = replace(cr, placement=replace(cr.placement, shared=True, max_sharers=2))
    for c in (shared, replace(shared, plan=None, plan_detail=None)):
        (d,) = check_container(c, options, rules=frozenset({"KV106"}))
        assert f"gpu-memory-utilization {util:.2f} " in d.message, d.message
        assert "less than desired GPU memory utilization" in d.message
        assert "does not check the claim" not in d.message
