"""The tool-execution ledger's rules, decided once for every store implementation.

An entry's status only moves forward: requested, then started, then a final status
(succeeded, failed, cancelled, unknown, denied, held). A write of an entry is a
compare-and-set against what is stored: a final entry never changes (a repeat of the same
final state is a no-op, so a retried step writes nothing twice), an entry never moves back,
and what identifies the call (run, tool, arguments) never changes. Each batch is checked
whole before anything is applied, so a refused batch writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import get_args

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import (
    RESULT_PREVIEW_CHARS,
    Run,
    ToolExecution,
    ToolExecutionStatus,
)

__all__ = [
    "IN_FLIGHT_MESSAGE",
    "check_batch",
    "check_query",
    "in_flight_outcome",
    "merged",
]

_STATUSES: frozenset[str] = frozenset(get_args(ToolExecutionStatus))
_RANK = {"requested": 0, "started": 1}
_FIXED = ("run_id", "interaction_id", "session_id", "tool", "args", "tool_call_id", "seq")
_SAME_FINAL = ("status", "result_digest", "error_code", "action_id")

IN_FLIGHT_MESSAGE = "the runner holding the run stopped while the call was in flight"


def check_query(run_id: str | None, interaction_id: str | None) -> None:
    """A ledger read names exactly one of a run and an interaction (BEM-265)."""
    if bool(run_id) == bool(interaction_id):
        raise RiverbeamError(ErrorCode.LEDGER_QUERY)


def check_batch(run: Run, entries: Sequence[ToolExecution]) -> list[ToolExecution]:
    """The entries of a write for `run`, checked (BEM-264); the last of repeated ids wins."""
    by_id: dict[str, ToolExecution] = {}
    for entry in entries:
        if entry.status not in _STATUSES:
            raise _invalid(entry, f"unknown status {entry.status!r}")
        if (entry.run_id, entry.interaction_id, entry.session_id) != (
            run.run_id,
            run.interaction_id,
            run.session_id,
        ):
            raise _invalid(entry, "the entry names another run, interaction or session")
        if entry.result_preview is not None and len(entry.result_preview) > RESULT_PREVIEW_CHARS:
            raise _invalid(entry, f"result_preview is longer than {RESULT_PREVIEW_CHARS}")
        by_id[entry.execution_id] = entry
    return sorted(by_id.values(), key=lambda e: e.seq)


def merged(stored: ToolExecution | None, new: ToolExecution) -> ToolExecution | None:
    """What to store for `new` given the stored entry: the entry, or None for no change.

    BEM-263 for a change of a final entry, a move back, or a change of the call itself.
    """
    if stored is None:
        return new
    for name in _FIXED:
        if getattr(stored, name) != getattr(new, name):
            raise _conflict(stored, new, f"{name} of a recorded call cannot change")
    if stored.final:
        if all(getattr(stored, n) == getattr(new, n) for n in _SAME_FINAL):
            return None  # a repeat of the same final state: nothing to write
        raise _conflict(stored, new, f"the entry is already {stored.status}")
    if not new.final and _RANK[new.status] < _RANK[stored.status]:
        raise _conflict(stored, new, f"an entry cannot move from {stored.status} to {new.status}")
    if new == stored:
        return None
    # The first start time sticks: a repeat of `started` does not move it.
    return new.model_copy(update={"started_at": stored.started_at or new.started_at})


def in_flight_outcome(entry: ToolExecution, now: datetime) -> ToolExecution | None:
    """What an unfinished entry of a run whose runner died becomes (None: it is final).

    A started call may or may not have acted: `unknown`. A requested one never started:
    `cancelled`.
    """
    if entry.final:
        return None
    status: ToolExecutionStatus = "unknown" if entry.status == "started" else "cancelled"
    return entry.model_copy(
        update={
            "status": status,
            "finished_at": now,
            "error_code": ErrorCode.RUN_LOST.code,
            "error_message": IN_FLIGHT_MESSAGE,
        }
    )


def _invalid(entry: ToolExecution, why: str) -> RiverbeamError:
    return RiverbeamError(
        ErrorCode.INVALID_TOOL_EXECUTION,
        f"tool execution {entry.execution_id}: {why}",
        execution_id=entry.execution_id,
    )


def _conflict(stored: ToolExecution, new: ToolExecution, why: str) -> RiverbeamError:
    return RiverbeamError(
        ErrorCode.TOOL_EXECUTION_CONFLICT,
        f"tool execution {stored.execution_id}: {why}",
        execution_id=stored.execution_id,
        status=stored.status,
        requested_status=new.status,
    )
