"""The failure model across processes (docs/failure-model.md), on real NATS and Postgres.

One stack: two runner replicas with short leases (2 s, a reaper pass every second), the store
on Postgres, a NATS server of this module's own (so a test can stop, wipe and restart it on
its port). The tests run in file order on that stack:

1. a runner stalled (SIGSTOP) past its lease during an approved git_push resume is taken
   over; once it wakes (SIGCONT) it can no longer push, publish or finish;
2. the store service killed and restarted while runs wait for the model: the replies are
   kept, each stream ends once, the unary caller gets its result;
3. NATS restarted without its data: health goes NOT_SERVING and back, streaming works again
   without restarting anything;
4. callers with deadlines of a few milliseconds leave no run `running` (each is cancelled by
   its own runner, none is reaped as lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import nats
import pygit2
import pytest
import pytest_asyncio
from e2e_kit import (
    GUARD_S,
    SERVICE_NAMES,
    ChatProcess,
    assert_sequenced,
    health_status,
    pg_schema,
    running_stack,
)
from grpc_health.v1 import health_pb2

from riverbeam.client import RiverbeamClient
from riverbeam.core.errors import RiverbeamError
from riverbeam.stream import last_frame
from riverbeam.types import AgentResult, StreamAck, StreamChunk
from services.cli._up import LocalStack, log_tail
from tests.support.chat_server import call, delayed, text, tool_calls
from tests.support.nats_server import NatsServer

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]
module_loop = pytest.mark.asyncio(loop_scope="module")

RUNNER_IDS = {"runner-1": "e2e-fm-runner-one", "runner-2": "e2e-fm-runner-two"}
BRANCH = "riverbeam/work"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@dataclass(frozen=True, slots=True)
class Stack:
    stack: LocalStack
    nats: NatsServer
    chat: ChatProcess
    origin: Path
    pg_url: str
    schema: str

    def client(self, timeout_s: float | None = GUARD_S) -> RiverbeamClient:
        return RiverbeamClient(self.stack.router, timeout_s=timeout_s)

    def name_of(self, runner_id: str | None) -> str:
        [name] = [n for n, rid in RUNNER_IDS.items() if rid == runner_id]
        return name

    @staticmethod
    def other(name: str) -> str:
        [other] = [n for n in RUNNER_IDS if n != name]
        return other

    def signal(self, name: str, sig: signal.Signals) -> None:
        os.kill(self.stack.pids[name], sig)


@pytest.fixture(scope="module")
def own_nats(tmp_path_factory: pytest.TempPathFactory, nats_binary: str) -> Iterator[NatsServer]:
    """A nats-server of this module's own, which the tests stop, wipe and restart."""
    with NatsServer(nats_binary, store_dir=tmp_path_factory.mktemp("nats")) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fm(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, own_nats: NatsServer
) -> AsyncIterator[Stack]:
    root = tmp_path_factory.mktemp("failure_model")
    origin = root / "origins" / "origin.git"
    pygit2.init_repository(str(origin), bare=True)
    async with pg_schema(pg_url, "e2e_failure") as schema, ChatProcess(root / "chat") as chat:
        overrides: dict[str, dict[str, str]] = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "sandbox": {"RIVERBEAM_ALLOWED_ORIGIN_PREFIXES": json.dumps([str(origin)])},
            "runner": {
                **chat.model_env(),
                "RIVERBEAM_WORKSPACE_ORIGIN": str(origin),
                "RIVERBEAM_LEASE_TTL_S": "2",
                "RIVERBEAM_REAP_INTERVAL_S": "1",
            },
        }
        for name, runner_id in RUNNER_IDS.items():
            overrides[name] = {"RIVERBEAM_RUNNER_ID": runner_id}
        # One replica holds every run; the other is the one that takes over. With round robin,
        # a store outage longer than the 2 s lease would let each replica's reaper take the
        # other's run (docs/failure-model.md: an outage past the lease TTL), which is not what
        # the store-restart test is about.
        overrides["router"] = {"RIVERBEAM_RUNNER_BALANCING": "pick_first"}
        async with running_stack(
            database_url=pg_url,
            nats_url=own_nats.url,
            data_dir=root / "data",
            env_overrides=overrides,
            runners=2,
        ) as stack:
            yield Stack(stack, own_nats, chat, origin, pg_url, schema)


async def _frames(client: RiverbeamClient, request_id: str) -> list[StreamChunk]:
    frames = [f async for f in client.follow(request_id, timeout_s=GUARD_S)]
    assert_sequenced(frames)
    return frames


async def _holder(fm: Stack, run_id: str) -> str:
    conn = await asyncpg.connect(fm.pg_url)
    try:
        owner = await conn.fetchval(
            f'SELECT lease_owner FROM "{fm.schema}".runs WHERE run_id = $1', run_id
        )
    finally:
        await conn.close()
    return fm.name_of(owner)


async def _running_run(fm: Stack, session_id: str) -> tuple[str, str]:
    """(run_id, holder) of the session's running run, from the store's own table."""
    conn = await asyncpg.connect(fm.pg_url)
    try:
        async with asyncio.timeout(GUARD_S):
            while True:
                row = await conn.fetchrow(
                    f'SELECT run_id, lease_owner FROM "{fm.schema}".runs'
                    " WHERE session_id = $1 AND status = 'running'",
                    session_id,
                )
                if row is not None:
                    return row["run_id"], fm.name_of(row["lease_owner"])
                await asyncio.sleep(0.05)
    finally:
        await conn.close()


async def _wait_log(path: Path, needle: str) -> None:
    async with asyncio.timeout(GUARD_S):
        while needle not in log_tail(path, 2000):  # noqa: ASYNC110 - another process's log
            await asyncio.sleep(0.1)


async def _stored_last(nats_url: str, request_id: str) -> StreamChunk:
    nc = await nats.connect(nats_url, connect_timeout=10, allow_reconnect=False)
    try:
        return await last_frame(nc.jetstream(), request_id)
    finally:
        await nc.close()


@module_loop
async def test_a_stalled_runner_cannot_push_publish_or_finish_after_its_takeover(
    fm: Stack,
) -> None:
    stack = fm.stack
    async with fm.client() as client:
        # An author run that ends waiting for approval to push.
        await fm.chat.push(
            tool_calls([call("write_file", {"path": "stalled.md", "body": "# Stalled\n"})]),
            tool_calls([call("git_add", {"path": "stalled.md"})]),
            tool_calls([call("git_commit", {"message": "Add stalled.md"})]),
            tool_calls([call("git_push", {})], text="May I push?"),
        )
        waiting = await client.invoke("author", "write stalled.md, then push", stream=True)
        done = (await _frames(client, waiting.request_id))[-1]
        assert done.type == "done" and done.result is not None and done.result.interrupted
        [action] = done.result.action_required

        # NATS holds still, so the resumed run cannot get past its first frame; the runner
        # that begins it is then stopped before it gets to the push.
        os.kill(fm.nats.pid or 0, signal.SIGSTOP)
        try:
            ack = await client.approve(waiting.session_id, waiting.interaction_id)
            holder = await _holder(fm, ack.run_id or "")
            fm.signal(holder, signal.SIGSTOP)
        finally:
            os.kill(fm.nats.pid or 0, signal.SIGCONT)
        try:
            # The other replica's reaper takes the run over, fences it, fails it, ends it.
            frames = await _frames(client, ack.request_id)
            assert (frames[-1].type, frames[-1].error_code) == ("error", "BEM-034")
            run = await client.get_run(ack.run_id or "")
            assert (run.status, run.error_code, run.lease_epoch) == ("failed", "BEM-034", 2)
        finally:
            fm.signal(holder, signal.SIGCONT)

        # Awake again, the stalled runner finds it was taken over and gives up.
        await _wait_log(
            stack.log_path(holder), f"run {ack.run_id} was taken over before it finished"
        )
        after = await client.get_run(ack.run_id or "")
        assert (after.status, after.error_code, after.lease_epoch) == ("failed", "BEM-034", 2)
        assert (await client.get_action(action.action_id)).outcome == "approved_unknown"
    # Nothing was pushed, and the stream still ends with the reaper's one terminal frame.
    assert pygit2.Repository(str(fm.origin)).references.get(f"refs/heads/{BRANCH}") is None
    last = await _stored_last(fm.nats.url, ack.request_id)
    assert (last.seq, last.error_code) == (frames[-1].seq, "BEM-034")


@module_loop
async def test_a_store_restarted_during_the_model_call_loses_no_reply(fm: Stack) -> None:
    stack = fm.stack
    before = len(await fm.chat.completions())
    await fm.chat.push(
        delayed(text("kept for the caller"), 4), delayed(text("kept in the stream"), 4)
    )
    unary_session, stream_session = str(uuid.uuid4()), str(uuid.uuid4())
    async with fm.client() as client:
        unary = asyncio.ensure_future(
            client.invoke("author", "answer me", session_id=unary_session)
        )
        ack = await client.invoke("author", "stream me", session_id=stream_session, stream=True)
        await fm.chat.wait_for_completions(before + 2)
        _, holder = await _running_run(fm, unary_session)
        _, stream_holder = await _running_run(fm, stream_session)
        others = set(RUNNER_IDS) - {holder, stream_holder}
        # The replica holding neither run holds still: only the holders' retries are tested.
        for name in others:
            fm.signal(name, signal.SIGSTOP)
        try:
            os.kill(stack.pids["store"], signal.SIGKILL)
            await stack._children["store"].proc.wait()
            await stack.restart("store")
            result = await unary
            frames = await _frames(client, ack.request_id)
        finally:
            for name in others:
                fm.signal(name, signal.SIGCONT)
        assert isinstance(result, AgentResult)
        assert frames[-1].type == "done" and frames[-1].result is not None
        streamed = frames[-1].result.text
        # Which caller got which reply is the model's order; each got one, and kept it.
        assert {result.text, streamed} == {"kept for the caller", "kept in the stream"}
        for session_id, reply in ((unary_session, result.text), (stream_session, streamed)):
            messages = await client.list_messages(session_id)
            assert [(m.role, m.text) for m in messages if m.role == "ai"] == [("ai", reply)]
        run = await client.get_run(ack.run_id or "")
        assert run.status == "completed" and run.token_usage is not None


async def _health(fm: Stack, name: str) -> int:
    service = SERVICE_NAMES["runner" if name.startswith("runner") else name]
    return await health_status(fm.stack.endpoints[name], service)


async def _wait_health(fm: Stack, name: str, status: int) -> None:
    async with asyncio.timeout(GUARD_S):
        while await _health(fm, name) != status:  # noqa: ASYNC110 - another process
            await asyncio.sleep(0.2)


@module_loop
async def test_nats_restarted_without_its_data_is_recovered_without_a_restart(
    fm: Stack,
) -> None:
    watched = ["router", *RUNNER_IDS]
    for name in watched:
        assert await _health(fm, name) == SERVING
    fm.nats.halt()
    try:
        for name in watched:
            await _wait_health(fm, name, NOT_SERVING)
    finally:
        fm.nats.wipe()
        fm.nats.restart()
    for name in watched:
        await _wait_health(fm, name, SERVING)
    async with fm.client() as client:
        ack = await client.invoke("assistant", "still streaming?", stream=True)
        assert isinstance(ack, StreamAck)
        frames = await _frames(client, ack.request_id)
        assert frames[-1].type == "done" and frames[-1].result is not None
        assert frames[-1].result.text == "Echo: still streaming?"
    for name in RUNNER_IDS:
        assert "Task exception was never retrieved" not in log_tail(fm.stack.log_path(name), 5000)


@module_loop
async def test_callers_with_tiny_deadlines_leave_no_run_running(fm: Stack) -> None:
    sessions = [str(uuid.uuid4()) for _ in range(100)]
    async with fm.client() as client:

        async def hasty(i: int, session_id: str) -> None:
            with contextlib.suppress(RiverbeamError):
                await client.invoke(
                    "assistant", "quick", session_id=session_id, timeout_s=0.01 + i * 0.01
                )

        # Ten at a time: a loaded store must not stretch a begin step past the 2 s lease.
        for batch in range(0, len(sessions), 10):
            chunk = list(enumerate(sessions))[batch : batch + 10]
            await asyncio.gather(*(hasty(i, s) for i, s in chunk))
    conn = await asyncpg.connect(fm.pg_url)
    try:
        query = (
            f'SELECT status, error_code FROM "{fm.schema}".runs WHERE session_id = ANY($1::text[])'
        )
        async with asyncio.timeout(GUARD_S):
            while any(r["status"] == "running" for r in await conn.fetch(query, sessions)):  # noqa: ASYNC110
                await asyncio.sleep(0.2)  # a run still being cancelled by its own runner
        rows = await conn.fetch(query, sessions)
    finally:
        await conn.close()
    assert rows, "no call got as far as the begin step"
    # Completed or cancelled by its own runner; none left to the reaper ("runner lost").
    assert {r["status"] for r in rows} <= {"completed", "cancelled"}, rows
    assert all(r["error_code"] != "BEM-034" for r in rows), rows
