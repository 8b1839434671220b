"""Correlation ids for every log line of a request: request_id, session_id, run_id, ...

`with log_context(request_id=..., run_id=...):` binds ids for the code inside it, including
tasks it starts (they copy the context); the JSON log formatter writes them on each line, with
the current trace and span ids when tracing is on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from types import MappingProxyType

from opentelemetry import context as otel_context
from opentelemetry import trace

__all__ = ["current_log_context", "log_context", "stamp_log_context"]

_EMPTY: Mapping[str, str] = MappingProxyType({})
_CONTEXT: ContextVar[Mapping[str, str]] = ContextVar("riverbeam_log_context", default=_EMPTY)


@contextlib.contextmanager
def log_context(**fields: str | None) -> Iterator[None]:
    """Add ids (None values are skipped) to every log line written inside the block."""
    merged = {**_CONTEXT.get(), **{k: v for k, v in fields.items() if v is not None}}
    token = _CONTEXT.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def current_log_context() -> dict[str, str]:
    """The bound ids, plus trace_id and span_id of the current span when one is recording."""
    out = dict(_CONTEXT.get())
    span = trace.get_current_span().get_span_context()
    if span.is_valid:
        out["trace_id"] = format(span.trace_id, "032x")
        out["span_id"] = format(span.span_id, "016x")
    return out


def stamp_log_context(fields: dict[str, object]) -> None:
    """Add `current_log_context()` to `fields`, leaving the keys it already has alone.

    Without a recording span (tracing off), the bound ids are written without the dict
    `current_log_context` makes: a log record's filter runs this on every line. With nothing
    at all in OpenTelemetry's context (tracing off: no span was ever made current) there is
    no span to ask for: get_current_span would give INVALID_SPAN, after four calls and an
    isinstance of an ABC.
    """
    if otel_context.get_current() and trace.get_current_span().get_span_context().is_valid:
        bound: Mapping[str, str] = current_log_context()
    else:
        bound = _CONTEXT.get()
    for key, value in bound.items():
        if key not in fields:
            fields[key] = value
