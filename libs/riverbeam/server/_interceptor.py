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

__all__ = ["ErrorInterceptor", "abort_with"]

log = logging.getLogger("riverbeam.rpc")


async def abort_with(context: grpc.aio.ServicerContext[Any, Any], err: RiverbeamError) -> None:
    """End the call with the error's status; raises AbortError (always)."""
    status = rich_status(err)
    await context.abort(
        err.grpc_status,
        err.message,
        trailing_metadata=((STATUS_DETAILS_KEY, status.SerializeToString()),),
    )


def _as_riverbeam(exc: BaseException, method: str) -> RiverbeamError:
    if isinstance(exc, RiverbeamError):
        return exc
    log.exception("unhandled error in %s", method, exc_info=exc)
    return RiverbeamError(ErrorCode.INTERNAL, "internal error", method=method)


def _split(method: str) -> tuple[str, str]:
    _, _, rest = method.partition("/")
    service, _, name = rest.partition("/")
    return service, name


class ErrorInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """Maps RiverbeamError (and unexpected exceptions) to a rich gRPC status, counts RPCs."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler: Any = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        service, name = _split(method)
        if service.startswith("grpc."):
            return handler

        def record(code: str, started: float) -> None:
            RPC_TOTAL.labels(service, name, code).inc()
            RPC_LATENCY.labels(service, name).observe(time.perf_counter() - started)

        def record_stream(code: str, started: float) -> None:
            # A stream lasts as long as its caller follows: kept out of the unary latency.
            RPC_TOTAL.labels(service, name, code).inc()
            RPC_STREAM_DURATION.labels(service, name).observe(time.perf_counter() - started)

        if handler.unary_unary is not None:
            inner_uu: Any = handler.unary_unary

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                started = time.perf_counter()
                try:
                    response = await inner_uu(request, context)
                except (asyncio.CancelledError, AbortError):
                    record("CANCELLED", started)
                    raise
                except Exception as exc:
                    err = _as_riverbeam(exc, method)
                    record(err.bem, started)
                    await abort_with(context, err)
                record("OK", started)
                return response

            return grpc.unary_unary_rpc_method_handler(
                unary_unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )

        if handler.unary_stream is not None:
            inner_us: Any = handler.unary_stream

            async def unary_stream(
                request: Any, context: grpc.aio.ServicerContext[Any, Any]
            ) -> AsyncIterator[Any]:
                started = time.perf_counter()
                try:
                    async for item in inner_us(request, context):
                        yield item
                except (asyncio.CancelledError, AbortError):
                    record_stream("CANCELLED", started)
                    raise
                except Exception as exc:
                    err = _as_riverbeam(exc, method)
                    record_stream(err.bem, started)
                    await abort_with(context, err)
                record_stream("OK", started)

            return grpc.unary_stream_rpc_method_handler(
                unary_stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler
