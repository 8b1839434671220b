"""Turning tracing on and off: one SDK TracerProvider per process, owned by this module.

Nothing here runs at import time. Until `configure_tracing(..., enabled=True)` succeeds,
`current_tracer()` is None and every interceptor and span helper is a pass-through.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

__all__ = [
    "INSTRUMENTATION_NAME",
    "configure_tracing",
    "current_tracer",
    "current_tracer_provider",
    "resolve_tracer",
    "shutdown_tracing",
]

INSTRUMENTATION_NAME = "riverbeam"
OTLP_PACKAGE = "opentelemetry-exporter-otlp-proto-grpc"

log = logging.getLogger("riverbeam.telemetry")


@dataclass(frozen=True, slots=True)
class _Installed:
    provider: TracerProvider
    tracer: trace.Tracer


_lock = threading.Lock()
_installed: _Installed | None = None


def configure_tracing(
    service_name: str,
    *,
    enabled: bool,
    endpoint: str | None = None,
    exporter: SpanExporter | None = None,
    set_global: bool = True,
) -> TracerProvider | None:
    """Install the process's TracerProvider, or do nothing when tracing is off.

    Idempotent: once a provider is installed, later calls return it unchanged until
    `shutdown_tracing()`.

    Args:
        service_name: `service.name` of every span (e.g. "riverbeam-runner"), unless
            OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES says otherwise.
        enabled: the caller's decision (settings.otel_enabled, or an OTLP endpoint set).
        endpoint: the OTLP/gRPC collector, e.g. "http://otel-collector:4317". None lets the
            exporter read OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT (default localhost:4317).
        exporter: export to this instead of OTLP, synchronously (tests pass an
            InMemorySpanExporter).
        set_global: also make it OpenTelemetry's global provider (only if none is set yet),
            so third-party instrumentation joins the same traces.

    Returns:
        The provider, or None when tracing is off or the OTLP exporter is not installed.
    """
    global _installed
    if not enabled:
        return None
    with _lock:
        if _installed is not None:
            return _installed.provider
        processor = _processor(exporter, endpoint)
        if processor is None:
            return None
        provider = TracerProvider(resource=_resource(service_name))
        provider.add_span_processor(processor)
        _installed = _Installed(provider, provider.get_tracer(INSTRUMENTATION_NAME))
    if set_global and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        trace.set_tracer_provider(provider)
    where = type(exporter).__name__ if exporter is not None else f"OTLP {endpoint or '(from env)'}"
    log.info("tracing on: service %s, exporting to %s", service_name, where)
    return provider


def _resource(service_name: str) -> Resource:
    # Resource.create lets our attributes override the environment's; a deployment's
    # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES must win, so merge those back on top.
    ours = Resource.create({"service.name": service_name, "service.namespace": "riverbeam"})
    return ours.merge(OTELResourceDetector().detect())


def _processor(exporter: SpanExporter | None, endpoint: str | None) -> SpanProcessor | None:
    if exporter is not None:
        return SimpleSpanProcessor(exporter)
    try:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found, unused-ignore]
            OTLPSpanExporter,
        )
    except ImportError:
        log.warning(
            "tracing requested but %s is not installed: tracing stays off (pip install %s)",
            OTLP_PACKAGE,
            OTLP_PACKAGE,
        )
        return None
    return BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint))


def shutdown_tracing(timeout_s: float = 5.0) -> None:
    """Flush buffered spans and uninstall the provider; idempotent.

    Blocks for up to about `timeout_s` while the exporter sends what is left: from async
    code, call it with `await asyncio.to_thread(shutdown_tracing)`.
    """
    global _installed
    with _lock:
        installed, _installed = _installed, None
    if installed is None:
        return
    installed.provider.force_flush(int(timeout_s * 1000))
    installed.provider.shutdown()


def current_tracer_provider() -> TracerProvider | None:
    """The provider `configure_tracing` installed, or None when tracing is off."""
    installed = _installed
    return None if installed is None else installed.provider


def current_tracer() -> trace.Tracer | None:
    installed = _installed
    return None if installed is None else installed.tracer


def resolve_tracer(tracer_provider: trace.TracerProvider | None) -> trace.Tracer | None:
    """A tracer from the given provider, else the configured one; None means tracing is off."""
    if tracer_provider is not None:
        return tracer_provider.get_tracer(INSTRUMENTATION_NAME)
    return current_tracer()
