"""Where an agent called by another agent is recorded: the ChildRunHost protocol.

The pipeline gives each run a host (AgentContext.child_runs). A called agent (AgentTool, a
crew step, a handoff target) then runs as a child run: a run record of its own, linked to
the calling run by parent_run_id and fenced by the caller's lease; its frames go out on the
caller's stream, marked with its own agent_name and run_id and with parent_run_id set; its
token usage is recorded on it and added to the caller's. Without a host (an agent run
outside the pipeline) the called agent runs the same way with nothing recorded.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from riverbeam.core.errors import RiverbeamError
from riverbeam.types import AgentResult, StreamChunk, TokenUsage

__all__ = ["ChildRunHost", "ChildStatus"]

ChildStatus = Literal["completed", "failed", "interrupted", "cancelled"]


@runtime_checkable
class ChildRunHost(Protocol):
    """Records the child runs of one run (the pipeline's implementation is in runtime)."""

    @property
    def parent_run_id(self) -> str:
        """The run the children are linked to."""
        ...

    def nested(self, run_id: str) -> ChildRunHost:
        """The host for the children of the child run `run_id`."""
        ...

    async def begin(self, *, run_id: str, agent_name: str, agent_version: str | None) -> None:
        """Record the child run as running (BEM-035/121 once the caller lost its run)."""
        ...

    async def hand_off(self, *, agent_name: str, agent_version: str | None) -> None:
        """Record that the run's interaction now belongs to agent_name (a handoff)."""
        ...

    async def publish(self, frame: StreamChunk) -> None:
        """Put one of the child's frames on the caller's stream (never a terminal frame)."""
        ...

    async def finish(
        self,
        *,
        run_id: str,
        status: ChildStatus,
        usage: TokenUsage,
        result: AgentResult | None = None,
        error: RiverbeamError | None = None,
    ) -> None:
        """Record how the child run ended."""
        ...
