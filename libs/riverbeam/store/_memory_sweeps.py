"""The lease sweeps of the InMemoryStore (a mixin): reap, take over and expire, as PgBeamStore.

Each sweep reads the running runs (RunTable's index) or the actions, never every stored run:
its cost follows what is running, not how many runs the store has kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime

from riverbeam.store import _checks
from riverbeam.store._checkpoints import took_over
from riverbeam.store._memory_children import settle_orphans
from riverbeam.store._memory_tables import Tables
from riverbeam.store._steps import LOST_RUN_CODE, LOST_RUN_MESSAGE
from riverbeam.store._types import TakenOverRun
from riverbeam.types import Action, Run, deep_copy

__all__ = ["MemorySweeps"]


class MemorySweeps:
    """reap_expired_runs, expire_pending_actions and take_over_expired_runs (a mixin; the store
    sets these attributes)."""

    _clock: Callable[[], datetime]
    _lock: asyncio.Lock
    _t: Tables

    def _expired_runs(
        self, cutoff: datetime, size: int, excluded: AbstractSet[str] = frozenset()
    ) -> list[Run]:
        """The first `size` running runs whose lease ended before `cutoff`, oldest lease first
        (then by id), leaving out `excluded`. Only the running runs are looked at (RunTable's
        index), not every stored run: the sweeps run every few seconds, and finished runs
        keep accumulating. The caller holds the lock."""
        return sorted(
            (
                r
                for r in self._t.runs.running()
                if r.lease_expires_at is not None
                and r.lease_expires_at < cutoff
                and r.run_id not in excluded
            ),
            key=lambda r: (r.lease_expires_at or cutoff, r.run_id),
        )[:size]

    async def reap_expired_runs(
        self, *, now: datetime | None = None, limit: int = 100
    ) -> list[Run]:
        size = _checks.positive_limit(limit, _checks.DEFAULT_REAP_LIMIT)
        now = _checks.aware(now)
        t = self._t
        async with self._lock:
            clock = self._clock()
            cutoff = now or clock
            expired = self._expired_runs(cutoff, size)
            reaped: list[Run] = []
            for run in expired:
                failed = run.model_copy(
                    update={
                        "status": "failed",
                        "finished_at": clock,
                        "error_code": LOST_RUN_CODE,
                        "error_message": LOST_RUN_MESSAGE,
                        "lease_epoch": (run.lease_epoch or 1) + 1,
                    }
                )
                t.runs[run.run_id] = failed
                interaction = t.interactions[run.interaction_id]
                t.interactions[run.interaction_id] = interaction.model_copy(
                    update={"status": "failed", "updated_at": clock}
                )
                reaped.append(deep_copy(failed))
            t.ledger.settle_in_flight({r.run_id for r in reaped}, clock)
            settle_orphans(t, {r.run_id for r in reaped}, clock)
            return reaped

    async def expire_pending_actions(
        self, *, now: datetime | None = None, limit: int = 100
    ) -> list[Action]:
        size = _checks.positive_limit(limit, _checks.DEFAULT_REAP_LIMIT)
        at = _checks.aware(now)
        async with self._lock:
            at = at or self._clock()
            due = [
                a
                for a in self._t.actions.values()
                if a.status == "pending" and a.expires_at is not None and a.expires_at <= at
            ][:size]
            marked: list[Action] = []
            for action in due:
                done = action.model_copy(update={"status": "expired", "resolved_at": self._clock()})
                self._t.actions[action.action_id] = done
                marked.append(deep_copy(done))
        return marked

    async def take_over_expired_runs(
        self,
        *,
        new_owner: str,
        lease_ttl_s: float,
        now: datetime | None = None,
        limit: int = 100,
        exclude_run_ids: Sequence[str] = (),
    ) -> list[TakenOverRun]:
        ttl = _checks.lease_ttl(lease_ttl_s)
        size = _checks.positive_limit(limit, _checks.DEFAULT_REAP_LIMIT)
        now = _checks.aware(now)
        excluded = set(exclude_run_ids)
        t = self._t
        async with self._lock:
            clock = self._clock()
            cutoff = now or clock
            expired = self._expired_runs(cutoff, size, excluded)
            taken: list[TakenOverRun] = []
            for run in expired:
                held = run.model_copy(
                    update={
                        "lease_owner": new_owner,
                        "lease_expires_at": clock + ttl,
                        "lease_epoch": (run.lease_epoch or 1) + 1,
                        "holders": took_over(run.holders, run.lease_owner, new_owner),
                    }
                )
                t.runs[run.run_id] = held
                taken.append(TakenOverRun(deep_copy(held), run.lease_owner))
            t.ledger.settle_in_flight({r.run.run_id for r in taken}, clock)
            settle_orphans(t, {r.run.run_id for r in taken}, clock)
            return taken
