"""Crash recovery for real: a runner process is killed (SIGKILL) in the middle of a run.

The store runs as a process of its own (in memory, or on Postgres), so it outlives the runner.
Another replica (the reaper, in this process, on the same store service) fails the run with
BEM-034 and ends its stream with an error frame numbered right after the last one.
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
from riverbeam.types import InvokeRequest, StreamAck
from tests.integration.runtime.rt_kit import (
    HOOK,
    SLOW_GUARD_S,
    ServiceProcess,
    assert_gap_free,
    collect,
    first_frames,
    service_env,
    text_request,
    uid,
)

pytestmark = [pytest.mark.nats, pytest.mark.e2e]


def store_env(pg_target: tuple[str, str] | None) -> dict[str, str]:
    if pg_target is None:
        return service_env()
    url, schema = pg_target
    return service_env(RIVERBEAM_DATABASE_URL=url, RIVERBEAM_DB_SCHEMA=schema)


async def test_killed_runner_is_reaped_by_another_replica(
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
                                "hold", "hold on", session_id, stream=True, request_id=request_id
                            )
                        ),
                        model=DEFAULT_MODEL,
                        grant=Grant(),
                        timeout_s=SLOW_GUARD_S,
                    )
                    assert isinstance(ack, StreamAck) and ack.request_id == request_id
                    (first,) = await first_frames(nats.js, request_id, 1, guard_s=SLOW_GUARD_S)
                    assert first.type == "chunk"
                    running = await store.get_run(run_id=ack.run_id or "")
                    assert (running.status, running.lease_owner) == ("running", "doomed-runner")

                    os.kill(runner_proc.pid, signal.SIGKILL)
                    assert await runner_proc.proc.wait() == -signal.SIGKILL  # type: ignore[union-attr]
                finally:
                    await client.aclose()

            # Another replica: same store service, same NATS.
            reaper = asyncio.create_task(
                run_reaper(store, JetStreamSinks(nats.js, StreamConfig()), interval_s=0.2)
            )
            async with asyncio.timeout(SLOW_GUARD_S):
                frames = await follower

            assert_gap_free(frames)
            assert [f.type for f in frames] == ["chunk", "error"]
            last = frames[-1]
            assert last.error_code == "BEM-034"
            assert last.seq == frames[-2].seq + 1  # type: ignore[operator]
            assert last.request_id == request_id

            run = await store.get_run(run_id=ack.run_id or "")
            assert (run.status, run.error_code) == ("failed", "BEM-034")
            assert run.request_id == request_id
            interaction = await store.get_interaction(interaction_id=ack.interaction_id)
            assert interaction.status == "failed"
            # What the killed runner had acknowledged is all there.
            session = await store.get_session(session_id=session_id)
            assert session.session_id == session_id
            messages, _ = await store.list_messages(session_id=session_id)
            assert [(m.seq, m.role, m.text, m.run_id) for m in messages][:1] == [
                (1, "human", "hold on", ack.run_id)
            ]
            assert await store.get_run_by_request(request_id=request_id) == run
        finally:
            if reaper is not None:
                reaper.cancel()
                await asyncio.gather(reaper, return_exceptions=True)
            await store.aclose()
