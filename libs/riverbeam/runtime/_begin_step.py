"""The begin-run step of a new run, as the pipeline writes it: through the store's lending
step when it has one, and retried or not as the busy-session policy says."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._pipeline_types import PipelineOptions
from riverbeam.runtime._steps import CancelElsewhere, cheaper_step, interrupt_run
from riverbeam.store import BeamStore, BeginRunResult
from riverbeam.types import InvokeRequest

__all__ = ["begin_step", "begin_with_policy"]


def begin_step(store: BeamStore) -> Callable[..., Awaitable[BeginRunResult]]:
    """The store's begin-run step: the lending one when its class has it (StoreClient's
    begin_run_lending; see store/_lent_history.py)."""
    return cheaper_step(store, "begin_run_lending", "begin_run")


async def begin_with_policy(
    store: BeamStore,
    options: PipelineOptions,
    *,
    request: InvokeRequest,
    cancel_here: Callable[[str, str | None], bool],
    cancel_elsewhere: CancelElsewhere | None,
    **ids: Any,
) -> BeginRunResult:
    """The begin-run step, applying the busy-session policy.

    `reject`: BEM-030 at once. `queue`: retried until the session is free (or
    queue_timeout_s passed, then BEM-030). `interrupt`: the running run named by the
    BEM-030 is cancelled (here, or through cancel_elsewhere on its replica; it is
    recorded `cancelled` with its partial text) and the step retried as for `queue`.
    """
    policy = options.busy_session_policy
    deadline = time.monotonic() + options.queue_timeout_s
    delay = 0.05
    interrupted: set[str] = set()
    while True:
        try:
            return await begin_step(store)(
                session_id=request.session_id,
                agent_name=request.agent_name,
                human_content=list(request.content),
                lease_owner=options.runner_id,
                lease_ttl_s=options.lease_ttl_s,
                exclusive=True,
                action_responses=list(request.actions),
                # The context's history arrives with the step: no separate read.
                history_limit=options.max_history_messages,
                **ids,
            )
        except RiverbeamError as err:
            if (
                err.code is not ErrorCode.SESSION_BUSY
                or policy == "reject"
                or time.monotonic() > deadline
            ):
                raise
            holder = err.details.get("request_id")
            if policy == "interrupt" and holder and holder not in interrupted:
                interrupted.add(holder)
                await interrupt_run(
                    cancel_here, cancel_elsewhere, holder, err.details.get("run_id")
                )
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)
