"""7. What the store service's own code costs per invoke, against the transport for its messages.

`make bench` (slow). Each invoke is one BeginRun and one FinishRun from the runner to the store.
This benchmark sends that pair (`bench.test_bench_postgres.step_pair`: a new session each time,
an echo reply) at 32 in flight from this process to four store servers, each its own process,
started in turn and measured in rounds, interleaved:

- `bare`: a plain grpc.aio server replaying the store's first replies as bytes (no parsing).
- `canned`: our GrpcServer and the generated servicer replaying them (parse, serialize, our
  interceptor, metrics and health): what our server machinery adds to the transport.
- `memory`: `riverbeam serve store`, in memory, as `riverbeam up` starts it.
- `postgres`: the same on PostgreSQL (a throwaway schema); its backends' CPU is counted apart.

Each row is the server's CPU (utime + stime from /proc) per pair; `memory - canned` is what the
store's logic costs (conversions, copies, the store itself), the part no transport change
saves. No assertion on any time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from bench._kit import emit_table, fmt_duration, scaled
from bench._procs import cpu_seconds, rss_bytes, served_process, tagged_dsn
from bench.test_bench_postgres import step_pair
from bench.test_bench_stack import ROOT, _compile, _env
from riverbeam.store import StoreClient

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

KINDS = ("bare", "canned", "memory", "postgres")
IN_FLIGHT = 32


@contextlib.asynccontextmanager
async def _server(kind: str, workdir: Path, pg_url: str) -> AsyncIterator[tuple[str, int, str]]:
    """(address, pid, pg tag or "") of a fresh store server of `kind`; stopped on exit."""
    ready = workdir / f"{kind}-{uuid.uuid4().hex[:8]}.ready"
    env = _env()
    tag = ""
    if kind in ("bare", "canned"):
        args = ["-m", "bench._store_floor", kind, "--ready-file", str(ready)]
    else:
        args = ["-m", "services.cli", "serve", "store", "--listen", "127.0.0.1:0"]
        args += ["--ready-file", str(ready)]
        env["PYTHONUNBUFFERED"] = "1"
        if kind == "postgres":
            tag = f"rbfloor_{uuid.uuid4().hex[:10]}"
            env["RIVERBEAM_DATABASE_URL"] = tagged_dsn(pg_url, tag)
            env["RIVERBEAM_DB_SCHEMA"] = tag
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the bytecode compiled first, as deployed
    served = served_process(
        args, ready=ready, what=f"{kind} store server", env=env, cwd=ROOT, timeout_s=120
    )
    try:
        async with served as (address, pid):
            yield address, pid, tag
    finally:
        if tag:
            conn = await asyncpg.connect(pg_url)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{tag}" CASCADE')
            finally:
                await conn.close()


async def _backends_cpu(pg_url: str, tag: str) -> float:
    if not tag:
        return 0.0
    conn = await asyncpg.connect(pg_url)
    try:
        rows = await conn.fetch("SELECT pid FROM pg_stat_activity WHERE application_name = $1", tag)
    finally:
        await conn.close()
    return sum(cpu_seconds(r["pid"]) for r in rows)


async def _measure(kind: str, workdir: Path, pg_url: str, pairs: int, c1: int) -> dict[str, float]:
    async with _server(kind, workdir, pg_url) as (address, pid, tag):
        client = StoreClient(address)
        try:
            for _ in range(50):  # connect, warm every path (and the canned replies)
                await step_pair(client)
            latencies = []
            for _ in range(c1):
                start = time.perf_counter()
                await step_pair(client)
                latencies.append(time.perf_counter() - start)
            done = 0

            async def worker() -> None:
                nonlocal done
                while done < pairs:
                    done += 1
                    await step_pair(client)

            cpu0, pg0 = cpu_seconds(pid), await _backends_cpu(pg_url, tag)
            await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
            cpu1, pg1 = cpu_seconds(pid), await _backends_cpu(pg_url, tag)
            return {
                "cpu": (cpu1 - cpu0) / done,
                "pg": (pg1 - pg0) / done,
                "c1": statistics.median(latencies),
                "rss": float(rss_bytes(pid)),
            }
        finally:
            await client.aclose()


async def test_bench_store_floor(pg_url: str) -> None:
    rounds = 3
    pairs, c1 = scaled(2000, minimum=IN_FLIGHT * 2), scaled(200, minimum=10)
    await asyncio.to_thread(_compile, ROOT)
    samples: dict[str, list[dict[str, float]]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory(prefix="rbfloor-") as tmp:
        for _ in range(rounds):
            for kind in KINDS:
                samples[kind].append(await _measure(kind, Path(tmp), pg_url, pairs, c1))

    def med(kind: str, key: str) -> float:
        return statistics.median(s[key] for s in samples[kind])

    bare, canned = med("bare", "cpu"), med("canned", "cpu")
    rows = []
    for kind in KINDS:
        cpu, pg = med(kind, "cpu"), med(kind, "pg")
        rows.append(
            [
                kind,
                fmt_duration(cpu),
                f"{cpu / bare:.2f}x",
                fmt_duration(cpu - canned) if kind in ("memory", "postgres") else "",
                fmt_duration(pg) if kind == "postgres" else "",
                fmt_duration(med(kind, "c1")),
                f"{med(kind, 'rss') / 2**20:.0f} MiB",
            ]
        )
    emit_table(
        "7. Store server CPU per BeginRun + FinishRun pair (one invoke's store calls)",
        [
            "server",
            f"CPU / pair at c{IN_FLIGHT}",
            "/ bare",
            "above canned (the store's logic)",
            "Postgres backends / pair",
            "pair at c1, p50",
            "RSS after",
        ],
        rows,
        caption=f"{pairs} pairs at c{IN_FLIGHT} and {c1} at c1 per server per round; "
        f"medians of {rounds} interleaved rounds; pid {os.getpid()} drives",
    )
