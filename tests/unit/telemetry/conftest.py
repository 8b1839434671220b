"""Tracing fixtures: an explicit provider writing to memory, and no configured tracing leaking
between tests (OpenTelemetry's global provider is never touched: it can be set only once)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from riverbeam.telemetry import shutdown_tracing

# Read by the SDK when a provider is built: a developer's shell must not change what tests see.
_OTEL_ENVIRONMENT = (
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
    "OTEL_SDK_DISABLED",
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
)


@pytest.fixture(autouse=True)
def _no_configured_tracing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in _OTEL_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    shutdown_tracing()
    yield
    shutdown_tracing()


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    yield tp
    tp.shutdown()
