"""The client side: a CLIENT span per call, and its traceparent in the outgoing metadata."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import grpc
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from riverbeam.telemetry._propagation import inject_context
from riverbeam.telemetry._rpc import (
    bem_from_trailers,
    is_traced,
    record_status,
    rpc_attributes,
    split_method,
)
from riverbeam.telemetry._setup import current_tracer, resolve_tracer
from riverbeam.telemetry._span import error_type

__all__ = [
    "TracingUnaryStreamClientInterceptor",
    "TracingUnaryUnaryClientInterceptor",
    "tracing_client_interceptors",
]


class _ClientTracing:
    def __init__(self, tracer_provider: trace.TracerProvider | None) -> None:
        self._tracer = None if tracer_provider is None else resolve_tracer(tracer_provider)

    def _start(
        self, details: grpc.aio.ClientCallDetails
    ) -> tuple[Span, grpc.aio.ClientCallDetails] | None:
        """The CLIENT span and the call details carrying it; None when not traced."""
        tracer = self._tracer if self._tracer is not None else current_tracer()
        if tracer is None:
            return None
        service, name = split_method(details.method)
        if not is_traced(service, name):
            return None
        span = tracer.start_span(
            f"{service}/{name}", kind=SpanKind.CLIENT, attributes=rpc_attributes(service, name)
        )
        metadata = inject_context(details.metadata, trace.set_span_in_context(span))
        return span, grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


class TracingUnaryUnaryClientInterceptor(_ClientTracing, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    """A CLIENT span around each unary call; the call returned to the caller is untouched.

    Args:
        tracer_provider: where spans go; None means the configured one, looked up per call.
    """

    def __init__(self, *, tracer_provider: trace.TracerProvider | None = None) -> None:
        super().__init__(tracer_provider)

    async def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Any],
        client_call_details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        started = self._start(client_call_details)
        if started is None:
            return await continuation(client_call_details, request)
        span, details = started
        try:
            call = await continuation(details, request)
            try:
                code = await call.code()
            except asyncio.CancelledError:
                # Cancelling the intercepted call cancels only this task, not the RPC under it.
                call.cancel()
                raise
            if code is grpc.StatusCode.OK:
                record_status(span, code, server=False)
            else:
                bem = bem_from_trailers(await call.trailing_metadata())
                record_status(span, code, server=False, bem=bem, details=await call.details())
            return call
        except BaseException as exc:
            _record_raised(span, exc)
            raise
        finally:
            span.end()


class TracingUnaryStreamClientInterceptor(_ClientTracing, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    """A CLIENT span from the call until its last response (or its error).

    Args:
        tracer_provider: where spans go; None means the configured one, looked up per call.
    """

    def __init__(self, *, tracer_provider: trace.TracerProvider | None = None) -> None:
        super().__init__(tracer_provider)

    async def intercept_unary_stream(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Any],
        client_call_details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        started = self._start(client_call_details)
        if started is None:
            return await continuation(client_call_details, request)
        span, details = started
        try:
            call = await continuation(details, request)
        except BaseException as exc:
            _record_raised(span, exc)
            span.end()
            raise
        return _responses(call, span)


def _record_raised(span: Span, exc: BaseException) -> None:
    """A call that raised before it had a status: cancelled, or failed in this process."""
    if isinstance(exc, asyncio.CancelledError):
        record_status(span, grpc.StatusCode.CANCELLED, server=False, error_type="cancelled")
    else:
        record_status(span, grpc.StatusCode.UNKNOWN, server=False, error_type=error_type(exc))


async def _responses(call: Any, span: Span) -> AsyncIterator[Any]:
    try:
        async for response in call:
            yield response
    except grpc.aio.AioRpcError as exc:
        bem = bem_from_trailers(exc.trailing_metadata())
        record_status(span, exc.code(), server=False, bem=bem, details=exc.details())
        raise
    except (asyncio.CancelledError, GeneratorExit):
        call.cancel()
        record_status(span, grpc.StatusCode.CANCELLED, server=False, error_type="cancelled")
        raise
    else:
        record_status(span, await call.code(), server=False)
    finally:
        span.end()


def tracing_client_interceptors(
    *, tracer_provider: trace.TracerProvider | None = None
) -> list[grpc.aio.ClientInterceptor]:
    """Interceptors for `grpc.aio.insecure_channel(..., interceptors=...)`; [] when tracing is off.

    Decided when the channel is opened: open channels after `configure_tracing`.
    """
    if tracer_provider is None and current_tracer() is None:
        return []
    # The grpc stubs leave ClientInterceptor abstract ("must cast").
    return [
        cast("grpc.aio.ClientInterceptor", interceptor)
        for interceptor in (
            TracingUnaryUnaryClientInterceptor(tracer_provider=tracer_provider),
            TracingUnaryStreamClientInterceptor(tracer_provider=tracer_provider),
        )
    ]
