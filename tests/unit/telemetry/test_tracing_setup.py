"""configure_tracing / shutdown_tracing: off by default, idempotent, OTLP when installed."""

from __future__ import annotations

import logging
import subprocess
import sys

import grpc
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from riverbeam.telemetry import (
    configure_tracing,
    current_tracer_provider,
    model_span,
    shutdown_tracing,
    tracing_client_interceptors,
    tracing_server_interceptors,
)

OTLP_MODULE = "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"


def test_off_unless_enabled(exporter: InMemorySpanExporter) -> None:
    assert configure_tracing("riverbeam-test", enabled=False, exporter=exporter) is None
    assert current_tracer_provider() is None


async def test_configured_provider_is_the_default_everywhere(
    exporter: InMemorySpanExporter,
) -> None:
    provider = configure_tracing(
        "riverbeam-test", enabled=True, exporter=exporter, set_global=False
    )
    assert provider is not None
    assert current_tracer_provider() is provider
    assert provider.resource.attributes["service.name"] == "riverbeam-test"
    # Idempotent: a second call changes nothing, even with other arguments.
    other = InMemorySpanExporter()
    assert configure_tracing("other", enabled=True, exporter=other, set_global=False) is provider

    assert len(tracing_client_interceptors()) == 2
    assert len(tracing_server_interceptors()) == 1
    async with model_span("m") as call:
        call.record_usage(1, 2)
    (span,) = exporter.get_finished_spans()
    assert span.name == "chat m"
    assert span.resource.attributes["service.name"] == "riverbeam-test"
    assert other.get_finished_spans() == ()


def test_deployment_environment_names_the_service(
    exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "riverbeam-runner")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=staging")
    provider = configure_tracing("runner", enabled=True, exporter=exporter, set_global=False)
    assert provider is not None
    attributes = provider.resource.attributes
    assert attributes["service.name"] == "riverbeam-runner"
    assert attributes["deployment.environment.name"] == "staging"
    assert attributes["service.namespace"] == "riverbeam"


async def test_shutdown_turns_it_off_again(exporter: InMemorySpanExporter) -> None:
    configure_tracing("riverbeam-test", enabled=True, exporter=exporter, set_global=False)
    shutdown_tracing()
    shutdown_tracing()  # idempotent
    assert current_tracer_provider() is None
    assert tracing_client_interceptors() == []
    async with model_span("m"):
        pass
    assert exporter.get_finished_spans() == ()


def test_set_global_once_and_never_over_another() -> None:
    # OpenTelemetry's global provider can be set once per process: check it in a fresh one.
    script = """
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from riverbeam.telemetry import configure_tracing, shutdown_tracing
first = configure_tracing("a", enabled=True, exporter=InMemorySpanExporter())
assert trace.get_tracer_provider() is first
shutdown_tracing()
second = configure_tracing("b", enabled=True, exporter=InMemorySpanExporter())
assert second is not first and trace.get_tracer_provider() is first
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Overriding of current TracerProvider" not in done.stderr


def test_otlp_exporter_when_installed() -> None:
    pytest.importorskip(OTLP_MODULE)
    provider = configure_tracing(
        "riverbeam-test", enabled=True, endpoint="http://127.0.0.1:4317", set_global=False
    )
    assert provider is not None
    shutdown_tracing(timeout_s=1)


def test_missing_otlp_exporter_is_said_and_tracing_stays_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, OTLP_MODULE, None)  # import now raises ImportError
    with caplog.at_level(logging.WARNING, logger="riverbeam.telemetry"):
        assert configure_tracing("riverbeam-test", enabled=True, set_global=False) is None
    assert "opentelemetry-exporter-otlp-proto-grpc is not installed" in caplog.text
    assert current_tracer_provider() is None
    assert tracing_server_interceptors() == []


async def test_configured_tracing_needs_no_provider_argument(
    exporter: InMemorySpanExporter,
) -> None:
    # A bare grpc.aio server: this holds whether or not GrpcServer adds the interceptor itself.
    async def echo(request: bytes, context: object) -> bytes:
        return request

    configure_tracing("riverbeam-test", enabled=True, exporter=exporter, set_global=False)
    handlers = {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    server = grpc.aio.server(interceptors=tracing_server_interceptors())
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Svc", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(
            f"127.0.0.1:{port}", interceptors=tracing_client_interceptors()
        ) as channel:
            assert await channel.unary_unary("/test.Svc/Echo")(b"x") == b"x"
    finally:
        await server.stop(None)
    client, server_span = sorted(exporter.get_finished_spans(), key=lambda s: s.kind.name)
    assert (client.name, client.kind.name) == ("test.Svc/Echo", "CLIENT")
    assert (server_span.name, server_span.kind.name) == ("test.Svc/Echo", "SERVER")
    assert client.context is not None and server_span.parent is not None
    assert server_span.parent.span_id == client.context.span_id
