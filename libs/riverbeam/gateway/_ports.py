"""What the gateway needs from the rest of the system."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from riverbeam.runtime import Grant, RunnerReply
from riverbeam.types import (
    AgentMetadata,
    AgentResult,
    InvokeRequest,
    ModelConfig,
    ResumePayload,
    Run,
    Session,
    StreamAck,
    StreamChunk,
)

__all__ = [
    "FramesPort",
    "FramesSubscription",
    "RelayingRunner",
    "RunWithSessionReads",
    "RunnerPort",
    "SubscribingFrames",
]


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


@runtime_checkable
class RelayingRunner(Protocol):
    """A RunnerPort whose invoke answer can be handed on as it came off the wire
    (RunnerClient), unconverted.

    `wire` is the caller's InvokeRequest message that `request` was read from, when the
    caller has it, and `replaced` the fields of `request` set anew since then: the runner may
    be sent the message with those fields written over, instead of `request` converted again.
    """

    async def run_invoke_reply(
        self,
        request: InvokeRequest,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
        wire: Any | None = None,
        replaced: frozenset[str] = frozenset(),
    ) -> RunnerReply: ...


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


class FramesSubscription(Protocol):
    """A request's frames, subscribed to before the follower knew how long to wait for them."""

    def frames(
        self, *, after_seq: int, idle_timeout_s: float | None, wait_for_start_s: float | None
    ) -> AsyncIterator[StreamChunk]:
        """As FramesPort.follow, on this subscription (which the follow owns from then on)."""
        ...

    async def aclose(self) -> None:
        """Remove the subscription unless a follow of it already did (idempotent)."""
        ...


@runtime_checkable
class SubscribingFrames(Protocol):
    """A FramesPort that can subscribe first and be told the waits later (JetStreamFrames)."""

    async def subscribe(self, request_id: str) -> FramesSubscription: ...


@runtime_checkable
class RunWithSessionReads(Protocol):
    """A store that reads a request's run and its session in one call (StoreClient)."""

    async def get_run_with_session(
        self, *, request_id: str
    ) -> tuple[Run | None, Session | None]: ...
