"""vLLM version parsing and the era switches keyed on it.

Versions are compared as ``(major, minor, patch)`` tuples. Image tags such as ``v0.11.0``,
``0.8.5.post1``, ``0.15.2rc1.dev93``, ``~0.7`` or ``0.22`` parse to their numeric prefix; ``None``,
``latest``, ``nightly``, digests and anything unreadable resolve to :data:`NEWEST_VLLM` *and* are
flagged as assumed (see :func:`resolve_version`).

Every switch below is listed in docs/engine-memory-model.md §4 with the vLLM wheel it was read in
(e.g. ``vllm@0.20.0:vllm/config/cache.py::CacheConfig.gpu_memory_utilization``).
"""

from __future__ import annotations

import re

NEWEST_VLLM = "0.33.0"
"""Newest vLLM release the memory model was read from (docs/engine-memory-model.md §0)."""

Version = tuple[int, int, int]

_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def _parse(s: str) -> Version | None:
    m = _VERSION_RE.search(s)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


NEWEST: Version = _parse(NEWEST_VLLM) or (0, 33, 0)


def resolve_version(s: str | None) -> tuple[Version, bool]:
    """Parse an engine version and say whether it had to be assumed.

    Args:
        s: version text as read from an image tag or ``--engine-version`` (``"0.11.0"``, ``"v0.8.5.post1"``,
            ``"latest"``, ``None``).

    Returns:
        ``((major, minor, patch), assumed)``; ``assumed`` is True when ``s`` is None/empty/``latest`` or has no
        ``X.Y`` number, in which case the version is :data:`NEWEST_VLLM`. Never raises.
    """
    if not s or s.strip().lower() in {"latest", "nightly", "main", "head"}:
        return NEWEST, True
    v = _parse(s)
    if v is None:
        return NEWEST, True
    return v, False


def parse_version(s: str | None) -> Version:
    """``(major, minor, patch)`` of a vLLM version string; None/``latest``/unreadable -> 0.33.0.

    Use :func:`resolve_version` to also learn whether the newest version was assumed. Never raises.
    """
    return resolve_version(s)[0]


def fmt_version(v: Version) -> str:
    """``(0, 11, 0)`` -> ``"0.11.0"``."""
    return f"{v[0]}.{v[1]}.{v[2]}"


def default_gpu_memory_utilization(v: Version) -> float:
    """Default ``--gpu-memory-utilization``: 0.90 up to 0.19.x, 0.92 from 0.20.0.

    Source: ``vllm@0.20.0:vllm/config/cache.py::CacheConfig.gpu_memory_utilization`` (docs/engine-memory-model.md §1.2.2).
    """
    return 0.92 if v >= (0, 20, 0) else 0.90


def has_kv_cache_memory_bytes(v: Version) -> bool:
    """``--kv-cache-memory-bytes`` exists from 0.10.2 (``vllm@0.10.2:vllm/config/cache.py``)."""
    return v >= (0, 10, 2)


def supports_auto_max_model_len(v: Version) -> bool:
    """``--max-model-len -1``/``auto`` accepted from 0.14.0 (``vllm@0.33.0:vllm/config/model.py``, §1.8 item 9)."""
    return v >= (0, 14, 0)


def yarn_multiplies_max_len(v: Version) -> bool:
    """YaRN ``factor`` multiplies the derived max length up to 0.29.x, not from 0.30.0 (§1.8 item 5)."""
    return v < (0, 30, 0)


def has_null_block_in_fit_check(v: Version) -> bool:
    """From 0.29.0 the fit check plans against ``available - bytes_per_block`` (null block, §1.4)."""
    return v >= (0, 29, 0)


def capacity_is_concurrency_times_len(v: Version) -> bool:
    """From 0.21.0 "GPU KV cache size" = int(max_concurrency x max_model_len)
    (``vllm@0.33.0:vllm/v1/core/kv_cache_utils.py::get_kv_cache_capacity``, §1.4)."""
    return v >= (0, 21, 0)


def cudagraph_subtracted_by_default(v: Version) -> bool:
    """CUDA-graph estimate subtracted from the KV budget by default from 0.20.0 (§1.2.2).

    Evidence (re-checked for the gt-062 question, whose 0.26.0 figures close without the 0.48 GiB graph term):
    ``vllm@0.20.0:vllm/envs.py`` has ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` default "1" ("Enabled by
    default as of v0.21.0"); ``vllm/v1/worker/gpu_worker.py::Worker.determine_available_memory`` subtracts
    ``cudagraph_memory_estimate_applied`` (= the estimate when the env is on) from the requested memory in both
    the peak-based (<= 0.26) and free-memory (>= 0.27) forms; that worker logs "CUDA graph memory profiling is
    enabled (default since v0.21.0) ... To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0", a line seen
    in public 0.21.1, 0.25.2 and 0.27.1 start-up logs (e.g. gpustack/runner#251 on 0.27.1); the PR that would
    have made it opt-in again (vllm-project/vllm#45197, 2026-06) was closed, not merged. So 0.26.0 subtracts it
    by default; gt-062 is kept as an out-of-rule observation (the reporter's environment or the printed
    activation term may already include it), not a version switch. A stored ``vllm/envs_impl.py`` snapshot
    (commit bc4a642c) shows default "0": a main-branch state of unknown release, not used here.
    Measured only from 0.18.0; not at all before.
    """
    return v >= (0, 20, 0)


def cudagraph_env_exists(v: Version) -> bool:
    """``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` exists from 0.18.0 (``vllm@0.18.0:vllm/envs.py``)."""
    return v >= (0, 18, 0)


def hybrid_allocator_available(v: Version) -> bool:
    """The hybrid KV-cache manager (sliding-window/Mamba-aware allocation) exists from 0.9.2 (§1.5)."""
    return v >= (0, 9, 2)
