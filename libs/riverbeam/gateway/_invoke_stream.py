"""InvokeStream and ResumeStream: run (or resume) an agent and relay its frames in the same call.

Invoke with stream = true, then FollowStream, costs a caller who reads frames over gRPC a
second call, and its JetStream consumer is made only once that call arrives, after the run
began. Here the request's consumer is made while the invoke goes to the runner (the request
id is known before: the caller's, or one chosen here), so the frames are waiting when the
StreamAck is. The caller's use of the session is the invoke's own check (the begin-run step):
nothing more is read before relaying. Ending the call stops the relay, not the run (Cancel
stops the run), as for FollowStream.

ResumeStream is the same for Resume, with one difference: an approver may resume a session it
may not read, so the relay checks what FollowStream would check after that Resume (a grant
for a caller who may read the session, the approval rule otherwise).
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

from riverbeam.auth import Principal
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.gateway._early import discard_early, subscribe_early, subscribed_early
from riverbeam.gateway._follow import StreamFollowing
from riverbeam.runtime import RunnerReply
from riverbeam.types import AgentResult, InvokeRequest, ResumePayload, StreamAck, StreamChunk

__all__ = ["InvokeStreaming", "stream_request"]


def stream_request(wire: Any) -> Any:
    """The InvokeRequest message of an InvokeStream, made a streaming one with a request id:
    `stream` set, and a new request id when the caller gave none (the relay must know it
    before the runner answers). Changed in place; returned for convenience."""
    wire.stream = True
    if not wire.request_id:
        wire.request_id = new_id()
    return wire


class InvokeStreaming(StreamFollowing):
    """The invoke-and-follow and resume-and-follow half of the Gateway (a mixin: the Gateway
    provides `invoke_relayed` and `resume`)."""

    @abc.abstractmethod
    async def invoke_relayed(
        self,
        principal: Principal,
        request: InvokeRequest,
        *,
        timeout_s: float | None = None,
        wire: Any | None = None,
    ) -> AgentResult | StreamAck | RunnerReply: ...

    async def invoke_stream(
        self,
        principal: Principal,
        request: InvokeRequest,
        *,
        timeout_s: float | None = None,
        wire: Any | None = None,
    ) -> AsyncIterator[Any | StreamAck | StreamChunk]:
        """The request's StreamAck (its protobuf message when a runner sent one, else a
        StreamAck), then its frames until the terminal one.

        `request` must be a streaming request with its request id (stream_request).

        Raises:
            RiverbeamError: STREAM_NOT_FOUND when this router has no stream access (before
                anything runs); whatever Invoke raises; what FollowStream's relay raises.
        """
        if self._frames is None:
            raise RiverbeamError(ErrorCode.STREAM_NOT_FOUND, "this router has no stream access")
        if not request.stream or not request.request_id:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT,
                "InvokeStream runs a streaming request with its request id",
                field="request_id",
            )
        request_id = request.request_id

        async def begin() -> tuple[Any | StreamAck, str]:
            reply = await self.invoke_relayed(principal, request, timeout_s=timeout_s, wire=wire)
            return await self._ack_of(reply, request_id)

        async with contextlib.aclosing(self._begun_and_relayed(request_id, begin)) as events:
            async for event in events:
                yield event

    @abc.abstractmethod
    async def resume(
        self, principal: Principal, payload: ResumePayload, *, timeout_s: float | None = None
    ) -> StreamAck: ...

    async def resume_stream(
        self, principal: Principal, payload: ResumePayload, *, timeout_s: float | None = None
    ) -> AsyncIterator[StreamAck | StreamChunk]:
        """The resumed request's StreamAck, then its frames until the terminal one.

        Raises:
            RiverbeamError: STREAM_NOT_FOUND when this router has no stream access (before
                anything runs); whatever Resume raises; what FollowStream raises, its access
                check included (the run then goes on: only the relay is refused).
        """
        if self._frames is None:
            raise RiverbeamError(ErrorCode.STREAM_NOT_FOUND, "this router has no stream access")
        if payload.request_id is None:
            payload = payload.model_copy(update={"request_id": new_id()})
        request_id = payload.request_id
        assert request_id is not None

        async def begin() -> tuple[StreamAck, str]:
            ack = await self.resume(principal, payload, timeout_s=timeout_s)
            granted = self._grants.lookup(principal, request_id)
            if granted is not None:
                return ack, granted.run_id
            run, session = await self._request_run_with_session(request_id)
            return ack, (await self._may_reach(principal, run, session)).run_id

        async with contextlib.aclosing(self._begun_and_relayed(request_id, begin)) as events:
            async for event in events:
                yield event

    async def _begun_and_relayed(
        self, request_id: str, begin: Callable[[], Awaitable[tuple[Any, str]]]
    ) -> AsyncGenerator[Any, None]:
        """The ack `begin()` gives (with the run's id), then the request's frames.

        The request's consumer is made while `begin` runs; a `begin` that raises removes it.
        """
        assert self._frames is not None
        early = subscribe_early(self._frames, request_id, after_a_turn=False)
        try:
            ack, run_id = await begin()
            subscribed = await subscribed_early(early)
        except BaseException:
            await discard_early(early)
            raise
        try:
            yield ack
            async with contextlib.aclosing(
                self._relay(request_id, run_id, True, 0, subscribed)
            ) as relay:
                async for frame in relay:
                    yield frame
        finally:
            if subscribed is not None:
                await subscribed.aclose()

    async def _ack_of(
        self, reply: AgentResult | StreamAck | RunnerReply, request_id: str
    ) -> tuple[Any | StreamAck, str]:
        """The ack to hand on and the run's id (read from the record if the ack lacks it)."""
        if isinstance(reply, RunnerReply):
            message = reply.ack
            if message is None:
                raise _not_streamed(request_id)
            if message.HasField("run_id"):
                return message, str(message.run_id)
            return message, (await self._request_run(request_id)).run_id
        if not isinstance(reply, StreamAck):
            raise _not_streamed(request_id)
        return reply, reply.run_id or (await self._request_run(request_id)).run_id


def _not_streamed(request_id: str) -> RiverbeamError:
    # A streaming request is answered with a StreamAck; a lost runner's is BEM-034 (raised).
    return RiverbeamError(
        ErrorCode.INTERNAL,
        "the runner answered a streaming request with a result",
        request_id=request_id,
    )
