"""The model boundary: the CompletionClient protocol and what a completion is.

A client takes OpenAI chat-format messages and tool specs and streams events: zero or more
TextDelta (text as it is generated), then exactly one Completion, always last. A Completion
is either Text (the model answered) or ToolCalls (the model wants tools run).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, TypeVar, runtime_checkable

from riverbeam.agents._tool import ToolSpec
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import TokenUsage

__all__ = [
    "ChatMessage",
    "Completion",
    "CompletionClient",
    "CompletionEvent",
    "PendingToolCall",
    "StructuredOutputClient",
    "Text",
    "TextDelta",
    "ToolCalls",
    "collect",
    "new_tool_call_id",
]

ChatMessage: TypeAlias = dict[str, Any]
"""One OpenAI chat-format message: {"role": "user", "content": "hello"}."""

_T = TypeVar("_T")


def new_tool_call_id() -> str:
    """A fresh tool-call id in the style OpenAI uses."""
    return f"call_{uuid.uuid4().hex[:24]}"


@dataclass(frozen=True, slots=True)
class PendingToolCall:
    """A tool call the model asked for and that has not run yet.

    Attributes:
        name: The tool's name.
        args: The arguments, a JSON object.
        id: The call id the tool result must answer.
        raw_args: The argument text exactly as the model sent it, when it came as text.
        args_error: Why the model's argument text is not a JSON object; None when it is. A call
            with an args_error never runs: the model is told its arguments were invalid.
        preview: For a call held for approval, what approving it would do (see PreviewTool).
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_tool_call_id)
    raw_args: str | None = None
    args_error: str | None = None
    # A held call's preview of its effect (ActionPreview's wire form), when its tool has one.
    preview: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, *, name: str, arguments: str, id: str | None = None) -> PendingToolCall:
        """Build a call from the model's JSON argument text, keeping a parse failure as args_error."""
        call_id = id or new_tool_call_id()
        text = arguments.strip()
        if not text:
            return cls(name=name, args={}, id=call_id, raw_args=arguments)
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            return cls(
                name=name,
                id=call_id,
                raw_args=arguments,
                args_error=f"arguments are not JSON: {exc.msg}",
            )
        if not isinstance(parsed, dict):
            return cls(
                name=name,
                id=call_id,
                raw_args=arguments,
                args_error=f"arguments must be a JSON object, not {type(parsed).__name__}",
            )
        return cls(name=name, args=parsed, id=call_id, raw_args=arguments)

    def openai(self) -> dict[str, Any]:
        """The entry of an assistant message's `tool_calls` list."""
        arguments = (
            self.raw_args
            if self.raw_args is not None
            else json.dumps(self.args, ensure_ascii=False)
        )
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": arguments},
        }


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's text, as it arrives."""

    text: str


@dataclass(frozen=True, slots=True)
class Text:
    """The model answered with text.

    Attributes:
        text: The whole answer.
        usage: Tokens this call used, when the endpoint reported them.
        model: The model that answered, when known.
    """

    text: str
    usage: TokenUsage | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """The model asked for tools to be run.

    Attributes:
        calls: The calls, in the order the model gave them.
        text: Any text the model wrote alongside the calls.
        usage: Tokens this call used, when the endpoint reported them.
        model: The model that answered, when known.
    """

    calls: tuple[PendingToolCall, ...]
    text: str = ""
    usage: TokenUsage | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "calls", tuple(self.calls))
        if not self.calls:
            raise ValueError("ToolCalls needs at least one call")


Completion: TypeAlias = Text | ToolCalls
CompletionEvent: TypeAlias = TextDelta | Text | ToolCalls


@runtime_checkable
class CompletionClient(Protocol):
    """A chat-completion model.

    `stream` yields TextDelta events as text arrives and then one Completion, last. `complete`
    returns just the Completion. `model` is the model the router resolved for the request; a
    client may pin its own model and ignore it. Failures are RiverbeamErrors with a model code
    (BEM-080 to BEM-085, BEM-093, BEM-095). Cancelling the caller cancels the request.
    """

    def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
    ) -> AsyncIterator[CompletionEvent]: ...

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
    ) -> Completion: ...


@runtime_checkable
class StructuredOutputClient(Protocol):
    """A client that can send the provider's native response format (JSON Schema output)."""

    def stream_structured(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        response_format: Mapping[str, Any] | None,
    ) -> AsyncIterator[CompletionEvent]: ...


class StructuredStreaming:
    """A base for clients that implement `stream_structured`: their `stream` is it without a
    native response format, so the two paths cannot drift apart."""

    def stream_structured(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        response_format: Mapping[str, Any] | None,
    ) -> AsyncIterator[CompletionEvent]:
        raise NotImplementedError

    async def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
    ) -> AsyncIterator[CompletionEvent]:
        """The events of one model call: text deltas as they arrive, then the Completion."""
        async with closing_events(
            self.stream_structured(messages, tools, model=model, response_format=None)
        ) as events:
            async for event in events:
                yield event


async def collect(events: AsyncIterator[CompletionEvent]) -> Completion:
    """Drain a client's event stream and return its Completion (BEM-093 if there is none)."""
    completion: Completion | None = None
    async with closing_events(events) as stream:
        async for event in stream:
            if not isinstance(event, TextDelta):
                completion = event
    if completion is None:
        raise RiverbeamError(
            ErrorCode.MODEL_BAD_RESPONSE, "the completion stream ended without a completion"
        )
    return completion


@asynccontextmanager
async def closing_events(iterator: AsyncIterator[_T]) -> AsyncIterator[AsyncIterator[_T]]:
    """Close an async generator when the block exits, even early (so its HTTP response closes)."""
    try:
        yield iterator
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()
