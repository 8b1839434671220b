"""PgBeamStore beyond the conformance suite: migrations, schema, and adversity."""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from store_kit import (
    OWNER,
    PgStoreFactory,
    answer,
    begin,
    expect,
    interrupted_with,
    new_schema_name,
    uid,
)

from riverbeam.core.errors import ErrorCode
from riverbeam.store import NewAction, NewMessage, PgBeamStore, load_migrations
from riverbeam.types import ContentPart

pytestmark = pytest.mark.postgres


async def _tables(admin: asyncpg.Connection, schema: str) -> set[str]:
    rows = await admin.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
    return {r["tablename"] for r in rows}


# ---- migrations ------------------------------------------------------------------------------
async def test_replicas_starting_together_migrate_once(
    pg_url: str, pg_schema: str, admin: asyncpg.Connection
) -> None:
    stores = await asyncio.gather(
        *(PgBeamStore.connect(pg_url, schema=pg_schema, max_size=2) for _ in range(5))
    )
    try:
        rows = await admin.fetch(
            f'SELECT version, name FROM "{pg_schema}".schema_migrations ORDER BY version'
        )
        assert [(r["version"], r["name"]) for r in rows] == [
            (m.version, m.name) for m in load_migrations()
        ]
        assert {
            "sessions",
            "interactions",
            "runs",
            "messages",
            "actions",
            "memory_entries",
        } <= await _tables(admin, pg_schema)
        for store in stores:  # every replica works
            assert (await begin(store)).run.status == "running"
        assert await stores[0].migrate() == []
    finally:
        for store in stores:
            await store.aclose()


async def test_new_runs_no_ddl(pg_url: str, pg_schema: str, admin: asyncpg.Connection) -> None:
    pool = await asyncpg.create_pool(pg_url, min_size=1, max_size=2)
    try:
        store = PgBeamStore.new(pool, schema=pg_schema)
        assert (
            await admin.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = $1", pg_schema)
            == 0
        )
        assert await store.migrate() == [m.version for m in load_migrations()]
        assert (await begin(store)).run.status == "running"
        await store.aclose()
        assert await pool.fetchval("SELECT 1") == 1  # the caller's pool stays open
    finally:
        await pool.close()


async def test_a_changed_migration_is_refused(
    pg_url: str, pg_store: PgBeamStore, admin: asyncpg.Connection
) -> None:
    await admin.execute(f'UPDATE "{pg_store.schema}".schema_migrations SET checksum = $1', "edited")
    with expect(ErrorCode.STORE_MIGRATION):
        await PgBeamStore.connect(pg_url, schema=pg_store.schema, max_size=1)


async def test_schema_names_are_checked(pg_url: str) -> None:
    for bad in ('x"; DROP TABLE y; --', "Upper", "1abc", ""):
        with expect(ErrorCode.INVALID_ARGUMENT):
            await PgBeamStore.connect(pg_url, schema=bad)


async def test_unreachable_database_is_store_unavailable() -> None:
    with expect(ErrorCode.STORE_UNAVAILABLE):
        await PgBeamStore.connect(
            "postgresql://postgres@127.0.0.1:1/test", schema=new_schema_name()
        )


async def test_schema_types(pg_store: PgBeamStore, admin: asyncpg.Connection) -> None:
    rows = await admin.fetch(
        "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = $1",
        pg_store.schema,
    )
    types = {(r["table_name"], r["column_name"]): r["data_type"] for r in rows}
    for table, column in [
        ("messages", "content"),
        ("messages", "metadata"),
        ("runs", "result"),
        ("actions", "response"),
    ]:
        assert types[(table, column)] == "jsonb"
    for table, column in [
        ("sessions", "last_active_at"),
        ("runs", "lease_expires_at"),
        ("messages", "created_at"),
    ]:
        assert types[(table, column)] == "timestamp with time zone"
    unique = await admin.fetchval(
        "SELECT count(*) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace"
        " WHERE n.nspname = $1 AND c.conname = 'messages_session_seq_key' AND c.contype = 'u'",
        pg_store.schema,
    )
    assert unique == 1


async def test_sequence_counter_lives_on_the_session_row(
    pg_store: PgBeamStore, admin: asyncpg.Connection
) -> None:
    begun = await begin(pg_store)
    sid = begun.session.session_id
    await pg_store.append_message(session_id=sid, role="human")
    q = f'"{pg_store.schema}"'
    counter = await admin.fetchval(f"SELECT last_seq FROM {q}.sessions WHERE session_id = $1", sid)
    top = await admin.fetchval(f"SELECT max(seq) FROM {q}.messages WHERE session_id = $1", sid)
    assert counter == top == 2
    with pytest.raises(asyncpg.UniqueViolationError):  # the constraint backs the counter up
        await admin.execute(
            f"INSERT INTO {q}.messages (message_id, session_id, seq, role, type) VALUES ($1, $2, 2, 'human', 'message')",
            uid(),
            sid,
        )


# ---- adversity: the connection dies inside a step --------------------------------------------
def _plan_nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _plan_nodes(child)


_AUTO_EXPLAIN = (
    "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;"
    " SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on;"
    " SET auto_explain.log_format = json; SET auto_explain.log_level = notice"
)


async def test_history_reads_only_the_rows_it_returns(
    pg_url: str, pg_schema: str, pg_store: PgBeamStore
) -> None:
    """begin_run's history is one bounded index scan, however long the session.

    The plans are the ones begin_run itself ran, nested statements included (auto_explain at
    NOTICE level on the store's own connections). The table is not analyzed: even the plan of a
    table without statistics (a bitmap scan and a sort, for the ORDER BY ... LIMIT alone) must
    not read the whole session.
    """
    mine, other = await begin(pg_store), await begin(pg_store)
    for begun in (other, mine):
        await pg_store.finish_run(
            run_id=begun.run.run_id,
            lease_owner=OWNER,
            status="completed",
            messages=[
                NewMessage(role="ai", content=[ContentPart.of_text(f"m{i}")]) for i in range(999)
            ],
        )
    sid = mine.session.session_id
    plans: list[dict[str, Any]] = []

    def on_notice(_conn: object, message: Any) -> None:
        text = str(message.message)
        if "plan:" in text:
            plans.append(json.loads(text.split("plan:", 1)[1]))

    async def explained(conn: asyncpg.Connection) -> None:
        await conn.execute(_AUTO_EXPLAIN)
        conn.add_log_listener(on_notice)

    # The listener stays on the pooled connection on purpose: asyncpg warns about that on
    # every release, here expected.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "", asyncpg.InterfaceWarning)
        pool = await asyncpg.create_pool(pg_url, min_size=1, max_size=1, setup=explained)
        try:
            store = PgBeamStore.new(pool, schema=pg_schema)
            begun = await begin(store, session_id=sid, history_limit=7)
        finally:
            await pool.close()
    assert [m.seq for m in begun.history] == list(range(994, 1001))
    history = [p for p in plans if "seq DESC" in p["Query Text"] and "LIMIT" in p["Query Text"]]
    assert len(history) == 1, [p["Query Text"] for p in plans]
    nodes = list(_plan_nodes(history[0]["Plan"]))
    assert max(n["Actual Rows"] for n in nodes) == 7, nodes
    assert any(n.get("Index Name") == "messages_session_seq_key" for n in nodes), nodes


def _killer(admin: asyncpg.Connection, step: str) -> tuple[list[int], object]:
    """A before_commit hook that terminates the step's own backend, once."""
    killed: list[int] = []

    async def hook(name: str, conn: asyncpg.Connection) -> None:
        if name == step and not killed:
            pid = conn.get_server_pid()
            killed.append(pid)
            await admin.execute("SELECT pg_terminate_backend($1)", pid)

    return killed, hook


async def test_connection_lost_in_begin_run_leaves_nothing(
    make_pg_store: PgStoreFactory, admin: asyncpg.Connection
) -> None:
    killed, hook = _killer(admin, "begin_run")
    store = await make_pg_store(before_commit=hook)
    sid, request_id = uid(), uid()
    with expect(ErrorCode.STORE_UNAVAILABLE):
        await begin(store, session_id=sid, request_id=request_id)
    assert killed
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await store.get_session(session_id=sid)
    assert await store.get_run_by_request(request_id=request_id) is None
    q = f'"{store.schema}"'
    for table in ("sessions", "interactions", "runs", "messages"):
        assert await admin.fetchval(f"SELECT count(*) FROM {q}.{table}") == 0
    assert (
        await begin(store, session_id=sid, request_id=request_id)
    ).session.last_seq == 1  # healed


async def test_connection_lost_in_finish_run_leaves_the_run_running(
    make_pg_store: PgStoreFactory, admin: asyncpg.Connection
) -> None:
    killed, hook = _killer(admin, "finish_run")
    store = await make_pg_store(before_commit=hook)
    begun = await begin(store)
    finish = {
        "run_id": begun.run.run_id,
        "lease_owner": OWNER,
        "status": "interrupted",
        "messages": [NewMessage(role="ai", content=[ContentPart.of_text("may I?")])],
        "pending_actions": [NewAction(action_id=uid(), tool="git_push")],
    }
    with expect(ErrorCode.STORE_UNAVAILABLE):
        await store.finish_run(**finish)  # type: ignore[arg-type]
    assert killed
    assert (await store.get_run(run_id=begun.run.run_id)).status == "running"
    assert (await store.get_session(session_id=begun.session.session_id)).last_seq == 1
    assert (await store.list_messages(session_id=begun.session.session_id))[0] == [
        begun.human_message
    ]
    assert (await store.list_pending_actions())[0] == []
    # The runner retries the same step and it lands whole.
    run = await store.finish_run(**finish)  # type: ignore[arg-type]
    assert run.status == "interrupted"
    assert len((await store.list_pending_actions())[0]) == 1
    assert (await store.get_session(session_id=begun.session.session_id)).last_seq == 2


async def test_connection_lost_in_a_resume_leaves_the_action_pending(
    make_pg_store: PgStoreFactory, admin: asyncpg.Connection
) -> None:
    setup = await make_pg_store()
    begun, (action_id,) = await interrupted_with(setup)
    killed, hook = _killer(admin, "begin_run")
    store = await make_pg_store(before_commit=hook)
    with expect(ErrorCode.STORE_UNAVAILABLE):
        await begin(
            store,
            session_id=begun.session.session_id,
            interaction_id=begun.interaction.interaction_id,
            human_content=[],
            action_responses=[answer(action_id)],
        )
    assert killed
    action = await store.get_action(action_id=action_id)
    assert (action.status, action.outcome, action.response) == ("pending", None, None)
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [m.type for m in messages] == ["message", "message"]
