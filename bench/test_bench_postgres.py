"""PostgreSQL: one row, one message, one pipeline step pair; direct and through the store service.

Baseline: a bare asyncpg INSERT of one row into a throwaway table (pool.execute). Then the
statement append_message runs, bare; PgBeamStore.append_message; begin_run + finish_run (the
two writes of every invoke); and both again through StoreClient -> store service -> Postgres.
Everything lives in a schema made for the run and dropped afterwards.

A second, untimed pass logs every statement the store sends (asyncpg query logger), to show
how many round trips each operation makes and how much of its time is spent waiting on them.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import asyncpg
import pytest

from bench._attribution import conversion_tally
from bench._kit import Case, compare, emit_table, fmt_duration, per_call, scaled
from riverbeam.server import GrpcServer
from riverbeam.store import BeamStore, NewMessage, PgBeamStore, StoreClient
from riverbeam.store._migrations import quote_schema
from riverbeam.store._sql import Statements
from riverbeam.types import AgentResult, ContentPart, TokenUsage
from services.store.app import binding

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(300)]

TEXT = "Summarise the release notes of the last sprint in three bullet points, please."
OWNER = "bench-runner"


@pytest.fixture
async def schema(pg_url: str) -> AsyncIterator[str]:
    name = f"bench_{uuid.uuid4().hex[:12]}"
    yield name
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    finally:
        await conn.close()


def _id() -> str:
    return str(uuid.uuid4())


async def _no_reset(conn: asyncpg.Connection) -> None:
    """Pool release without a reset query, as PgBeamStore's own pool does."""


async def append(store: BeamStore, session_id: str) -> None:
    await store.append_message(
        session_id=session_id, role="human", content=[ContentPart.of_text(TEXT)]
    )


async def step_pair(store: BeamStore) -> None:
    """What the pipeline writes for one non-streaming echo invoke: begin_run, then finish_run."""
    session_id, run_id = _id(), _id()
    begun = await store.begin_run(
        session_id=session_id,
        agent_name="assistant",
        run_id=run_id,
        request_id=_id(),
        lease_owner=OWNER,
        lease_ttl_s=60.0,
        user_id="dev",
        human_content=[ContentPart.of_text(TEXT)],
        exclusive=True,
    )
    reply = [ContentPart.of_text(f"Echo: {TEXT}")]
    usage = TokenUsage(prompt_tokens=14, completion_tokens=15, total_tokens=29)
    await store.finish_run(
        run_id=run_id,
        lease_owner=OWNER,
        status="completed",
        messages=[NewMessage(role="ai", content=reply)],
        token_usage=usage,
        model_used="riverbeam-default",
        result=AgentResult(
            content=reply,
            agent_name="assistant",
            model_used="riverbeam-default",
            session_id=session_id,
            interaction_id=begun.interaction.interaction_id,
            run_id=run_id,
            token_usage=usage,
            latency_ms=1.5,
        ),
    )


@dataclass(slots=True)
class _Statements:
    count: int = 0
    seconds: float = 0.0

    def log(self, query: asyncpg.connection.LoggedQuery) -> None:
        self.count += 1
        self.seconds += query.elapsed


Op = Callable[[BeamStore], Awaitable[None]]


async def _breakdown(pg_url: str, schema: str, ops: list[tuple[str, str, Op]], n: int) -> None:
    """One untimed pass per op with every statement logged and timers on the conversions."""
    statements = _Statements()

    async def init(conn: asyncpg.Connection) -> None:
        conn.add_query_logger(statements.log)

    pool = await asyncpg.create_pool(pg_url, min_size=1, max_size=2, init=init, reset=_no_reset)
    store = PgBeamStore.new(pool, schema=schema)
    rows: list[list[str]] = []
    try:
        async with GrpcServer([binding(store)], grace_s=0.5) as server:
            client = StoreClient(server.address)
            try:
                for name, via, op in ops:
                    target: BeamStore = client if via == "grpc" else store
                    for _ in range(5):  # statements get prepared on first use
                        await op(target)
                    await asyncio.sleep(0)
                    statements.count, statements.seconds = 0, 0.0
                    with conversion_tally() as tally:
                        start = time.perf_counter()
                        for _ in range(n):
                            await op(target)
                        wall = (time.perf_counter() - start) / n
                    await asyncio.sleep(0)
                    sql = statements.seconds / n
                    convert = (
                        tally.seconds.get("to_proto", 0.0) + tally.seconds.get("from_proto", 0.0)
                    ) / n
                    rest = wall - sql - convert
                    rows.append(
                        [
                            name,
                            fmt_duration(wall),
                            f"{statements.count / n:.0f}",
                            f"{fmt_duration(sql)} ({sql / wall:.0%})",
                            f"{fmt_duration(convert)} ({convert / wall:.0%})",
                            f"{fmt_duration(rest)} ({rest / wall:.0%})",
                            "to/from_proto calls: "
                            f"{(tally.calls.get('to_proto', 0) + tally.calls.get('from_proto', 0)) / n:.0f}",
                        ]
                    )
            finally:
                await client.aclose()
    finally:
        await pool.close()
    emit_table(
        "3b. Where a store write spends its time",
        ["operation", "per op", "statements", "waiting on SQL", "to/from_proto", "rest", "note"],
        rows,
        caption=f"{n} ops each, statements logged (asyncpg query logger), conversions timed",
    )


async def test_postgres_writes(pg_url: str, schema: str) -> None:
    store = await PgBeamStore.connect(pg_url, schema=schema, min_size=2, max_size=4)
    pool = await asyncpg.create_pool(pg_url, min_size=2, max_size=4, reset=_no_reset)
    try:
        await pool.execute(
            f'CREATE TABLE "{schema}".bench_rows (id uuid PRIMARY KEY, session_id text NOT NULL,'
            " body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
        )
        insert_row = (
            f'INSERT INTO "{schema}".bench_rows (id, session_id, body) VALUES ($1, $2, $3::jsonb)'
        )
        body = json.dumps([{"type": "text", "text": TEXT}])
        append_sql = Statements.for_schema(quote_schema(schema)).append_message

        # One session per case that appends; begin_run creates it.
        sessions = {}
        for name in ("bare", "direct", "grpc"):
            sessions[name] = _id()
            await store.begin_run(
                session_id=sessions[name],
                agent_name="assistant",
                run_id=_id(),
                lease_owner=OWNER,
                lease_ttl_s=600.0,
            )

        async def bare_insert() -> None:
            await pool.execute(insert_row, uuid.uuid4(), sessions["bare"], body)

        async def bare_append() -> None:
            row = await pool.fetchrow(
                append_sql,
                sessions["bare"],
                _id(),
                None,
                None,
                "human",
                "message",
                body,
                None,
                None,
                None,
                None,
                None,
            )
            assert row is not None

        async with GrpcServer([binding(store)], grace_s=0.5) as server:
            client = StoreClient(server.address)
            try:
                await compare(
                    "3. PostgreSQL writes (sequential)",
                    [
                        Case("bare asyncpg INSERT (1 row)", per_call(bare_insert), baseline=True),
                        Case(
                            "bare asyncpg: append_message's SQL",
                            per_call(bare_append),
                            note="same statement, no mapping",
                        ),
                        Case(
                            "PgBeamStore.append_message",
                            per_call(lambda: append(store, sessions["direct"])),
                            note="1 statement",
                        ),
                        Case(
                            "StoreClient.append_message",
                            per_call(lambda: append(client, sessions["grpc"])),
                            note="+1 gRPC hop to the store service",
                        ),
                        Case(
                            "PgBeamStore begin_run + finish_run",
                            per_call(lambda: step_pair(store)),
                            note="2 statements, each its own transaction",
                        ),
                        Case(
                            "StoreClient begin_run + finish_run",
                            per_call(lambda: step_pair(client)),
                            note="+2 gRPC hops",
                        ),
                    ],
                    n=1000,
                    budget_s=5.0,
                    caption="local PostgreSQL over TCP, synchronous_commit as configured",
                )
            finally:
                await client.aclose()

        await _breakdown(
            pg_url,
            schema,
            [
                ("PgBeamStore.append_message", "direct", lambda s: append(s, sessions["direct"])),
                ("StoreClient.append_message", "grpc", lambda s: append(s, sessions["grpc"])),
                ("PgBeamStore begin_run + finish_run", "direct", step_pair),
                ("StoreClient begin_run + finish_run", "grpc", step_pair),
            ],
            n=scaled(60),
        )
    finally:
        await pool.close()
        await store.aclose()
