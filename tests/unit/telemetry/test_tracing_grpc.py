"""Traces across real grpc.aio servers: client -> front -> backend, errors, and tracing off."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import (
    CHANNEL_OPTIONS,
    GrpcServer,
    ServiceBinding,
    abort_with,
    translate_rpc_errors,
)
from riverbeam.telemetry import (
    TracingServerInterceptor,
    TracingUnaryStreamClientInterceptor,
    TracingUnaryUnaryClientInterceptor,
    configure_tracing,
    tracing_client_interceptors,
    tracing_server_interceptors,
)

# -- the backend: the second hop --------------------------------------------------------------


@dataclass
class Seen:
    """What the backend received, to check what crossed the wire."""

    metadata: list[dict[str, Any]] = field(default_factory=list)


def _backend(seen: Seen) -> ServiceBinding:
    async def echo(request: bytes, context: Any) -> bytes:
        seen.metadata.append(dict(context.invocation_metadata()))
        return request

    async def fail(request: bytes, context: Any) -> bytes:
        raise RiverbeamError(ErrorCode.ACTION_NOT_PENDING, "action a1 was resolved")

    async def boom(request: bytes, context: Any) -> bytes:
        raise ValueError("secret internals")

    async def aborts(request: bytes, context: Any) -> bytes:
        await abort_with(context, RiverbeamError(ErrorCode.STORE_UNAVAILABLE, "db down"))
        raise AssertionError("abort returns by raising")

    async def count(request: bytes, context: Any) -> AsyncIterator[bytes]:
        for i in range(3):
            yield b"%d" % i

    async def gap(request: bytes, context: Any) -> AsyncIterator[bytes]:
        yield b"one"
        raise RiverbeamError(ErrorCode.STREAM_GAP, "gap after 1")

    def register(server: grpc.aio.Server) -> None:
        handlers = {
            "Echo": grpc.unary_unary_rpc_method_handler(echo),
            "Fail": grpc.unary_unary_rpc_method_handler(fail),
            "Boom": grpc.unary_unary_rpc_method_handler(boom),
            "Abort": grpc.unary_unary_rpc_method_handler(aborts),
            "Count": grpc.unary_stream_rpc_method_handler(count),
            "Gap": grpc.unary_stream_rpc_method_handler(gap),
        }
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("test.Backend", handlers),)
        )

    return ServiceBinding("test.Backend", register)


# -- the front: the first hop, which calls the backend ----------------------------------------


def _front(backend: grpc.aio.Channel) -> ServiceBinding:
    async def relay(request: bytes, context: Any) -> bytes:
        async with translate_rpc_errors():
            reply: bytes = await backend.unary_unary(f"/test.Backend/{request.decode()}")(b"hi")
        return reply

    async def relay_stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
        async for item in backend.unary_stream("/test.Backend/Count")(request):
            yield item

    def register(server: grpc.aio.Server) -> None:
        handlers = {
            "Relay": grpc.unary_unary_rpc_method_handler(relay),
            "RelayStream": grpc.unary_stream_rpc_method_handler(relay_stream),
        }
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("test.Front", handlers),)
        )

    return ServiceBinding("test.Front", register)


def _channel(address: str, interceptors: Sequence[Any]) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(
        address, options=CHANNEL_OPTIONS, interceptors=list(interceptors)
    )


@dataclass
class Mesh:
    front: GrpcServer
    backend: GrpcServer
    seen: Seen
    client_interceptors: list[Any]

    def channel(self, server: GrpcServer) -> grpc.aio.Channel:
        return _channel(server.address, self.client_interceptors)


@pytest.fixture
async def mesh(provider: TracerProvider) -> AsyncIterator[Mesh]:
    seen = Seen()
    interceptors = tracing_client_interceptors(tracer_provider=provider)
    server_side = tracing_server_interceptors(tracer_provider=provider)
    async with GrpcServer([_backend(seen)], interceptors=server_side) as backend:
        async with _channel(backend.address, interceptors) as to_backend:
            async with GrpcServer([_front(to_backend)], interceptors=server_side) as front:
                yield Mesh(front, backend, seen, interceptors)


async def _finished(exporter: InMemorySpanExporter, count: int) -> Sequence[ReadableSpan]:
    """The finished spans once there are `count`: a server span ends after its handler
    returns, which may be after the caller has the response (bounded wait, then as they are)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(5):
            while len(exporter.get_finished_spans()) < count:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
    return exporter.get_finished_spans()


def _span(spans: Sequence[ReadableSpan], name: str, kind: SpanKind) -> ReadableSpan:
    found = [s for s in spans if s.name == name and s.kind is kind]
    assert len(found) == 1, [(s.name, s.kind) for s in spans]
    return found[0]


def _parent_of(child: ReadableSpan, parent: ReadableSpan) -> bool:
    assert child.parent is not None and parent.context is not None
    return child.parent.span_id == parent.context.span_id


# -- propagation ------------------------------------------------------------------------------


async def test_one_trace_across_two_hops(mesh: Mesh, exporter: InMemorySpanExporter) -> None:
    async with mesh.channel(mesh.front) as channel:
        assert await channel.unary_unary("/test.Front/Relay")(b"Echo") == b"hi"

    spans = await _finished(exporter, 4)
    assert len(spans) == 4
    client_front = _span(spans, "test.Front/Relay", SpanKind.CLIENT)
    server_front = _span(spans, "test.Front/Relay", SpanKind.SERVER)
    client_backend = _span(spans, "test.Backend/Echo", SpanKind.CLIENT)
    server_backend = _span(spans, "test.Backend/Echo", SpanKind.SERVER)

    assert len({s.context.trace_id for s in spans if s.context is not None}) == 1
    assert client_front.parent is None
    assert _parent_of(server_front, client_front)
    assert _parent_of(client_backend, server_front)
    assert _parent_of(server_backend, client_backend)
    assert server_front.parent is not None and server_front.parent.is_remote
    assert server_backend.parent is not None and server_backend.parent.is_remote

    for span in (server_backend, client_backend):
        assert span.attributes == {
            "rpc.system": "grpc",
            "rpc.service": "test.Backend",
            "rpc.method": "Echo",
            "rpc.grpc.status_code": 0,
        }
        assert span.status.status_code is StatusCode.UNSET

    # What crossed the wire is W3C traceparent, naming the backend's CLIENT span.
    (metadata,) = mesh.seen.metadata
    assert client_backend.context is not None
    version, trace_id, span_id, flags = metadata["traceparent"].split("-")
    assert version == "00"
    assert int(flags, 16) & 0x01  # sampled (newer SDKs also set 0x02, "random trace id")
    assert int(trace_id, 16) == client_backend.context.trace_id
    assert int(span_id, 16) == client_backend.context.span_id


async def test_streams_are_traced_until_drained(mesh: Mesh, exporter: InMemorySpanExporter) -> None:
    async with mesh.channel(mesh.front) as channel:
        items = [item async for item in channel.unary_stream("/test.Front/RelayStream")(b"x")]
    assert items == [b"0", b"1", b"2"]

    spans = await _finished(exporter, 4)
    client_front = _span(spans, "test.Front/RelayStream", SpanKind.CLIENT)
    server_front = _span(spans, "test.Front/RelayStream", SpanKind.SERVER)
    client_backend = _span(spans, "test.Backend/Count", SpanKind.CLIENT)
    server_backend = _span(spans, "test.Backend/Count", SpanKind.SERVER)
    assert len({s.context.trace_id for s in spans if s.context is not None}) == 1
    assert _parent_of(server_front, client_front)
    assert _parent_of(client_backend, server_front)
    assert _parent_of(server_backend, client_backend)
    assert all(
        s.attributes is not None and s.attributes["rpc.grpc.status_code"] == 0 for s in spans
    )
    # The client span lasts until the last response, so it encloses the server's.
    assert client_front.end_time is not None and server_front.end_time is not None
    assert client_front.end_time >= server_front.end_time


async def test_caller_trace_continues_into_the_calls(
    mesh: Mesh, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("caller") as caller:
        async with mesh.channel(mesh.backend) as channel:
            await channel.unary_unary("/test.Backend/Echo")(b"x")
    client = _span(await _finished(exporter, 2), "test.Backend/Echo", SpanKind.CLIENT)
    assert client.parent is not None
    assert client.parent.span_id == caller.get_span_context().span_id


# -- errors -----------------------------------------------------------------------------------


async def test_refusal_is_recorded_with_its_bem_code(
    mesh: Mesh, exporter: InMemorySpanExporter
) -> None:
    async with mesh.channel(mesh.backend) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                await channel.unary_unary("/test.Backend/Fail")(b"x")
    # The error still reaches the caller whole: the interceptors leave status details alone.
    assert info.value.code is ErrorCode.ACTION_NOT_PENDING
    assert info.value.message == "action a1 was resolved"

    spans = await _finished(exporter, 2)
    server = _span(spans, "test.Backend/Fail", SpanKind.SERVER)
    client = _span(spans, "test.Backend/Fail", SpanKind.CLIENT)
    for span in (server, client):
        assert span.attributes is not None
        assert (
            span.attributes["rpc.grpc.status_code"] == grpc.StatusCode.FAILED_PRECONDITION.value[0]
        )
        assert span.attributes["riverbeam.error.code"] == "BEM-066"
        assert span.attributes["error.type"] == "BEM-066"
    # FAILED_PRECONDITION is the caller's problem: an error for the client, not for the server.
    assert server.status.status_code is StatusCode.UNSET
    assert client.status.status_code is StatusCode.ERROR
    assert client.status.description == "BEM-066: action a1 was resolved"


async def test_unexpected_exception_is_a_server_error(
    mesh: Mesh, exporter: InMemorySpanExporter
) -> None:
    async with mesh.channel(mesh.backend) as channel:
        with pytest.raises(grpc.aio.AioRpcError):
            await channel.unary_unary("/test.Backend/Boom")(b"x")

    spans = await _finished(exporter, 2)
    server = _span(spans, "test.Backend/Boom", SpanKind.SERVER)
    assert server.attributes is not None
    assert server.attributes["rpc.grpc.status_code"] == grpc.StatusCode.INTERNAL.value[0]
    assert server.attributes["riverbeam.error.code"] == "BEM-001"
    assert server.attributes["error.type"] == "ValueError"
    assert server.status.status_code is StatusCode.ERROR
    assert server.status.description is not None and "secret" not in server.status.description
    assert [e.name for e in server.events] == ["exception"]

    client = _span(spans, "test.Backend/Boom", SpanKind.CLIENT)
    assert client.attributes is not None and client.attributes["riverbeam.error.code"] == "BEM-001"
    assert client.status.status_code is StatusCode.ERROR


async def test_servicer_abort_is_read_back(mesh: Mesh, exporter: InMemorySpanExporter) -> None:
    async with mesh.channel(mesh.backend) as channel:
        with pytest.raises(grpc.aio.AioRpcError):
            await channel.unary_unary("/test.Backend/Abort")(b"x")
    server = _span(await _finished(exporter, 2), "test.Backend/Abort", SpanKind.SERVER)
    assert server.attributes is not None
    assert server.attributes["riverbeam.error.code"] == ErrorCode.STORE_UNAVAILABLE.code
    code = ErrorCode.STORE_UNAVAILABLE.spec.grpc_status
    assert server.attributes["rpc.grpc.status_code"] == code.value[0]


async def test_stream_error_after_items(mesh: Mesh, exporter: InMemorySpanExporter) -> None:
    got: list[bytes] = []
    async with mesh.channel(mesh.backend) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                async for item in channel.unary_stream("/test.Backend/Gap")(b"x"):
                    got.append(item)
    assert got == [b"one"]
    assert info.value.code is ErrorCode.STREAM_GAP

    spans = await _finished(exporter, 2)
    for kind in (SpanKind.SERVER, SpanKind.CLIENT):
        span = _span(spans, "test.Backend/Gap", kind)
        assert span.attributes is not None
        assert span.attributes["riverbeam.error.code"] == "BEM-112"
        assert span.attributes["rpc.grpc.status_code"] == grpc.StatusCode.DATA_LOSS.value[0]
        assert span.status.status_code is StatusCode.ERROR  # DATA_LOSS is the server's fault


async def test_error_crosses_both_hops(mesh: Mesh, exporter: InMemorySpanExporter) -> None:
    async with mesh.channel(mesh.front) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                await channel.unary_unary("/test.Front/Relay")(b"Fail")
    assert info.value.code is ErrorCode.ACTION_NOT_PENDING
    spans = await _finished(exporter, 4)
    assert len(spans) == 4
    assert {s.attributes["riverbeam.error.code"] for s in spans if s.attributes} == {"BEM-066"}


async def test_health_checks_are_not_traced(mesh: Mesh, exporter: InMemorySpanExporter) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with mesh.channel(mesh.backend) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        await stub.Check(health_pb2.HealthCheckRequest(service=""))
    assert exporter.get_finished_spans() == ()


# -- tracing off ------------------------------------------------------------------------------


async def test_off_returns_handlers_unchanged() -> None:
    handler = grpc.unary_unary_rpc_method_handler(lambda request, context: request)

    async def continuation(details: Any) -> Any:
        return handler

    details = SimpleNamespace(method="/test.Backend/Echo", invocation_metadata=())
    assert await TracingServerInterceptor().intercept_service(continuation, details) is handler
    assert tracing_client_interceptors() == []
    assert tracing_server_interceptors() == []


async def test_off_produces_no_spans_and_sends_no_traceparent(
    exporter: InMemorySpanExporter,
) -> None:
    assert configure_tracing("riverbeam-test", enabled=False, exporter=exporter) is None
    seen = Seen()
    async with GrpcServer([_backend(seen)], interceptors=[TracingServerInterceptor()]) as server:
        interceptors = [TracingUnaryUnaryClientInterceptor(), TracingUnaryStreamClientInterceptor()]
        async with _channel(server.address, interceptors) as channel:
            assert await channel.unary_unary("/test.Backend/Echo")(b"x") == b"x"
            assert [i async for i in channel.unary_stream("/test.Backend/Count")(b"x")] == [
                b"0",
                b"1",
                b"2",
            ]
    assert "traceparent" not in seen.metadata[0]
    assert exporter.get_finished_spans() == ()
