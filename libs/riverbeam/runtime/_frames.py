"""Watching an agent's frames: correlation ids, partial text and unanswered tool calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from riverbeam.core.ids import agent_id_for
from riverbeam.types import AgentMessage, StreamChunk, ToolCallRecord
from riverbeam.types._copying import updated_copy

__all__ = ["FrameTracker", "OpenToolCall", "stamp"]


def stamp(
    frame: StreamChunk,
    *,
    agent_name: str,
    session_id: str,
    interaction_id: str,
    run_id: str,
    request_id: str,
) -> StreamChunk:
    """Fill the correlation ids the pipeline knows and the agent may have left out."""
    updates: dict[str, Any] = {"request_id": request_id}
    for name, value in (
        ("agent_name", agent_name),
        ("agent_id", agent_id_for(agent_name)),
        ("session_id", session_id),
        ("interaction_id", interaction_id),
        ("run_id", run_id),
    ):
        if getattr(frame, name) is None:
            updates[name] = value
    if frame.timestamp is None:
        updates["timestamp"] = datetime.now(UTC)
    return updated_copy(frame, updates)


@dataclass(slots=True)
class OpenToolCall:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    started_at: datetime | None = None


@dataclass(slots=True)
class FrameTracker:
    """What a run has said so far; read when a run is cancelled or fails part way.

    `open_calls` are calls announced without an answer yet; `finished_calls` are the calls
    that were answered, so a run that does not reach its done frame still records them.
    """

    text: list[str] = field(default_factory=list)
    open_calls: dict[str, OpenToolCall] = field(default_factory=dict)
    finished_calls: list[ToolCallRecord] = field(default_factory=list)
    frames: int = 0

    def observe(self, frame: StreamChunk) -> None:
        self.frames += 1
        data: AgentMessage | None = frame.data
        if data is None:
            return
        if frame.type == "chunk" and data.phase != "thinking":
            self.text.append(data.text)
        elif frame.type == "tool" and data.tool_call_id:
            if data.type == "action":
                self.open_calls[data.tool_call_id] = OpenToolCall(
                    data.tool_call_id,
                    data.tool_name or "",
                    dict(data.tool_args or {}),
                    data.timestamp or frame.timestamp,
                )
            elif data.type == "tool_result":
                self._answered(frame, data, self.open_calls.pop(data.tool_call_id, None))

    def _answered(self, frame: StreamChunk, data: AgentMessage, call: OpenToolCall | None) -> None:
        name = data.tool_name or (call.tool_name if call else "")
        if not name:
            return
        ended = data.timestamp or frame.timestamp
        latency_ms: float | None = None
        if call is not None and call.started_at is not None and ended is not None:
            latency_ms = max((ended - call.started_at).total_seconds() * 1000, 0.0)
        self.finished_calls.append(
            ToolCallRecord(
                tool_name=name,
                args=call.args if call else dict(data.tool_args or {}),
                tool_call_id=data.tool_call_id,
                result=data.tool_result,
                latency_ms=latency_ms,
            )
        )

    @property
    def partial_text(self) -> str:
        return "".join(self.text)
