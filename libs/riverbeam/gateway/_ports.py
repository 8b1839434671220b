"""What the gateway needs from the rest of the system."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from riverbeam.runtime import Grant
from riverbeam.types import (
    AgentMetadata,
    AgentResult,
    InvokeRequest,
    ModelConfig,
    ResumePayload,
    StreamAck,
    StreamChunk,
)

__all__ = ["FramesPort", "RunnerPort"]


class RunnerPort(Protocol):
    """The runner service, remote (RunnerClient) or in process (LocalRunner)."""

    async def run_invoke(
        self,
        request: InvokeRequest,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
    ) -> AgentResult | StreamAck: ...

    async def run_resume(
        self,
        request: ResumePayload,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
    ) -> StreamAck: ...

    async def cancel_run(self, request_id: str, *, reason: str | None = None) -> bool: ...

    async def list_agents(self) -> list[AgentMetadata]: ...


class FramesPort(Protocol):
    """Reads a request's frames: replay after a cursor, follow live, end after done/error."""

    def follow(
        self,
        request_id: str,
        *,
        after_seq: int = 0,
        idle_timeout_s: float | None = None,
        wait_for_start_s: float | None = None,
    ) -> AsyncIterator[StreamChunk]:
        """Frames after `after_seq`; BEM-113 after `idle_timeout_s` without a frame, BEM-111
        when no frame is stored within `wait_for_start_s` (None: the port's default)."""
        ...

    async def last_frame(self, request_id: str) -> StreamChunk | None:
        """The latest frame stored for the request, or None when none is stored."""
        ...
