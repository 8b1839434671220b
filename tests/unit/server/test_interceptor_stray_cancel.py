"""A handler that raises CancelledError of its own (something it awaited was cancelled, its
call was not) ends its call CANCELLED at once; left alone, gRPC sends no status and the caller
waits out its deadline. A call the caller cancels is still just cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import ErrorInterceptor, open_channel, translate_rpc_errors

_SERVICE = "straytest.Svc"
# Far below the calls' deadline: an answer that comes only at the deadline fails the test.
_PROMPT_S = 5.0
started = asyncio.Event()


async def _stray() -> None:
    other = asyncio.get_running_loop().create_future()
    other.cancel()
    await other  # raises CancelledError in a task nobody cancelled


async def _unary(request: bytes, context: Any) -> bytes:
    await _stray()
    return request


async def _stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
    yield request
    await _stray()


async def _hang(request: bytes, context: Any) -> bytes:
    started.set()
    await asyncio.Event().wait()
    return request


@pytest.fixture
async def address() -> AsyncIterator[str]:
    server = grpc.aio.server(interceptors=[ErrorInterceptor()])
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(_unary),
        "Stream": grpc.unary_stream_rpc_method_handler(_stream),
        "Hang": grpc.unary_unary_rpc_method_handler(_hang),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(_SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


async def test_a_unary_handler_s_own_cancelled_error_ends_the_call_cancelled(address: str) -> None:
    async with open_channel(address) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                call = channel.unary_unary(f"/{_SERVICE}/Unary")(b"x", timeout=60)
                await asyncio.wait_for(call, _PROMPT_S)
    assert info.value.code is ErrorCode.RUN_CANCELLED and info.value.transport


async def test_a_streaming_handler_s_own_cancelled_error_ends_the_call_cancelled(
    address: str,
) -> None:
    got: list[bytes] = []
    async with open_channel(address) as channel:
        with pytest.raises(RiverbeamError) as info:
            async with translate_rpc_errors():
                call = channel.unary_stream(f"/{_SERVICE}/Stream")(b"s", timeout=60)

                async def read() -> None:
                    async for item in call:
                        got.append(item)

                await asyncio.wait_for(read(), _PROMPT_S)
    assert got == [b"s"]
    assert info.value.code is ErrorCode.RUN_CANCELLED and info.value.transport


async def test_a_call_its_caller_cancels_is_only_cancelled(address: str) -> None:
    started.clear()
    async with open_channel(address) as channel:
        call = channel.unary_unary(f"/{_SERVICE}/Hang")(b"x", timeout=60)
        await asyncio.wait_for(started.wait(), _PROMPT_S)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The server goes on answering.
        with pytest.raises(RiverbeamError):
            async with translate_rpc_errors():
                await asyncio.wait_for(
                    channel.unary_unary(f"/{_SERVICE}/Unary")(b"y", timeout=60), _PROMPT_S
                )
