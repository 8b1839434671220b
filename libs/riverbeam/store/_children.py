"""Child runs: the fencing rule both stores apply to them.

A child run (an agent called by another agent, or a handoff target) lives in its parent's
session and interaction and has no lease of its own: it is written only while its parent is
running under the caller's lease owner and epoch. So a runner that lost the parent (reaped,
taken over) can no longer begin or finish its children either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks
from riverbeam.types import Run

__all__ = [
    "ORPHAN_MESSAGE",
    "check_child_ids",
    "check_parent_held",
    "not_a_child",
    "required_epoch",
]

ORPHAN_MESSAGE = "run lost: the runner of the run that called it stopped renewing its lease"
"""A child run has no lease of its own: when its caller is taken over or reaped, the step
that does it records the caller's running children (and theirs) failed with BEM-034. A
recovered caller that calls the agent again begins a new child run."""


def check_parent_held(
    parent_run_id: str,
    held: Run | Mapping[str, Any],
    *,
    lease_owner: str,
    lease_epoch: int,
) -> None:
    """BEM-035 when the parent (a Run, or a row with its status, lease_owner and lease_epoch)
    is at another epoch; BEM-121 when it is not running under `lease_owner`."""
    if isinstance(held, Run):
        status, owner, epoch = held.status, held.lease_owner, held.lease_epoch
    else:
        status, owner, epoch = held["status"], held["lease_owner"], held["lease_epoch"]
    if (epoch or 1) != lease_epoch:
        raise _checks.stale_epoch(parent_run_id, lease_epoch, epoch)
    if status != "running" or owner != lease_owner:
        raise RiverbeamError(
            ErrorCode.STORE_CONFLICT,
            "the parent run is no longer running under this lease",
            run_id=parent_run_id,
            status=status,
        )


def not_a_child(run_id: str, parent_run_id: str, actual: str | None) -> RiverbeamError:
    """BEM-237: the run is not a child of parent_run_id (or its id is taken)."""
    return RiverbeamError(
        ErrorCode.CHILD_RUN_INVALID,
        f"run {run_id} is not a child run of {parent_run_id}",
        run_id=run_id,
        parent_run_id=parent_run_id,
        actual_parent_run_id=actual,
    )


def required_epoch(epoch: int) -> int:
    """The parent's lease epoch a child step is fenced by (BEM-002 unless an integer >= 1)."""
    checked = _checks.lease_epoch(epoch)
    if checked is None:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "a child run step needs lease_epoch", field="lease_epoch"
        )
    return checked


def check_child_ids(run_id: str, agent_name: str) -> None:
    """BEM-002 for an empty run id or agent name."""
    for field, value in (("run_id", run_id), ("agent_name", agent_name)):
        if not value:
            raise RiverbeamError(ErrorCode.INVALID_ARGUMENT, f"{field} is empty", field=field)
