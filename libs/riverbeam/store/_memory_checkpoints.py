"""Run checkpoints of the InMemoryStore (a mixin), with PgBeamStore's semantics."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks
from riverbeam.store._checkpoints import (
    RunCheckpoint,
    checkpoint_step,
    json_state,
    stale_step,
)
from riverbeam.store._memory_tables import Tables

__all__ = ["MemoryCheckpoints"]


class MemoryCheckpoints:
    """The checkpoint methods of InMemoryStore (a mixin; the store sets these attributes)."""

    _clock: Callable[[], datetime]
    _lock: asyncio.Lock
    _t: Tables
    # The state is kept as JSON text, as Postgres keeps jsonb: nobody shares it.
    # run_id -> (epoch, step, state JSON, saved_at).
    _checkpoints: dict[str, tuple[int, int, str, datetime]]

    async def save_run_checkpoint(
        self, *, run_id: str, lease_epoch: int, step: int, state: dict[str, Any]
    ) -> RunCheckpoint:
        checkpoint_step(step, state)
        epoch = _checks.lease_epoch(lease_epoch) or 1
        stored_state = json_state(state)
        async with self._lock:
            run = self._t.runs.get(run_id)
            if run is None:
                raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
            current = run.lease_epoch or 1
            if current != epoch or run.status != "running":
                raise _checks.stale_epoch(run_id, epoch, current)
            stored = self._checkpoints.get(run_id)
            if stored is not None and stored[1] > step:
                raise stale_step(run_id, step)
            saved_at = self._clock()
            self._checkpoints[run_id] = (epoch, step, stored_state, saved_at)
            return RunCheckpoint(run_id, epoch, step, _thaw(stored_state), saved_at)

    async def get_run_checkpoint(self, *, run_id: str) -> RunCheckpoint | None:
        async with self._lock:
            stored = self._checkpoints.get(run_id)
            if stored is None or run_id not in self._t.runs:
                return None  # a deleted run's checkpoint went with it
            epoch, step, state, saved_at = stored
            return RunCheckpoint(run_id, epoch, step, _thaw(state), saved_at)

    def _forget_checkpoints(self) -> None:
        """Drop the checkpoints of deleted runs (Postgres deletes them with the run)."""
        for run_id in [r for r in self._checkpoints if r not in self._t.runs]:
            del self._checkpoints[run_id]


def _thaw(frozen: str) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(frozen)
    return state
