"""Once tracing is configured, every GrpcServer and open_channel trace without extra wiring."""

from __future__ import annotations

from typing import Any

import grpc
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from riverbeam.server import GrpcServer, ServiceBinding, open_channel
from riverbeam.telemetry import configure_tracing


async def _echo(request: bytes, context: Any) -> bytes:
    return request


def _register(server: grpc.aio.Server) -> None:
    handler = grpc.method_handlers_generic_handler(
        "test.Wired", {"Echo": grpc.unary_unary_rpc_method_handler(_echo)}
    )
    server.add_generic_rpc_handlers((handler,))


async def test_configured_tracing_reaches_servers_and_channels() -> None:
    exporter = InMemorySpanExporter()
    configure_tracing("riverbeam-test", enabled=True, exporter=exporter, set_global=False)
    async with (
        GrpcServer([ServiceBinding("test.Wired", _register)]) as server,
        open_channel(server.address) as channel,
    ):
        assert await channel.unary_unary("/test.Wired/Echo")(b"x") == b"x"
    spans = exporter.get_finished_spans()
    kinds = {(s.kind, s.name) for s in spans}
    assert (SpanKind.SERVER, "test.Wired/Echo") in kinds
    assert any(kind is SpanKind.CLIENT for kind, _ in kinds)
    assert len({s.context.trace_id for s in spans}) == 1


async def test_tracing_off_adds_no_spans() -> None:
    exporter = InMemorySpanExporter()
    configure_tracing("riverbeam-test", enabled=False, exporter=exporter, set_global=False)
    async with (
        GrpcServer([ServiceBinding("test.Wired", _register)]) as server,
        open_channel(server.address) as channel,
    ):
        assert await channel.unary_unary("/test.Wired/Echo")(b"x") == b"x"
    assert exporter.get_finished_spans() == ()
