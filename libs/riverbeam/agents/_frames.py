"""Building the frames an agent emits, with the run's correlation ids filled in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from riverbeam.agents._io import AgentInput
from riverbeam.agents._plain_frames import done_frame, text_chunk
from riverbeam.core.errors import RiverbeamError
from riverbeam.core.ids import agent_id_for, new_id
from riverbeam.types import ActionPreview, AgentMessage, AgentResult, ContentPart, StreamChunk

__all__ = ["FrameFactory"]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class FrameFactory:
    """Makes the frames of one run.

    Every frame carries agent_name, agent_id, session_id, run_id and interaction_id; seq and
    request_id are left for the pipeline. Placeholder, chunk and done frames share one
    message_id: the id of the reply being built.
    """

    agent_name: str
    agent_id: str
    session_id: str | None
    run_id: str | None
    interaction_id: str | None
    message_id: str

    @classmethod
    def for_input(cls, agent_name: str, input: AgentInput) -> FrameFactory:
        """The factory for one request."""
        return cls(
            agent_name=agent_name,
            agent_id=agent_id_for(agent_name),
            session_id=input.session_id or None,
            run_id=input.run_id or None,
            interaction_id=input.interaction_id,
            message_id=new_id(),
        )

    def _frame(self, type: Any, **fields: Any) -> StreamChunk:
        return StreamChunk(
            type=type,
            agent_name=self.agent_name,
            agent_id=self.agent_id,
            session_id=self.session_id,
            run_id=self.run_id,
            interaction_id=self.interaction_id,
            timestamp=_now(),
            **fields,
        )

    def _message(self, role: Any, type: Any = "message", **fields: Any) -> AgentMessage:
        return AgentMessage(
            role=role,
            type=type,
            agent_name=self.agent_name,
            session_id=self.session_id,
            interaction_id=self.interaction_id,
            run_id=self.run_id,
            timestamp=_now(),
            **fields,
        )

    def placeholder(self) -> StreamChunk:
        """An empty ai message the reply will fill."""
        return self._frame(
            "placeholder", message_id=self.message_id, data=self._message("ai", id=self.message_id)
        )

    def thinking(self) -> StreamChunk:
        """The agent is working on it."""
        return self._frame(
            "thinking",
            message_id=self.message_id,
            data=self._message("ai", "step", id=self.message_id, phase="thinking"),
        )

    def chunk(self, text: str) -> StreamChunk:
        """A piece of the reply's text (is_delta: append it to what came before).

        Built directly when its values are plain (_plain_frames: one clock reading for the
        frame and its message), else validated."""
        frame = text_chunk(self, text, _now())
        return frame if frame is not None else self._validated_chunk(text)

    def _validated_chunk(self, text: str) -> StreamChunk:
        return self._frame(
            "chunk",
            message_id=self.message_id,
            data=self._message(
                "ai",
                id=self.message_id,
                content=[ContentPart.of_text(text)],
                is_delta=True,
                phase="final",
            ),
        )

    def tool_call(
        self,
        *,
        tool_call_id: str,
        tool_name: str,
        tool_args: dict[str, Any],
        text: str = "",
        preview: dict[str, Any] | None = None,
    ) -> StreamChunk:
        """The model's call of a tool, sent before the tool runs (or is held for approval, then
        with the call's preview when its tool has one)."""
        return self._frame(
            "tool",
            data=self._message(
                "ai",
                "action",
                id=new_id(),
                content=[ContentPart.of_text(text)] if text else [],
                tool_call_id=tool_call_id,
                tool_name=tool_name,
                tool_args=tool_args,
                preview=None if preview is None else ActionPreview.model_validate(preview),
            ),
        )

    def tool_result(self, *, tool_call_id: str, tool_name: str, tool_result: Any) -> StreamChunk:
        """What a tool call returned (or the error the model is shown), sent after it ran."""
        return self._frame(
            "tool",
            data=self._message(
                "tool",
                "tool_result",
                id=new_id(),
                tool_call_id=tool_call_id,
                tool_name=tool_name,
                tool_result=tool_result,
            ),
        )

    def done(self, result: AgentResult) -> StreamChunk:
        """The last frame of a run that finished (or paused for approval); built directly when
        its values are plain (_plain_frames), else validated."""
        frame = done_frame(self, result, _now())
        return frame if frame is not None else self._validated_done(result)

    def _validated_done(self, result: AgentResult) -> StreamChunk:
        return self._frame("done", message_id=self.message_id, result=result)

    def error(self, error: RiverbeamError, *, result: AgentResult | None = None) -> StreamChunk:
        """The last frame of a run that failed.

        `result` is what the run leaves (partial text, calls, usage, decisions): the pipeline
        records it on the run and publishes the frame without it.
        """
        return self._frame("error", error=error.message, error_code=error.bem, result=result)
