"""The tool-execution ledger of InMemoryStore: its table, and the store methods on it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks, _ledger
from riverbeam.store._lending import kept
from riverbeam.store._nul import nul_safe
from riverbeam.types import Run, ToolExecution, deep_copy

if TYPE_CHECKING:
    from riverbeam.store._memory_tables import Tables

__all__ = ["LedgerTable", "MemoryLedger"]


class LedgerTable:
    """Entries by execution id, each with its insertion position (the order reads give)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[int, ToolExecution]] = {}
        self._positions = itertools.count(1)

    def apply(self, run: Run, entries: Sequence[ToolExecution]) -> list[ToolExecution]:
        """Check the whole batch against what is stored, then write it (BEM-263/264).

        Returns the stored entries of the batch themselves: a caller hands out copies."""
        batch = _ledger.check_batch(run, entries)
        writes: list[ToolExecution] = []
        for entry in batch:
            held = self.rows.get(entry.execution_id)
            change = _ledger.merged(held[1] if held else None, entry)
            if change is not None:
                writes.append(change)
        keep = kept(deep_copy)
        for entry in writes:
            held = self.rows.get(entry.execution_id)
            pos = held[0] if held else next(self._positions)
            self.rows[entry.execution_id] = (pos, keep(entry))
        return [self.rows[e.execution_id][1] for e in batch]

    def settle_in_flight(self, run_ids: Collection[str], now: datetime) -> None:
        """Unfinished entries of runs whose runner died: `unknown` (started) or `cancelled`."""
        if not run_ids:
            return
        for execution_id, (pos, entry) in list(self.rows.items()):
            if entry.run_id in run_ids:
                settled = _ledger.in_flight_outcome(entry, now)
                if settled is not None:
                    self.rows[execution_id] = (pos, settled)

    def purge(self, session_ids: Collection[str]) -> None:
        self.rows = {k: v for k, v in self.rows.items() if v[1].session_id not in session_ids}


class MemoryLedger:
    """The ledger methods of InMemoryStore (a mixin; the store sets these attributes)."""

    _clock: Callable[[], datetime]
    _lock: asyncio.Lock
    _t: Tables

    @nul_safe
    async def record_tool_executions(
        self,
        *,
        run_id: str,
        entries: Sequence[ToolExecution],
        lease_epoch: int | None = None,
    ) -> list[ToolExecution]:
        epoch = _checks.lease_epoch(lease_epoch)
        async with self._lock:
            run = self._t.run(run_id)
            check_running(run, epoch)
            return [deep_copy(e) for e in self._t.ledger.apply(run, entries)]

    @nul_safe
    async def list_tool_executions(
        self,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> tuple[list[ToolExecution], str | None]:
        _ledger.check_query(run_id, interaction_id)
        size = _checks.page_size(page_size)
        after = _checks.decode_page_token(page_token)
        async with self._lock:
            if run_id:
                self._t.run(run_id)
            else:
                self._t.interaction(interaction_id or "")
            found = sorted(
                (pos, entry)
                for pos, entry in self._t.ledger.rows.values()
                if pos > after
                and (entry.run_id == run_id if run_id else entry.interaction_id == interaction_id)
            )[: size + 1]
            page = [deep_copy(e) for _, e in found[:size]]
        token = _checks.encode_page_token(found[size - 1][0]) if len(found) > size else None
        return page, token


def check_running(run: Run, epoch: int | None) -> None:
    """Ledger writes are for a running run, at the epoch the writer holds (BEM-035/121)."""
    if epoch is not None and (run.lease_epoch != epoch or run.status != "running"):
        raise _checks.stale_epoch(run.run_id, epoch, run.lease_epoch)
    if run.status != "running":
        raise RiverbeamError(
            ErrorCode.STORE_CONFLICT,
            "the run is no longer running",
            run_id=run.run_id,
            status=run.status,
        )
