"""The agent layer's session configuration in Postgres.

Written inside the begin-run step's transaction (docs/agents.md): the session row is already
locked by the step's upsert. A run's options go in with the run itself (begin_write).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import asyncpg

from riverbeam.store import _rows
from riverbeam.store._migrations import quote_schema
from riverbeam.store._run_config import UNCHANGED, new_session_config
from riverbeam.store._sql import SESSION_COLS
from riverbeam.types import Session, TurnConfig

__all__ = ["set_session_config"]

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Conn = PoolConnectionProxy[asyncpg.Record]


@cache
def _statement(schema: str) -> str:
    q = quote_schema(schema)
    return (
        f"UPDATE {q}.sessions SET config = $2::jsonb WHERE session_id = $1 RETURNING {SESSION_COLS}"
    )


async def set_session_config(
    conn: Conn, schema: str, session: Session, config: TurnConfig | None, *, narrows: bool
) -> Session:
    """The session with its configuration replaced or narrowed (_run_config.py)."""
    new = new_session_config(session.config, config, narrows=narrows)
    if new is UNCHANGED:
        return session
    value = None if new is None else _rows.dump(new)
    row = await conn.fetchrow(_statement(schema), session.session_id, value)
    assert row is not None  # locked by this transaction's upsert
    return _rows.session_of(row)
