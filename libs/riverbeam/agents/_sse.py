"""Chat-completions wire decoding: server-sent events, streamed deltas, and whole responses.

No I/O here: the OpenAI-compatible client feeds lines in and gets events and completions out,
so the decoding is testable on its own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from riverbeam.agents._completion import Completion, PendingToolCall, Text, ToolCalls
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import TokenUsage

__all__ = ["DONE", "StreamAssembler", "completion_from_json", "iter_sse_data", "parse_usage"]

DONE = "[DONE]"
"""The data of the event that ends an OpenAI stream."""


def _malformed(message: str, **details: object) -> RiverbeamError:
    return RiverbeamError(ErrorCode.MODEL_BAD_RESPONSE, message, **details)


async def iter_sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """Yield the data of each server-sent event (multi-line data joined by newlines).

    Comments (":"), `event:`, `id:` and `retry:` fields are ignored; a blank line ends an event.
    """
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


def parse_usage(value: Any) -> TokenUsage | None:
    """TokenUsage from an OpenAI `usage` object; None when absent or not understood."""
    if not isinstance(value, Mapping):
        return None
    prompt = value.get("prompt_tokens")
    completion = value.get("completion_tokens")
    if (
        not isinstance(prompt, int)
        or not isinstance(completion, int)
        or prompt < 0
        or completion < 0
    ):
        return None
    total = value.get("total_tokens")
    if not isinstance(total, int) or total < 0:
        total = prompt + completion
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total)


def _error_message(error: Any) -> str:
    if isinstance(error, Mapping):
        return str(error.get("message") or error.get("code") or error)
    return str(error)


@dataclass(slots=True)
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StreamAssembler:
    """Accumulates `chat.completion.chunk` objects into one Completion.

    Tool-call deltas are keyed by their index: the first delta of a call carries its id and
    name, later ones carry pieces of the argument text, possibly interleaved between calls.
    """

    requested_model: str | None = None
    _text: list[str] = field(default_factory=list)
    _calls: dict[int, _CallParts] = field(default_factory=dict)
    _usage: TokenUsage | None = None
    _model: str | None = None
    _finish_reason: str | None = None
    _saw_choice: bool = False

    @property
    def finished(self) -> bool:
        """Whether a choice reported a finish_reason."""
        return self._finish_reason is not None

    def feed(self, chunk: Any) -> str:
        """Take one chunk; return the text it adds ("" when none)."""
        if not isinstance(chunk, Mapping):
            raise _malformed("a stream chunk is not a JSON object")
        if chunk.get("error"):
            raise RiverbeamError(
                ErrorCode.MODEL_ERROR,
                f"the model endpoint reported: {_error_message(chunk['error'])}",
            )
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self._model = chunk["model"]
        usage = parse_usage(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
        choices = chunk.get("choices")
        if choices is None:
            if usage is None:
                raise _malformed("a stream chunk has neither choices nor usage")
            return ""
        if not isinstance(choices, list):
            raise _malformed("a stream chunk's choices is not a list")
        added: list[str] = []
        for choice in choices:
            if not isinstance(choice, Mapping):
                raise _malformed("a stream choice is not a JSON object")
            if choice.get("index", 0) != 0:
                continue  # n > 1 is never requested; ignore extra choices
            self._saw_choice = True
            if isinstance(choice.get("finish_reason"), str):
                self._finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            if not isinstance(delta, Mapping):
                raise _malformed("a stream delta is not a JSON object")
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._text.append(content)
                added.append(content)
            self._feed_calls(delta.get("tool_calls"))
        return "".join(added)

    def _feed_calls(self, calls: Any) -> None:
        if calls is None:
            return
        if not isinstance(calls, list):
            raise _malformed("delta.tool_calls is not a list")
        for position, call in enumerate(calls):
            if not isinstance(call, Mapping):
                raise _malformed("a tool-call delta is not a JSON object")
            index = call.get("index", position)
            if not isinstance(index, int):
                raise _malformed("a tool-call delta has a non-integer index")
            parts = self._calls.setdefault(index, _CallParts())
            if isinstance(call.get("id"), str) and call["id"] and not parts.id:
                parts.id = call["id"]
            function = call.get("function") or {}
            if not isinstance(function, Mapping):
                raise _malformed("a tool-call delta's function is not a JSON object")
            name = function.get("name")
            # Some servers repeat the whole name in every delta; others split it.
            if isinstance(name, str) and name and name != parts.name:
                parts.name += name
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                parts.arguments.append(arguments)

    def finish(self) -> Completion:
        """The Completion the chunks add up to."""
        if not self._saw_choice:
            raise _malformed("the stream ended without any choice")
        text = "".join(self._text)
        model = self._model or self.requested_model
        if not self._calls:
            return Text(text=text, usage=self._usage, model=model)
        calls: list[PendingToolCall] = []
        for index in sorted(self._calls):
            parts = self._calls[index]
            if not parts.name:
                raise _malformed("a streamed tool call has no name", index=index)
            calls.append(
                PendingToolCall.from_json(
                    name=parts.name, arguments="".join(parts.arguments), id=parts.id or None
                )
            )
        return ToolCalls(calls=tuple(calls), text=text, usage=self._usage, model=model)


def completion_from_json(body: Any, *, requested_model: str | None = None) -> Completion:
    """The Completion of a non-streamed `chat.completion` response body."""
    if not isinstance(body, Mapping):
        raise _malformed("the response is not a JSON object")
    if body.get("error"):
        raise RiverbeamError(
            ErrorCode.MODEL_ERROR, f"the model endpoint reported: {_error_message(body['error'])}"
        )
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise _malformed("the response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        raise _malformed("the response's first choice has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise _malformed("message.content is not a string")
    text = content or ""
    usage = parse_usage(body.get("usage"))
    model = (
        body["model"] if isinstance(body.get("model"), str) and body["model"] else requested_model
    )
    raw_calls = message.get("tool_calls")
    if not raw_calls:
        return Text(text=text, usage=usage, model=model)
    if not isinstance(raw_calls, list):
        raise _malformed("message.tool_calls is not a list")
    calls: list[PendingToolCall] = []
    for raw in raw_calls:
        function = raw.get("function") if isinstance(raw, Mapping) else None
        if (
            not isinstance(function, Mapping)
            or not isinstance(function.get("name"), str)
            or not function["name"]
        ):
            raise _malformed("a tool call has no function name")
        arguments = function.get("arguments")
        if isinstance(arguments, Mapping):
            arguments = json.dumps(arguments)
        if arguments is not None and not isinstance(arguments, str):
            raise _malformed("a tool call's arguments are neither text nor an object")
        call_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        calls.append(
            PendingToolCall.from_json(name=function["name"], arguments=arguments or "", id=call_id)
        )
    return ToolCalls(calls=tuple(calls), text=text, usage=usage, model=model)
