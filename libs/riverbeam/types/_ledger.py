"""The tool-execution ledger's entry: one per tool call of a run (docs/durability.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field

from riverbeam.types._base import INT32_MAX, JsonObject, NonEmptyStr, UtcDatetime, WireModel
from riverbeam.v1 import ledger_pb2

__all__ = [
    "FINAL_TOOL_STATUSES",
    "RESULT_PREVIEW_CHARS",
    "ToolExecution",
    "ToolExecutionStatus",
    "canonical_json",
    "result_digest",
    "result_preview",
]

ToolExecutionStatus = Literal[
    "requested", "started", "succeeded", "failed", "cancelled", "unknown", "denied", "held"
]
"""requested -> started -> succeeded | failed | cancelled | unknown; denied and held end a
call that never started."""

FINAL_TOOL_STATUSES: frozenset[str] = frozenset(
    {"succeeded", "failed", "cancelled", "unknown", "denied", "held"}
)
"""The statuses after which an entry never changes."""

RESULT_PREVIEW_CHARS = 2048
"""The most of a result's canonical JSON an entry keeps as its preview."""


def canonical_json(value: Any) -> str:
    """`value` as JSON with sorted keys and no spaces: equal data, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def result_digest(value: Any) -> str:
    """sha256 (hex) of the canonical JSON of a tool result."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def result_preview(value: Any, limit: int = RESULT_PREVIEW_CHARS) -> str:
    """The start of the canonical JSON of a tool result, at most `limit` characters."""
    return canonical_json(value)[:limit]


class ToolExecution(WireModel):
    """One tool call of a run, as the ledger records it.

    The status moves forward only (requested, started, then a final status) and a final
    entry never changes; each store write is a compare-and-set fenced by the run's epoch.
    """

    _proto = ledger_pb2.ToolExecution
    _proto_enums: ClassVar[Mapping[str, str]] = {"status": "TOOL_EXECUTION_STATUS_"}

    execution_id: NonEmptyStr
    tool_call_id: str | None = None
    run_id: NonEmptyStr
    interaction_id: NonEmptyStr
    session_id: NonEmptyStr
    seq: int = Field(ge=1, le=INT32_MAX)
    tool: NonEmptyStr
    args: JsonObject = Field(default_factory=dict)
    status: ToolExecutionStatus = "requested"
    read_only: bool = False
    idempotent: bool = False
    action_id: str | None = None
    result_digest: str | None = None
    result_preview: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    runner_id: str | None = None
    lease_epoch: int | None = Field(default=None, ge=1, le=INT32_MAX)
    requested_at: UtcDatetime
    started_at: UtcDatetime | None = None
    finished_at: UtcDatetime | None = None

    @property
    def final(self) -> bool:
        """True once the entry can no longer change."""
        return self.status in FINAL_TOOL_STATUSES
