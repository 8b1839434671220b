"""Frames for sink tests: a text chunk, a done frame and an error frame, unnumbered."""

from __future__ import annotations

from riverbeam.types import AgentMessage, AgentResult, ContentPart, StreamChunk

__all__ = ["chunk", "done", "error"]


def chunk(text: str) -> StreamChunk:
    return StreamChunk(
        type="chunk", data=AgentMessage(role="ai", content=[ContentPart.of_text(text)])
    )


def done() -> StreamChunk:
    return StreamChunk(type="done", result=AgentResult(agent_name="echo"))


def error() -> StreamChunk:
    return StreamChunk(type="error", error="boom")
