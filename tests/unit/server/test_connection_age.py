"""A connection the server ages out (RIVERBEAM_MAX_CONNECTION_AGE_S) takes no new calls, and
what is running on it runs to its end unless a grace is set: a runner's call lasts as long
as its run, and used to be cut 30 s after the age (every 5 minutes by default)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from riverbeam.server._grpc_server import connection_age_options

_SERVICE = "agetest.Svc"
_AGE_S = 0.3
_CALL_S = 1.5  # a call that outlives the connection's age by far


async def _slow(request: bytes, context: object) -> bytes:
    await asyncio.sleep(_CALL_S)
    return request


async def _serve(grace_s: float | None) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server(options=connection_age_options(_AGE_S, grace_s))
    handlers = {"Slow": grpc.unary_unary_rpc_method_handler(_slow)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(_SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


@pytest.fixture
async def calls() -> AsyncIterator[list[grpc.aio.Server]]:
    servers: list[grpc.aio.Server] = []
    yield servers
    for server in servers:
        await server.stop(None)


async def test_without_a_grace_a_call_outliving_the_age_runs_to_its_end(
    calls: list[grpc.aio.Server],
) -> None:
    server, address = await _serve(None)
    calls.append(server)
    async with grpc.aio.insecure_channel(address) as channel:
        assert await channel.unary_unary(f"/{_SERVICE}/Slow")(b"x", timeout=30) == b"x"
        # The next call gets a connection of its own and is answered too.
        assert await channel.unary_unary(f"/{_SERVICE}/Slow")(b"y", timeout=30) == b"y"


async def test_with_a_grace_a_call_outliving_it_is_cut(calls: list[grpc.aio.Server]) -> None:
    server, address = await _serve(0.3)
    calls.append(server)
    async with grpc.aio.insecure_channel(address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as cut:
            await channel.unary_unary(f"/{_SERVICE}/Slow")(b"x", timeout=30)
    assert cut.value.code() is grpc.StatusCode.UNAVAILABLE


def test_the_options_say_what_the_settings_say() -> None:
    assert connection_age_options(None, 5.0) == []
    assert connection_age_options(300.0, None) == [("grpc.max_connection_age_ms", 300_000)]
    assert connection_age_options(300.0, 30.0) == [
        ("grpc.max_connection_age_ms", 300_000),
        ("grpc.max_connection_age_grace_ms", 30_000),
    ]
