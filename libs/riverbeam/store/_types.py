"""Inputs and results of the coarse store writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from riverbeam.core.ids import new_id
from riverbeam.types import (
    Action,
    ActionPreview,
    ActionRequired,
    ContentPart,
    Interaction,
    JsonObject,
    Message,
    MessageRole,
    Run,
    Session,
    WireModel,
)
from riverbeam.types._base import OptionalJsonObject
from riverbeam.v1 import store_service_pb2, types_pb2

__all__ = [
    "BeginRunResult",
    "FinishStatus",
    "MessageKind",
    "NewAction",
    "NewMessage",
    "RecordedOutcome",
    "TakenOverRun",
]

FinishStatus = Literal["completed", "failed", "interrupted", "cancelled"]
"""The statuses a run may finish with."""

RecordedOutcome = Literal["approved_ran", "approved_failed"]
"""What a runner reports once an approved action's tool has run."""

MessageKind = Literal["message", "action_result", "tool_result", "summary"]
"""The `type` of a stored message."""


class NewMessage(WireModel):
    """A message to save; the store allocates its sequence number and timestamp."""

    _proto = store_service_pb2.NewMessage
    _always = frozenset({"content"})

    role: MessageRole
    type: MessageKind = "message"
    content: list[ContentPart] = Field(default_factory=list)
    message_id: str = Field(default_factory=new_id)
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_args: JsonObject | None = None
    tool_result: Any = None
    metadata: JsonObject | None = None


class NewAction(WireModel):
    """A pending action to save when a run pauses for approval."""

    _proto = types_pb2.ActionRequired

    action_id: str
    kind: str = "confirmation"
    tool: str
    args: JsonObject = Field(default_factory=dict)
    tool_call_id: str | None = None
    # What approving would do (the sandbox's preview), stored with the action.
    preview: ActionPreview | None = None
    # A called agent's held call: the link to the run's call it belongs to (child_link).
    child: OptionalJsonObject = None

    @classmethod
    def from_required(cls, required: ActionRequired) -> NewAction:
        """The pending action for an agent's ActionRequired entry."""
        return cls(
            action_id=required.action_id,
            kind=required.kind,
            tool=required.tool,
            args=dict(required.args),
            tool_call_id=required.tool_call_id,
            preview=required.preview,
            child=child_link(required.child),
        )


CHILD_LINK_KEYS = ("agent", "run_id", "parent_tool", "parent_tool_call_id")


def child_link(child: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a stored action keeps of ActionRequired.child: which call it belongs to.

    The child's conversation and a crew's state stay in the reply's metadata (written in
    the same finish step), not in the inbox's rows.
    """
    if child is None:
        return None
    return {k: child[k] for k in CHILD_LINK_KEYS if k in child}


@dataclass(frozen=True, slots=True)
class BeginRunResult:
    """Everything begin_run wrote, as stored."""

    session: Session
    interaction: Interaction
    run: Run
    human_message: Message | None = None
    resolved_actions: list[Action] = field(default_factory=list)
    # The action_result messages saved for resolved_actions, in the same order.
    action_messages: list[Message] = field(default_factory=list)
    # The session's newest `history_limit` messages saved before this step, oldest first.
    history: list[Message] = field(default_factory=list)
    # When > 0, `history` leaves out the window's messages numbered up to this seq: the caller
    # said it holds them (begin_run's history_after, its id matched). 0: the whole window.
    history_after: int = 0


@dataclass(frozen=True, slots=True)
class TakenOverRun:
    """A run taken over by take_over_expired_runs: as stored now, and who held it before."""

    run: Run
    previous_owner: str | None = None
