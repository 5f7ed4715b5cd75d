"""KV409 compares at most a fixed number of one container's resource names with the GPU names (difflib)."""

from __future__ import annotations

import difflib

import pytest

from kvlint.rules.families import parallelism
from kvlint.rules.families.parallelism import (
    MAX_CLOSE_COMPARISONS,
    _close_gpu_resource,
    invalid_gpu_resources,
)


def test_difflib_runs_for_a_bounded_number_of_names_per_container(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = difflib.get_close_matches

    def counting(*args: object, **kwargs: object) -> list[str]:
        calls.append(args[0])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    _close_gpu_resource.cache_clear()
    names = 2_000
    limits = {f"example.com/gpu-like-{i}": 1 for i in range(names)}
    limits["nvidia.com/gpus"] = 1  # a misspelling among them, after the bound
    found = invalid_gpu_resources({"name": "vllm", "resources": {"limits": limits}})
    # 2,001 before the bound: one difflib comparison for every name
    assert len(calls) <= MAX_CLOSE_COMPARISONS < names
    # names beyond the bound that look like a GPU are still reported, without a suggestion
    assert ("nvidia.com/gpus", "limits", None) in found
    _close_gpu_resource.cache_clear()


def test_a_normal_container_still_gets_its_suggestion() -> None:
    _close_gpu_resource.cache_clear()
    found = invalid_gpu_resources({"resources": {"limits": {"nvidia.com/gpus": 1, "rdma/roce": 1}}})
    assert found == [("nvidia.com/gpus", "limits", "nvidia.com/gpu")]
    assert parallelism.MAX_CLOSE_COMPARISONS >= 16
