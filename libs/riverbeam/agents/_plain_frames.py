"""Chunk and done frames of plain values, built without validation passes.

Validating a chunk frame builds three models (the text part, the message, the frame): ~100k
instructions (callgrind), for every piece of every agent's reply; a done frame ~39k. Their
values are almost always plain (the factory's ids, a text, the time), so `text_chunk` and
`done_frame` build the same models directly, and answer None for anything else (a subclass,
a value of another type), which FrameFactory then validates, or refuses, as before.
tests/unit/agents/test_agents_plain_frames.py checks over generated factories and texts that
both build the same models (values, their order and types, fields set) and refuse the same.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from riverbeam.agents._plain_result import text_part
from riverbeam.types import AgentMessage, AgentResult, StreamChunk
from riverbeam.types._copying import field_defaults, model_of_valid

if TYPE_CHECKING:
    from riverbeam.agents._frames import FrameFactory

__all__ = ["done_frame", "text_chunk"]


_FRAME = field_defaults(StreamChunk)
_MESSAGE = field_defaults(AgentMessage)
_CHUNK_SET = frozenset(
    (
        "type",
        "agent_name",
        "agent_id",
        "session_id",
        "run_id",
        "interaction_id",
        "timestamp",
        "message_id",
        "data",
    )
)
_DONE_SET = frozenset((*_CHUNK_SET - {"data"}, "result"))
_MESSAGE_SET = frozenset(
    (
        "role",
        "type",
        "agent_name",
        "session_id",
        "interaction_id",
        "run_id",
        "timestamp",
        "id",
        "content",
        "is_delta",
        "phase",
    )
)


def _plain(frames: FrameFactory) -> bool:
    # What validation keeps as it is: exact str (or None where the field may be None). The
    # factory's message_id is a str field of the frame and the message's id.
    return (
        type(frames.agent_name) is str
        and type(frames.agent_id) is str
        and type(frames.message_id) is str
        and (frames.session_id is None or type(frames.session_id) is str)
        and (frames.run_id is None or type(frames.run_id) is str)
        and (frames.interaction_id is None or type(frames.interaction_id) is str)
    )


def _frame(frames: FrameFactory, kind: str, now: datetime, fields: frozenset[str]) -> StreamChunk:
    values = _FRAME.copy()
    values["type"] = kind
    values["agent_name"] = frames.agent_name
    values["agent_id"] = frames.agent_id
    values["session_id"] = frames.session_id
    values["interaction_id"] = frames.interaction_id
    values["run_id"] = frames.run_id
    values["message_id"] = frames.message_id
    values["timestamp"] = now
    return model_of_valid(StreamChunk, values, fields)


def text_chunk(frames: FrameFactory, text: str, now: datetime) -> StreamChunk | None:
    """`frames.chunk(text)` at `now`, built directly; None when a value is not plain."""
    if not (type(text) is str and _plain(frames)):
        return None
    values = _MESSAGE.copy()
    values["role"] = "ai"
    values["type"] = "message"
    values["content"] = [text_part(text)]
    values["id"] = frames.message_id
    values["timestamp"] = now
    values["agent_name"] = frames.agent_name
    values["session_id"] = frames.session_id
    values["interaction_id"] = frames.interaction_id
    values["run_id"] = frames.run_id
    values["tool_calls"] = []
    values["is_delta"] = True
    values["phase"] = "final"
    message = model_of_valid(AgentMessage, values, _MESSAGE_SET)
    frame = _frame(frames, "chunk", now, _CHUNK_SET)
    frame.__dict__["data"] = message
    return frame


def done_frame(frames: FrameFactory, result: AgentResult, now: datetime) -> StreamChunk | None:
    """`frames.done(result)` at `now`, built directly (an AgentResult itself is kept as it is,
    as validation keeps it); None when a value is not plain."""
    if not (type(result) is AgentResult and _plain(frames)):
        return None
    frame = _frame(frames, "done", now, _DONE_SET)
    frame.__dict__["result"] = result
    return frame
