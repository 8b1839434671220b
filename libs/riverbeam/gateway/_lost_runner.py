"""A unary invoke whose runner died mid-call: wait for the run's recovery, answer with its end.

With RIVERBEAM_RECOVERY_POLICY=recover another replica's reaper takes the run over once its
lease expires and continues it from its checkpoint; the caller, whose connection was to the
dead runner, is answered from the run record once it is terminal, exactly as the runner would
have answered: the result of a completed or interrupted run, the error of a failed or
cancelled one (BEM-034 when it was failed as lost, BEM-267 after too many takeovers, ...).
See docs/durability.md ("A unary caller outlives its runner").
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from riverbeam.core.errors import ErrorCode, RiverbeamError, by_code
from riverbeam.store import BeamStore
from riverbeam.types import AgentResult, Run

__all__ = [
    "CALLER_GONE",
    "answer_from_run",
    "await_lost_run",
    "cancel_when_continued",
    "cut_in_transport",
    "lost_in_transport",
]

log = logging.getLogger("riverbeam.gateway")

FIRST_POLL_S = 0.1
MAX_POLL_S = 2.0
CALLER_GONE = "caller cancelled the request"


class Canceller(Protocol):
    async def cancel_run(self, request_id: str, *, reason: str | None = None) -> bool: ...


def lost_in_transport(err: RiverbeamError) -> bool:
    """A runner call that ended in transport with the runner gone (BEM-003) or cut by gRPC
    (a CANCELLED status with no ErrorInfo: the router did not cancel it, and the runner did
    not answer BEM-033 itself; gRPC cancels what is in transit when a server stops): whether
    the run began is known only from the store."""
    return (err.transport and err.code is ErrorCode.SERVICE_UNAVAILABLE) or cut_in_transport(err)


def cut_in_transport(err: RiverbeamError) -> bool:
    """A runner call cut by gRPC (see lost_in_transport), not refused by the runner."""
    return err.transport and err.code is ErrorCode.RUN_CANCELLED


def answer_from_run(run: Run) -> AgentResult:
    """What a unary invoke answers for a finished run: its result, or its error raised."""
    ids = {"run_id": run.run_id, "request_id": run.request_id}
    if run.status in ("completed", "interrupted") and run.result is not None:
        return run.result
    if run.status == "cancelled":
        raise RiverbeamError(ErrorCode.RUN_CANCELLED, run.error_message or "run cancelled", **ids)
    code = by_code(run.error_code or "") or ErrorCode.RUN_LOST
    raise RiverbeamError(code, run.error_message or code.spec.title, **ids)


async def await_lost_run(store: BeamStore, run: Run, *, budget_s: float) -> AgentResult:
    """Poll the run record (0.1 s doubling to 2 s) until it is terminal, for up to `budget_s`.

    Already terminal: answered at once (the fast path: a run already failed is its code, as
    before). Still running after the budget: BEM-270, naming the run and its request so the
    caller can read it (GetRun) or follow its stream. A store that cannot be read while
    waiting is retried within the budget.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(budget_s, 0.0)
    delay = FIRST_POLL_S
    while run.status == "running":
        left = deadline - loop.time()
        if left <= 0:
            raise RiverbeamError(
                ErrorCode.RUN_STILL_RECOVERING,
                "the runner holding this run stopped and the run is not finished yet; "
                "read it with GetRun or follow its stream",
                run_id=run.run_id,
                request_id=run.request_id,
            )
        await asyncio.sleep(min(delay, left))
        delay = min(delay * 2, MAX_POLL_S)
        try:
            run = await store.get_run(run_id=run.run_id)
        except RiverbeamError as err:
            if not err.transport and err.code is not ErrorCode.STORE_UNAVAILABLE:
                raise
            log.warning("run record unreadable while waiting for recovery: %s", err)
    log.info(
        "lost runner's run answered from its record",
        extra={"run_id": run.run_id, "status": run.status, "holders": list(run.holders)},
    )
    return answer_from_run(run)


async def cancel_when_continued(
    store: BeamStore, runner: Canceller, run: Run, *, budget_s: float
) -> None:
    """The caller went away while waiting: cancel its run, as its own runner would have.

    The run can only be cancelled once a replica holds it again (its epoch moved past the lost
    runner's), and the new holder only registers it as it starts to continue it, so the cancel
    (idempotent; it travels to whichever replica holds the run) is sent again on each poll
    until the run has ended or `budget_s` is over.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(budget_s, 0.0)
    lost_epoch = run.lease_epoch or 1
    delay = FIRST_POLL_S
    request_id = run.request_id or ""
    while loop.time() < deadline:
        try:
            run = await store.get_run(run_id=run.run_id)
            if run.status != "running":
                return
            if (run.lease_epoch or 1) > lost_epoch:
                await runner.cancel_run(request_id, reason=CALLER_GONE)
        except RiverbeamError as err:
            log.warning("cancel of %s after its caller left not sent: %s", run.run_id, err)
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_POLL_S)
