"""The one server interceptor: RiverbeamError -> gRPC status with ErrorInfo, plus metrics."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from grpc.aio import AbortError

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server._status import STATUS_DETAILS_KEY, rich_status
from riverbeam.telemetry._metrics import RPC_LATENCY, RPC_STREAM_DURATION, RPC_TOTAL

__all__ = [
    "MAX_REQUEST_BYTES",
    "CallRecorder",
    "ErrorInterceptor",
    "ErrorMappedHandlers",
    "abort_with",
    "as_riverbeam",
]

log = logging.getLogger("riverbeam.rpc")

MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""The largest request message a service takes; a larger one is refused with BEM-019.

The transport itself accepts more (see _grpc_server.SERVER_OPTIONS), so that the refusal is
ours and carries a code, not gRPC's bare RESOURCE_EXHAUSTED.
"""


def _pass_bytes(data: bytes) -> bytes:
    return data


def _decoder(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any]:
    """Parse a request inside the handler, where a failure becomes a coded refusal.

    gRPC's own deserialization failure ends the call as UNKNOWN "Unexpected DecodeError",
    without a code; messages nested deeper than protobuf's recursion limit (100) fail that way
    too.
    """

    def decode(data: bytes) -> Any:
        if len(data) > MAX_REQUEST_BYTES:
            raise RiverbeamError(
                ErrorCode.REQUEST_TOO_LARGE,
                f"request is {len(data)} bytes; at most {MAX_REQUEST_BYTES}",
                limit=MAX_REQUEST_BYTES,
                actual=len(data),
            )
        if deserializer is None:
            return data
        try:
            return deserializer(data)
        except Exception as exc:  # DecodeError, RecursionError, ... of any protobuf runtime
            if isinstance(exc, RecursionError) or "MaxDepth" in str(exc):
                raise RiverbeamError(
                    ErrorCode.METADATA_TOO_LARGE,
                    "request is nested more than protobuf's 100 message levels deep",
                    limit=100,
                ) from None
            raise RiverbeamError(
                ErrorCode.MALFORMED_REQUEST,
                "request is not a valid protobuf message of this RPC",
                error=type(exc).__name__,
            ) from None

    return decode


async def abort_with(context: grpc.aio.ServicerContext[Any, Any], err: RiverbeamError) -> None:
    """End the call with the error's status; raises AbortError (always)."""
    status = rich_status(err)
    await context.abort(
        err.grpc_status,
        err.message,
        trailing_metadata=((STATUS_DETAILS_KEY, status.SerializeToString()),),
    )


def as_riverbeam(exc: BaseException, method: str) -> RiverbeamError:
    if isinstance(exc, RiverbeamError):
        return exc
    log.exception("unhandled error in %s", method, exc_info=exc)
    return RiverbeamError(ErrorCode.INTERNAL, "internal error", method=method)


def cancelled_of_its_own(exc: BaseException) -> bool:
    """A CancelledError the handler raised although its call was not cancelled (something it
    awaited was): gRPC would end the call with no status at all, and the caller would wait
    out its deadline. A step on a step stream (_step_serving) is told apart the same way."""
    if not isinstance(exc, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is not None and not task.cancelling()


async def _abort_cancelled(context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """End the call CANCELLED, as a step on a step stream ends (server/_step_serving.py)."""
    await context.abort(grpc.StatusCode.CANCELLED, "handler cancelled")


def _split(method: str) -> tuple[str, str]:
    _, _, rest = method.partition("/")
    service, _, name = rest.partition("/")
    return service, name


class CallRecorder:
    """One method's metrics, with the label children looked up once (not on every call)."""

    __slots__ = ("_latency", "_name", "_service", "_totals")

    def __init__(self, method: str, *, stream: bool) -> None:
        self._service, self._name = _split(method)
        histogram = RPC_STREAM_DURATION if stream else RPC_LATENCY
        self._latency = histogram.labels(self._service, self._name)
        self._totals: dict[str, Any] = {}

    def __call__(self, code: str, started: float) -> None:
        total = self._totals.get(code)
        if total is None:
            total = self._totals[code] = RPC_TOTAL.labels(self._service, self._name, code)
        total.inc()
        # A stream lasts as long as its caller follows: kept out of the unary latency.
        self._latency.observe(time.perf_counter() - started)


def _wrapped(method: str, handler: Any) -> Any:
    """`handler` with errors mapped to a rich status and its calls counted."""
    decode = _decoder(handler.request_deserializer)

    if handler.unary_unary is not None:
        inner_uu: Any = handler.unary_unary
        record = CallRecorder(method, stream=False)

        async def unary_unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            try:
                response = await inner_uu(decode(request), context)
            except (asyncio.CancelledError, AbortError) as exc:
                record("CANCELLED", started)
                if cancelled_of_its_own(exc):
                    await _abort_cancelled(context)
                raise
            except Exception as exc:
                err = as_riverbeam(exc, method)
                record(err.bem, started)
                await abort_with(context, err)
            record("OK", started)
            return response

        return grpc.unary_unary_rpc_method_handler(
            unary_unary,
            request_deserializer=_pass_bytes,
            response_serializer=handler.response_serializer,
        )

    if handler.unary_stream is not None:
        inner_us: Any = handler.unary_stream
        record_stream = CallRecorder(method, stream=True)

        async def unary_stream(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            started = time.perf_counter()
            try:
                async for item in inner_us(decode(request), context):
                    yield item
            except (asyncio.CancelledError, AbortError) as exc:
                record_stream("CANCELLED", started)
                if cancelled_of_its_own(exc):
                    await _abort_cancelled(context)
                raise
            except Exception as exc:
                err = as_riverbeam(exc, method)
                record_stream(err.bem, started)
                await abort_with(context, err)
            record_stream("OK", started)

        return grpc.unary_stream_rpc_method_handler(
            unary_stream,
            request_deserializer=_pass_bytes,
            response_serializer=handler.response_serializer,
        )
    return handler


class ErrorInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """Maps RiverbeamError (and unexpected exceptions) to a rich gRPC status, counts RPCs.

    A method's wrapped handler (and its metric children) is built on its first call and kept:
    the handlers a server serves are fixed once it starts, so later calls only look it up.
    """

    def __init__(self) -> None:
        self._wrapped: dict[str, tuple[Any, Any]] = {}
        self.handlers_built = 0

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler: Any = await continuation(handler_call_details)
        if handler is None:
            return handler
        return self.handler_for(handler_call_details.method, handler)

    def handler_for(self, method: str, handler: Any) -> Any:
        """`handler` of `method` with errors mapped and calls counted (built once, then kept)."""
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        service, _ = _split(method)
        wrapped = handler if service.startswith("grpc.") else _wrapped(method, handler)
        self._wrapped[method] = (handler, wrapped)
        self.handlers_built += 1
        return wrapped


class ErrorMappedHandlers(grpc.GenericRpcHandler):  # type: ignore[type-arg]
    """A generic handler's methods as `interceptor` would hand them to gRPC.

    For a server with no other interceptor: gRPC runs a server's interceptors per call (two
    coroutines and a partial each, ~13,000 instructions an invoke), while the handler a method
    resolves to is the same on every call, so it can be the wrapped one.
    """

    def __init__(self, inner: Any, interceptor: ErrorInterceptor) -> None:
        self._inner = inner
        self._interceptor = interceptor

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        handler = self._inner.service(handler_call_details)
        if handler is None:
            return None
        return self._interceptor.handler_for(handler_call_details.method, handler)
