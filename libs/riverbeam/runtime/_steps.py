"""Store steps that must survive what happens around them: a caller who goes away while the
begin step is in flight, and a store that is down when the finish step is due."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["TRANSIENT_STORE_CODES", "finish_with_retry", "shielded_step"]

log = logging.getLogger("riverbeam.pipeline")

T = TypeVar("T")

# Failures that a later attempt of the same step may not meet: the store was unreachable.
TRANSIENT_STORE_CODES = frozenset({ErrorCode.STORE_UNAVAILABLE})


async def shielded_step(step: Awaitable[T], on_abandoned: Callable[[T], Awaitable[None]]) -> T:
    """Await a store step that a cancellation of the caller must not cut in half.

    The step runs to its end whatever happens to the caller: a begin step that the store
    commits while the caller is being cancelled would otherwise leave a run `running` that
    nobody holds (an orphan, failed by the reaper only once its lease expires). When the caller
    is cancelled meanwhile and the step succeeded, `on_abandoned(result)` runs (also shielded:
    it closes the run), and then the cancellation goes on.
    """
    task = asyncio.ensure_future(step)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        pass
    cleanup = asyncio.ensure_future(_after(task, on_abandoned))
    while not cleanup.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(cleanup)
    if not cleanup.cancelled() and cleanup.exception() is not None:
        log.error("closing an abandoned run failed: %r", cleanup.exception())
    raise asyncio.CancelledError


async def _after(task: asyncio.Future[T], on_abandoned: Callable[[T], Awaitable[None]]) -> None:
    try:
        result = await task
    except Exception:
        return  # nothing was written, or the step's own error says so: nothing to close
    await on_abandoned(result)


async def finish_with_retry(step: Callable[[], Awaitable[None]], *, budget_s: float) -> None:
    """Write a finish step, again and again while the store is unreachable, for budget_s.

    The step must be idempotent (the store's finish is, per run and lease epoch): an attempt
    whose commit went through but whose answer was lost is repeated without writing twice.

    Raises:
        RiverbeamError: the step's own error when it is not transient; BEM-036 when the
            budget ran out with the store still unreachable.
    """
    deadline = time.monotonic() + budget_s
    delay = 0.1
    attempt = 0
    while True:
        attempt += 1
        try:
            await step()
            return
        except RiverbeamError as err:
            if err.code not in TRANSIENT_STORE_CODES:
                raise
            if time.monotonic() + delay > deadline:
                raise RiverbeamError(
                    ErrorCode.FINISH_NOT_CONFIRMED,
                    f"finish step not written after {attempt} attempt(s): {err.message}",
                    attempts=attempt,
                    cause=err.bem,
                ) from err
            log.warning("finish step attempt %d failed (%s); retrying", attempt, err.bem)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)
