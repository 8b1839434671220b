"""The HTTP request and response bodies that are not wire types themselves.

Records, agents, models, results and acks are the pydantic wire models of `riverbeam.types`,
so the OpenAPI document describes exactly what the gRPC API carries.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from riverbeam.types import (
    Action,
    AgentMetadata,
    ContentPart,
    InvokeAuthContext,
    JsonObject,
    Message,
    ModelConfig,
    ToolExecution,
    UUIDStr,
)

__all__ = [
    "ActionsPage",
    "AgentList",
    "AnswerBody",
    "CancelBody",
    "CancelResult",
    "ChatMessage",
    "ChatRequest",
    "Health",
    "InvokeBody",
    "MessagesPage",
    "ModelList",
    "ToolExecutionsPage",
    "UsageReport",
    "UsageRowBody",
]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InvokeBody(_Body):
    """`POST /v1/invoke`: the InvokeRequest of the gRPC API, with content as text or parts."""

    agent_name: str = Field(min_length=1, examples=["echo"])
    content: str | list[ContentPart] = Field(
        description="The turn: a string (one text part) or content parts.", examples=["hello"]
    )
    session_id: UUIDStr | None = Field(
        default=None, description="The conversation to continue; a new one when absent."
    )
    stream: bool = Field(
        default=False,
        description="false: wait for the AgentResult; true: a StreamAck at once, frames at "
        "GET /v1/requests/{request_id}/frames.",
    )
    metadata: JsonObject | None = None
    model_override: str | None = None
    request_id: UUIDStr | None = Field(
        default=None, description="Names the frame stream and makes the call idempotent."
    )
    auth_context: InvokeAuthContext | None = Field(
        default=None, description="Who the call is for (honoured for trusted backends only)."
    )


class AnswerBody(_Body):
    """`POST /v1/actions/{action_id}/approve|decline`: who answered and why (both optional)."""

    reason: str | None = Field(default=None, max_length=2000)
    responder_id: str | None = Field(default=None, max_length=256)
    request_id: UUIDStr | None = Field(default=None, description="Names the resumed run's stream.")


class CancelBody(_Body):
    """`POST /v1/requests/{request_id}/cancel`."""

    reason: str | None = Field(default=None, max_length=2000)


class CancelResult(BaseModel):
    """True when a live run was found and told to stop."""

    cancelled: bool


class AgentList(BaseModel):
    agents: list[AgentMetadata]


class ModelList(BaseModel):
    models: list[ModelConfig]


class MessagesPage(BaseModel):
    messages: list[Message]
    next_page_token: str = Field(description='The next page\'s token; "" after the last page.')


class ActionsPage(BaseModel):
    actions: list[Action]
    next_page_token: str = Field(description='The next page\'s token; "" after the last page.')


class ToolExecutionsPage(BaseModel):
    entries: list[ToolExecution]
    next_page_token: str = Field(description='The next page\'s token; "" after the last page.')


class Health(BaseModel):
    status: Literal["ok"]


class ChatMessage(BaseModel):
    """A UI message as the AI SDK's `useChat` sends it (only text parts are read)."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    role: Literal["system", "user", "assistant"]
    parts: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(str(p.get("text", "")) for p in self.parts if p.get("type") == "text")


class ChatRequest(BaseModel):
    """`POST /chat`: the body of the AI SDK's DefaultChatTransport, plus optional choices.

    Only the last user message is sent to the agent: the session keeps the history.
    """

    model_config = ConfigDict(extra="allow")

    id: str | None = Field(default=None, description="The chat id; it names the session.")
    messages: list[ChatMessage] = Field(min_length=1)
    trigger: str | None = None
    messageId: str | None = None  # the AI SDK's field name
    agent: str | None = Field(
        default=None, description="The agent; the console's default if absent."
    )
    session_id: UUIDStr | None = Field(
        default=None, description="The session; derived from the chat id when absent."
    )
    model_override: str | None = None


class UsageRowBody(BaseModel):
    """The runs of one group (run, session, user or org) and model, and their usage and cost."""

    key: str
    model: str
    runs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0


class UsageReport(BaseModel):
    """GetUsage: one row per group and model, and the total over them."""

    group_by: Literal["run", "session", "user", "org"]
    rows: list[UsageRowBody]
    total: UsageRowBody
