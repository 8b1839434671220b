"""What agents produce: results, messages and stream frames."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from riverbeam.types._base import (
    INT32_MAX,
    JsonObject,
    NonEmptyStr,
    OptionalJsonObject,
    UtcDatetime,
    UUIDStr,
    WireModel,
)
from riverbeam.types._content import ContentPart
from riverbeam.v1 import types_pb2

__all__ = [
    "ActionPreview",
    "ActionRequired",
    "AgentMessage",
    "AgentResult",
    "FrameType",
    "MessageRole",
    "MessageType",
    "PreviewCommit",
    "PreviewState",
    "StreamChunk",
    "TokenUsage",
    "ToolCallRecord",
    "ToolDecision",
]

FrameType = Literal["chunk", "done", "error", "placeholder", "thinking", "tool"]
MessageRole = Literal["system", "human", "ai", "tool"]
MessageType = Literal["message", "tool_result", "action", "action_result", "step", "summary"]


class TokenUsage(WireModel):
    """Tokens a model call used."""

    _proto = types_pb2.TokenUsage
    _always = frozenset({"prompt_tokens", "completion_tokens", "total_tokens"})

    prompt_tokens: int = Field(default=0, ge=0, le=INT32_MAX)
    completion_tokens: int = Field(default=0, ge=0, le=INT32_MAX)
    total_tokens: int = Field(default=0, ge=0, le=INT32_MAX)

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )


class ToolDecision(WireModel):
    """What one tool-call policy decided about a call."""

    _proto = types_pb2.ToolDecision

    policy: NonEmptyStr
    action: NonEmptyStr
    message: str | None = None


class ToolCallRecord(WireModel):
    """One tool call an agent made, with its result."""

    _proto = types_pb2.ToolCallRecord

    tool_name: NonEmptyStr
    args: JsonObject = Field(default_factory=dict)
    tool_call_id: str | None = None
    result: Any = None
    latency_ms: float | None = None
    decisions: list[ToolDecision] = Field(default_factory=list)


class PreviewCommit(WireModel):
    """A commit a held git_push would push."""

    _proto = types_pb2.PreviewCommit

    id: str
    summary: str = ""
    author: str = ""


class PreviewState(WireModel):
    """The state a preview was computed from; the approved call runs only on exactly this.

    git_push: branch, head (its local commit) and origin (the origin's tip as last known, or
    "absent"); write_file: path and blob (its git blob id, or "absent").
    """

    _proto = types_pb2.PreviewState

    branch: str | None = None
    head: str | None = None
    origin: str | None = None
    path: str | None = None
    blob: str | None = None


class ActionPreview(WireModel):
    """What approving a held call would do, bounded in size (docs/durability.md)."""

    _proto = types_pb2.ActionPreview

    tool: NonEmptyStr
    summary: str = ""
    commits: list[PreviewCommit] = Field(default_factory=list)
    diff: str = ""
    truncated: bool = False
    diff_bytes: int = Field(default=0, ge=0, le=INT32_MAX)
    state: PreviewState = Field(default_factory=PreviewState)
    commits_truncated: bool = False


class ActionRequired(WireModel):
    """An approval the agent waits for."""

    _proto = types_pb2.ActionRequired

    action_id: UUIDStr
    kind: NonEmptyStr = "confirmation"
    tool: NonEmptyStr
    args: JsonObject = Field(default_factory=dict)
    tool_call_id: str | None = None
    # What approving would do (git_push, write_file); None for a tool without previews.
    preview: ActionPreview | None = None
    # A called agent's held call: the link to the caller's call and the child's state
    # (riverbeam.agents._child_hold.ChildHold.as_json). None for the run's own calls.
    child: OptionalJsonObject = None


class AgentResult(WireModel):
    """The result of an invocation, and of the final done frame."""

    _proto = types_pb2.AgentResult
    _always = frozenset({"content", "agent_name", "interrupted"})

    content: list[ContentPart] = Field(default_factory=list)
    agent_name: NonEmptyStr
    model_used: str | None = None
    session_id: str | None = None
    request_id: str | None = None
    interaction_id: str | None = None
    run_id: str | None = None
    token_usage: TokenUsage | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    metadata: OptionalJsonObject = None
    latency_ms: float | None = None
    interrupted: bool = False
    action_required: list[ActionRequired] = Field(default_factory=list)
    # The final answer parsed as JSON, when the run had a response schema.
    output: Any = None
    # The agent this run handed the conversation to (later turns of the interaction go to it).
    handoff_to: str | None = None

    @property
    def text(self) -> str:
        """The text parts of the reply, joined."""
        return "".join(p.text or "" for p in self.content if p.type == "text")


class AgentMessage(WireModel):
    """A message of a run, as chunk, thinking, placeholder and tool frames carry it."""

    _proto = types_pb2.AgentMessage

    role: MessageRole
    type: MessageType = "message"
    content: list[ContentPart] = Field(default_factory=list)
    id: str | None = None
    timestamp: UtcDatetime | None = None
    agent_name: str | None = None
    session_id: str | None = None
    interaction_id: str | None = None
    run_id: str | None = None
    step_id: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_args: OptionalJsonObject = None
    tool_result: Any = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    is_delta: bool = False
    # "recovered": a step frame saying another runner continues the run (durable runs).
    phase: Literal["final", "thinking", "recovered"] | None = None
    # The `tool` action frame of a held call: what approving it would do.
    preview: ActionPreview | None = None

    @property
    def text(self) -> str:
        """The text and reasoning parts, joined."""
        return "".join(p.text or "" for p in self.content if p.type in ("text", "reasoning"))


class StreamChunk(WireModel):
    """One frame on riverbeam.stream.<request_id>."""

    _proto = types_pb2.StreamChunk

    type: FrameType
    data: AgentMessage | None = None
    result: AgentResult | None = None
    error: str | None = None
    agent_name: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    interaction_id: str | None = None
    run_id: str | None = None
    step_id: str | None = None
    message_id: str | None = None
    id: str | None = None
    timestamp: UtcDatetime | None = None
    seq: int | None = Field(default=None, ge=1, le=INT32_MAX)
    request_id: str | None = None
    error_code: str | None = None
    # On a child run's frames published on the parent's stream: the parent's run id.
    parent_run_id: str | None = None

    @property
    def is_terminal(self) -> bool:
        """True for the last frame of a request (done or error)."""
        return self.type in ("done", "error")
