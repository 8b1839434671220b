"""Spans of the steps that travel on step streams (server/_step_lanes.py): the store's
RunSteps, the runner's RunInvokes.

A step on a stream is traced as its unary call would be: a CLIENT span
`riverbeam.v1.StoreService/BeginRun` (or FinishRun, or `riverbeam.v1.RunnerService/RunInvoke`)
around the wait for its result, whose
trace context the step carries (`RunStep.trace_context`, the W3C headers a call's metadata
would), and a SERVER span of the same name, its child, around the step in the store. The
stream itself has no span: it lives for many runs' steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager

import grpc
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from riverbeam.core.errors import RiverbeamError
from riverbeam.telemetry._propagation import extract_context, inject_context
from riverbeam.telemetry._rpc import record_status, rpc_attributes
from riverbeam.telemetry._server import record_server_failure
from riverbeam.telemetry._setup import current_tracer
from riverbeam.telemetry._span import active_span, error_type

__all__ = ["client_step_span", "server_step_span"]


@contextmanager
def client_step_span(
    service: str, name: str, carrier: MutableMapping[str, str]
) -> Iterator[Span | None]:
    """The CLIENT span of one step (None when tracing is off); its trace context is put in
    `carrier`. A RiverbeamError raised in the block is recorded as the call's status."""
    tracer = current_tracer()
    if tracer is None:
        yield None
        return
    span = tracer.start_span(
        f"{service}/{name}", kind=SpanKind.CLIENT, attributes=rpc_attributes(service, name)
    )
    for key, value in inject_context(None, trace.set_span_in_context(span)):
        carrier[key] = value if isinstance(value, str) else value.decode("latin-1")
    try:
        yield span
    except RiverbeamError as err:
        record_status(span, err.grpc_status, server=False, bem=err.bem, details=err.message)
        raise
    except asyncio.CancelledError:
        record_status(span, grpc.StatusCode.CANCELLED, server=False, error_type="cancelled")
        raise
    except BaseException as exc:
        record_status(span, grpc.StatusCode.UNKNOWN, server=False, error_type=error_type(exc))
        raise
    else:
        record_status(span, grpc.StatusCode.OK, server=False)
    finally:
        span.end()


@contextmanager
def server_step_span(service: str, name: str, carrier: Mapping[str, str]) -> Iterator[None]:
    """The SERVER span of one step, child of the trace context the step carried."""
    tracer = current_tracer()
    if tracer is None:
        yield
        return
    with active_span(
        tracer,
        f"{service}/{name}",
        kind=SpanKind.SERVER,
        attributes=rpc_attributes(service, name),
        parent=extract_context(carrier.items()),
    ) as span:
        try:
            yield
        except BaseException as exc:
            record_server_failure(span, exc, None)
            raise
        record_status(span, grpc.StatusCode.OK, server=True)
