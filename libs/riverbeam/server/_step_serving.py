"""The server half of a step stream: each step read is carried out as its unary RPC would be.

A step runs as a task of its own, concurrently with the stream's other steps, through the
same servicer method as its unary RPC (the store's BeginRun or FinishRun: one transaction,
the same checks; the runner's RunInvoke); its error becomes the status a unary call would
have ended with (RunStepError), and it is counted in the same RPC metrics under the unary method's name. Results are written as they
finish: those finished while the previous write was in flight share a message, up to
`_step_wire.MAX_BATCH_BYTES` of them (a larger result goes alone, as large as its unary reply).

At most `max_in_flight` (MAX_IN_FLIGHT) steps of a stream run at once: the stream is read no further until one
ends. The stream ends when the caller has sent its last step and every step is answered; a
cancelled stream cancels its steps, as a cancelled unary call cancels its handler. `drain()`
(the server is stopping) makes every open stream stop taking steps: each says at once, in
`drained_after`, the id of the last step it read (steps after it are not carried out), answers
the steps it had read as they end, then ends. On a stream whose steps can be cancelled
(`StepWire.cancels`), a step id in the request's `cancelled` cancels that step's task, as a
cancelled unary call cancels its handler: it gets no result.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server._interceptor import CallRecorder, as_riverbeam, cancelled_of_its_own
from riverbeam.server._step_wire import EOF, Outbox, StepWire, step_error
from riverbeam.telemetry._steps import server_step_span
from riverbeam.v1 import store_service_pb2 as pb

__all__ = ["StepHandler", "StepServing"]

StepHandler = Callable[[Any], Awaitable[Any]]

_DEADLINE = grpc.StatusCode.DEADLINE_EXCEEDED.value[0]
_CANCELLED = grpc.StatusCode.CANCELLED.value[0]
# Steps of one stream carried out at once, at most; the stream is read on as they finish (a
# unary caller was bounded the same way by HTTP/2's concurrent streams per connection).
MAX_IN_FLIGHT = 100


class StepServing:
    """A step stream (`wire`) for a servicer whose `handlers` carry out each kind of step, by
    the step's field name."""

    def __init__(
        self,
        wire: StepWire,
        handlers: Mapping[str, StepHandler],
        *,
        max_in_flight: int | None = None,
    ) -> None:
        unknown = set(handlers) - set(wire.methods)
        if unknown:
            raise ValueError(f"no such step: {sorted(unknown)}")
        self.wire = wire
        self._max_in_flight = max_in_flight
        self._handlers = dict(handlers)
        self._methods = {kind: f"/{wire.service}/{wire.methods[kind]}" for kind in handlers}
        self._record = {k: CallRecorder(m, stream=False) for k, m in self._methods.items()}
        self._open: set[_StepStream] = set()
        self._draining = False

    def drain(self) -> None:
        """Stop taking steps on every open stream, and on any opened from now on."""
        self._draining = True
        for stream in list(self._open):
            stream.wake.set()

    @property
    def max_in_flight(self) -> int:
        return MAX_IN_FLIGHT if self._max_in_flight is None else self._max_in_flight

    @property
    def draining(self) -> bool:
        return self._draining

    async def serve(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Serve one stream call until its caller is done, it is cancelled, or drain()."""
        stream = _StepStream(self, context)
        self._open.add(stream)
        try:
            await stream.serve()
        finally:
            self._open.discard(stream)

    async def run(self, step: Any) -> tuple[str, Any]:
        """Carry out one step: (its field, e.g. "begin_run", and its response), or ("error",
        the RunStepError it ended with)."""
        kind = step.WhichOneof("step")
        handler = self._handlers.get(kind or "")
        if kind is None or handler is None:
            names = " or ".join(sorted(self._handlers))
            err = RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, f"a {self.wire.method} step is one of: {names}"
            )
            return "error", step_error(err)
        started = time.perf_counter()
        deadline = asyncio.timeout(step.timeout_s or None)
        try:
            with server_step_span(self.wire.service, self.wire.methods[kind], step.trace_context):
                async with deadline:
                    reply = await handler(getattr(step, kind))
        except asyncio.CancelledError as exc:
            self._record[kind]("CANCELLED", started)  # as a cancelled unary call
            if not cancelled_of_its_own(exc):
                raise  # this step was cancelled (by its caller, or with its stream)
            # A CancelledError the handler raised of its own (an awaited task was cancelled):
            # a unary call ends CANCELLED then, and so does the step, rather than get no
            # answer at all.
            return "error", pb.RunStepError(code=_CANCELLED, message="handler cancelled")
        except Exception as exc:
            if isinstance(exc, TimeoutError) and deadline.expired():
                # As a unary call past its deadline: the handler is cancelled, the caller gone.
                self._record[kind]("CANCELLED", started)
                return "error", pb.RunStepError(code=_DEADLINE, message="Deadline Exceeded")
            err = as_riverbeam(exc, self._methods[kind])
            self._record[kind](err.bem, started)
            return "error", step_error(err)
        self._record[kind]("OK", started)
        return kind, reply


class _StepStream:
    """One step stream call being served."""

    def __init__(self, serving: StepServing, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self._serving = serving
        self._context = context
        self.wake = asyncio.Event()
        self._outbox: Outbox[Any] = Outbox(serving.wire.response)
        self._cancels = serving.wire.cancels
        self._running: dict[int, asyncio.Task[None]] = {}
        self._slots = asyncio.Semaphore(serving.max_in_flight)
        self._last_read = 0
        self._caller_done = False

    async def serve(self) -> None:
        reader = asyncio.create_task(self._read())
        told = False
        try:
            while True:
                await self.wake.wait()
                await asyncio.sleep(0)  # results finished in this turn join the message
                self.wake.clear()
                if self._serving.draining and not told:
                    # Said at once, not when the steps running end (a run may take minutes):
                    # the caller sends what it queued since elsewhere. No step is read once
                    # draining is set, so the last one read is final.
                    self._outbox.last().drained_after = self._last_read
                    told = True
                stopping = self._serving.draining or self._caller_done
                if stopping and not self._running:
                    break
                await self._flush()
            await self._flush()
        finally:
            reader.cancel()
            for task in self._running.values():
                task.cancel()
            await asyncio.gather(reader, *self._running.values(), return_exceptions=True)

    async def _flush(self) -> None:
        for message in self._outbox.take():
            await self._context.write(message)

    async def _read(self) -> None:
        try:
            while True:
                message = await self._context.read()
                if message is EOF:
                    return
                for step in message.steps:
                    if not self._serving.draining:
                        await self._slots.acquire()
                    if self._serving.draining:  # not read: above drained_after
                        self.wake.set()
                        break
                    self._last_read = step_id = step.step_id
                    task = asyncio.create_task(self._run(step))
                    self._running[step_id] = task
                    task.add_done_callback(functools.partial(self._ended, step_id))
                # Read on while draining too: a caller may still cancel what is running.
                if self._cancels:
                    for step_id in message.cancelled:
                        running = self._running.get(step_id)
                        if running is not None:
                            running.cancel()
        finally:
            self._caller_done = not self._serving.draining
            self.wake.set()

    def _ended(self, step_id: int, task: asyncio.Task[None]) -> None:
        # A done callback, not a `finally`: a task cancelled before it started runs no code.
        if self._running.get(step_id) is task:
            del self._running[step_id]
        self._slots.release()
        self.wake.set()

    async def _run(self, step: Any) -> None:
        field, message = await self._serving.run(step)
        # Added only now: a result in the message being filled is written with it.
        results = self._outbox.room_for(message.ByteSize()).results
        getattr(results.add(step_id=step.step_id), field).CopyFrom(message)
        self.wake.set()
