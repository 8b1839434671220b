"""Parts of the Postgres pipeline steps, run on a connection inside the step's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, NoReturn

import asyncpg

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks, _rows
from riverbeam.store._sql import Statements
from riverbeam.store._types import NewAction, NewMessage
from riverbeam.types import InteractionStatus, Message, Run

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = [
    "check_fence",
    "insert_messages",
    "recent_messages",
    "why_not_finished",
    "why_not_resolved",
    "write_finish",
]


async def why_not_resolved(
    conn: Connection, sql: Statements, action_id: str, interaction_id: str
) -> NoReturn:
    """Why an action's compare-and-set took no row: BEM-027, 064 or 066."""
    row = await conn.fetchrow(sql.action_state, action_id)
    if row is None:
        raise RiverbeamError(ErrorCode.ACTION_NOT_FOUND, action_id=action_id)
    if row["interaction_id"] != interaction_id:
        raise RiverbeamError(
            ErrorCode.ACTION_WRONG_INTERACTION,
            action_id=action_id,
            interaction_id=interaction_id,
        )
    if row["status"] == "expired" or (row["status"] == "pending" and row["expired"]):
        raise RiverbeamError(ErrorCode.ACTION_EXPIRED, action_id=action_id)
    raise RiverbeamError(ErrorCode.ACTION_NOT_PENDING, action_id=action_id, status=row["status"])


async def recent_messages(
    conn: Connection, sql: Statements, session_id: str, *, below: int, limit: int
) -> list[Message]:
    """The session's newest `limit` messages numbered below `below`, oldest first.

    One index-backed statement (ORDER BY seq DESC LIMIT on UNIQUE (session_id, seq)): it
    reads `limit` rows whatever the session's length.
    """
    if limit == 0 or below <= 1:
        return []
    rows = await conn.fetch(sql.recent_messages, session_id, below - 1, limit)
    return [_rows.message_of(r) for r in reversed(rows)]


async def insert_messages(
    conn: Connection,
    sql: Statements,
    session_id: str,
    interaction_id: str | None,
    run_id: str | None,
    messages: Sequence[NewMessage],
    *,
    first_seq: int,
) -> list[Message]:
    """Save messages numbered from first_seq (one statement); returned in sequence order."""
    if not messages:
        return []
    rows = await conn.fetch(
        sql.insert_messages,
        session_id,
        interaction_id,
        run_id,
        *_rows.message_columns(messages, first_seq),
    )
    return sorted((_rows.message_of(r) for r in rows), key=lambda m: m.seq)


async def check_fence(
    conn: Connection, sql: Statements, run_id: str, epoch: int, *, running: bool
) -> None:
    """The run is at `epoch` (and, with `running`, still running), under a share lock held
    until the step commits: BEM-028 for an unknown run, BEM-035 otherwise."""
    row = await conn.fetchrow(sql.run_fence, run_id)
    if row is None:
        raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
    current = int(row["lease_epoch"])
    if current != epoch or (running and row["status"] != "running"):
        raise _checks.stale_epoch(run_id, epoch, current)


async def why_not_finished(
    conn: Connection, sql: Statements, run_id: str, lease_owner: str, epoch: int | None
) -> Run:
    """After the finish compare-and-set took no row: the stored run when this owner already
    finished it at this epoch (a retry); BEM-028, BEM-035 or BEM-121 otherwise."""
    row = await conn.fetchrow(sql.get_run, run_id)
    if row is None:
        raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
    current = int(row["lease_epoch"])
    if epoch is not None:
        if current != epoch:
            raise _checks.stale_epoch(run_id, epoch, current)
        if row["status"] != "running" and row["lease_owner"] == lease_owner:
            return _rows.run_of(row)
    raise RiverbeamError(
        ErrorCode.STORE_CONFLICT,
        "the run is no longer running under this lease",
        run_id=run_id,
        status=row["status"],
    )


async def write_finish(
    conn: Connection,
    sql: Statements,
    run: Run,
    messages: Sequence[NewMessage],
    pending_actions: Sequence[NewAction],
    after: InteractionStatus,
    expiry: timedelta | None = None,
) -> None:
    """What the finish step writes once its compare-and-set closed the run: the messages
    (the session's next numbers), the interaction's status and the pending actions."""
    bumped = await conn.fetchrow(sql.bump_session, run.session_id, len(messages))
    assert bumped is not None
    await insert_messages(
        conn,
        sql,
        run.session_id,
        run.interaction_id,
        run.run_id,
        messages,
        first_seq=int(bumped["last_seq"]) - len(messages) + 1,
    )
    await conn.execute(sql.set_interaction_status, run.interaction_id, after)
    if pending_actions:
        await conn.execute(
            sql.insert_actions,
            run.session_id,
            run.interaction_id,
            run.run_id,
            run.agent_name,
            bumped["user_id"],
            *_rows.action_columns(pending_actions),
            expiry,
            _rows.action_previews(pending_actions),
            _rows.action_children(pending_actions),
        )
