"""Frames for the stream tests."""

from __future__ import annotations

from riverbeam.types import AgentMessage, AgentResult, ContentPart, StreamChunk


def text_chunk(text: str) -> StreamChunk:
    return StreamChunk(
        type="chunk",
        data=AgentMessage(role="ai", content=[ContentPart.of_text(text)], is_delta=True),
        agent_name="echo",
    )


def done_frame(text: str = "done") -> StreamChunk:
    return StreamChunk(
        type="done",
        result=AgentResult(agent_name="echo", content=[ContentPart.of_text(text)]),
        agent_name="echo",
    )


def error_frame(message: str = "boom") -> StreamChunk:
    return StreamChunk(type="error", error=message, error_code="BEM-087", agent_name="echo")
