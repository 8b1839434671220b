"""Store steps that must survive what happens around them: a caller who goes away while the
begin step is in flight, and a store that is down when the finish step is due."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from typing import Any, TypeVar

from riverbeam.agents._io import ResumedAction
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.fencing import Fence
from riverbeam.runtime._records import called_agents_calls, tool_failure
from riverbeam.runtime._sinks import SinkFactory
from riverbeam.store import BeamStore, BeginRunResult
from riverbeam.telemetry._metrics import RUNS_TOTAL
from riverbeam.types import AgentResult, InvokeRequest, StreamChunk, ToolExecution

__all__ = [
    "INTERRUPT_REASON",
    "TRANSIENT_STORE_CODES",
    "CancelElsewhere",
    "cheaper_step",
    "close_abandoned",
    "finish_as_failed",
    "finish_step",
    "finish_with_retry",
    "interrupt_run",
    "record_outcomes",
    "shielded_step",
]

log = logging.getLogger("riverbeam.pipeline")

T = TypeVar("T")

# Failures that a later attempt of the same step may not meet: the store was unreachable.
TRANSIENT_STORE_CODES = frozenset({ErrorCode.STORE_UNAVAILABLE})


def cheaper_step(store: BeamStore, cheaper: str, step: str) -> Callable[..., Awaitable[Any]]:
    """The store's method `cheaper` (the same step, doing less for the runtime) when the
    store's class has one, else its method `step`.

    Asked of the class, not the object: a wrapper that forwards unknown attributes to a
    StoreClient but has its own `step` gets that `step` called, as before.
    """
    method: Callable[..., Awaitable[Any]] = getattr(
        store, cheaper if _has_method(type(store), cheaper) else step
    )
    return method


@cache
def _has_method(kind: type, name: str) -> bool:
    return callable(getattr(kind, name, None))


def finish_step(store: BeamStore) -> Callable[..., Awaitable[object]]:
    """The store's finish-run step, in its unread form when the store's class has one
    (StoreClient.finish_run_unread): nothing in the runtime reads the finished run."""
    return cheaper_step(store, "finish_run_unread", "finish_run")


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


async def close_abandoned(
    store: BeamStore,
    sinks: SinkFactory,
    runner_id: str,
    request: InvokeRequest,
    request_id: str,
    begun: BeginRunResult,
) -> None:
    """Record as cancelled a run whose caller went away while its begin step committed."""
    run = begun.run
    err = RiverbeamError(
        ErrorCode.RUN_CANCELLED, "the caller went away before the run started", run_id=run.run_id
    )
    await finish_step(store)(
        run_id=run.run_id,
        lease_owner=runner_id,
        status="cancelled",
        error_code=err.bem,
        error_message=err.message,
        lease_epoch=run.lease_epoch or 1,
    )
    RUNS_TOTAL.labels(request.agent_name, "cancelled").inc()
    log.info("run %s cancelled: its caller went away during the begin step", run.run_id)
    if request.stream:
        sink = await sinks.open(request_id, stream=True)
        await sink.publish(
            StreamChunk(
                type="error",
                error=err.message,
                error_code=err.bem,
                request_id=request_id,
                run_id=run.run_id,
                session_id=request.session_id,
                interaction_id=run.interaction_id,
                agent_name=request.agent_name,
            )
        )


async def finish_as_failed(
    store: BeamStore,
    runner_id: str,
    fence: Fence,
    err: RiverbeamError,
    *,
    budget_s: float,
    tool_executions: Sequence[ToolExecution] = (),
) -> bool:
    """After a finish step the store refused: record the run failed without its writes.

    The tool-execution ledger's batch still goes with it, unless it was what was refused.
    """
    ledger_refused = err.code in (
        ErrorCode.TOOL_EXECUTION_CONFLICT,
        ErrorCode.INVALID_TOOL_EXECUTION,
    )

    async def bare() -> None:
        await finish_step(store)(
            run_id=fence.run_id,
            lease_owner=runner_id,
            status="failed",
            error_code=err.bem,
            error_message=err.message,
            lease_epoch=fence.epoch,
            tool_executions=() if ledger_refused else tool_executions,
        )

    try:
        await finish_with_retry(bare, budget_s=budget_s)
    except RiverbeamError as again:
        log.error("run %s could not be recorded as failed either: %s", fence.run_id, again)
        return False
    return True


async def record_outcomes(
    store: BeamStore,
    fence: Fence,
    resumed: Sequence[ResumedAction],
    result: AgentResult,
    *,
    failure: str | None,
) -> None:
    """What the approved actions' tools did (the approval ledger), fenced by the run's epoch.

    `failure` is the run's error when it failed: an approved call that did not run gets it.
    """
    # A called agent's approved calls ran in its child run (agents/_child_resume.py).
    calls = [*called_agents_calls(result), *result.tool_calls]
    ran = {c.tool_call_id: c for c in calls if c.tool_call_id}
    for action in resumed:
        if not action.approved:
            continue
        call = ran.get(action.tool_call_id) if action.tool_call_id else None
        try:
            if call is not None:
                failed = tool_failure(call.result)
                await store.record_action_outcome(
                    action_id=action.action_id,
                    outcome="approved_failed" if failed else "approved_ran",
                    result=None if failed else call.result,
                    error=failed,
                    run_id=fence.run_id,
                    lease_epoch=fence.epoch,
                )
            elif failure is not None:
                await store.record_action_outcome(
                    action_id=action.action_id,
                    outcome="approved_failed",
                    result=None,
                    error=failure,
                    run_id=fence.run_id,
                    lease_epoch=fence.epoch,
                )
        except RiverbeamError as err:
            # A retried finish step meets the outcomes its first attempt recorded.
            if err.code is not ErrorCode.STORE_CONFLICT:
                raise


CancelElsewhere = Callable[[str, str | None], Awaitable[None]]
"""`await cancel_elsewhere(request_id, reason)`: ask the replica holding a request to cancel it."""

INTERRUPT_REASON = "interrupted by a new message to the session"


async def interrupt_run(
    cancel_here: Callable[[str, str | None], bool],
    cancel_elsewhere: CancelElsewhere | None,
    request_id: str,
    run_id: str | None,
) -> None:
    """Busy-session `interrupt`: cancel the session's running run, here or on its replica (the
    NATS cancel subject). It is then recorded `cancelled` (BEM-033) with its partial text."""
    log.info("interrupting run %s (request %s) for a new message", run_id, request_id)
    if cancel_here(request_id, INTERRUPT_REASON) or cancel_elsewhere is None:
        return
    try:
        await cancel_elsewhere(request_id, INTERRUPT_REASON)
    except RiverbeamError as err:
        # The new run then waits for the session as `queue` does.
        log.warning("cannot ask for the cancel of %s: %s", request_id, err)
