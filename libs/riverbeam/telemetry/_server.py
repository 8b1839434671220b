"""The server side: a SERVER span around each unary-unary and unary-stream handler."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import grpc
from grpc.aio import AbortError
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.telemetry._propagation import extract_context
from riverbeam.telemetry._rpc import (
    bem_from_trailers,
    is_server_fault,
    is_traced,
    record_status,
    rpc_attributes,
    split_method,
)
from riverbeam.telemetry._setup import current_tracer, resolve_tracer
from riverbeam.telemetry._span import active_span, error_type

__all__ = ["TracingServerInterceptor", "record_server_failure", "tracing_server_interceptors"]

_ServicerContext = grpc.aio.ServicerContext[Any, Any]


class TracingServerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """Continues the caller's trace (W3C traceparent) in a SERVER span per call.

    The span is named `<package.Service>/<Method>` and carries rpc.system, rpc.service,
    rpc.method, rpc.grpc.status_code and, on failure, error.type and riverbeam.error.code.
    Place it after ErrorInterceptor (GrpcServer does), so it sees the RiverbeamError itself.
    With tracing off it returns every handler unchanged.

    Args:
        tracer_provider: where spans go; None means the one `configure_tracing` installed,
            looked up per call.
    """

    def __init__(self, *, tracer_provider: trace.TracerProvider | None = None) -> None:
        self._tracer = None if tracer_provider is None else resolve_tracer(tracer_provider)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler: Any = await continuation(handler_call_details)
        tracer = self._tracer if self._tracer is not None else current_tracer()
        if tracer is None or handler is None:
            return handler
        service, name = split_method(handler_call_details.method)
        if not is_traced(service, name):
            return handler
        call = _ServerCall(
            tracer,
            f"{service}/{name}",
            rpc_attributes(service, name),
            extract_context(handler_call_details.invocation_metadata),
        )
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                call.wrap_unary(handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                call.wrap_stream(handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


@dataclass(frozen=True, slots=True)
class _ServerCall:
    tracer: trace.Tracer
    name: str
    attributes: dict[str, AttributeValue]
    parent: Context

    @contextmanager
    def span(self, context: _ServicerContext) -> Iterator[Span]:
        with active_span(
            self.tracer,
            self.name,
            kind=SpanKind.SERVER,
            attributes=self.attributes,
            parent=self.parent,
        ) as span:
            try:
                yield span
            except BaseException as exc:
                record_server_failure(span, exc, context)
                raise
            record_status(span, context.code() or grpc.StatusCode.OK, server=True)

    def wrap_unary(
        self, inner: Callable[[Any, _ServicerContext], Awaitable[Any]]
    ) -> Callable[[Any, _ServicerContext], Awaitable[Any]]:
        async def unary_unary(request: Any, context: _ServicerContext) -> Any:
            with self.span(context):
                return await inner(request, context)

        return unary_unary

    def wrap_stream(
        self, inner: Callable[[Any, _ServicerContext], AsyncIterator[Any]]
    ) -> Callable[[Any, _ServicerContext], AsyncIterator[Any]]:
        async def unary_stream(request: Any, context: _ServicerContext) -> AsyncIterator[Any]:
            with self.span(context):
                async for item in inner(request, context):
                    yield item

        return unary_stream


def record_server_failure(span: Span, exc: BaseException, context: _ServicerContext | None) -> None:
    """Record what the caller will see, as ErrorInterceptor is about to map it (`context`:
    the call's, to read an abort's status from; None where nothing can abort)."""
    if isinstance(exc, RiverbeamError):
        record_status(span, exc.grpc_status, server=True, bem=exc.bem, details=exc.message)
        if is_server_fault(exc.grpc_status):
            span.record_exception(exc)
    elif isinstance(exc, AbortError) and context is not None:
        # The servicer aborted by itself (e.g. riverbeam.server.abort_with): read the status.
        code = context.code() or grpc.StatusCode.UNKNOWN
        bem = bem_from_trailers(context.trailing_metadata())
        record_status(span, code, server=True, bem=bem, details=context.details() or None)
    elif isinstance(exc, asyncio.CancelledError | GeneratorExit):
        record_status(span, grpc.StatusCode.CANCELLED, server=True, error_type="cancelled")
    else:
        internal = ErrorCode.INTERNAL
        record_status(
            span,
            internal.spec.grpc_status,
            server=True,
            bem=internal.code,
            error_type=error_type(exc),
        )
        span.record_exception(exc)


def tracing_server_interceptors(
    *, tracer_provider: trace.TracerProvider | None = None
) -> list[grpc.aio.ServerInterceptor]:  # type: ignore[type-arg]
    """[TracingServerInterceptor] for `grpc.aio.server(interceptors=...)`; [] when tracing is off."""
    if tracer_provider is None and current_tracer() is None:
        return []
    return [TracingServerInterceptor(tracer_provider=tracer_provider)]
