"""The execution records of seed 002: session -> interaction -> run -> message, action."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from riverbeam.types._base import JsonObject, WireModel
from riverbeam.types._content import ContentPart
from riverbeam.types._invoke import ActionResponseEnvelope
from riverbeam.types._result import AgentResult, MessageRole, TokenUsage
from riverbeam.v1 import records_pb2

__all__ = [
    "Action",
    "ActionOutcome",
    "ActionStatus",
    "Interaction",
    "InteractionStatus",
    "MemoryEntry",
    "Message",
    "Run",
    "RunStatus",
    "Session",
]

InteractionStatus = Literal["in_progress", "completed", "failed", "cancelled"]
RunStatus = Literal["running", "completed", "failed", "interrupted", "cancelled"]
ActionStatus = Literal["pending", "resolved", "cancelled"]
ActionOutcome = Literal["approved_unknown", "approved_ran", "approved_failed", "declined"]


class Session(WireModel):
    _proto = records_pb2.Session
    _always = frozenset({"last_seq"})

    session_id: str
    user_id: str | None = None
    profile_id: str | None = None
    org_id: str | None = None
    created_at: datetime
    last_active_at: datetime
    metadata: JsonObject | None = None
    last_seq: int = 0


class Interaction(WireModel):
    _proto = records_pb2.Interaction
    _proto_enums = {"status": "INTERACTION_STATUS_"}

    interaction_id: str
    session_id: str
    agent_name: str
    status: InteractionStatus
    created_at: datetime
    updated_at: datetime


class Run(WireModel):
    _proto = records_pb2.Run
    _proto_enums = {"status": "RUN_STATUS_"}

    run_id: str
    interaction_id: str
    session_id: str
    agent_name: str
    status: RunStatus
    request_id: str | None = None
    started_at: datetime
    finished_at: datetime | None = None
    error_code: str | None = None
    error_message: str | None = None
    token_usage: TokenUsage | None = None
    model_used: str | None = None
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    result: AgentResult | None = None


class Message(WireModel):
    _proto = records_pb2.Message

    message_id: str
    session_id: str
    interaction_id: str | None = None
    run_id: str | None = None
    seq: int = Field(ge=0)
    role: MessageRole
    type: Literal["message", "action_result", "tool_result"] = "message"
    content: list[ContentPart] = Field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_args: JsonObject | None = None
    tool_result: Any = None
    metadata: JsonObject | None = None
    created_at: datetime

    @property
    def text(self) -> str:
        return "".join(p.text or "" for p in self.content if p.type == "text")


class Action(WireModel):
    _proto = records_pb2.Action
    _proto_enums = {"status": "ACTION_STATUS_", "outcome": "ACTION_OUTCOME_"}

    action_id: str
    session_id: str
    interaction_id: str
    run_id: str
    kind: str = "confirmation"
    tool: str
    args: JsonObject = Field(default_factory=dict)
    tool_call_id: str | None = None
    status: ActionStatus = "pending"
    created_at: datetime
    resolved_at: datetime | None = None
    response: ActionResponseEnvelope | None = None
    outcome: ActionOutcome | None = None
    result: Any = None
    error: str | None = None
    agent_name: str | None = None
    user_id: str | None = None


class MemoryEntry(WireModel):
    _proto = records_pb2.MemoryEntry

    scope_name: str = Field(min_length=1, max_length=128)
    scope_id: str = Field(min_length=1, max_length=256)
    entry_id: str
    content: str
    metadata: JsonObject | None = None
    created_at: datetime
