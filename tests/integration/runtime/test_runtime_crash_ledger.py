"""The tool-execution ledger when a runner process is killed (SIGKILL) in the middle of a
side-effecting tool call: the call is on record as `started` before the tool runs, and the
replica that takes the dead run over marks it `unknown` (docs/durability.md).

The store runs as a process of its own (in memory, or on Postgres), so it outlives the runner.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from riverbeam.runtime import DEFAULT_MODEL, Grant, JetStreamSinks, RunnerClient, run_reaper
from riverbeam.store import StoreClient
from riverbeam.stream import NatsConnection, StreamConfig
from riverbeam.types import InvokeRequest, StreamAck, ToolExecution
from tests.integration.runtime.rt_kit import (
    HOOK,
    SLOW_GUARD_S,
    ServiceProcess,
    collect,
    service_env,
    text_request,
    uid,
)
from tests.integration.runtime.test_runtime_crash import store_env

pytestmark = [pytest.mark.nats, pytest.mark.e2e]


async def _entries(store: StoreClient, run_id: str) -> list[ToolExecution]:
    entries, _ = await store.list_tool_executions(run_id=run_id)
    return entries


async def _until(store: StoreClient, run_id: str, status: str) -> list[ToolExecution]:
    async with asyncio.timeout(SLOW_GUARD_S):  # a hang guard, not a speed threshold
        while True:
            entries = await _entries(store, run_id)
            if entries and entries[-1].status == status:
                return entries
            await asyncio.sleep(0.05)


async def test_a_side_effect_in_flight_when_its_runner_dies_is_unknown(
    pg_target: tuple[str, str] | None, nats: NatsConnection, nats_url: str, tmp_path: Path
) -> None:
    async with ServiceProcess("store", store_env(pg_target), tmp_path) as store_proc:
        runner_env = service_env(
            RIVERBEAM_STORE_URL=store_proc.address,
            RIVERBEAM_NATS_URL=nats_url,
            RIVERBEAM_SANDBOX_URL="",
            RIVERBEAM_LEASE_TTL_S="1",
            RIVERBEAM_REAP_INTERVAL_S="3600",
            RIVERBEAM_AGENTS=HOOK,
            RIVERBEAM_RUNNER_ID="doomed-runner",
        )
        store = StoreClient(store_proc.address, timeout_s=SLOW_GUARD_S)
        reaper: asyncio.Task[None] | None = None
        try:
            async with ServiceProcess("runner", runner_env, tmp_path) as runner_proc:
                client = RunnerClient(runner_proc.address)
                try:
                    session_id, request_id = uid(), uid()
                    follower = asyncio.create_task(collect(nats.js, request_id))
                    ack = await client.run_invoke(
                        InvokeRequest.parse(
                            text_request(
                                "worker", "look", session_id, stream=True, request_id=request_id
                            )
                        ),
                        model=DEFAULT_MODEL,
                        grant=Grant(),
                        timeout_s=SLOW_GUARD_S,
                    )
                    assert isinstance(ack, StreamAck)
                    run_id = ack.run_id or ""
                    # The blocking tool declares no read-only / idempotent: it is on record
                    # as started (by the runner, before it ran) while it blocks.
                    [started] = await _until(store, run_id, "started")
                    assert (started.tool, started.tool_call_id) == ("block", "call-block")
                    assert (started.runner_id, started.lease_epoch) == ("doomed-runner", 1)
                    assert not started.read_only and not started.idempotent

                    os.kill(runner_proc.pid, signal.SIGKILL)
                    assert await runner_proc.proc.wait() == -signal.SIGKILL  # type: ignore[union-attr]
                finally:
                    await client.aclose()

            reaper = asyncio.create_task(
                run_reaper(store, JetStreamSinks(nats.js, StreamConfig()), interval_s=0.2)
            )
            async with asyncio.timeout(SLOW_GUARD_S):
                frames = await follower
            assert frames[-1].error_code == "BEM-034"
            [settled] = await _entries(store, run_id)
            assert settled.execution_id == started.execution_id
            assert (settled.status, settled.error_code) == ("unknown", "BEM-034")
            assert settled.started_at == started.started_at and settled.finished_at is not None
            # The dead runner's epoch is fenced off: its late report would be refused.
            run = await store.get_run(run_id=run_id)
            assert run.status == "failed" and (run.lease_epoch or 0) > 1
        finally:
            if reaper is not None:
                reaper.cancel()
                await asyncio.gather(reaper, return_exceptions=True)
            await store.aclose()
