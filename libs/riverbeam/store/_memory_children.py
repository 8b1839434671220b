"""The child-run and handoff steps of InMemoryStore (a mixin; see _children.py for the
fencing rule)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks
from riverbeam.store._children import (
    ORPHAN_MESSAGE,
    check_child_ids,
    check_parent_held,
    not_a_child,
    required_epoch,
)
from riverbeam.store._memory_tables import Tables
from riverbeam.store._nul import nul_safe
from riverbeam.store._types import FinishStatus
from riverbeam.types import AgentResult, Interaction, Run, TokenUsage, deep_copy

__all__ = ["MemoryChildRuns", "settle_orphans"]


def settle_orphans(t: Tables, parent_ids: set[str], now: datetime) -> None:
    """Fail the running children (and theirs) of runs that were just taken over or reaped."""
    callers = set(parent_ids)
    while callers:
        orphans = [r for r in t.runs.running() if r.parent_run_id in callers]
        for run in orphans:
            t.runs[run.run_id] = run.model_copy(
                update={
                    "status": "failed",
                    "finished_at": now,
                    "error_code": ErrorCode.RUN_LOST.code,
                    "error_message": ORPHAN_MESSAGE,
                    # Fenced like its caller: the stale holder's finish is refused (BEM-035).
                    "lease_epoch": (run.lease_epoch or 1) + 1,
                }
            )
        callers = {r.run_id for r in orphans}


class MemoryChildRuns:
    """begin_child_run and finish_child_run over the store's tables, under its lock."""

    _lock: asyncio.Lock
    _t: Tables
    _clock: Callable[[], datetime]

    @nul_safe
    async def begin_child_run(
        self,
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
        async with self._lock:
            parent = self._t.run(parent_run_id)
            existing = self._t.runs.get(run_id)
            if existing is not None:
                if existing.parent_run_id != parent_run_id:
                    raise not_a_child(run_id, parent_run_id, existing.parent_run_id)
                return deep_copy(existing)  # a retry of this step
            check_parent_held(parent_run_id, parent, lease_owner=lease_owner, lease_epoch=epoch)
            child = Run(
                run_id=run_id,
                interaction_id=parent.interaction_id,
                session_id=parent.session_id,
                agent_name=agent_name,
                status="running",
                started_at=self._clock(),
                lease_owner=lease_owner,
                lease_epoch=epoch,
                agent_version=agent_version,
                parent_run_id=parent_run_id,
            )
            self._t.runs[run_id] = child
            return deep_copy(child)

    @nul_safe
    async def finish_child_run(
        self,
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
        async with self._lock:
            child = self._t.run(run_id)
            if child.parent_run_id != parent_run_id:
                raise not_a_child(run_id, parent_run_id, child.parent_run_id)
            if child.status != "running" and (child.lease_owner, child.lease_epoch) == (
                lease_owner,
                epoch,
            ):
                return deep_copy(child)  # a retry of a committed finish
            parent = self._t.run(parent_run_id)
            check_parent_held(parent_run_id, parent, lease_owner=lease_owner, lease_epoch=epoch)
            if child.status != "running":
                raise RiverbeamError(
                    ErrorCode.STORE_CONFLICT,
                    "the child run is already finished",
                    run_id=run_id,
                    status=child.status,
                )
            finished = deep_copy(
                child.model_copy(
                    update={
                        "status": final,
                        "finished_at": self._clock(),
                        "error_code": error_code,
                        "error_message": error_message,
                        "token_usage": token_usage,
                        "model_used": model_used,
                        "result": result,
                        "lease_owner": lease_owner,
                        "lease_epoch": epoch,
                    }
                )
            )
            self._t.runs[run_id] = finished
            return deep_copy(finished)

    @nul_safe
    async def record_handoff(
        self,
        *,
        run_id: str,
        lease_owner: str,
        lease_epoch: int,
        agent_name: str,
        agent_version: str | None = None,
    ) -> Interaction:
        epoch = required_epoch(lease_epoch)
        check_child_ids(run_id, agent_name)
        async with self._lock:
            run = self._t.run(run_id)
            check_parent_held(run_id, run, lease_owner=lease_owner, lease_epoch=epoch)
            interaction = self._t.interactions[run.interaction_id]
            handed = interaction.model_copy(
                update={
                    "agent_name": agent_name,
                    "agent_version": agent_version,
                    "updated_at": self._clock(),
                }
            )
            self._t.interactions[run.interaction_id] = handed
            return deep_copy(handed)
