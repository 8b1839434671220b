"""The sandbox's fence book: per run, the lowest lease epoch whose calls are still accepted.

A call fenced for (run R, epoch e) is refused (BEM-340) when e is below what the book knows
of R: the highest epoch seen in a call of R, or the `min_epoch` of a revocation (a reaper
taking R over). Revocations are written to disk (atomically, in a worker thread) so a restart
does not forget them; epochs learned from calls are kept in memory only (a restart can only
forget that a newer holder exists, never that an older one was revoked). The book is bounded:
the least recently changed runs are dropped past `max_runs`.

`revoke` waits until no call of R at a revoked epoch is still in flight, so when it returns
the old holder can no longer act in the sandbox at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.fencing import Fence

__all__ = ["DEFAULT_MAX_RUNS", "FENCES_FILE", "FenceBook"]

log = logging.getLogger("riverbeam.sandbox.fences")

DEFAULT_MAX_RUNS = 10_000
FENCES_FILE = "fences.json"
# A revocation waits this long at most for stale calls in flight (a push, a large write);
# below the reaper's call timeout, so it hears BEM-340 and tries again on a later pass.
DEFAULT_DRAIN_S = 20.0


class FenceBook:
    """Admits fenced calls and records revocations.

    Args:
        directory: Where the revocations are kept (`<directory>/fences.json`); None keeps
            them in memory only.
        max_runs: How many runs the book remembers.
        drain_s: Longest wait of `revoke` for stale calls still in flight.
    """

    def __init__(
        self,
        directory: Path | None,
        *,
        max_runs: int = DEFAULT_MAX_RUNS,
        drain_s: float = DEFAULT_DRAIN_S,
    ) -> None:
        self._path = directory / FENCES_FILE if directory is not None else None
        self._max_runs = max_runs
        self._drain_s = drain_s
        self._floor: OrderedDict[str, int] = OrderedDict()  # accepted epochs are >= floor
        self._revoked: OrderedDict[str, int] = OrderedDict()  # the persisted part
        self._in_flight: dict[tuple[str, int], int] = {}
        self._changed = asyncio.Condition()
        self._write_lock = asyncio.Lock()
        self._loaded = False

    def min_epoch(self, run_id: str) -> int:
        """The lowest epoch of run_id still accepted (1 when the book knows nothing of it)."""
        return self._floor.get(run_id, 1)

    async def load(self) -> None:
        """Read the persisted revocations (once)."""
        if self._loaded:
            return
        self._loaded = True
        if self._path is None:
            return
        entries = await asyncio.to_thread(_read, self._path)
        for run_id, epoch in entries.items():
            self._remember(self._revoked, run_id, epoch)
            self._remember(self._floor, run_id, epoch)

    @contextlib.asynccontextmanager
    async def admit(self, fence: Fence | None) -> AsyncIterator[None]:
        """Run the block as a call of `fence`'s holder, or refuse it (BEM-340).

        An unfenced call (None) is admitted: callers that act for no run (workspace
        management, tools outside a run) are not fenced.
        """
        if fence is None:
            yield
            return
        await self.load()
        floor = self.min_epoch(fence.run_id)
        if fence.epoch < floor:
            raise RiverbeamError(
                ErrorCode.FENCE_STALE,
                f"run {fence.run_id} was taken over: epoch {fence.epoch} is below {floor}",
                run_id=fence.run_id,
                epoch=fence.epoch,
                min_epoch=floor,
            )
        if fence.epoch > floor:
            self._remember(self._floor, fence.run_id, fence.epoch)
        key = (fence.run_id, fence.epoch)
        self._in_flight[key] = self._in_flight.get(key, 0) + 1
        try:
            yield
        finally:
            left = self._in_flight[key] - 1
            if left:
                self._in_flight[key] = left
            else:
                del self._in_flight[key]
            async with self._changed:
                self._changed.notify_all()

    async def revoke(self, run_id: str, min_epoch: int) -> int:
        """Refuse run_id's calls below min_epoch from now on; returns the run's floor.

        Persisted before it returns, and returns once no stale call of the run is in flight.

        Raises:
            RiverbeamError: BEM-341 for a bad run id or epoch; BEM-340 when a stale call is
                still running after `drain_s` (the revocation stands; ask again).
        """
        Fence(run_id, min_epoch)  # validates (BEM-341)
        await self.load()
        floor = max(self.min_epoch(run_id), min_epoch)
        self._remember(self._floor, run_id, floor)
        self._remember(self._revoked, run_id, floor)
        await self._persist()

        def stale_in_flight() -> bool:
            return any(r == run_id and e < floor for r, e in self._in_flight)

        try:
            async with asyncio.timeout(self._drain_s), self._changed:
                await self._changed.wait_for(lambda: not stale_in_flight())
        except TimeoutError:
            raise RiverbeamError(
                ErrorCode.FENCE_STALE,
                f"run {run_id}: a call at a revoked epoch is still running",
                run_id=run_id,
                min_epoch=floor,
            ) from None
        return floor

    def _remember(self, table: OrderedDict[str, int], run_id: str, epoch: int) -> None:
        table[run_id] = max(epoch, table.get(run_id, 0))
        table.move_to_end(run_id)
        while len(table) > self._max_runs:
            table.popitem(last=False)

    async def _persist(self) -> None:
        if self._path is None:
            return
        async with self._write_lock:
            await asyncio.to_thread(_write, self._path, dict(self._revoked))


def _read(path: Path) -> dict[str, int]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        # Refusing to start would stop every run; say it loudly instead.
        log.error("fence book %s unreadable, starting empty: %r", path, exc)
        return {}
    runs = raw.get("revoked") if isinstance(raw, dict) else None
    if not isinstance(runs, dict):
        return {}
    return {
        str(k): int(v)
        for k, v in runs.items()
        if isinstance(v, int) and not isinstance(v, bool) and v >= 1
    }


def _write(path: Path, revoked: dict[str, int]) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = path.with_suffix(".tmp")
    with staging.open("w", encoding="utf-8") as out:
        json.dump({"version": 1, "revoked": revoked}, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(staging, path)
