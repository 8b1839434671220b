"""A RiverbeamError raised in a servicer reaches the client as the same error, via ErrorInfo."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer, ServiceBinding, open_channel, translate_rpc_errors


async def _fail(request: bytes, context: Any) -> bytes:
    raise RiverbeamError(ErrorCode.ACTION_NOT_PENDING, "action a1 was resolved", action_id="a1")


async def _boom(request: bytes, context: Any) -> bytes:
    raise ValueError("secret internals")


async def _echo(request: bytes, context: Any) -> bytes:
    return request


async def _stream_fail(request: bytes, context: Any) -> AsyncIterator[bytes]:
    yield b"one"
    raise RiverbeamError(ErrorCode.STREAM_GAP, "gap after 1")


def _register(server: grpc.aio.Server) -> None:
    handlers = {
        "Fail": grpc.unary_unary_rpc_method_handler(_fail),
        "Boom": grpc.unary_unary_rpc_method_handler(_boom),
        "Echo": grpc.unary_unary_rpc_method_handler(_echo),
        "Stream": grpc.unary_stream_rpc_method_handler(_stream_fail),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Svc", handlers),))


@pytest.fixture
async def server() -> AsyncIterator[GrpcServer]:
    async with GrpcServer([ServiceBinding("test.Svc", _register)]) as srv:
        yield srv


async def test_error_info_round_trip(server: GrpcServer) -> None:
    async with open_channel(server.address) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                await channel.unary_unary("/test.Svc/Fail")(b"x")
    assert info.value.code is ErrorCode.ACTION_NOT_PENDING
    assert info.value.message == "action a1 was resolved"
    assert info.value.details == {"action_id": "a1"}


async def test_status_code_matches_catalog(server: GrpcServer) -> None:
    async with open_channel(server.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await channel.unary_unary("/test.Svc/Fail")(b"x")
    assert info.value.code() is grpc.StatusCode.FAILED_PRECONDITION


async def test_unexpected_exception_is_internal_without_leaking(server: GrpcServer) -> None:
    async with open_channel(server.address) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                await channel.unary_unary("/test.Svc/Boom")(b"x")
    assert info.value.code is ErrorCode.INTERNAL
    assert "secret" not in info.value.message


async def test_streaming_error_after_items(server: GrpcServer) -> None:
    got: list[bytes] = []
    async with open_channel(server.address) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                async for item in channel.unary_stream("/test.Svc/Stream")(b"x"):
                    got.append(item)
    assert got == [b"one"]
    assert info.value.code is ErrorCode.STREAM_GAP


async def test_health_serving_then_not_serving() -> None:
    srv = GrpcServer([ServiceBinding("test.Svc", _register)])
    await srv.start()
    async with open_channel(srv.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for name in ("", "test.Svc"):
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=name))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        assert await channel.unary_unary("/test.Svc/Echo")(b"hi") == b"hi"
    await srv.stop()
    await srv.stop()  # idempotent


async def test_transport_failure_maps_to_catalog() -> None:
    async with open_channel("127.0.0.1:1") as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors(service="runner"):
                await channel.unary_unary("/test.Svc/Echo")(b"x", timeout=2)
    assert info.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert info.value.transport
    assert info.value.details["service"] == "runner"


async def test_errors_the_server_sent_are_not_transport_errors(server: GrpcServer) -> None:
    async with open_channel(server.address) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                await channel.unary_unary("/test.Svc/Fail")(b"x")
    assert not info.value.transport


async def test_a_stream_is_timed_apart_from_unary_latency(server: GrpcServer) -> None:
    from prometheus_client import REGISTRY

    def sample(name: str, method: str) -> float:
        return REGISTRY.get_sample_value(name, {"service": "test.Svc", "method": method}) or 0.0

    unary_before = sample("riverbeam_rpc_latency_seconds_count", "Stream")
    stream_before = sample("riverbeam_rpc_stream_duration_seconds_count", "Stream")
    async with open_channel(server.address) as channel:
        call = channel.unary_stream("/test.Svc/Stream")(b"")
        with pytest.raises(grpc.RpcError):
            async for _ in call:
                pass
    assert sample("riverbeam_rpc_stream_duration_seconds_count", "Stream") == stream_before + 1
    assert sample("riverbeam_rpc_latency_seconds_count", "Stream") == unary_before
