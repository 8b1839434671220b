"""Crash recovery: runs whose runner stopped renewing its lease are taken over by a live replica.

A pass takes each expired run over (the store bumps its lease epoch by compare-and-set: the
old holder's writes are refused from then on) and fences the old epoch off in the sandbox (so
the old holder's tool calls are refused too, and none is still running). Then, with a
`recover` hook (policy `recover`, docs/durability.md), the run is continued on this replica
from its last checkpoint; a run without a checkpoint, or taken over more than `max_takeovers`
times (BEM-267), or whose checkpoint cannot be continued here (BEM-268), is failed instead.
Without the hook (policy `fail`) every such run is failed (BEM-034). Failing records the run
with the finish step at the new epoch and only then, having won the run's transition to a
terminal state, publishes the request's terminal error frame. A run whose sandbox fence
cannot be revoked yet is left running under the reaper's short lease and taken over again by
a later pass.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Protocol

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.runtime._sinks import SinkFactory
from riverbeam.store import BeamStore, RunCheckpoint, TakenOverRun

__all__ = [
    "DEFAULT_MAX_TAKEOVERS",
    "DEFAULT_TAKEOVER_TTL_S",
    "FenceRevoker",
    "Recover",
    "reap_once",
    "run_reaper",
]

log = logging.getLogger("riverbeam.reaper")

DEFAULT_TAKEOVER_TTL_S = 30.0
"""How long the reaper holds a run it took over while it fences and fails it."""

DEFAULT_MAX_TAKEOVERS = 3
"""How often a run may be taken over and continued before it is failed (BEM-267)."""

Recover = Callable[[TakenOverRun, RunCheckpoint], Awaitable[None]]
"""`await recover(taken, checkpoint)`: continue a taken-over run here (Pipeline.recover)."""


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
    recover: Recover | None = None,
    max_takeovers: int = DEFAULT_MAX_TAKEOVERS,
) -> int:
    """Take over every run whose lease expired: continue it here, or fail it and end its
    stream with an error frame.

    Args:
        owner: The lease owner the reaper takes runs over as (default: a fresh id). With
            `recover`, the replica's runner id (its pipeline renews and finishes as it).
        lease_ttl_s: The lease it holds them under meanwhile.
        fences: Revokes the old epoch in the sandbox before anything is recorded or run.
        exclude: The run ids not to take (those this process still holds itself).
        recover: Continues a run from its checkpoint (policy `recover`); None fails them all.
        max_takeovers: With `recover`, a run taken over more often than this is failed.

    Returns:
        How many runs were failed or continued.
    """
    taker = owner or f"reaper-{new_id()[:8]}"
    taken = await store.take_over_expired_runs(
        new_owner=taker,
        lease_ttl_s=lease_ttl_s,
        limit=limit,
        exclude_run_ids=list(exclude() if exclude is not None else ()),
    )
    handled = 0
    for held in taken:
        if await _take(store, sinks, held, taker, fences, recover, max_takeovers):
            handled += 1
    return handled


async def _take(
    store: BeamStore,
    sinks: SinkFactory,
    held: TakenOverRun,
    taker: str,
    fences: FenceRevoker | None,
    recover: Recover | None,
    max_takeovers: int,
) -> bool:
    run = held.run
    if fences is not None:
        try:
            await fences.revoke(run.run_id, run.lease_epoch or 1)
        except RiverbeamError as exc:
            log.error("run %s: sandbox fence not revoked, retried later: %s", run.run_id, exc)
            return False
    lost = RiverbeamError(
        ErrorCode.RUN_LOST, "the runner holding this run stopped", run_id=run.run_id
    )
    if recover is not None:
        if run.takeovers > max_takeovers:
            lost = RiverbeamError(
                ErrorCode.TOO_MANY_TAKEOVERS,
                f"taken over {run.takeovers} times (at most {max_takeovers})",
                run_id=run.run_id,
                holders=run.holders,
            )
        else:
            try:
                checkpoint = await store.get_run_checkpoint(run_id=run.run_id)
            except RiverbeamError as exc:
                log.error("run %s: checkpoint not read, retried later: %s", run.run_id, exc)
                return False
            if checkpoint is not None:
                try:
                    await recover(held, checkpoint)
                    log.warning(
                        "run %s lost its runner (%s); continued from checkpoint step %d",
                        run.run_id,
                        held.previous_owner,
                        checkpoint.step,
                    )
                    return True
                except RiverbeamError as exc:
                    if exc.code is ErrorCode.STORE_UNAVAILABLE:
                        log.error("run %s not continued, retried later: %s", run.run_id, exc)
                        return False
                    log.error("run %s cannot be continued here: %s", run.run_id, exc)
                    lost = exc
    return await _fail(store, sinks, held, taker, lost)


async def _fail(
    store: BeamStore,
    sinks: SinkFactory,
    held: TakenOverRun,
    taker: str,
    lost: RiverbeamError,
) -> bool:
    run = held.run
    epoch = run.lease_epoch or 1
    try:
        await store.finish_run(
            run_id=run.run_id,
            lease_owner=taker,
            status="failed",
            error_code=lost.bem,
            # BEM-034 is recorded with its title, as before recovery existed.
            error_message=(
                lost.code.spec.title if lost.code is ErrorCode.RUN_LOST else lost.message
            ),
            lease_epoch=epoch,
        )
    except RiverbeamError as exc:
        # Taken over again meanwhile (another reaper after our lease expired): theirs now.
        log.error("run %s not recorded as lost: %s", run.run_id, exc)
        return False
    log.warning(
        "run %s lost its runner (%s); marked failed %s", run.run_id, held.previous_owner, lost.bem
    )
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
    recover: Recover | None = None,
    max_takeovers: int = DEFAULT_MAX_TAKEOVERS,
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
                recover=recover,
                max_takeovers=max_takeovers,
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
