"""The agent layer's configuration records in Postgres: a session's, and a run's options.

Both are written inside the begin-run step's transaction (docs/agents.md): the session row is
already locked by the step's upsert, the run row was just inserted by it.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import asyncpg

from riverbeam.store import _rows
from riverbeam.store._migrations import quote_schema
from riverbeam.store._run_config import UNCHANGED, new_session_config
from riverbeam.store._sql import RUN_COLS, SESSION_COLS
from riverbeam.types import Run, RunOptions, Session, TurnConfig

__all__ = ["record_run_options", "set_session_config"]

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Conn = PoolConnectionProxy[asyncpg.Record]


@cache
def _statements(schema: str) -> tuple[str, str]:
    q = quote_schema(schema)
    return (
        f"UPDATE {q}.sessions SET config = $2::jsonb WHERE session_id = $1"
        f" RETURNING {SESSION_COLS}",
        f"UPDATE {q}.runs SET options = $2::jsonb WHERE run_id = $1 RETURNING {RUN_COLS}",
    )


async def set_session_config(
    conn: Conn, schema: str, session: Session, config: TurnConfig | None, *, narrows: bool
) -> Session:
    """The session with its configuration replaced or narrowed (_run_config.py)."""
    new = new_session_config(session.config, config, narrows=narrows)
    if new is UNCHANGED:
        return session
    value = None if new is None else _rows.dump(new)
    row = await conn.fetchrow(_statements(schema)[0], session.session_id, value)
    assert row is not None  # locked by this transaction's upsert
    return _rows.session_of(row)


async def record_run_options(conn: Conn, schema: str, run: Run, options: RunOptions | None) -> Run:
    """The run with its options recorded (nothing is written for none)."""
    if options is None or options.is_empty:
        return run
    row = await conn.fetchrow(_statements(schema)[1], run.run_id, _rows.dump(options))
    assert row is not None  # inserted by this transaction
    return _rows.run_of(row)
