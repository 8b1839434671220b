"""Span lifecycle shared by the helpers: make a span current for a block, record failures."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from riverbeam.core.errors import RiverbeamError
from riverbeam.telemetry._attributes import ERROR_TYPE, RIVERBEAM_ERROR_CODE

__all__ = ["active_span", "error_type", "mark_failed", "traced"]


@contextmanager
def active_span(
    tracer: trace.Tracer,
    name: str,
    *,
    kind: SpanKind,
    attributes: Mapping[str, AttributeValue],
    parent: Context | None = None,
) -> Iterator[Span]:
    """Start a span (child of `parent`, else of the current span) and make it current."""
    span = tracer.start_span(name, context=parent, kind=kind, attributes=attributes)
    token = otel_context.attach(trace.set_span_in_context(span, parent))
    try:
        yield span
    finally:
        otel_context.detach(token)
        span.end()


def error_type(exc: BaseException) -> str:
    """A low-cardinality name for a failure: the BEM code, else the exception's class."""
    if isinstance(exc, RiverbeamError):
        return exc.bem
    return type(exc).__qualname__


def mark_failed(span: Span, exc: BaseException, *, record: bool = True) -> None:
    """Status ERROR with error.type (and the BEM code for a RiverbeamError)."""
    kind = error_type(exc)
    span.set_attribute(ERROR_TYPE, kind)
    if isinstance(exc, RiverbeamError):
        span.set_attribute(RIVERBEAM_ERROR_CODE, exc.bem)
        description = f"{exc.bem}: {exc.message}"
    else:
        # The class only: an arbitrary exception's text may hold what callers must not see.
        description = kind
    if record:
        span.record_exception(exc)
    span.set_status(Status(StatusCode.ERROR, description))


@contextmanager
def traced(
    tracer: trace.Tracer,
    name: str,
    *,
    kind: SpanKind,
    attributes: Mapping[str, AttributeValue],
) -> Iterator[Span]:
    """`active_span`, marking the span failed when the block raises (or is cancelled)."""
    with active_span(tracer, name, kind=kind, attributes=attributes) as span:
        try:
            yield span
        except (Exception, asyncio.CancelledError) as exc:
            mark_failed(span, exc, record=not isinstance(exc, asyncio.CancelledError))
            raise
