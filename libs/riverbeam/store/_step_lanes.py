"""StoreClient's step lanes: BeginRun and FinishRun over long-lived RunSteps streams.

Each invoke makes two store steps. As unary calls each costs a call's setup on both sides
(bench 8: ~230 us of CPU and ~480 us at c1 on loopback); as messages on a stream that is
already open they cost a fraction of that, and steps queued while a write is in flight travel
as one message. The steps themselves do not change: the store carries out each as the unary
RPC's own step (one transaction, the same checks and errors), and a step's error comes back
as the same RiverbeamError.

- A lane is one open stream at a time. Steps go out in the order they were queued, each with
  a step id; results come back in any order and are matched by id.
- A stream is retired after `ROTATE_S` (new steps open its successor; it closes once its
  steps are answered), well inside the 30 s a server's max-connection-age grace leaves a
  stream, and so that several lanes keep spreading over store replicas.
- A caller waits `timeout_s` at most: then, as a unary call past its deadline, it gets
  BEM-120 (store unavailable) and the step's outcome is unknown. The server gives the step
  up too (the step carries the timeout).
- A stopping server ends the stream after answering every step it read (`drained_after`):
  the steps it did not read were not carried out, and go out again as unary calls (which
  reach another replica, or fail as any call to a stopping store does). A store without
  RunSteps (an older version) answers UNIMPLEMENTED: its steps, and every later one, go as
  unary calls.
- A stream that fails fails its unanswered steps with BEM-120, as a failed unary call does.
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
from typing import Any, Literal

import grpc
from google.rpc import status_pb2

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import error_from_rpc
from riverbeam.server._status import error_from_status
from riverbeam.store._step_wire import EOF, FIELDS, SERVICE, Outbox
from riverbeam.telemetry._steps import client_step_span
from riverbeam.v1 import store_service_pb2 as pb

__all__ = ["MAX_STEP_BYTES", "ROTATE_S", "StepKind", "StepLanes", "store_error"]

# The kind of a step is the name of its unary method (its field: _step_wire.FIELDS).
StepKind = Literal["BeginRun", "FinishRun"]

METHOD = f"/{SERVICE}/RunSteps"
ROTATE_S = 20.0
MAX_STEP_BYTES = 1024 * 1024
CLOSE_WAIT_S = 1.0
# Statuses a transport failure (no Riverbeam ErrorInfo) can carry: the store is unreachable.
_TRANSPORT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
_CODES = {code.value[0]: code for code in grpc.StatusCode}

Unary = Callable[[StepKind, Any], Awaitable[Any]]


def store_error(err: RiverbeamError, code: grpc.StatusCode | None) -> RiverbeamError:
    """A transport failure of a store call is BEM-120 (the store is unreachable)."""
    if err.transport and code in _TRANSPORT:
        return RiverbeamError(ErrorCode.STORE_UNAVAILABLE, err.message, **err.details)
    return err


def _deadline_passed() -> RiverbeamError:
    code = grpc.StatusCode.DEADLINE_EXCEEDED
    return store_error(error_from_status(code, "Deadline Exceeded", None, service="store"), code)


class _NotCarried(Exception):
    """The step was not carried out on this stream (drained, or RunSteps unknown): send it
    as a unary call."""


class _Stream:
    """One RunSteps call: its queued steps, its unanswered ones, a writer and a reader."""

    def __init__(self, channel: grpc.aio.Channel, *, wait_for_ready: bool) -> None:
        method = channel.stream_stream(
            METHOD,
            request_serializer=pb.RunStepsRequest.SerializeToString,
            response_deserializer=pb.RunStepsResponse.FromString,
        )
        self._call: Any = method(None, wait_for_ready=wait_for_ready)
        self.opened = time.monotonic()
        self._ids = itertools.count(1)
        self._batches = Outbox(pb.RunStepsRequest)
        self._waiting: dict[int, asyncio.Future[pb.RunStepResult]] = {}
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
        kind: StepKind,
        request: Any,
        size: int,
        timeout_s: float | None,
        trace_context: dict[str, str],
    ) -> int:
        """Queue a step (`size`: its request's ByteSize); returns its step id."""
        step_id = next(self._ids)
        batch = self._batches.room_for(size)
        step = batch.steps.add(step_id=step_id, timeout_s=timeout_s or 0.0)
        getattr(step, FIELDS[kind]).CopyFrom(request)
        if trace_context:
            step.trace_context.update(trace_context)
        self._waiting[step_id] = asyncio.get_running_loop().create_future()
        self._wake.set()
        return step_id

    def result(self, step_id: int) -> asyncio.Future[pb.RunStepResult]:
        return self._waiting[step_id]

    def forget(self, step_id: int) -> None:
        """A step whose caller stopped waiting: its result, if it comes, is dropped."""
        self._waiting.pop(step_id, None)
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
                if self._batches:
                    for batch in self._batches.take():
                        await self._call.write(batch)
                elif self._retired and not self._waiting:
                    await self._call.done_writing()
                    return
        except (grpc.RpcError, grpc.aio.BaseError, asyncio.InvalidStateError):
            return  # the call ended: the reader fails what is left

    async def _read(self) -> None:
        # Steps sent may have been carried out: only a refused call (UNIMPLEMENTED) or a
        # drain says they were not, and only those are sent again.
        failure: BaseException = RiverbeamError(
            ErrorCode.STORE_UNAVAILABLE, "the RunSteps stream was closed by this client"
        )
        try:
            while True:
                message = await self._call.read()
                if message is EOF:
                    failure = RiverbeamError(
                        ErrorCode.STORE_UNAVAILABLE, "store ended a RunSteps stream unanswered"
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
                failure = store_error(error_from_rpc(exc, service="store"), code)
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
        """End the call: with nothing unanswered, as a caller done sending (the store's side
        ends as it would for any finished stream; `CLOSE_WAIT_S` at most), else cancelled."""
        if not self.ended and not self._waiting:
            self.retire()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_WAIT_S):
                    await asyncio.shield(self._tasks[1])
        self.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class StepLanes:
    """BeginRun and FinishRun for a StoreClient, over `lanes` RunSteps streams in turn (none:
    every step a unary call).

    `unary(kind, request)` is the client's own unary call (looked up per call), for the steps
    a stream did not carry out.
    """

    def __init__(
        self, channel: grpc.aio.Channel, *, lanes: int, wait_for_ready: bool, unary: Unary
    ) -> None:
        self._channel = channel
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
        stream = self._lanes[lane] = _Stream(self._channel, wait_for_ready=self._wait_for_ready)
        return stream

    def _retire(self, stream: _Stream) -> None:
        stream.retire()
        self._retired.add(stream)
        for old in [s for s in self._retired if s.ended]:
            self._retired.discard(old)
            old.cancel()

    async def run(self, kind: StepKind, request: Any, timeout_s: float | None) -> Any:
        """The step's response message, or the RiverbeamError it ended with."""
        if self._unsupported or self._closed:
            return await self.unary(kind, request)
        size = request.ByteSize()
        if size > MAX_STEP_BYTES:
            return await self.unary(kind, request)
        trace_context: dict[str, str] = {}
        with client_step_span(SERVICE, kind, trace_context):
            stream = self._stream()
            step_id = stream.submit(kind, request, size, timeout_s, trace_context)
            try:
                async with asyncio.timeout(timeout_s):
                    result = await stream.result(step_id)
            except _NotCarried:
                if stream.unimplemented:
                    self._unsupported = True
                return await self.unary(kind, request)
            except TimeoutError:
                raise _deadline_passed() from None
            finally:
                stream.forget(step_id)
            outcome, field = result.WhichOneof("outcome"), FIELDS[kind]
            if outcome == "error":
                raise _step_error(result.error)
            if outcome != field:
                raise RiverbeamError(
                    ErrorCode.INTERNAL, f"store answered a {kind} step with {outcome}", step=kind
                )
            return getattr(result, field)

    async def aclose(self) -> None:
        self._closed = True
        streams = [s for s in self._lanes if s is not None] + list(self._retired)
        self._lanes = [None] * len(self._lanes)
        self._retired.clear()
        await asyncio.gather(*(stream.aclose() for stream in streams), return_exceptions=True)


def _step_error(error: pb.RunStepError) -> RiverbeamError:
    code = _CODES.get(error.code, grpc.StatusCode.UNKNOWN)
    status = None
    if error.status_details:
        status = status_pb2.Status.FromString(error.status_details)
    return store_error(error_from_status(code, error.message, status, service="store"), code)
