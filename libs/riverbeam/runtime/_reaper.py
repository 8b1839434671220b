"""Crash recovery: runs whose runner stopped renewing its lease are failed by a live replica."""

from __future__ import annotations

import asyncio
import logging

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._sinks import SinkFactory
from riverbeam.store import BeamStore

__all__ = ["reap_once", "run_reaper"]

log = logging.getLogger("riverbeam.reaper")


async def reap_once(store: BeamStore, sinks: SinkFactory, *, limit: int = 100) -> int:
    """Fail every run whose lease expired, and end its stream with a BEM-034 error frame."""
    runs = await store.reap_expired_runs(limit=limit)
    for run in runs:
        log.warning("run %s lost its runner (%s); marked failed", run.run_id, run.lease_owner)
        if run.request_id:
            err = RiverbeamError(
                ErrorCode.RUN_LOST, "the runner holding this run stopped", run_id=run.run_id
            )
            try:
                await sinks.publish_terminal_error(run.request_id, err)
            except RiverbeamError as exc:
                log.error("could not publish the error frame of run %s: %s", run.run_id, exc)
    return len(runs)


async def run_reaper(store: BeamStore, sinks: SinkFactory, *, interval_s: float) -> None:
    """Reap forever, every interval_s; errors are logged, never fatal."""
    while True:
        try:
            await reap_once(store, sinks)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("reaper pass failed")
        await asyncio.sleep(interval_s)
