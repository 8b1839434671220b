"""Retention: delete sessions (and everything under them) idle longer than a configured age."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from riverbeam.store._base import BeamStore

__all__ = ["prune_idle_sessions", "run_retention"]

log = logging.getLogger("riverbeam.retention")


async def prune_idle_sessions(store: BeamStore, *, idle: timedelta) -> int:
    """One pass: delete the sessions idle longer than `idle`; returns how many went."""
    deleted = await store.delete_idle_sessions(older_than=idle)
    if deleted:
        log.info("retention deleted %d session(s) idle longer than %s", deleted, idle)
    return deleted


async def run_retention(store: BeamStore, *, idle: timedelta, interval_s: float) -> None:
    """Prune forever, every `interval_s`; a failed pass is logged and retried next time."""
    while True:
        try:
            await prune_idle_sessions(store, idle=idle)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("retention pass failed")
        await asyncio.sleep(interval_s)
