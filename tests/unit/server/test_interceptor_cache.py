"""The error interceptor wraps a method's handler once, not on every call, and still counts
every call under its own labels."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import ErrorInterceptor, open_channel, translate_rpc_errors

_SERVICE = "cachetest.Svc"


async def _echo(request: bytes, context: Any) -> bytes:
    return request


async def _fail(request: bytes, context: Any) -> bytes:
    raise RiverbeamError(ErrorCode.ACTION_NOT_PENDING, "action a1 was resolved", action_id="a1")


async def _stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
    yield request
    yield request


def _count(method: str, code: str) -> float:
    value = REGISTRY.get_sample_value(
        "riverbeam_rpc_requests_total", {"service": _SERVICE, "method": method, "code": code}
    )
    return value or 0.0


def _latencies(method: str) -> float:
    value = REGISTRY.get_sample_value(
        "riverbeam_rpc_latency_seconds_count", {"service": _SERVICE, "method": method}
    )
    return value or 0.0


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, ErrorInterceptor]]:
    interceptor = ErrorInterceptor()
    server = grpc.aio.server(interceptors=[interceptor])
    handlers = {
        "Echo": grpc.unary_unary_rpc_method_handler(_echo),
        "Fail": grpc.unary_unary_rpc_method_handler(_fail),
        "Stream": grpc.unary_stream_rpc_method_handler(_stream),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(_SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}", interceptor
    finally:
        await server.stop(None)


async def test_each_method_is_wrapped_once(served: tuple[str, ErrorInterceptor]) -> None:
    address, interceptor = served
    bem = ErrorCode.ACTION_NOT_PENDING.code
    echo_ok, fail_bem, stream_ok = _count("Echo", "OK"), _count("Fail", bem), _count("Stream", "OK")
    echo_timed = _latencies("Echo")
    async with open_channel(address) as channel:
        for _ in range(5):
            assert await channel.unary_unary(f"/{_SERVICE}/Echo")(b"hi") == b"hi"
        for _ in range(3):
            with pytest.raises(RiverbeamError) as info:
                async with translate_rpc_errors():
                    await channel.unary_unary(f"/{_SERVICE}/Fail")(b"x")
            assert info.value.code is ErrorCode.ACTION_NOT_PENDING
        for _ in range(2):
            items = [i async for i in channel.unary_stream(f"/{_SERVICE}/Stream")(b"s")]
            assert items == [b"s", b"s"]
    # Three methods, ten calls: three handlers built.
    assert interceptor.handlers_built == 3
    assert _count("Echo", "OK") == echo_ok + 5
    assert _count("Fail", bem) == fail_bem + 3
    assert _count("Stream", "OK") == stream_ok + 2
    assert _latencies("Echo") == echo_timed + 5
