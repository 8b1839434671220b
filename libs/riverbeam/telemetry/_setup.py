"""Turning tracing on and off: one SDK TracerProvider per process, owned by this module.

Nothing here runs at import time, and the OpenTelemetry SDK is imported only when tracing is
turned on (a service with tracing off does not load it: issue 16). Until `configure_tracing(..., enabled=True)` succeeds,
`current_tracer()` is None and every interceptor and span helper is a pass-through.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opentelemetry import trace

if TYPE_CHECKING:  # the SDK is imported when tracing is turned on, not by every service
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = [
    "INSTRUMENTATION_NAME",
    "configure_tracing",
    "current_tracer",
    "current_tracer_provider",
    "resolve_tracer",
    "shutdown_tracing",
    "tracing_requested",
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
        enabled: the caller's decision (`tracing_requested(settings.otel_enabled)`).
        endpoint: the OTLP/gRPC collector, e.g. "http://otel-collector:4317". None lets the
            exporter read OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT (default localhost:4317).
            Which exporters run is OTEL_TRACES_EXPORTER's choice (`otlp`, `console`, both
            comma-separated, or `none`); the sampler is OTEL_TRACES_SAMPLER(_ARG)'s.
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
        processors = _processors(exporter, endpoint)
        if not processors:
            return None
        from opentelemetry.sdk.trace import TracerProvider

        # The sampler comes from OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (SDK default:
        # parentbased_always_on).
        provider = TracerProvider(resource=_resource(service_name))
        for processor in processors:
            provider.add_span_processor(processor)
        _installed = _Installed(provider, provider.get_tracer(INSTRUMENTATION_NAME))
    if set_global and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        trace.set_tracer_provider(provider)
    where = (
        type(exporter).__name__
        if exporter is not None
        else ", ".join(_exporter_names(os.environ) or [f"otlp {endpoint or '(from env)'}"])
    )
    log.info("tracing on: service %s, exporting to %s", service_name, where)
    return provider


def _resource(service_name: str) -> Resource:
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource

    # Resource.create lets our attributes override the environment's; a deployment's
    # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES must win, so merge those back on top.
    ours = Resource.create({"service.name": service_name, "service.namespace": "riverbeam"})
    return ours.merge(OTELResourceDetector().detect())


def tracing_requested(otel_enabled: bool, env: Mapping[str, str] | None = None) -> bool:
    """Whether a service turns tracing on, from its setting and the standard OTel variables.

    On with RIVERBEAM_OTEL_ENABLED, OTEL_TRACES_EXPORTER (anything but `none`), or an OTLP
    endpoint (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT). OTEL_SDK_DISABLED=true and
    OTEL_TRACES_EXPORTER=none turn it off whatever else is set.
    """
    source = os.environ if env is None else env
    if source.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = _exporter_names(source)
    if exporters is not None:
        return exporters != ["none"]
    return otel_enabled or any(source.get(name) for name in _OTLP_ENDPOINT_VARS)


_OTLP_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def _exporter_names(env: Mapping[str, str]) -> list[str] | None:
    raw = env.get("OTEL_TRACES_EXPORTER")
    if raw is None or not raw.strip():
        return None
    return [name.strip().lower() for name in raw.split(",") if name.strip()]


def _processors(exporter: SpanExporter | None, endpoint: str | None) -> list[SpanProcessor]:
    """Span processors for OTEL_TRACES_EXPORTER (`otlp` by default; `console`; `none`)."""
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    if exporter is not None:
        return [SimpleSpanProcessor(exporter)]
    names = _exporter_names(os.environ) or ["otlp"]
    processors: list[SpanProcessor] = []
    for name in names:
        if name == "none":
            continue
        if name == "console":
            processors.append(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stdout)))
        elif name == "otlp":
            otlp = _otlp_exporter(endpoint)
            if otlp is not None:
                processors.append(BatchSpanProcessor(otlp))
        else:
            log.warning("OTEL_TRACES_EXPORTER %r is not supported (otlp, console, none)", name)
    return processors


def _otlp_exporter(endpoint: str | None) -> SpanExporter | None:
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
    otlp: SpanExporter = OTLPSpanExporter(endpoint=endpoint)
    return otlp


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
