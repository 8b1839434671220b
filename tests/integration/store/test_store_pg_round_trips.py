"""The round trips of the Postgres pipeline steps, counted with asyncpg's query logger.

A plain invoke is begin_run then finish_run: one statement each (each its own transaction),
prepared once per connection and reused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from store_kit import OWNER, answer, begin, interrupted_with, one_connection_store

from riverbeam.store import NewMessage, PgBeamStore
from riverbeam.types import ContentPart, TurnConfig

pytestmark = pytest.mark.postgres


class _Log:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def __call__(self, record: asyncpg.connection.LoggedQuery) -> None:
        self.queries.append(record.query)

    def taken(self) -> list[str]:
        taken, self.queries = self.queries, []
        return taken


@pytest.fixture
async def logged(pg_url: str, pg_schema: str) -> AsyncIterator[tuple[PgBeamStore, _Log]]:
    """A store on one connection whose every statement is logged."""
    log = _Log()

    async def init(conn: asyncpg.Connection) -> None:
        conn.add_query_logger(log)

    async with one_connection_store(pg_url, pg_schema, init=init) as store:
        log.taken()
        yield store, log


async def _invoke(store: PgBeamStore, **begin_args: object) -> None:
    begun = await begin(store, exclusive=True, history_limit=50, **begin_args)
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        messages=[NewMessage(role="ai", content=[ContentPart.of_text("hi")])],
    )


async def test_an_invoke_is_two_statements(logged: tuple[PgBeamStore, _Log]) -> None:
    store, log = logged
    session_id = "s-round-trips"
    await _invoke(store, session_id=session_id)  # types introspected, statements prepared
    log.taken()
    begun = await begin(store, session_id=session_id, exclusive=True, history_limit=50)
    assert len(begun.history) == 2
    begin_statements = log.taken()
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        messages=[NewMessage(role="ai", content=[ContentPart.of_text("hi")])],
    )
    finish_statements = log.taken()
    assert len(begin_statements) == 1, begin_statements
    assert "begin_step" in begin_statements[0]
    assert len(finish_statements) == 1, finish_statements
    assert "finish_step" in finish_statements[0]


async def test_a_replacing_session_config_stays_one_statement(
    logged: tuple[PgBeamStore, _Log],
) -> None:
    store, log = logged
    config = TurnConfig(append_instructions="be brief")
    await _invoke(store)
    log.taken()
    begun = await begin(store, session_config=config)
    assert len(log.taken()) == 1
    assert begun.session.config == config


async def test_statements_are_prepared_once(logged: tuple[PgBeamStore, _Log]) -> None:
    """asyncpg's statement cache keeps them: no Parse per call."""
    store, _ = logged
    for _ in range(4):
        await _invoke(store)
    async with store._connection() as conn:
        names = await conn.fetch(
            "SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%begin_step(%'"
            " OR statement LIKE '%finish_step(%'"
        )
    names = [r for r in names if "pg_prepared_statements" not in r["statement"]]
    assert len(names) == 2, names


async def test_a_resume_takes_the_statements(logged: tuple[PgBeamStore, _Log]) -> None:
    """A resume compare-and-sets its answered actions between statements, in a transaction."""
    store, log = logged
    begun, (action_id,) = await interrupted_with(store)
    log.taken()
    await begin(
        store,
        session_id=begun.session.session_id,
        interaction_id=begun.interaction.interaction_id,
        action_responses=[answer(action_id)],
    )
    statements = log.taken()
    assert statements[0] == "BEGIN;" and statements[-1] == "COMMIT;", statements
