"""Tracing is configured by the OpenTelemetry SDK's standard environment variables (issue 17)."""

from __future__ import annotations

import io
import json
import logging

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from riverbeam.server import JsonFormatter, LogContextFilter
from riverbeam.telemetry import configure_tracing, run_span, shutdown_tracing, tracing_requested


@pytest.mark.parametrize(
    ("env", "enabled", "expected"),
    [
        ({}, False, False),
        ({}, True, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, False, True),
        ({"OTEL_TRACES_EXPORTER": "otlp,console"}, False, True),
        ({"OTEL_TRACES_EXPORTER": "none"}, True, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}, False, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4317"}, False, True),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}, True, False),
    ],
)
def test_tracing_requested_follows_the_standard_variables(
    env: dict[str, str], enabled: bool, expected: bool
) -> None:
    assert tracing_requested(enabled, env) is expected


async def test_console_exporter_service_name_and_sampler_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "riverbeam-from-env")
    assert tracing_requested(False)
    assert configure_tracing("riverbeam-runner", enabled=True, set_global=False) is not None
    async with run_span("author", "run-1", "session-1", "request-1"):
        pass
    shutdown_tracing()
    out = capfd.readouterr().out
    span = json.loads(out[out.index("{") :])
    assert span["name"] == "invoke_agent author"
    assert span["resource"]["attributes"]["service.name"] == "riverbeam-from-env"

    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    configure_tracing("riverbeam-runner", enabled=True, set_global=False)
    async with run_span("author", "run-2", "session-1", "request-2"):
        pass
    shutdown_tracing()
    assert "invoke_agent" not in capfd.readouterr().out


async def test_json_logs_carry_the_trace_and_span_ids() -> None:
    exporter = InMemorySpanExporter()
    configure_tracing("riverbeam-test", enabled=True, exporter=exporter, set_global=False)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(LogContextFilter())
    logger = logging.getLogger("riverbeam.test.json")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        async with run_span("author", "run-1", "session-1", "request-1"):
            logger.info("inside")
        logger.info("outside")
    finally:
        logger.removeHandler(handler)
        shutdown_tracing()
    inside, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    [span] = exporter.get_finished_spans()
    assert inside["trace_id"] == format(span.context.trace_id, "032x")
    assert inside["span_id"] == format(span.context.span_id, "016x")
    assert "trace_id" not in outside
