"""The review pool's hand-over of workers and replies, and what a timed-out or cancelled review leaves behind:
no worker lost or leaked busy, no waiter left queued, a worker that answered kept, one still linting replaced.
Real worker processes (the fork server) and the real pipeline; objects named ``slow-*`` take 0.4 s more, or,
when their ``data.gate`` names a file, finish only once the test creates it: a review the test must find still
running (queued behind, timed out, cancelled while linting) is held so, not by a time a stalled loop outlasts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("prometheus_client")

from kvlint.webhook.metrics import WebhookMetrics  # noqa: E402
from kvlint.webhook.pool import BudgetExceeded, ReviewPool  # noqa: E402
from kvlint.webhook.request_options import webhook_options  # noqa: E402

SLOW_S = 0.4


def sleepy_pipeline(loaded: Any, options: Any) -> Any:
    """run_documents, late for objects named ``slow-*``: once the file their ``data.gate`` names exists (at
    most 30 s), else ``SLOW_S`` seconds."""
    import os

    from kvlint.pipeline import run_documents

    for d in loaded.documents:
        if d.name.startswith("slow-"):
            gate = (d.data.get("data") or {}).get("gate")
            if gate:
                deadline = time.monotonic() + 30
                while not os.path.exists(gate) and time.monotonic() < deadline:
                    time.sleep(0.01)
            else:
                time.sleep(SLOW_S)
    return run_documents(loaded, options)


def obj(name: str, gate: Path | None = None) -> dict[str, Any]:
    data = {"gate": str(gate)} if gate is not None else {}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


async def until(cond: Callable[[], Any], what: str, seconds: float = 30.0) -> None:
    """Poll ``cond`` (yielding to the loop) until it is true; fail naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen in {seconds:g} s")
        await asyncio.sleep(0.005)


def with_pool(size: int, body: Callable[[ReviewPool], Awaitable[Any]], metrics: Any = None) -> Any:
    async def run() -> Any:
        pool = ReviewPool(size, pipeline=sleepy_pipeline, metrics=metrics)
        await pool.start()
        try:
            return await body(pool)
        finally:
            await pool.close()

    return asyncio.run(run())


async def settled(pool: ReviewPool, size: int, seconds: float = 30.0) -> None:
    """Wait until ``size`` workers are alive and idle (a replacement starts in the background)."""
    deadline = time.monotonic() + seconds
    while (pool.alive, pool.idle) != (size, size) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def test_idle_worker_taken_is_the_one_used_last() -> None:
    """LIFO: reviews one after another all go to the worker that answered last (warm), not round the pool."""

    async def body(pool: ReviewPool) -> list[int]:
        options = webhook_options()
        for i in range(4):
            await pool.lint(obj(f"o{i}"), f"o{i}.json", options, 30)
        return sorted(w.reviews for w in pool._workers)

    assert with_pool(3, body) == [0, 0, 4]


def test_queue_timeout_leaves_no_waiter_and_the_worker_goes_back(tmp_path: Path) -> None:
    gate = tmp_path / "gate"

    async def body(pool: ReviewPool) -> tuple[str, int, int, int, int]:
        options = webhook_options()
        a = asyncio.ensure_future(pool.lint(obj("slow-a", gate), "a.json", options, 30))
        await until(lambda: pool.busy == 1, "A linting")
        with pytest.raises(BudgetExceeded) as exc:
            await pool.lint(obj("b"), "b.json", options, 0.05)
        waiting = pool.waiting
        gate.touch()
        await a
        out = await pool.lint(obj("c"), "c.json", options, 30)
        return exc.value.stage, waiting, pool.idle, pool.restarts, out.suppressed

    stage, waiting, idle, restarts, _ = with_pool(1, body)
    assert (stage, waiting, idle, restarts) == ("queue", 0, 1, 0)


def test_no_budget_left_takes_no_worker() -> None:
    async def body(pool: ReviewPool) -> tuple[str, int, int]:
        with pytest.raises(BudgetExceeded) as exc:
            await pool.lint(obj("a"), "a.json", webhook_options(), 0.0)
        return exc.value.stage, pool.idle, pool.restarts

    assert with_pool(1, body) == ("queue", 1, 0)


def test_cancelled_while_waiting_for_a_worker(tmp_path: Path) -> None:
    """The request went away while queued: its waiter is dropped, the busy worker is neither handed to it nor
    replaced, and comes back idle."""
    gate = tmp_path / "gate"

    async def body(pool: ReviewPool) -> tuple[int, int, int, int]:
        options = webhook_options()
        a = asyncio.ensure_future(pool.lint(obj("slow-a", gate), "a.json", options, 30))
        await until(lambda: pool.busy == 1, "A linting")
        b = asyncio.ensure_future(pool.lint(obj("b"), "b.json", options, 30))
        await until(lambda: pool.waiting == 1, "B queued")
        queued = pool.waiting
        b.cancel()
        with pytest.raises(asyncio.CancelledError):
            await b
        gate.touch()
        await a
        return queued, pool.waiting, pool.idle, pool.restarts

    assert with_pool(1, body) == (1, 0, 1, 0)


def test_cancelled_after_the_worker_was_handed_over(tmp_path: Path) -> None:
    """A's worker is handed to the waiting B, and B is cancelled before its task resumes: the worker goes
    back to the pool (not lost with B's future), and the next review gets it."""

    gate = tmp_path / "gate"

    async def body(pool: ReviewPool) -> tuple[int, int, int, int]:
        options = webhook_options()
        b: asyncio.Future[Any] | None = None

        async def first() -> None:
            await pool.lint(obj("slow-a", gate), "a.json", options, 30)
            assert b is not None
            b.cancel()  # A's worker was handed to B in A's finally; B has not run since

        a = asyncio.ensure_future(first())
        await until(lambda: pool.busy == 1, "A linting")
        b = asyncio.ensure_future(pool.lint(obj("b"), "b.json", options, 30))
        await until(lambda: pool.waiting == 1, "B queued")
        gate.touch()
        await a
        with pytest.raises(asyncio.CancelledError):
            await b
        idle = pool.idle
        await pool.lint(obj("c"), "c.json", options, 30)
        (w,) = pool._workers
        return idle, pool.waiting, pool.restarts, w.reviews

    assert with_pool(1, body) == (1, 0, 0, 2)  # A and C: B never reached the worker


def test_cancelled_while_linting_replaces_the_worker(tmp_path: Path) -> None:
    metrics = WebhookMetrics()
    gate = tmp_path / "gate"  # never created: A is still linting when cancelled

    async def body(pool: ReviewPool) -> tuple[int, int, int, int]:
        options = webhook_options()
        a = asyncio.ensure_future(pool.lint(obj("slow-a", gate), "a.json", options, 30))
        await until(lambda: pool.busy == 1, "A linting")
        await asyncio.sleep(0.1)  # (sent to the worker; held by the gate however long this takes)
        busy = pool.busy
        a.cancel()
        with pytest.raises(asyncio.CancelledError):
            await a
        await settled(pool, 1)
        await pool.lint(obj("c"), "c.json", options, 30)
        return busy, pool.busy, pool.idle, pool.restarts

    assert with_pool(1, body, metrics) == (1, 0, 1, 1)
    text = metrics.render()[0].decode()
    assert 'kvlint_webhook_worker_restarts_total{reason="cancelled"} 1.0' in text


def test_cancelled_after_the_reply_was_read_keeps_the_worker() -> None:
    """The worker's reply is read (by the pipe's reader callback) and the review is cancelled before its task
    resumes: the worker is idle, so it is kept, not killed."""

    async def body(pool: ReviewPool) -> tuple[int, int, int, int]:
        loop = asyncio.get_running_loop()
        options = webhook_options()
        a = asyncio.ensure_future(pool.lint(obj("slow-a"), "a.json", options, 30))
        (w,) = pool._workers

        def block_until_answered() -> None:
            # hold the loop until the reply is in the pipe; in the next pass the reader callback (an I/O
            # event) runs before this timer, which is due by then (asyncio runs I/O callbacks, then timers)
            deadline = time.monotonic() + 20
            while not w.conn.poll(0.01) and time.monotonic() < deadline:
                pass
            loop.call_later(0, a.cancel)

        loop.call_later(0.05, block_until_answered)
        with pytest.raises(asyncio.CancelledError):
            await a
        idle, restarts = pool.idle, pool.restarts
        await pool.lint(obj("c"), "c.json", options, 30)
        return idle, restarts, pool.restarts, w.reviews

    assert with_pool(1, body) == (1, 0, 0, 2)


def test_lint_timeout_replaces_the_worker_and_waiters_get_the_replacement(tmp_path: Path) -> None:
    """A overruns its budget (killed, replaced); B, queued behind it, gets the replacement in its turn."""
    gate = tmp_path / "gate"  # never created: A cannot finish within any budget

    async def body(pool: ReviewPool) -> tuple[str, int, int, int]:
        options = webhook_options()
        a = asyncio.ensure_future(pool.lint(obj("slow-a", gate), "a.json", options, 0.1))
        await asyncio.sleep(0.02)
        b = asyncio.ensure_future(pool.lint(obj("b"), "b.json", options, 30))
        with pytest.raises(BudgetExceeded) as exc:
            await a
        await b
        await settled(pool, 1)
        return exc.value.stage, pool.restarts, pool.waiting, pool.idle

    assert with_pool(1, body) == ("lint", 1, 0, 1)


def test_worker_gauges_are_read_when_scraped(tmp_path: Path) -> None:
    metrics = WebhookMetrics()
    gate = tmp_path / "gate"

    def gauges() -> tuple[str, str]:
        text = metrics.render()[0].decode().splitlines()
        return (
            next(line for line in text if line.startswith("kvlint_webhook_workers ")),
            next(line for line in text if line.startswith("kvlint_webhook_workers_busy ")),
        )

    async def body(pool: ReviewPool) -> list[tuple[str, str]]:
        options = webhook_options()
        seen = [gauges()]
        a = asyncio.ensure_future(pool.lint(obj("slow-a", gate), "a.json", options, 30))
        await until(lambda: pool.busy == 1, "A linting")
        seen.append(gauges())
        gate.touch()
        await a
        seen.append(gauges())
        return seen

    assert with_pool(2, body, metrics) == [
        ("kvlint_webhook_workers 2.0", "kvlint_webhook_workers_busy 0.0"),
        ("kvlint_webhook_workers 2.0", "kvlint_webhook_workers_busy 1.0"),
        ("kvlint_webhook_workers 2.0", "kvlint_webhook_workers_busy 0.0"),
    ]


def as_json(value: Any) -> Any:
    """``value`` with its tuples as lists (as a message's JSON part comes back), the outer tuple kept."""

    def inner(v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return [inner(x) for x in v]
        if isinstance(v, dict):
            return {k: inner(x) for k, x in v.items()}
        return v

    return tuple(inner(v) if isinstance(v, (tuple, list, dict)) else v for v in value)


def test_pipe_messages_framed_as_connection_frames_them() -> None:
    """The server's messages written with ``encode_message`` + ``send_message`` are read back by
    ``recv_message``, and by ``Connection.recv_bytes`` + ``decode_message``, and ``recv_message`` reads what
    ``Connection.send_bytes`` wrote: the options, a lint request, a review, an UPDATE's old-object request with its
    rows, and a message larger than the pipe's buffer (read while it is written) come out of a pipe equal (JSON
    parts as lists). A worker's reply of the real pipeline's findings comes back through ``encode_reply`` /
    ``decode_reply`` the same. End of file before a message is EOFError, within one OSError."""
    import copy
    import json
    import multiprocessing
    import os
    import threading

    from kvlint.webhook.worker import (
        WARM_UP_LABEL,
        WARM_UP_OBJECT,
        decode_message,
        decode_reply,
        encode_message,
        encode_reply,
        lint_object,
        recv_message,
        reply_rows,
        send_message,
    )

    options = webhook_options()
    denied = copy.deepcopy(WARM_UP_OBJECT)  # 128k tokens of KV cache do not fit an L4 beside 16 GB of weights
    denied["spec"]["template"]["spec"]["containers"][0]["args"][-1] = "131072"
    result = lint_object(denied, WARM_UP_LABEL, options)
    rows = reply_rows(result.diagnostics)
    assert rows
    big = ("lint", 8, {"data": {f"k{i}": "v" * 100 for i in range(5000)}}, "big.json")  # ~0.6 MB
    body = json.dumps({"request": {"uid": "u"}}).encode()
    messages = [
        ("options", options),
        ("lint", 7, denied, WARM_UP_LABEL),
        ("review", 9, body),
        ("old", 10, body, rows, 2),
        big,
    ]
    a, b = multiprocessing.Pipe(duplex=True)
    try:
        for message in messages:
            for write, read in (
                (
                    lambda m: send_message(a.fileno(), encode_message(m)),
                    lambda: decode_message(b.recv_bytes()),
                ),
                (lambda m: a.send_bytes(encode_message(m)), lambda: recv_message(b.fileno())),
                (lambda m: send_message(a.fileno(), encode_message(m)), lambda: recv_message(b.fileno())),
            ):
                got: list[Any] = []
                reader = threading.Thread(target=lambda r=read, out=got: out.append(r()))  # type: ignore[misc]
                reader.start()
                write(message)
                reader.join(10)
                assert got == [as_json(message)]
        summary = ("admission.k8s.io/v1", "u", "CREATE", "Deployment", "ns", "n", None, False, "me")
        summary += (False, "findings", (("KV103", "error", "m"),), (("KV202", "warning", ""),), 0, "", "")
        for reply in (
            ("ok", 7, rows, result.suppressed),
            ("answer", 9, b'{"response":{}}', summary),
            ("update", 9, rows, 1, b"{}", summary),
            ("bad", 9, 400, "not JSON"),
            ("error", 9, "MemoryError: x"),
        ):
            assert decode_reply(encode_reply(reply)) == as_json(reply)
        os.write(a.fileno(), b"\x00\x00\x00\x10half")  # 16 bytes announced, 4 sent
        a.close()
        with pytest.raises(OSError):
            recv_message(b.fileno())
        with pytest.raises(EOFError):
            recv_message(b.fileno())
    finally:
        a.close()
        b.close()


def test_worker_lints_with_the_options_of_each_review() -> None:
    """A worker is sent the options only when they change: the same Options object twice, another one, then
    the first again each lint with their own (an H100 holds the 128k-token KV cache an L4 cannot)."""
    import copy

    from kvlint.webhook.worker import WARM_UP_LABEL, WARM_UP_OBJECT

    denied = copy.deepcopy(WARM_UP_OBJECT)
    denied["spec"]["template"]["spec"]["containers"][0]["args"][-1] = "131072"
    on_l4 = webhook_options()
    on_h100 = webhook_options(accelerator="h100")

    async def body(pool: ReviewPool) -> list[bool]:
        out = []
        for options in (on_l4, on_l4, on_h100, on_h100, on_l4):
            outcome = await pool.lint(denied, WARM_UP_LABEL, options, 10.0)
            out.append(any(d.severity == "error" for d in outcome.diagnostics))
        return out

    assert with_pool(1, body) == [True, True, False, False, True]


def frozen_count_pipeline(loaded: Any, options: Any) -> Any:
    """run_documents, reporting in ``suppressed`` how many objects the worker's collector holds frozen."""
    import dataclasses
    import gc

    from kvlint.pipeline import run_documents

    return dataclasses.replace(run_documents(loaded, options), suppressed=gc.get_freeze_count())


def test_workers_inherit_the_fork_servers_frozen_objects() -> None:
    """The fork server freezes what it loaded and linted before forking (kvlint.webhook._preload), so a
    worker's full collections do not walk kvlint's modules and catalogues; a review's own objects are not
    frozen (the count is the same after reviews, so their garbage stays collectable)."""
    from kvlint.webhook.worker import WARM_UP_LABEL, WARM_UP_OBJECT

    async def run() -> list[int]:
        pool = ReviewPool(1, pipeline=frozen_count_pipeline)
        await pool.start()
        try:
            return [
                (await pool.lint(WARM_UP_OBJECT, WARM_UP_LABEL, webhook_options(), 10.0)).suppressed
                for _ in range(3)
            ]
        finally:
            await pool.close()

    counts = asyncio.run(run())
    assert counts[0] > 1000, counts  # kvlint's modules and catalogues at least
    assert counts == [counts[0]] * 3


def test_pipe_frames_are_read_and_written_without_waiting() -> None:
    """The server's end of a worker's pipe (non-blocking) is read a piece at a time: half a message is
    "not yet" at once (a blocking read waited for the rest), the rest completes it, a message in whole is
    read in one call, and end of file before a message is EOFError, within one OSError. A write takes what
    the pipe holds and returns; the rest goes once the other end reads."""
    import os
    import socket
    import threading

    from kvlint.webhook.pool import _INCOMPLETE, _Frames
    from kvlint.webhook.worker import decode_reply, frame_reply, recv_frame

    big = ("ok", 3, [f"{i:04d}" + "x" * 996 for i in range(2000)], 0)  # 2 MB: more than the pipe holds
    data = frame_reply(big)
    a, b = socket.socketpair()
    try:
        b.setblocking(False)
        frames = _Frames()
        frames.start(b"")
        assert frames.read(b.fileno()) is _INCOMPLETE  # nothing yet
        a.sendall(data[:2])  # half a header
        assert frames.read(b.fileno()) is _INCOMPLETE
        a.sendall(data[2:100_000])  # the header and part of the body
        assert frames.read(b.fileno()) is _INCOMPLETE
        sender = threading.Thread(target=a.sendall, args=(data[100_000:],))  # as the pipe takes it
        sender.start()
        deadline = time.monotonic() + 30
        got: list[Any] = []
        while not got and time.monotonic() < deadline:
            message = frames.read(b.fileno())
            if message is not _INCOMPLETE:
                got.append(message)
        sender.join(10)
        assert got == [big]
        small = frame_reply(("ok", 4, [], 0))
        a.sendall(small + small[:3])
        assert frames.read(b.fileno()) == ("ok", 4, [], 0)
        assert frames.read(b.fileno()) is _INCOMPLETE

        frames.start(data)  # writing 2 MB to a peer that reads nothing: part of it, then "not yet"
        assert frames.write(b.fileno()) is False
        assert frames.outbox is not None and 0 < len(frames.outbox) < len(data)
        got.clear()
        reader = threading.Thread(target=lambda: got.append(decode_reply(recv_frame(a.fileno()))))
        reader.start()
        deadline = time.monotonic() + 30
        while not frames.write(b.fileno()) and time.monotonic() < deadline:
            time.sleep(0.001)
        reader.join(10)
        assert frames.outbox is None and got == [big]

        os.write(a.fileno(), b"\x00\x00\x00\x10half")  # 16 bytes announced, 4 sent
        a.close()
        frames.start(b"")
        with pytest.raises(OSError):
            frames.read(b.fileno())
        frames.start(b"")
        with pytest.raises(EOFError):
            frames.read(b.fileno())
    finally:
        a.close()
        b.close()


def many_findings_pipeline(loaded: Any, options: Any) -> Any:
    """run_documents, each of its diagnostics 2,000 times (numbered) for objects named ``many-*`` (a reply of
    megabytes)."""
    import dataclasses

    from kvlint.pipeline import run_documents

    result = run_documents(loaded, options)
    if any(d.name.startswith("many-") for d in loaded.documents):
        result.diagnostics = [
            dataclasses.replace(d, message=f"{d.message} #{i}")
            for d in result.diagnostics
            for i in range(2000)
        ]
    return result


def test_a_reply_larger_than_the_pipe_is_read_whole() -> None:
    """A reply of a megabyte and more (five times what the pipe holds) is read in pieces as the worker writes it,
    and is the worker's reply: the errors and warnings of the same lint in this process (their rule, severity,
    message, fix, container, object, setting and stands_for: what the reply carries,
    :func:`kvlint.webhook.worker.reply_rows`)."""
    import copy

    from kvlint.webhook.worker import WARM_UP_LABEL, WARM_UP_OBJECT, encode_reply, lint_object, reply_rows

    denied = copy.deepcopy(WARM_UP_OBJECT)
    denied["metadata"]["name"] = "many-findings"
    denied["spec"]["template"]["spec"]["containers"][0]["args"][-1] = "131072"
    options = webhook_options()
    diagnostics = list(lint_object(denied, WARM_UP_LABEL, options, many_findings_pipeline).diagnostics)
    expected = [
        (d.rule, d.severity, d.message, d.fix, d.container, d.object, d.setting, d.stands_for)
        for d in diagnostics
        if d.severity != "info"
    ]
    assert len(expected) >= 2000
    assert list(reply_rows(diagnostics)) == expected
    assert len(encode_reply(("ok", 1, reply_rows(diagnostics), 0))) > 1_000_000

    async def body(pool: ReviewPool) -> Any:
        pool.pipeline = many_findings_pipeline
        out = []
        for _ in range(2):
            out.append(await pool.lint(denied, WARM_UP_LABEL, options, 30))
        return out, pool.restarts

    async def run() -> Any:
        pool = ReviewPool(1, pipeline=many_findings_pipeline)
        await pool.start()
        try:
            return await body(pool)
        finally:
            await pool.close()

    outcomes, restarts = asyncio.run(run())
    assert restarts == 0
    for outcome in outcomes:
        assert [
            (d.rule, d.severity, d.message, d.fix, d.container, d.object, d.setting, d.stands_for)
            for d in outcome.diagnostics
        ] == expected


#: A weak reference to the reference cycle the last review of :func:`gc_probe_pipeline` left behind.
_LAST_CYCLE: list[Any] = []


class _Cyclic:
    """An object that refers to itself: garbage only the cyclic collector reclaims."""

    def __init__(self) -> None:
        self.me = self


def gc_probe_pipeline(loaded: Any, options: Any) -> Any:
    """run_documents, reporting in ``suppressed`` ``2 x (collections the garbage collector ran during it) + (1
    if the cycle the previous review left is still alive)``, and leaving a cycle of its own."""
    import dataclasses
    import gc
    import weakref

    from kvlint.pipeline import run_documents

    previous_alive = int(bool(_LAST_CYCLE) and _LAST_CYCLE[0]() is not None)
    before = sum(s["collections"] for s in gc.get_stats())
    result = run_documents(loaded, options)
    during = sum(s["collections"] for s in gc.get_stats()) - before
    cycle = _Cyclic()
    _LAST_CYCLE[:] = [weakref.ref(cycle)]
    del cycle
    return dataclasses.replace(result, suppressed=2 * during + previous_alive)


def _dgd(components: int) -> dict[str, Any]:
    """A v1beta1 DynamoGraphDeployment of ``components`` small vLLM components (as bench/webhook_big.py)."""
    container = {"name": "main", "image": "vllm/vllm-openai:v0.11.0",
                 "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct"]}  # fmt: skip
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "big", "namespace": "serving"},
        "spec": {
            "components": [
                {"name": f"w{i}", "type": "worker", "podTemplate": {"spec": {"containers": [container]}}}
                for i in range(components)
            ]
        },
    }


def test_no_garbage_collection_runs_during_a_review_and_its_cycles_are_collected_after() -> None:
    """A worker lints with the cyclic garbage collector off (kvlint.webhook.worker.COLLECT_DURING_REVIEW): a
    DynamoGraphDeployment of 2,000 components (about 160,000 containers built) ran collections during the
    review, full ones over every value built so far, which made the largest object the size limit admits
    take 4.0 s of CPU instead of 2.6 s. Collection is back on once the reply is out: the reference cycle
    one review leaves is gone by the next review, so a worker's memory does not grow with the reviews."""
    big = _dgd(2000)

    async def run() -> list[int]:
        pool = ReviewPool(1, pipeline=gc_probe_pipeline)
        await pool.start()
        try:
            return [
                (
                    await pool.lint(big, "<admission big>.json", webhook_options(max_review_size=None), 30.0)
                ).suppressed
                for _ in range(3)
            ]
        finally:
            await pool.close()

    probes = asyncio.run(run())
    assert [p // 2 for p in probes] == [0, 0, 0], probes  # no collection during any review
    assert [p % 2 for p in probes] == [0, 0, 0], probes  # the previous review's cycle was collected
