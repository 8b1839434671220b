"""What an invoke's two steps make the Postgres backend do, counted.

Each statement a step runs inside the backend (those of the begin_step and finish_step
functions, and the foreign-key checks) is an executor start of its own: auto_explain with
nested statements logs one line per executor run to the client, which counts them. A finish
without pending actions opens nothing of the actions table (its locks, read in the step's
transaction through the before_commit hook, say so). The refusals keep their order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import asyncpg
import pytest
from store_kit import OWNER, PgStoreFactory, begin, expect, one_connection_store

from riverbeam.core.errors import ErrorCode
from riverbeam.core.ids import new_id
from riverbeam.store import NewAction, NewMessage, PgBeamStore
from riverbeam.types import ContentPart

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Connection = PoolConnectionProxy[asyncpg.Record]

pytestmark = [
    pytest.mark.postgres,
    # The pool warns on each release that the listener its setup added is still there.
    pytest.mark.filterwarnings("ignore:.*active log listener:asyncpg.exceptions.InterfaceWarning"),
]

_FK_CHECK = "SELECT 1 FROM ONLY "


class _Plans:
    """The query text of every statement the backend ran, top level and nested."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, _conn: object, message: asyncpg.PostgresLogMessage) -> None:
        text = message.message
        if "Query Text: " in text:
            self.texts.append(text.split("Query Text: ", 1)[1].split("\n", 1)[0].strip())

    def taken(self) -> list[str]:
        taken, self.texts = self.texts, []
        return taken


@pytest.fixture
async def explained(pg_url: str, pg_schema: str) -> AsyncIterator[tuple[PgBeamStore, _Plans]]:
    """A store on one connection whose every executor run is logged back to it."""
    plans = _Plans()

    async def init(conn: asyncpg.Connection) -> None:
        await conn.execute("LOAD 'auto_explain'")
        await conn.execute("SET auto_explain.log_min_duration = 0")
        await conn.execute("SET auto_explain.log_nested_statements = on")
        await conn.execute("SET client_min_messages = log")

    async def setup(conn: asyncpg.Connection) -> None:  # the pool drops listeners on release
        conn.add_log_listener(plans)

    async with one_connection_store(pg_url, pg_schema, init=init, setup=setup) as store:
        yield store, plans


def _own(texts: list[str], call: str) -> list[str]:
    """The statements of the function `call`: neither the call itself nor a key check."""
    assert sum(call in t for t in texts) == 1, texts
    return [t for t in texts if call not in t and not t.startswith(_FK_CHECK)]


async def _finish(store: PgBeamStore, run_id: str) -> None:
    await store.finish_run(
        run_id=run_id,
        lease_owner=OWNER,
        status="completed",
        messages=[NewMessage(role="ai", content=[ContentPart.of_text("hi")])],
    )


async def _finish_with(store: PgBeamStore, run_id: str, *, messages: int, actions: int) -> None:
    await store.finish_run(
        run_id=run_id,
        lease_owner=OWNER,
        status="interrupted" if actions else "completed",
        messages=[NewMessage(role="ai", content=[ContentPart.of_text("hi")])] * messages,
        pending_actions=[NewAction(action_id=new_id(), tool="git_push")] * actions,
    )


async def test_a_new_session_begins_in_four_statements(
    explained: tuple[PgBeamStore, _Plans],
) -> None:
    """The session, the interaction, the run (with the busy check) and the messages: the
    request-id check rides on the session's upsert, and a session without messages has no
    history to read (before: seven, with the request-id check, the busy check and the
    history read as statements of their own)."""
    store, plans = explained
    warm = await begin(store, exclusive=True, history_limit=50)  # plans cached
    await _finish(store, warm.run.run_id)
    plans.taken()
    begun = await begin(store, exclusive=True, history_limit=50)
    own = _own(plans.taken(), "begin_step(")
    assert [t.split(" AS ")[0] for t in own] == [
        f"INSERT INTO {store.schema}.sessions",
        f"INSERT INTO {store.schema}.interactions",
        f"INSERT INTO {store.schema}.runs",
        "WITH m",
    ], own
    assert begun.history == [] and begun.history_after == 0


async def test_a_later_turn_reads_its_history_in_one_more_statement(
    explained: tuple[PgBeamStore, _Plans],
) -> None:
    store, plans = explained
    first = await begin(store, exclusive=True, history_limit=50)
    await _finish(store, first.run.run_id)
    sid = first.session.session_id
    second = await begin(store, session_id=sid, exclusive=True, history_limit=50)
    await _finish(store, second.run.run_id)
    plans.taken()
    third = await begin(store, session_id=sid, exclusive=True, history_limit=50)
    assert len(_own(plans.taken(), "begin_step(")) == 5
    assert [m.seq for m in third.history] == [1, 2, 3, 4]


async def test_a_finish_runs_only_the_parts_it_needs(
    explained: tuple[PgBeamStore, _Plans],
) -> None:
    """The run, the session, the messages, the interaction; no actions' insert without
    actions (before: one statement setting up all five parts, whatever the step held)."""
    store, plans = explained
    warm = await begin(store)
    await _finish(store, warm.run.run_id)
    begun = await begin(store)
    plans.taken()
    await _finish(store, begun.run.run_id)
    own = _own(plans.taken(), "finish_step(")
    assert len(own) == 4, own
    assert not any(f"{store.schema}.actions" in t for t in own), own


async def test_a_finish_without_messages_or_with_actions_runs_only_the_parts_it_needs(
    explained: tuple[PgBeamStore, _Plans],
) -> None:
    """A finish without messages inserts none, and only one with pending actions inserts
    them (and after the interaction, so rows are locked run -> session -> interaction)."""
    store, plans = explained
    for messages, actions in [(0, 0), (1, 0), (0, 1), (1, 1)]:  # warm every plan
        warm = await begin(store)
        await _finish_with(store, warm.run.run_id, messages=messages, actions=actions)
    quiet = await begin(store)
    plans.taken()
    await _finish_with(store, quiet.run.run_id, messages=0, actions=0)
    assert [t.split(" ")[0:3] for t in _own(plans.taken(), "finish_step(")] == [
        ["UPDATE", f"{store.schema}.runs", "AS"],
        ["UPDATE", f"{store.schema}.sessions", "AS"],
        ["UPDATE", f"{store.schema}.interactions", "AS"],
    ]
    paused = await begin(store)
    plans.taken()
    await _finish_with(store, paused.run.run_id, messages=1, actions=1)
    own = _own(plans.taken(), "finish_step(")
    assert [t.split(" (")[0].split(" AS ")[0] for t in own] == [
        f"UPDATE {store.schema}.runs",
        f"UPDATE {store.schema}.sessions",
        f"INSERT INTO {store.schema}.messages",
        f"UPDATE {store.schema}.interactions",
        f"INSERT INTO {store.schema}.actions",
    ], own
    pending, _ = await store.list_pending_actions(session_id=paused.session.session_id)
    assert [a.tool for a in pending] == ["git_push"]


async def test_a_finish_without_actions_locks_nothing_of_the_actions_table(
    make_pg_store: PgStoreFactory,
) -> None:
    locked: list[str] = []

    async def hook(step: str, conn: Connection) -> None:
        if step == "finish_run":
            rows = await conn.fetch(
                "SELECT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                " WHERE l.pid = pg_backend_pid() AND c.relname LIKE 'actions%'"
            )
            locked.extend(r["relname"] for r in rows)

    store = await make_pg_store(before_commit=hook)
    begun = await begin(store)
    await _finish(store, begun.run.run_id)
    assert locked == []
    assert (await store.get_run(run_id=begun.run.run_id)).status == "completed"


async def test_a_used_request_id_is_refused_before_a_busy_session(pg_store: PgBeamStore) -> None:
    store = pg_store
    """A retry of a request whose run still runs hears that its id was used, as before."""
    first = await begin(store, exclusive=True)
    with expect(ErrorCode.REQUEST_ID_REUSED):
        await begin(
            store,
            session_id=first.session.session_id,
            request_id=first.run.request_id,
            exclusive=True,
        )


async def test_a_used_request_id_is_refused_before_another_owner(pg_store: PgBeamStore) -> None:
    store = pg_store
    first = await begin(store, user_id="ann")
    with expect(ErrorCode.REQUEST_ID_REUSED):
        await begin(
            store,
            session_id=first.session.session_id,
            request_id=first.run.request_id,
            require_owner="bob",
        )
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await begin(store, session_id=first.session.session_id, require_owner="bob")
