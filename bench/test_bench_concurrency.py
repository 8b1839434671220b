"""Concurrency: 50 calls in flight at once, bare gRPC vs echo invokes through the router stack.

Each batch starts 50 calls together (asyncio.gather on one channel) and waits for all of them;
batches of the cases are interleaved. Throughput is calls / total batch time; latency is each
call's own time inside its batch. The router stack (router -> runner -> store service on an
InMemoryStore) runs in this one process, so all four services share one event loop and one
core: the figure is the CPU cost of an invoke summed over the services, not what four
separately deployed processes would reach.
"""

from __future__ import annotations

import asyncio
import gc
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import grpc
import pytest

from bench._kit import Stats, emit_table, fmt_duration, scaled
from bench._stack import (
    ECHO_METHOD,
    bare_channel,
    bare_echo_server,
    invoke_request,
    riverbeam_echo_server,
    router_stack,
)
from riverbeam.server import open_channel
from riverbeam.v1 import riverbeam_service_pb2_grpc as router_grpc

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

CONCURRENCY = 50


@dataclass(slots=True)
class _Load:
    name: str
    call: Callable[[], Awaitable[object]]
    baseline: bool = False
    latencies: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)

    async def batch(self) -> None:
        async def one() -> float:
            start = time.perf_counter()
            await self.call()
            return time.perf_counter() - start

        start = time.perf_counter()
        self.latencies.extend(await asyncio.gather(*(one() for _ in range(CONCURRENCY))))
        self.walls.append(time.perf_counter() - start)

    @property
    def throughput(self) -> float:
        total = sum(self.walls)
        return len(self.walls) * CONCURRENCY / total if total else math.nan


async def _run(loads: list[_Load], *, batches: int, rounds: int, budget_s: float) -> None:
    """Warm up, then interleave batches; a case stops early once it used its time budget."""
    for load in loads:
        await load.batch()
        load.latencies.clear()
        load.walls.clear()
    per_round = max(1, batches // rounds)
    for _ in range(rounds):
        for load in loads:
            gc.collect()
            for _ in range(per_round):
                if load.walls and sum(load.walls) > budget_s:
                    break
                await load.batch()


def _report(loads: list[_Load]) -> None:
    base = next(x for x in loads if x.baseline)
    base_lat = Stats.of(base.latencies)
    rows = []
    for load in loads:
        lat = Stats.of(load.latencies)
        wall = Stats.of(load.walls)
        rows.append(
            [
                ("[baseline] " if load.baseline else "") + load.name,
                str(len(load.latencies)),
                fmt_duration(lat.p50),
                fmt_duration(lat.p95),
                fmt_duration(wall.p50),
                f"{load.throughput:,.0f}",
                f"{load.throughput / base.throughput:.2f}x",
                f"{lat.p50 / base_lat.p50:.2f}x",
            ]
        )
    emit_table(
        f"5. {CONCURRENCY} concurrent unary calls (throughput)",
        [
            "case",
            "calls",
            "latency p50",
            "latency p95",
            f"batch of {CONCURRENCY} p50",
            "calls/s",
            "calls/s / baseline",
            "latency p50 / baseline",
        ],
        rows,
        caption="one process, one event loop: client and every service share a core",
    )


async def test_concurrent_invokes() -> None:
    payload = invoke_request().SerializeToString()
    async with (
        bare_echo_server() as bare_address,
        riverbeam_echo_server() as ours_address,
        router_stack() as stack,
    ):
        channels: list[grpc.aio.Channel] = [
            bare_channel(bare_address),
            open_channel(ours_address),
            open_channel(stack.router),
        ]
        try:
            bare_echo = channels[0].unary_unary(ECHO_METHOD)
            ours_echo = channels[1].unary_unary(ECHO_METHOD)
            router = router_grpc.RiverbeamServiceStub(channels[2])  # type: ignore[no-untyped-call]
            loads = [
                _Load("bare grpc.aio echo", lambda: bare_echo(payload), baseline=True),
                _Load("GrpcServer + ErrorInterceptor echo", lambda: ours_echo(payload)),
                _Load(
                    "router Invoke (echo agent, new session)",
                    lambda: router.Invoke(invoke_request()),
                ),
            ]
            await _run(loads, batches=scaled(40, minimum=5), rounds=5, budget_s=8.0)
            _report(loads)
        finally:
            for channel in channels:
                await channel.close(None)
