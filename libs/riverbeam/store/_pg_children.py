"""The child-run and handoff steps of PgBeamStore (a mixin; see _children.py for the fencing rule).

Each step is one transaction that reads the parent under a share lock (a takeover, an
UPDATE of the parent's row, waits for it) before it writes the child.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks, _rows
from riverbeam.store._children import (
    ORPHAN_MESSAGE,
    check_child_ids,
    check_parent_held,
    not_a_child,
    required_epoch,
)
from riverbeam.store._migrations import quote_schema
from riverbeam.store._nul import nul_safe
from riverbeam.store._sql import INTERACTION_COLS, RUN_COLS, Statements
from riverbeam.store._types import FinishStatus
from riverbeam.types import AgentResult, Interaction, Run, TokenUsage

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    Connection = asyncpg.Connection[asyncpg.Record]
else:
    Connection = object

__all__ = ["PgChildRuns", "settle_orphans"]


async def settle_orphans(
    conn: Connection | PoolConnectionProxy[asyncpg.Record], schema: str, parent_ids: list[str]
) -> None:
    """Fail the running children (and theirs) of runs that were just taken over or reaped,
    in the caller's transaction."""
    if not parent_ids:
        return
    q = quote_schema(schema)
    await conn.execute(
        f"WITH RECURSIVE tree AS ("
        f" SELECT run_id FROM {q}.runs WHERE parent_run_id = ANY($1::text[])"
        " AND status = 'running'"
        f" UNION SELECT r.run_id FROM {q}.runs r JOIN tree ON r.parent_run_id = tree.run_id"
        " WHERE r.status = 'running')"
        f" UPDATE {q}.runs SET status = 'failed', finished_at = now(), error_code = $2,"
        " error_message = $3, lease_epoch = COALESCE(lease_epoch, 1) + 1"
        " WHERE run_id IN (SELECT run_id FROM tree)",
        parent_ids,
        ErrorCode.RUN_LOST.code,
        ORPHAN_MESSAGE,
    )


class _Access(Protocol):
    _sql: Statements
    _schema: str

    def _transaction(self, step: str) -> AbstractAsyncContextManager[Connection]: ...


def _q(self: _Access) -> str:
    return quote_schema(self._schema)


class PgChildRuns:
    """begin_child_run and finish_child_run on PostgreSQL."""

    @nul_safe
    async def begin_child_run(
        self: _Access,
        *,
        parent_run_id: str,
        run_id: str,
        agent_name: str,
        lease_owner: str,
        lease_epoch: int,
        agent_version: str | None = None,
    ) -> Run:
        epoch = required_epoch(lease_epoch)
        check_child_ids(run_id, agent_name)
        q = _q(self)
        async with self._transaction("begin_child_run") as conn:
            parent = await conn.fetchrow(
                f"SELECT status, lease_owner, lease_epoch, session_id, interaction_id"
                f" FROM {q}.runs WHERE run_id = $1 FOR SHARE",
                parent_run_id,
            )
            if parent is None:
                raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=parent_run_id)
            existing = await conn.fetchrow(
                f"SELECT {RUN_COLS} FROM {q}.runs WHERE run_id = $1", run_id
            )
            if existing is not None:
                if existing["parent_run_id"] != parent_run_id:
                    raise not_a_child(run_id, parent_run_id, existing["parent_run_id"])
                return _rows.run_of(existing)  # a retry of this step
            check_parent_held(
                parent_run_id, dict(parent), lease_owner=lease_owner, lease_epoch=epoch
            )
            row = await conn.fetchrow(
                f"INSERT INTO {q}.runs (run_id, interaction_id, session_id, agent_name, status,"
                " lease_owner, lease_epoch, agent_version, parent_run_id)"
                " VALUES ($1, $2, $3, $4, 'running', $5, $6, $7, $8)"
                f" RETURNING {RUN_COLS}",
                run_id,
                parent["interaction_id"],
                parent["session_id"],
                agent_name,
                lease_owner,
                epoch,
                agent_version,
                parent_run_id,
            )
        assert row is not None
        return _rows.run_of(row)

    @nul_safe
    async def finish_child_run(
        self: _Access,
        *,
        run_id: str,
        parent_run_id: str,
        lease_owner: str,
        lease_epoch: int,
        status: FinishStatus,
        error_code: str | None = None,
        error_message: str | None = None,
        token_usage: TokenUsage | None = None,
        model_used: str | None = None,
        result: AgentResult | None = None,
    ) -> Run:
        final = _checks.finish_status(status)
        epoch = required_epoch(lease_epoch)
        q = _q(self)
        async with self._transaction("finish_child_run") as conn:
            child = await conn.fetchrow(
                f"SELECT {RUN_COLS} FROM {q}.runs WHERE run_id = $1 FOR UPDATE", run_id
            )
            if child is None:
                raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
            if child["parent_run_id"] != parent_run_id:
                raise not_a_child(run_id, parent_run_id, child["parent_run_id"])
            if child["status"] != "running" and (child["lease_owner"], child["lease_epoch"]) == (
                lease_owner,
                epoch,
            ):
                return _rows.run_of(child)  # a retry of a committed finish
            parent = await conn.fetchrow(self._sql.run_fence, parent_run_id)
            if parent is None:
                raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=parent_run_id)
            check_parent_held(
                parent_run_id, dict(parent), lease_owner=lease_owner, lease_epoch=epoch
            )
            if child["status"] != "running":
                raise RiverbeamError(
                    ErrorCode.STORE_CONFLICT,
                    "the child run is already finished",
                    run_id=run_id,
                    status=child["status"],
                )
            row = await conn.fetchrow(
                f"UPDATE {q}.runs SET status = $2, finished_at = now(), error_code = $3,"
                " error_message = $4, token_usage = $5::jsonb, model_used = $6,"
                " result = $7::jsonb, lease_owner = $8, lease_epoch = $9"
                f" WHERE run_id = $1 RETURNING {RUN_COLS}",
                run_id,
                final,
                error_code,
                error_message,
                _rows.dump(token_usage),
                model_used,
                _rows.dump(result),
                lease_owner,
                epoch,
            )
        assert row is not None
        return _rows.run_of(row)

    @nul_safe
    async def record_handoff(
        self: _Access,
        *,
        run_id: str,
        lease_owner: str,
        lease_epoch: int,
        agent_name: str,
        agent_version: str | None = None,
    ) -> Interaction:
        epoch = required_epoch(lease_epoch)
        check_child_ids(run_id, agent_name)
        q = _q(self)
        async with self._transaction("record_handoff") as conn:
            run = await conn.fetchrow(
                f"SELECT status, lease_owner, lease_epoch, interaction_id"
                f" FROM {q}.runs WHERE run_id = $1 FOR SHARE",
                run_id,
            )
            if run is None:
                raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
            check_parent_held(run_id, dict(run), lease_owner=lease_owner, lease_epoch=epoch)
            row = await conn.fetchrow(
                f"UPDATE {q}.interactions SET agent_name = $2, agent_version = $3,"
                f" updated_at = now() WHERE interaction_id = $1 RETURNING {INTERACTION_COLS}",
                run["interaction_id"],
                agent_name,
                agent_version,
            )
        assert row is not None
        return _rows.interaction_of(row)
