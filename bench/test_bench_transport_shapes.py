"""8. What a store step costs in transport, by the shape it travels in (issue 16's leftover hops).

`make bench` (slow). The runner makes two unary calls to the store per invoke (BeginRun,
FinishRun). This prices the alternatives before anyone builds one: a server of its own process
(`bench._transport_shapes`) does the same work per step in every shape (parse a BeginRunRequest,
answer a canned BeginRunResponse), and this process drives it at c1 and c32:

- `unary`: one unary call per step, as today (the baseline);
- `stream`: one long-lived bidi stream, one message per step each way (writes serialized: a
  grpc.aio stream takes one write at a time);
- `batch`: one long-lived bidi stream; whatever steps were queued while the previous write was
  in flight go out as one message, answered as one.

Rows: server and client CPU per step (utime + stime from /proc, all threads), p50 latency per
step at c1, steps/s and steps per message at c32. No assertion on any time.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest

from bench._kit import emit_table, fmt_duration, scaled
from bench._procs import cpu_seconds, served_process
from bench._transport_shapes import SERVICE, begin_request, frame, unframe
from bench.test_bench_stack import ROOT, _env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SHAPES = ("unary", "stream", "batch")
IN_FLIGHT = 32

Step = Callable[[bytes], Awaitable[bytes]]


class _Multiplexed:
    """Steps over one bidi stream, matched to their answers by step id."""

    def __init__(self, channel: grpc.aio.Channel, *, batched: bool) -> None:
        method = f"/{SERVICE}/{'Batch' if batched else 'Stream'}"
        self._call = channel.stream_stream(method)()
        self._batched = batched
        self._waiting: dict[int, asyncio.Future[bytes]] = {}
        self._queued: list[bytes] = []
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._next = 0
        self.messages = 0
        self._tasks = [asyncio.create_task(self._read())]
        if batched:
            self._tasks.append(asyncio.create_task(self._write_batches()))

    async def _read(self) -> None:
        while True:
            message = await self._call.read()
            if message is grpc.aio.EOF:
                return
            assert isinstance(message, bytes)
            for step_id, body in unframe(message):
                self._waiting.pop(step_id).set_result(body)

    async def _write_batches(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            message = b"".join(self._queued)
            self._queued.clear()
            self.messages += 1
            await self._call.write(message)

    async def step(self, body: bytes) -> bytes:
        self._next += 1
        step_id = self._next
        answer = asyncio.get_running_loop().create_future()
        self._waiting[step_id] = answer
        if self._batched:
            self._queued.append(frame(step_id, body))
            self._wake.set()
        else:
            async with self._lock:
                self.messages += 1
                await self._call.write(frame(step_id, body))
        return await answer

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._call.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def _measure(shape: str, address: str, pid: int, steps: int, c1: int) -> dict[str, float]:
    channel = grpc.aio.insecure_channel(address)
    mux: _Multiplexed | None = None
    unary = channel.unary_unary(f"/{SERVICE}/Unary")
    step: Step
    if shape == "unary":

        async def step(body: bytes) -> bytes:
            answer = await unary(body)
            assert isinstance(answer, bytes)
            return answer

    else:
        mux = _Multiplexed(channel, batched=shape == "batch")
        step = mux.step
    bodies = [begin_request(n) for n in range(64)]
    try:
        for n in range(100):
            await step(bodies[n % 64])
        latencies = []
        for n in range(c1):
            start = time.perf_counter()
            await step(bodies[n % 64])
            latencies.append(time.perf_counter() - start)
        done = 0

        async def worker() -> None:
            nonlocal done
            while done < steps:
                done += 1
                await step(bodies[done % 64])

        messages0 = mux.messages if mux else 0
        server0, client0, wall0 = cpu_seconds(pid), cpu_seconds(os.getpid()), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
        wall = time.perf_counter() - wall0
        server, client = cpu_seconds(pid) - server0, cpu_seconds(os.getpid()) - client0
        messages = (mux.messages - messages0) if mux else done
        return {
            "server": server / done,
            "client": client / done,
            "c1": statistics.median(latencies),
            "rate": done / wall,
            "per_message": done / max(messages, 1),
        }
    finally:
        if mux is not None:
            await mux.aclose()
        await channel.close(None)


async def test_bench_transport_shapes() -> None:
    rounds = 3
    steps, c1 = scaled(8000, minimum=IN_FLIGHT * 4), scaled(300, minimum=10)
    samples: dict[str, list[dict[str, float]]] = {s: [] for s in SHAPES}
    with tempfile.TemporaryDirectory(prefix="rbshapes-") as tmp:
        ready = Path(tmp) / "shapes.ready"
        args = ["-m", "bench._transport_shapes", "--ready-file", str(ready)]
        served = served_process(
            args, ready=ready, what="transport-shapes server", env=_env(), cwd=ROOT
        )
        async with served as (address, pid):
            for _ in range(rounds):
                for shape in SHAPES:
                    samples[shape].append(await _measure(shape, address, pid, steps, c1))

    def med(shape: str, key: str) -> float:
        return statistics.median(s[key] for s in samples[shape])

    base = med("unary", "server") + med("unary", "client")
    rows = []
    for shape in SHAPES:
        both = med(shape, "server") + med(shape, "client")
        rows.append(
            [
                ("[baseline] " if shape == "unary" else "") + shape,
                fmt_duration(med(shape, "server")),
                fmt_duration(med(shape, "client")),
                f"{both / base:.2f}x",
                fmt_duration(med(shape, "c1")),
                f"{med(shape, 'rate'):,.0f}",
                f"{med(shape, 'per_message'):.1f}",
            ]
        )
    emit_table(
        "8. One store step's transport, by shape (server and client CPU per step)",
        [
            "shape",
            f"server CPU / step at c{IN_FLIGHT}",
            f"client CPU / step at c{IN_FLIGHT}",
            "both / unary",
            "step at c1, p50",
            f"steps/s at c{IN_FLIGHT}",
            "steps per message",
        ],
        rows,
        caption=f"{steps} steps at c{IN_FLIGHT} and {c1} at c1 per shape per round; "
        f"medians of {rounds} interleaved rounds; one server process, pid {os.getpid()} drives",
    )
