"""InvokeStream refuses what it cannot stream before anything runs."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from riverbeam.auth import DevAuthenticator
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway import Gateway, stream_request
from riverbeam.routing import ModelList
from riverbeam.store import InMemoryStore
from riverbeam.types import ContentPart, InvokeRequest
from riverbeam.v1 import types_pb2
from tests.unit.gateway.follow_kit import ScriptedFrames


class CountingRunner:
    """A runner that must not be reached: it counts the invokes it is sent."""

    def __init__(self) -> None:
        self.invokes = 0

    async def list_agents(self) -> list[Any]:
        return []

    async def run_invoke(self, *args: Any, **kwargs: Any) -> Any:
        self.invokes += 1
        raise AssertionError("the runner was reached")


def request(*, stream: bool = True, request_id: str | None = None) -> InvokeRequest:
    return InvokeRequest(
        agent_name="assistant",
        content=[ContentPart.of_text("hi")],
        session_id=str(uuid.uuid4()),
        stream=stream,
        request_id=request_id,
    )


def gateway(runner: CountingRunner, frames: Any) -> tuple[Gateway, Any]:
    auth = DevAuthenticator()
    gw = Gateway(
        authenticator=auth,
        runner=runner,  # type: ignore[arg-type]
        store=InMemoryStore(),
        models=ModelList.default(),
        frames=frames,
    )
    return gw, auth.principal


async def test_a_router_without_stream_access_refuses_before_running() -> None:
    runner = CountingRunner()
    gw, principal = gateway(runner, None)
    with pytest.raises(RiverbeamError) as refused:
        await anext(gw.invoke_stream(principal, request(request_id=str(uuid.uuid4()))))
    assert refused.value.code is ErrorCode.STREAM_NOT_FOUND
    assert runner.invokes == 0


@pytest.mark.parametrize(
    "req", [request(stream=False, request_id=str(uuid.uuid4())), request(request_id=None)]
)
async def test_a_request_not_made_by_stream_request_is_refused(req: InvokeRequest) -> None:
    runner = CountingRunner()
    gw, principal = gateway(runner, ScriptedFrames([], ErrorCode.STREAM_TIMEOUT))
    with pytest.raises(RiverbeamError) as refused:
        await anext(gw.invoke_stream(principal, req))
    assert refused.value.code is ErrorCode.INVALID_ARGUMENT
    assert runner.invokes == 0


def test_stream_request_streams_and_names_the_request() -> None:
    wire = types_pb2.InvokeRequest(agent_name="assistant", session_id=str(uuid.uuid4()))
    made = stream_request(wire)
    assert made is wire and wire.stream is True
    assert str(uuid.UUID(wire.request_id)) == wire.request_id
    given = str(uuid.uuid4())
    kept = stream_request(types_pb2.InvokeRequest(request_id=given, stream=False))
    assert kept.request_id == given and kept.stream is True
