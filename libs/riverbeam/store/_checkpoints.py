"""Run checkpoints (durable runs): a run's progress after its last completed step.

A checkpoint is one row per run, replaced by each later step. It is written by the runner
holding the run, in one transaction with the check that the run is still `running` at the
writer's lease epoch (BEM-035 otherwise, nothing written), so a runner that was taken over
cannot overwrite what its successor continues from. Its `state` is the runner's business
(riverbeam.runtime._checkpointing): the store keeps it as a JSON object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types._base import INT32_MAX
from riverbeam.v1 import store_service_pb2 as pb

__all__ = [
    "RunCheckpoint",
    "checkpoint_from_proto",
    "checkpoint_state",
    "checkpoint_step",
    "checkpoint_to_proto",
    "json_state",
    "stale_step",
    "took_over",
]


@dataclass(frozen=True, slots=True)
class RunCheckpoint:
    """The newest checkpoint of a run, as stored."""

    run_id: str
    lease_epoch: int
    step: int
    state: dict[str, Any]
    saved_at: datetime


def checkpoint_step(step: int, state: Any) -> None:
    """A step is 1..INT32_MAX and the state a JSON object (BEM-002 otherwise)."""
    if not isinstance(step, int) or not 1 <= step <= INT32_MAX:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "checkpoint step must be 1..2^31-1", field="step"
        )
    if not isinstance(state, dict):
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "checkpoint state must be a JSON object", field="state"
        )


def json_state(state: dict[str, Any]) -> str:
    """The state as JSON text (BEM-002 when it is not JSON)."""
    try:
        return json.dumps(state, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, f"checkpoint state is not JSON: {exc}", field="state"
        ) from None


def took_over(holders: list[str], previous: str | None, new_owner: str) -> list[str]:
    """The holders of a run after new_owner took it over from `previous`."""
    return [*(holders or [previous or ""]), new_owner]


def stale_step(run_id: str, step: int) -> RiverbeamError:
    """A checkpoint older than the stored one is refused (its writer is behind)."""
    return RiverbeamError(
        ErrorCode.STORE_CONFLICT,
        "a later checkpoint of this run is stored already",
        run_id=run_id,
        step=step,
    )


def checkpoint_state(text: str) -> dict[str, Any]:
    """A state sent as JSON text (BEM-002 when it is not a JSON object)."""
    try:
        state = json.loads(text)
    except ValueError:
        state = None
    if not isinstance(state, dict):
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "checkpoint state must be a JSON object", field="state"
        )
    return state


def checkpoint_to_proto(checkpoint: RunCheckpoint) -> pb.RunCheckpoint:
    message = pb.RunCheckpoint(
        run_id=checkpoint.run_id,
        lease_epoch=checkpoint.lease_epoch,
        step=checkpoint.step,
        state_json=json.dumps(checkpoint.state, ensure_ascii=False, separators=(",", ":")),
    )
    message.saved_at.FromDatetime(checkpoint.saved_at)
    return message


def checkpoint_from_proto(message: pb.RunCheckpoint) -> RunCheckpoint:
    return RunCheckpoint(
        run_id=message.run_id,
        lease_epoch=message.lease_epoch,
        step=message.step,
        state=json.loads(message.state_json or "{}"),
        saved_at=message.saved_at.ToDatetime(tzinfo=UTC),
    )
