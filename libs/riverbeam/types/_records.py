"""The execution records of seed 002: session -> interaction -> run -> message, action."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field

from riverbeam.types._base import (
    INT32_MAX,
    JsonObject,
    NonEmptyStr,
    OptionalJsonObject,
    UtcDatetime,
    WireModel,
)
from riverbeam.types._content import ContentPart
from riverbeam.types._invoke import ActionResponseEnvelope, RunOptions, TurnConfig
from riverbeam.types._result import ActionPreview, AgentResult, MessageRole, TokenUsage
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
ActionStatus = Literal["pending", "resolved", "cancelled", "expired"]
ActionOutcome = Literal["approved_unknown", "approved_ran", "approved_failed", "declined"]


class Session(WireModel):
    """A conversation: created by the first request with its session_id."""

    _proto = records_pb2.Session
    _always = frozenset({"last_seq"})

    session_id: NonEmptyStr
    user_id: str | None = None
    profile_id: str | None = None
    org_id: str | None = None
    created_at: UtcDatetime
    last_active_at: UtcDatetime
    metadata: OptionalJsonObject = None
    last_seq: int = Field(default=0, ge=0, le=INT32_MAX)
    # The session configuration a request's session_config set (docs/agents.md); None: none.
    config: TurnConfig | None = None


class Interaction(WireModel):
    """One request, or several when a resume reuses its interaction_id."""

    _proto = records_pb2.Interaction
    _proto_enums: ClassVar[Mapping[str, str]] = {"status": "INTERACTION_STATUS_"}

    interaction_id: NonEmptyStr
    session_id: NonEmptyStr
    agent_name: NonEmptyStr
    status: InteractionStatus
    created_at: UtcDatetime
    updated_at: UtcDatetime
    # The version of the agent that started it: a resume by another version follows the
    # agent's version_policy (docs/durability.md).
    agent_version: str | None = None


class Run(WireModel):
    """One pass through the pipeline."""

    _proto = records_pb2.Run
    _proto_enums: ClassVar[Mapping[str, str]] = {"status": "RUN_STATUS_"}

    run_id: NonEmptyStr
    interaction_id: NonEmptyStr
    session_id: NonEmptyStr
    agent_name: NonEmptyStr
    status: RunStatus
    request_id: str | None = None
    started_at: UtcDatetime
    finished_at: UtcDatetime | None = None
    error_code: str | None = None
    error_message: str | None = None
    token_usage: TokenUsage | None = None
    model_used: str | None = None
    lease_owner: str | None = None
    lease_expires_at: UtcDatetime | None = None
    result: AgentResult | None = None
    # The lease's fencing epoch: 1 at begin-run, bumped by each takeover (docs/failure-model.md).
    lease_epoch: int | None = None
    agent_version: str | None = None
    # The per-request options it was started with (a resume's include what it inherited).
    options: RunOptions | None = None
    # The runners that held the run when it was taken over (durable runs): the first holder,
    # then each taker. Empty while the run was never taken over.
    holders: list[str] = Field(default_factory=list)
    # A child run (agent as tool, handoff target): the run that called it.
    parent_run_id: str | None = None

    @property
    def takeovers(self) -> int:
        """How many times the run was taken over from a runner that stopped renewing it."""
        return max(len(self.holders) - 1, 0)


class Message(WireModel):
    """One recorded message of a session, numbered by its per-session seq."""

    _proto = records_pb2.Message

    message_id: NonEmptyStr
    session_id: NonEmptyStr
    interaction_id: str | None = None
    run_id: str | None = None
    seq: int = Field(ge=0, le=INT32_MAX)
    role: MessageRole
    type: Literal["message", "action_result", "tool_result", "summary"] = "message"
    content: list[ContentPart] = Field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_args: OptionalJsonObject = None
    tool_result: Any = None
    metadata: OptionalJsonObject = None
    created_at: UtcDatetime

    @property
    def text(self) -> str:
        """The text parts, joined."""
        return "".join(p.text or "" for p in self.content if p.type == "text")


class Action(WireModel):
    """An approval an agent asked for, and what became of it."""

    _proto = records_pb2.Action
    _proto_enums: ClassVar[Mapping[str, str]] = {
        "status": "ACTION_STATUS_",
        "outcome": "ACTION_OUTCOME_",
    }

    action_id: NonEmptyStr
    session_id: NonEmptyStr
    interaction_id: NonEmptyStr
    run_id: NonEmptyStr
    kind: NonEmptyStr = "confirmation"
    tool: NonEmptyStr
    args: JsonObject = Field(default_factory=dict)
    tool_call_id: str | None = None
    status: ActionStatus = "pending"
    created_at: UtcDatetime
    resolved_at: UtcDatetime | None = None
    response: ActionResponseEnvelope | None = None
    outcome: ActionOutcome | None = None
    result: Any = None
    error: str | None = None
    agent_name: str | None = None
    user_id: str | None = None
    # Unanswerable after this (BEM-261); hidden from the inbox. None: never expires.
    expires_at: UtcDatetime | None = None
    # What approving would do, computed when the call was held; approval is bound to its
    # state (BEM-275). None for a tool without previews.
    preview: ActionPreview | None = None
    # A called agent's held call: which call of the run it belongs to (agent, run_id of the
    # interrupted child run, parent_tool, parent_tool_call_id). None for the run's own calls.
    child: OptionalJsonObject = None


class MemoryEntry(WireModel):
    """A remembered entry of a memory scope (name, id) of an organisation.

    Entries are keyed by (org_id, scope_name, scope_id): equal scopes of two organisations
    never share anything. org_id None is the unscoped (single-tenant) organisation.
    """

    _proto = records_pb2.MemoryEntry

    scope_name: str = Field(min_length=1, max_length=128)
    scope_id: str = Field(min_length=1, max_length=256)
    entry_id: NonEmptyStr
    content: NonEmptyStr
    metadata: OptionalJsonObject = None
    created_at: UtcDatetime
    org_id: str | None = Field(default=None, max_length=256)
