"""Frames -> the Vercel AI SDK UI message stream (protocol v1), so `useChat` needs no glue.

Each part is one SSE `data:` line of JSON; the stream ends with `data: [DONE]`:

    start -> start-step -> text-start, text-delta..., text-end
          -> tool-input-available / tool-output-available (as the agent calls tools)
          -> data-approval (one per action waiting for a person) -> finish-step -> finish
    an error frame: error {errorText: "BEM-087: ..."} -> finish {finishReason: "error"}

The response carries the header `x-vercel-ai-ui-message-stream: v1`.
"""

from __future__ import annotations

import uuid
from typing import Any

from riverbeam.types import AgentResult, StreamAck, StreamChunk

__all__ = ["UI_STREAM_HEADERS", "ChatTranslator", "chat_session_id"]

UI_STREAM_HEADERS = {"x-vercel-ai-ui-message-stream": "v1", "x-accel-buffering": "no"}

_CHAT_NAMESPACE = uuid.UUID("5f0c1d8e-3b7a-4c59-9a6e-2d3f4b5c6a7e")

Part = dict[str, Any]


def chat_session_id(chat_id: str | None) -> str:
    """The session of a chat: its id when that is a UUID, else one derived from it (uuid5)."""
    if not chat_id:
        return str(uuid.uuid4())
    try:
        parsed = uuid.UUID(chat_id)
    except ValueError:
        parsed = None
    if parsed is not None and len(chat_id) == 36:
        return str(parsed)
    return str(uuid.uuid5(_CHAT_NAMESPACE, chat_id))


class ChatTranslator:
    """Turns one request's frames into UI message stream parts, in order."""

    def __init__(self) -> None:
        self._text_id: str | None = None
        self._reasoning_id: str | None = None
        self._blocks = 0
        self._tools = 0
        self._streamed_text = False
        self._finished = False

    @property
    def finished(self) -> bool:
        """True once the finish part was produced."""
        return self._finished

    def start(self, ack: StreamAck) -> list[Part]:
        """The opening parts: the message id is the request id."""
        metadata = {
            "request_id": ack.request_id,
            "session_id": ack.session_id,
            "interaction_id": ack.interaction_id,
        }
        if ack.run_id:
            metadata["run_id"] = ack.run_id
        return [
            {"type": "start", "messageId": ack.request_id, "messageMetadata": metadata},
            {"type": "start-step"},
        ]

    def frame(self, frame: StreamChunk) -> list[Part]:
        """The parts of one frame (none for placeholder and thinking frames, nor for the frames
        of a child run: a called agent's answer reaches the message as the caller's tool
        result)."""
        if self._finished or frame.parent_run_id:
            return []
        if frame.type == "chunk":
            return self._chunk(frame)
        if frame.type == "tool":
            return self._tool(frame)
        if frame.type == "done":
            return self._done(frame.result)
        if frame.type == "error":
            code = frame.error_code or "BEM-087"
            return self.error(f"{code}: {frame.error or 'the agent failed'}")
        return []

    def error(self, text: str) -> list[Part]:
        """An error part and the finish that ends the message."""
        if self._finished:
            return []
        self._finished = True
        return [
            *self._close(),
            {"type": "error", "errorText": text},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "error"},
        ]

    # ---- internals ----------------------------------------------------------------------------
    def _new_id(self, kind: str) -> str:
        self._blocks += 1
        return f"{kind}-{self._blocks}"

    def _close(self) -> list[Part]:
        parts: list[Part] = []
        if self._reasoning_id is not None:
            parts.append({"type": "reasoning-end", "id": self._reasoning_id})
            self._reasoning_id = None
        if self._text_id is not None:
            parts.append({"type": "text-end", "id": self._text_id})
            self._text_id = None
        return parts

    def _text(self, delta: str) -> list[Part]:
        parts: list[Part] = []
        if self._reasoning_id is not None:
            parts.append({"type": "reasoning-end", "id": self._reasoning_id})
            self._reasoning_id = None
        if self._text_id is None:
            self._text_id = self._new_id("text")
            parts.append({"type": "text-start", "id": self._text_id})
        parts.append({"type": "text-delta", "id": self._text_id, "delta": delta})
        self._streamed_text = True
        return parts

    def _reasoning(self, delta: str) -> list[Part]:
        parts: list[Part] = []
        if self._text_id is not None:
            parts.append({"type": "text-end", "id": self._text_id})
            self._text_id = None
        if self._reasoning_id is None:
            self._reasoning_id = self._new_id("reasoning")
            parts.append({"type": "reasoning-start", "id": self._reasoning_id})
        parts.append({"type": "reasoning-delta", "id": self._reasoning_id, "delta": delta})
        return parts

    def _chunk(self, frame: StreamChunk) -> list[Part]:
        if frame.data is None:
            return []
        parts: list[Part] = []
        for content in frame.data.content:
            if not content.text:
                continue
            if content.type == "reasoning" or frame.data.phase == "thinking":
                parts += self._reasoning(content.text)
            elif content.type == "text":
                parts += self._text(content.text)
        return parts

    def _tool_call_id(self, given: str | None, name: str | None) -> str:
        if given:
            return given
        self._tools += 1
        return f"call-{name or 'tool'}-{self._tools}"

    def _tool(self, frame: StreamChunk) -> list[Part]:
        data = frame.data
        if data is None or not data.tool_name:
            return []
        if data.role == "tool" or data.type == "tool_result":
            return [
                *self._close(),
                {
                    "type": "tool-output-available",
                    "toolCallId": self._tool_call_id(data.tool_call_id, data.tool_name),
                    "output": data.tool_result,
                },
            ]
        return [
            *self._close(),
            {
                "type": "tool-input-available",
                "toolCallId": self._tool_call_id(data.tool_call_id, data.tool_name),
                "toolName": data.tool_name,
                "input": dict(data.tool_args or {}),
            },
        ]

    def _done(self, result: AgentResult | None) -> list[Part]:
        self._finished = True
        parts: list[Part] = []
        if result is not None and not self._streamed_text and result.text:
            parts += self._text(result.text)  # an agent that streamed no chunk: its reply
        parts += self._close()
        metadata: dict[str, Any] = {}
        if result is not None:
            for action in result.action_required:
                parts.append(
                    {
                        "type": "data-approval",
                        "id": action.action_id,
                        "data": {
                            **action.to_json_dict(),
                            "session_id": result.session_id,
                            "interaction_id": result.interaction_id,
                        },
                    }
                )
            metadata = {
                k: v
                for k, v in {
                    "model_used": result.model_used,
                    "token_usage": result.token_usage.to_json_dict()
                    if result.token_usage
                    else None,
                    "interrupted": result.interrupted,
                    "run_id": result.run_id,
                    "interaction_id": result.interaction_id,
                    "session_id": result.session_id,
                    "request_id": result.request_id,
                }.items()
                if v is not None
            }
        interrupted = result is not None and result.interrupted
        parts.append({"type": "finish-step"})
        parts.append(
            {
                "type": "finish",
                "finishReason": "tool-calls" if interrupted else "stop",
                "messageMetadata": metadata,
            }
        )
        return parts
