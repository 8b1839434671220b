"""Crash recovery: runs whose runner stopped renewing its lease are failed by a live replica.

A pass takes each expired run over (the store bumps its lease epoch by compare-and-set: the
old holder's writes are refused from then on), fences the old epoch off in the sandbox (so
the old holder's tool calls are refused too, and none is still running), records the run
failed (BEM-034) with the finish step at the new epoch, and only then, having won the run's
transition to a terminal state, publishes the request's terminal error frame. A run whose
sandbox fence cannot be revoked yet is left running under the reaper's short lease and taken
over again by a later pass.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from typing import Protocol

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.runtime._sinks import SinkFactory
from riverbeam.store import BeamStore, TakenOverRun

__all__ = ["DEFAULT_TAKEOVER_TTL_S", "FenceRevoker", "reap_once", "run_reaper"]

log = logging.getLogger("riverbeam.reaper")

DEFAULT_TAKEOVER_TTL_S = 30.0
"""How long the reaper holds a run it took over while it fences and fails it."""


class FenceRevoker(Protocol):
    """Tells the sandbox that a run's epochs below min_epoch are stale (`FenceClient`)."""

    async def revoke(self, run_id: str, min_epoch: int) -> int: ...


async def reap_once(
    store: BeamStore,
    sinks: SinkFactory,
    *,
    limit: int = 100,
    owner: str | None = None,
    lease_ttl_s: float = DEFAULT_TAKEOVER_TTL_S,
    fences: FenceRevoker | None = None,
    exclude: Callable[[], Collection[str]] | None = None,
) -> int:
    """Fail every run whose lease expired, and end its stream with a BEM-034 error frame.

    Args:
        owner: The lease owner the reaper takes runs over as (default: a fresh id).
        lease_ttl_s: The lease it holds them under meanwhile.
        fences: Revokes the old epoch in the sandbox before anything is recorded.
        exclude: The run ids not to take (those this process still holds itself).

    Returns:
        How many runs were failed.
    """
    taker = owner or f"reaper-{new_id()[:8]}"
    taken = await store.take_over_expired_runs(
        new_owner=taker,
        lease_ttl_s=lease_ttl_s,
        limit=limit,
        exclude_run_ids=list(exclude() if exclude is not None else ()),
    )
    failed = 0
    for held in taken:
        if await _fail(store, sinks, held, taker, fences):
            failed += 1
    return failed


async def _fail(
    store: BeamStore,
    sinks: SinkFactory,
    held: TakenOverRun,
    taker: str,
    fences: FenceRevoker | None,
) -> bool:
    run = held.run
    epoch = run.lease_epoch or 1
    if fences is not None:
        try:
            await fences.revoke(run.run_id, epoch)
        except RiverbeamError as exc:
            log.error("run %s: sandbox fence not revoked, retried later: %s", run.run_id, exc)
            return False
    lost = RiverbeamError(
        ErrorCode.RUN_LOST, "the runner holding this run stopped", run_id=run.run_id
    )
    try:
        await store.finish_run(
            run_id=run.run_id,
            lease_owner=taker,
            status="failed",
            error_code=ErrorCode.RUN_LOST.code,
            error_message=ErrorCode.RUN_LOST.spec.title,
            lease_epoch=epoch,
        )
    except RiverbeamError as exc:
        # Taken over again meanwhile (another reaper after our lease expired): theirs now.
        log.error("run %s not recorded as lost: %s", run.run_id, exc)
        return False
    log.warning("run %s lost its runner (%s); marked failed", run.run_id, held.previous_owner)
    if run.request_id:
        try:
            await sinks.publish_terminal_error(run.request_id, lost)
        except RiverbeamError as exc:
            log.error("could not publish the error frame of run %s: %s", run.run_id, exc)
    return True


async def run_reaper(
    store: BeamStore,
    sinks: SinkFactory,
    *,
    interval_s: float,
    owner: str | None = None,
    lease_ttl_s: float = DEFAULT_TAKEOVER_TTL_S,
    fences: FenceRevoker | None = None,
    exclude: Callable[[], Collection[str]] | None = None,
) -> None:
    """Reap forever, every interval_s, and sweep expired approvals; errors are logged, never
    fatal."""
    while True:
        try:
            await reap_once(
                store,
                sinks,
                owner=owner,
                lease_ttl_s=lease_ttl_s,
                fences=fences,
                exclude=exclude,
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("reaper pass failed")
        try:
            # The approvals sweeper (docs/durability.md): expired pending actions are marked.
            expired = await store.expire_pending_actions()
            if expired:
                log.info("marked %d pending action(s) expired", len(expired))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("approvals sweep failed")
        await asyncio.sleep(interval_s)
