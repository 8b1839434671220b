"""A SERVER span per HTTP request when tracing is on, and its trace id in `x-trace-id`.

The span continues the caller's W3C `traceparent` and is current while the request is handled,
so the router call made for it (the channel's tracing interceptors) joins the same trace: the
id the web console shows is the one to look up in the trace backend.
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from riverbeam import telemetry

__all__ = ["TRACE_ID_HEADER", "TraceSpans"]

TRACE_ID_HEADER = "x-trace-id"
_PROPAGATOR = TraceContextTextMapPropagator()
Headers = Iterable[tuple[bytes, bytes]]


class _HeaderGetter(Getter[list[tuple[bytes, bytes]]]):
    def get(self, carrier: list[tuple[bytes, bytes]], key: str) -> list[str] | None:
        wanted = key.encode("latin-1")
        values = [v.decode("latin-1") for k, v in carrier if k.lower() == wanted]
        return values or None

    def keys(self, carrier: list[tuple[bytes, bytes]]) -> list[str]:
        return [k.decode("latin-1") for k, _ in carrier]


_GETTER = _HeaderGetter()


class TraceSpans:
    """ASGI middleware: nothing at all while tracing is off (checked per request)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        provider = telemetry.current_tracer_provider()
        if scope["type"] != "http" or provider is None:
            await self._app(scope, receive, send)
            return
        tracer = provider.get_tracer("riverbeam.console")
        parent = _PROPAGATOR.extract(list(scope["headers"]), getter=_GETTER)
        method = scope["method"]
        span = tracer.start_span(
            f"HTTP {method}",
            context=parent,
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method, "url.path": scope.get("path", "")},
        )
        trace_id = format(span.get_span_context().trace_id, "032x").encode()

        async def with_trace_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))
                message = {
                    **message,
                    "headers": [*message.get("headers", []), (TRACE_ID_HEADER.encode(), trace_id)],
                }
            await send(message)

        token = otel_context.attach(trace.set_span_in_context(span, parent))
        try:
            await self._app(scope, receive, with_trace_id)
        finally:
            otel_context.detach(token)
            span.end()
