"""How a run ended, as the pipeline records and publishes it, built from its last frame."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from riverbeam.agents._io import UsageMeter
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._frames import FrameTracker, stamp
from riverbeam.runtime._pipeline_types import PreparedRun
from riverbeam.runtime._records import partial_result
from riverbeam.types import AgentResult, ContentPart, StreamChunk
from riverbeam.types._copying import updated_copy

__all__ = ["Outcome", "cancelled_outcome", "done_outcome", "failed_outcome"]


@dataclass(slots=True)
class Outcome:
    """A run's end: the status to record, its result, and the terminal frame to publish.

    `result` is always an object built or copied here, never the agent's: the pipeline sets
    its latency in place. A `done` terminal frame gets the recorded result once that is set.
    """

    status: Literal["completed", "failed", "interrupted", "cancelled"]
    result: AgentResult
    terminal: StreamChunk
    error: RiverbeamError | None = None
    # The protobuf message of `result` the finish step sent (StoreClient), once it is written:
    # a reply of the result copies it instead of converting the result again. None when the
    # store took the record otherwise (in process) or the step was not written.
    result_message: Any = None


def done_outcome(prepared: PreparedRun, frame: StreamChunk, usage: UsageMeter) -> Outcome:
    """The run ended with a done frame: completed, or interrupted when it holds actions."""
    result = frame.result or AgentResult(agent_name=prepared.request.agent_name)
    update: dict[str, Any] = prepared.ids
    metered = usage.snapshot()
    if result.token_usage is None or metered.total_tokens > result.token_usage.total_tokens:
        # The meter saw more than the agent reports: agents it called as tools spent it.
        update["token_usage"] = metered
    if result.model_used is None:
        update["model_used"] = usage.model or prepared.model.name
    result = updated_copy(result, update)
    status: Literal["completed", "interrupted"] = (
        "interrupted" if result.interrupted else "completed"
    )
    # The frame is given the recorded result when its latency is known (Pipeline._execute).
    return Outcome(status, result, frame)


def failed_outcome(
    prepared: PreparedRun,
    usage: UsageMeter,
    err: RiverbeamError,
    frame: StreamChunk | None,
    tracker: FrameTracker,
    *,
    code: str,
) -> Outcome:
    """The run failed: an error frame (`frame`) or an exception; keeps what was streamed."""
    result = AgentResult(
        content=[ContentPart.of_text(tracker.partial_text)] if tracker.partial_text else [],
        token_usage=usage.snapshot(),
        model_used=usage.model or prepared.model.name,
        tool_calls=list(tracker.finished_calls),
        metadata={"error": {"code": code, "message": err.message}},
        **prepared.ids,
    )
    if frame is not None and frame.result is not None:
        result = partial_result(result, frame.result)
    terminal = frame or StreamChunk(type="error", error=err.message)
    terminal = stamp(
        terminal.model_copy(update={"error_code": code, "result": None}), **prepared.ids
    )
    return Outcome("failed", result, terminal, err.with_details({"run_id": prepared.run_id}))


def cancelled_outcome(
    prepared: PreparedRun,
    tracker: FrameTracker,
    usage: UsageMeter,
    reason: str | None,
) -> Outcome:
    """The run was cancelled (by request, lease loss or the caller going away)."""
    err = RiverbeamError(ErrorCode.RUN_CANCELLED, reason or "run cancelled", run_id=prepared.run_id)
    result = AgentResult(
        content=[ContentPart.of_text(tracker.partial_text)] if tracker.partial_text else [],
        token_usage=usage.snapshot(),
        model_used=usage.model or prepared.model.name,
        tool_calls=list(tracker.finished_calls),
        metadata={"cancelled": True, **({"reason": reason} if reason else {})},
        **prepared.ids,
    )
    terminal = stamp(
        StreamChunk(type="error", error=err.message, error_code=err.bem),
        **prepared.ids,
    )
    return Outcome("cancelled", result, terminal, err)
