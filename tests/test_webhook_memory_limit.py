"""The webhook's start-up check of its container's memory limit against what the server lets its processes hold
(:func:`kvlint.webhook.server.memory_bound`): a limit below it lets the kernel's OOM killer end the whole container
(``memory.oom.group``) instead of one capped worker's allocation failing. The chart refuses such a limit
(tests/test_chart.py); ``kvlint webhook serve`` logs a warning for a deployment written by hand."""

from __future__ import annotations

from pathlib import Path

from kvlint.webhook.cli import build_settings
from kvlint.webhook.server import container_memory_limit, memory_bound, memory_limit_warning


def test_the_limit_is_read_from_the_cgroup_files_as_the_kernel_writes_them(tmp_path: Path) -> None:
    v2, v1, missing = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes", tmp_path / "none"
    v2.write_text("1610612736\n")
    assert container_memory_limit((str(missing), str(v2))) == 1536 * 2**20
    v2.write_text("max\n")  # cgroup v2 without a limit
    assert container_memory_limit((str(v2), str(v1))) is None
    v1.write_text("9223372036854771712\n")  # cgroup v1 without a limit: the page-rounded maximum
    assert container_memory_limit((str(missing), str(v1))) is None
    v1.write_text("garbage")
    assert container_memory_limit((str(v1),)) is None
    assert container_memory_limit((str(missing),)) is None
    assert container_memory_limit((str(tmp_path),)) is None  # a directory: unreadable as a file


def test_a_limit_below_what_the_processes_may_hold_is_warned_about() -> None:
    defaults = build_settings()
    bound = memory_bound(defaults, 1000)
    assert bound is not None and bound <= 1536 * 2**20  # the chart's default limit holds the defaults
    assert memory_limit_warning(defaults, 1000, 1536 * 2**20) is None
    assert memory_limit_warning(defaults, 1000, None) is None  # no limit: nothing to compare
    three = build_settings(workers=3)
    text = memory_limit_warning(three, 1000, 1536 * 2**20)
    assert text is not None
    need = memory_bound(three, 1000)
    assert need is not None and f"({-(-need // 2**20):,} MiB:" in text and "3 workers" in text, text
    assert memory_limit_warning(three, 1000, need) is None and memory_limit_warning(three, 1000, need - 1)
    uncapped = build_settings(workers=8, worker_memory="0")
    assert memory_bound(uncapped, 1000) is None and memory_limit_warning(uncapped, 1000, 2**30) is None


def test_a_negative_or_unbounded_worker_memory_is_refused_at_start() -> None:
    """``--worker-memory -1Mi`` passed the ``0 < n < 128 MiB`` check, and ``setrlimit`` refused the negative cap in
    each worker, which then ran with none (the error is swallowed, as on a platform without ``RLIMIT_AS``), while
    :func:`memory_bound` counted each worker at -1 MiB: the start-up check against the container's limit was
    defeated with it. ``inf`` and ``1e400`` ended ``kvlint webhook serve`` with an OverflowError traceback, ``nan``
    with Python's own words. Each is now refused with the option named (click's usage error, exit status 2)."""
    import click
    import pytest

    for value in ("-1Mi", "-536870912"):
        with pytest.raises(click.UsageError, match="worker memory"):
            build_settings(worker_memory=value)
    for option in ("worker_memory", "max_request_bytes"):
        for value in ("inf", "1e400", "nan", "-inf"):
            with pytest.raises(click.BadParameter, match="not a size"):
                build_settings(**{option: value})
    assert build_settings(worker_memory="0").worker_memory_bytes is None  # 0: no cap, as documented
    assert build_settings(worker_memory="1.5Gi").worker_memory_bytes == 3 * 2**29
