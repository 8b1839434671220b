"""A client's step lanes: one service's unary steps over long-lived step streams.

The runner's BeginRun and FinishRun go to the store on RunSteps streams, the router's
RunInvoke calls to the runner on RunInvokes (server/_step_wire.py names both). As unary calls
each costs a call's setup on both sides (bench 8: ~230 us of CPU and ~480 us at c1 on
loopback); as messages on a stream that is already open they cost a fraction of that, and
steps queued while a write is in flight travel as one message. The steps themselves do not
change: the server carries out each as the unary RPC's own handler (the same checks and
errors), and a step's error comes back as the same RiverbeamError.

- A lane is one open stream at a time. Steps go out in the order they were queued, each with
  a step id; results come back in any order and are matched by id.
- A stream is retired after `ROTATE_S` (new steps open its successor; it closes once its
  steps are answered), so that new steps move off a connection the server has aged out
  (RIVERBEAM_MAX_CONNECTION_AGE_S) and several lanes keep spreading over a service's
  replicas.
- A caller waits `timeout_s` at most: then, as a unary call past its deadline, it gets the
  error of a DEADLINE_EXCEEDED call and the step's outcome is unknown. The server gives the
  step up too (the step carries the timeout).
- A caller that stops waiting (its task is cancelled) forgets its step; on a stream whose
  steps can be cancelled (`StepWire.cancels`) it also sends the step's id in `cancelled`,
  and the server cancels the step as it would a cancelled unary call's handler.
- A stopping server says at once which steps it read (`drained_after`), answers those as they
  end, then ends the stream: the steps it did not read were not carried out, and go out again
  as unary calls at once (which reach another replica, or fail as any call to a stopping
  server does), not after the steps it is still running. A server without
  the stream method (an older version) answers UNIMPLEMENTED: its steps, and every later
  one, go as unary calls.
- A stream that fails fails its unanswered steps with the error of an UNAVAILABLE call, as a
  unary call cut off in flight does.
- A step larger than `MAX_STEP_BYTES` goes as a unary call, and a message holds steps of
  at most `_step_wire.MAX_BATCH_BYTES` together, so that every message stays far below the
  size limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server._status import error_from_rpc
from riverbeam.server._step_wire import EOF, Outbox, StepWire
from riverbeam.telemetry._steps import client_step_span

__all__ = ["MAX_STEP_BYTES", "ROTATE_S", "StepLanes"]

ROTATE_S = 20.0
MAX_STEP_BYTES = 1024 * 1024
CLOSE_WAIT_S = 1.0

# A step's unary call: (kind, request, timeout_s) -> its response message.
Unary = Callable[[str, Any, float | None], Awaitable[Any]]


class _NotCarried(Exception):
    """The step was not carried out on this stream (drained, or the method unknown): send it
    as a unary call."""


class _Stream:
    """One step stream call: its queued steps, its unanswered ones, a writer and a reader."""

    def __init__(self, channel: grpc.aio.Channel, wire: StepWire, *, wait_for_ready: bool) -> None:
        method = channel.stream_stream(
            wire.path,
            request_serializer=wire.request.SerializeToString,
            response_deserializer=wire.response.FromString,
        )
        self._wire = wire
        self._call: Any = method(None, wait_for_ready=wait_for_ready)
        self.opened = time.monotonic()
        self._ids = itertools.count(1)
        self._batches: Outbox[Any] = Outbox(wire.request)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._cancelled: list[int] = []
        self._wake = asyncio.Event()
        self._retired = False
        self._drained_after: int | None = None
        self.ended = False
        self.unimplemented = False
        self._tasks = (asyncio.create_task(self._write()), asyncio.create_task(self._read()))

    @property
    def open(self) -> bool:
        return not (self.ended or self._retired or self._drained_after is not None)

    def submit(
        self,
        kind: str,
        request: Any,
        size: int,
        timeout_s: float | None,
        trace_context: dict[str, str],
    ) -> int:
        """Queue a step (`size`: its request's ByteSize); returns its step id."""
        step_id = next(self._ids)
        batch = self._batches.room_for(size)
        step = batch.steps.add(step_id=step_id, timeout_s=timeout_s or 0.0)
        getattr(step, self._wire.fields[kind]).CopyFrom(request)
        if trace_context:
            step.trace_context.update(trace_context)
        self._waiting[step_id] = asyncio.get_running_loop().create_future()
        self._wake.set()
        return step_id

    def result(self, step_id: int) -> asyncio.Future[Any]:
        return self._waiting[step_id]

    def forget(self, step_id: int, *, cancel: bool = False) -> None:
        """A step whose caller stopped waiting: its result, if it comes, is dropped. With
        `cancel`, on a stream whose steps can be cancelled, the server is told to cancel it
        (unless it was already answered)."""
        unanswered = self._waiting.pop(step_id, None)
        if cancel and self._wire.cancels and unanswered is not None and not self.ended:
            self._cancelled.append(step_id)
            self._wake.set()
        if self._retired:
            self._wake.set()

    def retire(self) -> None:
        """Take no more steps; close once every step sent is answered."""
        self._retired = True
        self._wake.set()

    async def _write(self) -> None:
        try:
            while True:
                await self._wake.wait()
                # One turn of the loop first: steps other tasks make in this turn join the
                # message (32 clients' pairs to a store process: 404 -> 294 us a pair in the
                # store, 340 -> 231 in the client); a turn of an idle loop is microseconds.
                await asyncio.sleep(0)
                self._wake.clear()
                if self._cancelled:
                    # After the steps before it: a step cancelled in the turn it was queued
                    # is read, then cancelled.
                    self._batches.last().cancelled.extend(self._cancelled)
                    self._cancelled.clear()
                for batch in self._batches.take():
                    await self._call.write(batch)
                # A retired stream ends once nothing is unanswered or left to send (its last
                # step may have been cancelled just now: no result will wake this writer).
                if self._retired and not (self._waiting or self._batches or self._cancelled):
                    await self._call.done_writing()
                    return
        except (grpc.RpcError, grpc.aio.BaseError, asyncio.InvalidStateError):
            return  # the call ended: the reader fails what is left

    async def _read(self) -> None:
        # Steps sent may have been carried out: only a refused call (UNIMPLEMENTED) or a
        # drain says they were not, and only those are sent again.
        wire = self._wire
        unavailable = grpc.StatusCode.UNAVAILABLE
        failure: BaseException = wire.error(
            unavailable, f"the {wire.method} stream was closed by this client"
        )
        try:
            while True:
                message = await self._call.read()
                if message is EOF:
                    failure = wire.error(
                        unavailable, f"{wire.label} ended a {wire.method} stream unanswered"
                    )
                    return
                for result in message.results:
                    waiting = self._waiting.pop(result.step_id, None)
                    if waiting is not None and not waiting.done():
                        waiting.set_result(result)
                if message.HasField("drained_after"):
                    self._drained_after = message.drained_after
                    self._fail_above(message.drained_after, _NotCarried())
                if self._retired and not self._waiting:
                    self._wake.set()
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.aio.AioRpcError) else None
            if code is grpc.StatusCode.UNIMPLEMENTED:
                self.unimplemented = True
                failure = _NotCarried()
            else:
                failure = wire.translate(error_from_rpc(exc, service=wire.label), code)
        finally:
            self.ended = True
            if self._drained_after is not None:  # steps sent after the server stopped reading
                self._fail_above(self._drained_after, _NotCarried())
            self._fail_above(0, failure)
            self._wake.set()

    def _fail_above(self, step_id: int, exc: BaseException) -> None:
        for waiting_id in [i for i in self._waiting if i > step_id]:
            waiting = self._waiting.pop(waiting_id)
            if not waiting.done():
                waiting.set_exception(exc)

    def cancel(self) -> None:
        self._call.cancel()
        for task in self._tasks:
            task.cancel()

    async def aclose(self) -> None:
        """End the call: with nothing unanswered, as a caller done sending (the server's side
        ends as it would for any finished stream; `CLOSE_WAIT_S` at most), else cancelled."""
        if not self.ended and not self._waiting:
            self.retire()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_WAIT_S):
                    await asyncio.shield(self._tasks[1])
        self.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class StepLanes:
    """A client's steps of one step stream (`wire`), over `lanes` streams in turn (none:
    every step a unary call).

    `unary(kind, request, timeout_s)` is the client's own unary call (looked up per call),
    for the steps a stream did not carry out.
    """

    def __init__(
        self,
        channel: grpc.aio.Channel,
        wire: StepWire,
        *,
        lanes: int,
        wait_for_ready: bool,
        unary: Unary,
    ) -> None:
        self._channel = channel
        self._wire = wire
        self._wait_for_ready = wait_for_ready
        self.unary = unary
        self._lanes: list[_Stream | None] = [None] * max(lanes, 1)
        self._turn = itertools.cycle(range(len(self._lanes)))
        self._retired: set[_Stream] = set()
        self._unsupported = lanes <= 0
        self._closed = False

    def _stream(self) -> _Stream:
        lane = next(self._turn)
        stream = self._lanes[lane]
        if stream is not None and stream.open and time.monotonic() - stream.opened < ROTATE_S:
            return stream
        if stream is not None:
            self._retire(stream)
        stream = _Stream(self._channel, self._wire, wait_for_ready=self._wait_for_ready)
        self._lanes[lane] = stream
        return stream

    def _retire(self, stream: _Stream) -> None:
        stream.retire()
        self._retired.add(stream)
        for old in [s for s in self._retired if s.ended]:
            self._retired.discard(old)
            old.cancel()

    async def run(self, kind: str, request: Any, timeout_s: float | None) -> Any:
        """The step's response message, or the RiverbeamError it ended with."""
        if self._unsupported or self._closed:
            return await self.unary(kind, request, timeout_s)
        size = request.ByteSize()
        if size > MAX_STEP_BYTES:
            return await self.unary(kind, request, timeout_s)
        wire = self._wire
        trace_context: dict[str, str] = {}
        with client_step_span(wire.service, kind, trace_context):
            stream = self._stream()
            step_id = stream.submit(kind, request, size, timeout_s, trace_context)
            stopped = True  # the caller stopped waiting (cancelled, or out of time)
            try:
                async with asyncio.timeout(timeout_s):
                    result = await stream.result(step_id)
                stopped = False
            except _NotCarried:
                stopped = False
                if stream.unimplemented:
                    self._unsupported = True
                return await self.unary(kind, request, timeout_s)
            except TimeoutError:
                raise wire.error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded") from None
            except RiverbeamError:
                stopped = False
                raise
            finally:
                stream.forget(step_id, cancel=stopped)
            outcome, field = result.WhichOneof("outcome"), wire.fields[kind]
            if outcome == "error":
                raise wire.error_of(result.error)
            if outcome != field:
                raise RiverbeamError(
                    ErrorCode.INTERNAL,
                    f"{wire.label} answered a {kind} step with {outcome}",
                    step=kind,
                )
            return getattr(result, field)

    async def aclose(self) -> None:
        self._closed = True
        streams = [s for s in self._lanes if s is not None] + list(self._retired)
        self._lanes = [None] * len(self._lanes)
        self._retired.clear()
        await asyncio.gather(*(stream.aclose() for stream in streams), return_exceptions=True)
