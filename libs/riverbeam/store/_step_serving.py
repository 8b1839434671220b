"""The server half of RunSteps: each step read is carried out as its unary RPC would be.

A step runs as a task of its own, concurrently with the stream's other steps, through the
same servicer method as the unary BeginRun or FinishRun (one transaction, the same checks);
its error becomes the status a unary call would have ended with (RunStepError), and it is
counted in the same RPC metrics under the unary method's name. Results are written as they
finish: those finished while the previous write was in flight share a message, up to
`_step_wire.MAX_BATCH_BYTES` of them (a larger result goes alone, as large as its unary reply).

At most MAX_IN_FLIGHT steps of a stream run at once: the stream is read no further until one
ends. The stream ends when the caller has sent its last step and every step is answered; a
cancelled stream cancels its steps, as a cancelled unary call cancels its handler. `drain()`
(the server is stopping) makes every open stream stop taking steps: each answers the steps it
had read, then ends with `drained_after`, the id of the last step it read; steps read after
that are not carried out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server._interceptor import CallRecorder, as_riverbeam
from riverbeam.server._status import rich_status
from riverbeam.store._step_wire import EOF, METHODS, SERVICE, Outbox
from riverbeam.telemetry._steps import server_step_span
from riverbeam.v1 import store_service_pb2 as pb

__all__ = ["StepHandler", "StepServing"]

StepHandler = Callable[[Any], Awaitable[Any]]

_DEADLINE = grpc.StatusCode.DEADLINE_EXCEEDED.value[0]
# Steps of one stream carried out at once, at most; the stream is read on as they finish (a
# unary caller was bounded the same way by HTTP/2's concurrent streams per connection).
MAX_IN_FLIGHT = 100


class StepServing:
    """RunSteps for a servicer whose `handlers` carry out each kind of step."""

    def __init__(self, handlers: Mapping[str, StepHandler]) -> None:
        unknown = set(handlers) - set(METHODS)
        if unknown:
            raise ValueError(f"no such step: {sorted(unknown)}")
        self._handlers = dict(handlers)
        self._methods = {kind: f"/{SERVICE}/{METHODS[kind]}" for kind in handlers}
        self._record = {k: CallRecorder(m, stream=False) for k, m in self._methods.items()}
        self._open: set[_StepStream] = set()
        self._draining = False

    def drain(self) -> None:
        """Stop taking steps on every open stream, and on any opened from now on."""
        self._draining = True
        for stream in list(self._open):
            stream.wake.set()

    @property
    def draining(self) -> bool:
        return self._draining

    async def serve(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Serve one RunSteps call until its caller is done, it is cancelled, or drain()."""
        stream = _StepStream(self, context)
        self._open.add(stream)
        try:
            await stream.serve()
        finally:
            self._open.discard(stream)

    async def run(self, step: pb.RunStep) -> tuple[str, Any]:
        """Carry out one step: ("begin_run" or "finish_run", its response), or ("error", the
        RunStepError it ended with)."""
        kind = step.WhichOneof("step")
        handler = self._handlers.get(kind or "")
        if kind is None or handler is None:
            err = RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "a RunSteps step is a begin_run or a finish_run"
            )
            return "error", _step_error(err)
        started = time.perf_counter()
        deadline = asyncio.timeout(step.timeout_s or None)
        try:
            with server_step_span(SERVICE, METHODS[kind], step.trace_context):
                async with deadline:
                    reply = await handler(getattr(step, kind))
        except Exception as exc:
            if isinstance(exc, TimeoutError) and deadline.expired():
                # As a unary call past its deadline: the handler is cancelled, the caller gone.
                self._record[kind]("CANCELLED", started)
                return "error", pb.RunStepError(code=_DEADLINE, message="Deadline Exceeded")
            err = as_riverbeam(exc, self._methods[kind])
            self._record[kind](err.bem, started)
            return "error", _step_error(err)
        self._record[kind]("OK", started)
        return kind, reply


def _step_error(err: RiverbeamError) -> pb.RunStepError:
    return pb.RunStepError(
        code=err.grpc_status.value[0],
        message=err.message,
        status_details=rich_status(err).SerializeToString(),
    )


class _StepStream:
    """One RunSteps call being served."""

    def __init__(self, serving: StepServing, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self._serving = serving
        self._context = context
        self.wake = asyncio.Event()
        self._outbox = Outbox(pb.RunStepsResponse)
        self._running: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(MAX_IN_FLIGHT)
        self._last_read = 0
        self._caller_done = False

    async def serve(self) -> None:
        reader = asyncio.create_task(self._read())
        try:
            while True:
                await self.wake.wait()
                await asyncio.sleep(0)  # results finished in this turn join the message
                self.wake.clear()
                stopping = self._serving.draining or self._caller_done
                if stopping and not self._running:
                    break
                await self._flush()
            if self._serving.draining and not self._caller_done:
                self._outbox.last().drained_after = self._last_read
            await self._flush()
        finally:
            reader.cancel()
            for task in self._running:
                task.cancel()
            await asyncio.gather(reader, *self._running, return_exceptions=True)

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
                    await self._slots.acquire()
                    if self._serving.draining:
                        return  # not read: above drained_after
                    self._last_read = step.step_id
                    task = asyncio.create_task(self._run(step))
                    self._running.add(task)
        finally:
            self._caller_done = not self._serving.draining
            self.wake.set()

    async def _run(self, step: pb.RunStep) -> None:
        try:
            field, message = await self._serving.run(step)
        finally:
            self._running.discard(asyncio.current_task())
            self._slots.release()
        # Added only now: a result in the message being filled is written with it.
        results = self._outbox.room_for(message.ByteSize()).results
        getattr(results.add(step_id=step.step_id), field).CopyFrom(message)
        self.wake.set()
