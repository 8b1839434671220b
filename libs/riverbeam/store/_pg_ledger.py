"""The tool-execution ledger on PostgreSQL, with the rules of `_ledger` (as InMemoryStore).

A write locks the run's row (so it serialises with a takeover, which bumps the epoch) and
the entries' rows, merges each entry in Python with the same function the in-memory store
uses, and upserts what changed, all in one transaction.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks, _ledger, _rows
from riverbeam.store._memory_ledger import check_running
from riverbeam.store._migrations import quote_schema
from riverbeam.store._nul import nul_safe
from riverbeam.store._sql import RUN_COLS
from riverbeam.types import Run, ToolExecution

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = ["PgLedger", "settle_in_flight", "write_entries"]

_COLS = (
    "execution_id, run_id, interaction_id, session_id, seq, tool_call_id, tool, args, status,"
    " read_only, idempotent, action_id, result_digest, result_preview, error_code,"
    " error_message, runner_id, lease_epoch, requested_at, started_at, finished_at"
)
_UPDATED = [c.strip() for c in _COLS.split(",")][4:]


@dataclass(frozen=True, slots=True)
class _Statements:
    run_for_update: str
    run_exists: str
    entries_for_update: str
    upsert: str
    by_run: str
    by_interaction: str
    settle: str
    interaction_exists: str


@lru_cache(maxsize=64)
def _statements(schema: str) -> _Statements:
    q = quote_schema(schema)
    placeholders = ", ".join(
        f"${i}::jsonb" if col.strip() == "args" else f"${i}"
        for i, col in enumerate(_COLS.split(","), start=1)
    )
    return _Statements(
        run_for_update=f"SELECT {RUN_COLS} FROM {q}.runs WHERE run_id = $1 FOR UPDATE",
        run_exists=f"SELECT 1 FROM {q}.runs WHERE run_id = $1",
        entries_for_update=(
            f"SELECT {_COLS} FROM {q}.tool_executions WHERE execution_id = ANY($1::text[])"
            " FOR UPDATE"
        ),
        upsert=(
            f"INSERT INTO {q}.tool_executions ({_COLS}) VALUES ({placeholders})"
            " ON CONFLICT (execution_id) DO UPDATE SET "
            + ", ".join(f"{c} = EXCLUDED.{c}" for c in _UPDATED)
        ),
        by_run=(
            f"SELECT pos, {_COLS} FROM {q}.tool_executions WHERE run_id = $1 AND pos > $2"
            " ORDER BY pos LIMIT $3"
        ),
        by_interaction=(
            f"SELECT pos, {_COLS} FROM {q}.tool_executions WHERE interaction_id = $1"
            " AND pos > $2 ORDER BY pos LIMIT $3"
        ),
        settle=(
            f"UPDATE {q}.tool_executions SET finished_at = now(), error_code = $2,"
            " error_message = $3,"
            " status = CASE WHEN status = 'started' THEN 'unknown' ELSE 'cancelled' END"
            " WHERE run_id = ANY($1::text[]) AND status IN ('requested', 'started')"
        ),
        interaction_exists=f"SELECT 1 FROM {q}.interactions WHERE interaction_id = $1",
    )


def _entry_of(row: asyncpg.Record) -> ToolExecution:
    values = {name: row[name] for name in (c.strip() for c in _COLS.split(","))}
    values["args"] = json.loads(row["args"]) if row["args"] else {}
    return ToolExecution(**values)


def _values(entry: ToolExecution) -> tuple[object, ...]:
    return tuple(
        _rows.dump(entry.args) if col == "args" else getattr(entry, col)
        for col in (c.strip() for c in _COLS.split(","))
    )


async def write_entries(
    conn: Connection, schema: str, run: Run, entries: Sequence[ToolExecution]
) -> list[ToolExecution]:
    """Merge and write a batch for `run` inside the caller's transaction (BEM-263/264)."""
    if not entries:
        return []
    sql = _statements(schema)
    batch = _ledger.check_batch(run, entries)
    rows = await conn.fetch(sql.entries_for_update, [e.execution_id for e in batch])
    stored = {r["execution_id"]: _entry_of(r) for r in rows}
    result: list[ToolExecution] = []
    writes: list[ToolExecution] = []
    for entry in batch:
        change = _ledger.merged(stored.get(entry.execution_id), entry)
        if change is not None:
            writes.append(change)
        result.append(change or stored[entry.execution_id])
    if writes:
        await conn.executemany(sql.upsert, [_values(e) for e in writes])
    return result


async def settle_in_flight(conn: Connection, schema: str, run_ids: Sequence[str]) -> None:
    """The unfinished entries of runs whose runner died: `unknown` (started), `cancelled`."""
    if run_ids:
        await conn.execute(
            _statements(schema).settle,
            list(run_ids),
            ErrorCode.RUN_LOST.code,
            _ledger.IN_FLIGHT_MESSAGE,
        )


class _Access(Protocol):
    _schema: str

    def _connection(self) -> AbstractAsyncContextManager[Connection]: ...


class PgLedger:
    """The ledger methods of PgBeamStore (a mixin; `self` is the store)."""

    @nul_safe
    async def record_tool_executions(
        self: _Access,
        *,
        run_id: str,
        entries: Sequence[ToolExecution],
        lease_epoch: int | None = None,
    ) -> list[ToolExecution]:
        epoch = _checks.lease_epoch(lease_epoch)
        async with _transaction(self) as conn:
            row = await conn.fetchrow(_statements(self._schema).run_for_update, run_id)
            if row is None:
                raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
            run = _rows.run_of(row)
            check_running(run, epoch)
            return await write_entries(conn, self._schema, run, entries)

    @nul_safe
    async def list_tool_executions(
        self: _Access,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> tuple[list[ToolExecution], str | None]:
        _ledger.check_query(run_id, interaction_id)
        size = _checks.page_size(page_size)
        after = _checks.decode_page_token(page_token)
        sql = _statements(self._schema)
        async with self._connection() as conn:
            if run_id:
                if await conn.fetchval(sql.run_exists, run_id) is None:
                    raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
                rows = await conn.fetch(sql.by_run, run_id, after, size + 1)
            else:
                if await conn.fetchval(sql.interaction_exists, interaction_id) is None:
                    raise RiverbeamError(
                        ErrorCode.INTERACTION_NOT_FOUND, interaction_id=interaction_id
                    )
                rows = await conn.fetch(sql.by_interaction, interaction_id, after, size + 1)
        page = [_entry_of(r) for r in rows[:size]]
        token = _checks.encode_page_token(rows[size - 1]["pos"]) if len(rows) > size else None
        return page, token


@asynccontextmanager
async def _transaction(store: _Access) -> AsyncIterator[Connection]:
    async with store._connection() as conn:
        async with conn.transaction():
            yield conn
