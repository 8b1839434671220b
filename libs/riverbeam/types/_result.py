"""What agents produce: results, messages and stream frames."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, Field

from riverbeam.types._base import JsonObject, WireModel
from riverbeam.types._content import ContentPart
from riverbeam.v1 import types_pb2

__all__ = [
    "ActionRequired",
    "AgentMessage",
    "AgentResult",
    "FrameType",
    "MessageRole",
    "MessageType",
    "StreamChunk",
    "TokenUsage",
    "ToolCallRecord",
]

FrameType = Literal["chunk", "done", "error", "placeholder", "thinking", "tool"]
MessageRole = Literal["system", "human", "ai", "tool"]
MessageType = Literal["message", "tool_result", "action", "action_result", "step"]


class TokenUsage(WireModel):
    _proto = types_pb2.TokenUsage
    _always = frozenset({"prompt_tokens", "completion_tokens", "total_tokens"})

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    total_tokens: int = Field(default=0, ge=0)

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )


class ToolCallRecord(WireModel):
    _proto = types_pb2.ToolCallRecord

    tool_name: str
    args: JsonObject = Field(default_factory=dict)
    tool_call_id: str | None = None
    result: Any = None
    latency_ms: float | None = None


class ActionRequired(WireModel):
    """An approval the agent waits for."""

    _proto = types_pb2.ActionRequired

    action_id: str
    kind: str = "confirmation"
    tool: str
    args: JsonObject = Field(default_factory=dict)
    tool_call_id: str | None = None


class AgentResult(WireModel):
    """The result of an invocation, and of the final done frame."""

    _proto = types_pb2.AgentResult
    _always = frozenset({"content", "agent_name", "interrupted"})

    content: list[ContentPart] = Field(default_factory=list)
    agent_name: str
    model_used: str | None = None
    session_id: str | None = None
    request_id: str | None = None
    interaction_id: str | None = None
    run_id: str | None = None
    token_usage: TokenUsage | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    metadata: JsonObject | None = None
    latency_ms: float | None = None
    interrupted: bool = False
    action_required: list[ActionRequired] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The text parts of the reply, joined."""
        return "".join(p.text or "" for p in self.content if p.type == "text")


class AgentMessage(WireModel):
    _proto = types_pb2.AgentMessage

    role: MessageRole
    type: MessageType = "message"
    content: list[ContentPart] = Field(default_factory=list)
    id: str | None = None
    timestamp: AwareDatetime | None = None
    agent_name: str | None = None
    session_id: str | None = None
    interaction_id: str | None = None
    run_id: str | None = None
    step_id: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_args: JsonObject | None = None
    tool_result: Any = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    is_delta: bool | None = None
    phase: Literal["final", "thinking"] | None = None

    @property
    def text(self) -> str:
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
    timestamp: AwareDatetime | None = None
    seq: int | None = Field(default=None, ge=1)
    request_id: str | None = None
    error_code: str | None = None

    @property
    def is_terminal(self) -> bool:
        return self.type in ("done", "error")
