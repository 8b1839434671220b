"""What the router does per new-session invoke, counted: wire-type conversions, lock takes,
model copies. Each count is of something the invoke path no longer does."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from riverbeam.auth import DevAuthenticator
from riverbeam.gateway import Gateway
from riverbeam.routing import ModelList
from riverbeam.runtime import Grant, RunnerClient
from riverbeam.store import InMemoryStore
from riverbeam.types import (
    AgentMetadata,
    AgentResult,
    InvokeRequest,
    WireModel,
    deep_copy,
)
from riverbeam.v1 import runner_service_pb2 as runner_pb
from riverbeam.v1 import types_pb2
from services.router.servicer import RiverbeamServicer

AGENT = "assistant"


def _result_reply(request: Any) -> Any:
    # Made as protobuf, so that the fake counts no conversion of its own.
    result = types_pb2.AgentResult(
        agent_name=AGENT,
        content=[types_pb2.ContentPart(type="text", text="hello back")],
        model_used="echo",
        session_id=request.session_id,
        request_id=request.request_id,
        interaction_id=str(uuid.uuid4()),
        run_id=str(uuid.uuid4()),
    )
    result.metadata.update({"k": "v"})
    return runner_pb.RunInvokeResponse(result=result)


def _ack_reply(request: Any) -> Any:
    ack = types_pb2.StreamAck(
        request_id=request.request_id,
        session_id=request.session_id,
        interaction_id=str(uuid.uuid4()),
        subject=f"riverbeam.stream.{request.request_id}",
        stream_name="RIVERBEAM",
    )
    return runner_pb.RunInvokeResponse(ack=ack)


class FakeRunnerStub:
    """The runner service's stub: answers RunInvoke with a reply made from the request."""

    def __init__(self, *, ack: bool = False) -> None:
        self.ack = ack
        self.replies: list[Any] = []
        self.sent: list[Any] = []
        self.list_calls = 0

    async def RunInvoke(self, message: Any, **_: Any) -> Any:
        # As off the wire: the reply is parsed from bytes, the request is serialised.
        wire = runner_pb.RunInvokeRequest.FromString(message.SerializeToString())
        self.sent.append(wire)
        made = (_ack_reply if self.ack else _result_reply)(wire.request)
        reply = runner_pb.RunInvokeResponse.FromString(made.SerializeToString())
        self.replies.append(reply)
        return reply

    async def ListRegisteredAgents(self, message: Any, **_: Any) -> Any:
        self.list_calls += 1
        await asyncio.sleep(0)  # a round trip: concurrent callers overlap here
        agent = AgentMetadata(name=AGENT, description="test")
        return runner_pb.ListRegisteredAgentsResponse(agents=[agent.to_proto()])


class Ctx:
    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()

    def time_remaining(self) -> float:
        return 30.0


@pytest.fixture
async def runner() -> Any:
    client = RunnerClient("127.0.0.1:1", invoke_lanes=0)
    yield client
    await client.aclose()


def _gateway(runner: RunnerClient, stub: FakeRunnerStub) -> Gateway:
    runner._stub = stub
    return Gateway(
        authenticator=DevAuthenticator(),
        runner=runner,
        store=InMemoryStore(),
        models=ModelList.default(),
    )


def _invoke_request() -> Any:
    request = types_pb2.InvokeRequest(
        agent_name=AGENT,
        content=[types_pb2.ContentPart(type="text", text="hi")],
        session_id=str(uuid.uuid4()),
    )
    request.metadata.update({"client": "test"})
    return request


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Every WireModel.from_proto / to_proto made, as (direction, type name)."""
    seen: list[tuple[str, str]] = []
    from_proto = WireModel.from_proto.__func__  # type: ignore[attr-defined]
    to_proto = WireModel.to_proto

    def counting_from(cls: type[WireModel], msg: Any) -> Any:
        seen.append(("from", cls.__name__))
        return from_proto(cls, msg)

    def counting_to(self: WireModel) -> Any:
        seen.append(("to", type(self).__name__))
        return to_proto(self)

    monkeypatch.setattr(WireModel, "from_proto", classmethod(counting_from))
    monkeypatch.setattr(WireModel, "to_proto", counting_to)
    yield seen


@pytest.mark.parametrize("ack", [False, True], ids=["result", "ack"])
async def test_the_runners_answer_is_relayed_unconverted(
    runner: RunnerClient, conversions: list[tuple[str, str]], ack: bool
) -> None:
    stub = FakeRunnerStub(ack=ack)
    servicer = RiverbeamServicer(_gateway(runner, stub))
    await servicer.Invoke(_invoke_request(), Ctx())  # the agent list is read and cached
    conversions.clear()

    response = await servicer.Invoke(_invoke_request(), Ctx())

    # The caller's request is read once; the runner's request is the caller's message with
    # the caller's identity written over (its four strings set directly, not converted; the
    # routed model's message is the one made for the first call); the runner's answer is
    # neither read into a wire type nor written back.
    assert sorted(conversions) == [("from", "InvokeRequest")]
    reply = stub.replies[-1]
    outcome = "ack" if ack else "result"
    assert response.WhichOneof("outcome") == outcome
    assert getattr(response, outcome) == getattr(reply, outcome)


async def test_gateway_invoke_still_answers_a_wire_type(runner: RunnerClient) -> None:
    stub = FakeRunnerStub()
    gateway = _gateway(runner, stub)
    principal = gateway.authenticate(None)

    result = await gateway.invoke(principal, InvokeRequest.from_proto(_invoke_request()))

    assert isinstance(result, AgentResult)
    assert result == AgentResult.from_proto(stub.replies[-1].result)


class CountingLock(asyncio.Lock):
    def __init__(self) -> None:
        super().__init__()
        self.taken = 0

    async def acquire(self) -> bool:
        self.taken += 1
        return await super().acquire()


async def test_a_fresh_agent_list_is_read_without_the_lock(runner: RunnerClient) -> None:
    stub = FakeRunnerStub()
    gateway = _gateway(runner, stub)
    lock = CountingLock()
    gateway._agents_lock = lock
    servicer = RiverbeamServicer(gateway)
    await servicer.Invoke(_invoke_request(), Ctx())  # the list is read (under the lock)
    assert (lock.taken, stub.list_calls) == (1, 1)

    for _ in range(5):
        await servicer.Invoke(_invoke_request(), Ctx())

    assert (lock.taken, stub.list_calls) == (1, 1)


async def test_concurrent_invokes_read_a_missing_agent_list_once(runner: RunnerClient) -> None:
    stub = FakeRunnerStub()
    servicer = RiverbeamServicer(_gateway(runner, stub))

    await asyncio.gather(*(servicer.Invoke(_invoke_request(), Ctx()) for _ in range(8)))

    assert stub.list_calls == 1
    assert len(stub.replies) == 8


async def test_a_stale_agent_list_is_read_again(runner: RunnerClient) -> None:
    stub = FakeRunnerStub()
    gateway = _gateway(runner, stub)
    servicer = RiverbeamServicer(gateway)
    await servicer.Invoke(_invoke_request(), Ctx())
    gateway._agents_at -= 2 * gateway._agents_ttl_s

    await asyncio.gather(*(servicer.Invoke(_invoke_request(), Ctx()) for _ in range(4)))

    assert stub.list_calls == 2


async def test_a_models_message_is_made_again_when_the_model_differs(
    runner: RunnerClient, conversions: list[tuple[str, str]]
) -> None:
    stub = FakeRunnerStub()
    runner._stub = stub
    model = ModelList.default().models[0]
    changed = model.model_copy(update={"max_tokens": model.max_tokens + 1})
    expected = [model.to_proto()] * 3 + [changed.to_proto()]
    grant = Grant(subject="dev")
    request = InvokeRequest.from_proto(_invoke_request())
    conversions.clear()

    for _ in range(3):  # copies of one listed model, as the router's routing hands out
        await runner.run_invoke_reply(request, model=deep_copy(model), grant=grant)
    await runner.run_invoke_reply(request, model=changed, grant=grant)
    model.capabilities.append("added-later")  # mutated after its message was made
    await runner.run_invoke_reply(request, model=model, grant=grant)

    assert conversions.count(("to", "ModelConfig")) == 3
    assert [wire.model for wire in stub.sent] == [*expected, model.to_proto()]


class LocalRunner:
    """A runner port that is not relayed (an in-process runner): it keeps the model it gets."""

    def __init__(self) -> None:
        self.models: list[Any] = []

    async def run_invoke(self, request: Any, *, model: Any, grant: Any, **_: Any) -> Any:
        self.models.append(model)
        reply = _result_reply(request.to_proto())
        return AgentResult.from_proto(reply.result)

    async def run_resume(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError

    async def cancel_run(self, request_id: str, *, reason: str | None = None) -> bool:
        return False

    async def list_agents(self) -> list[AgentMetadata]:
        return [AgentMetadata(name=AGENT)]


@pytest.fixture
def routed_copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the models the model router copied for its decisions."""
    from riverbeam.routing import _router

    copied: list[str] = []

    def counting(model: Any) -> Any:
        copied.append(model.name)
        return deep_copy(model)

    monkeypatch.setattr(_router, "deep_copy", counting)
    return copied


async def test_a_relayed_invoke_copies_no_routed_model(
    runner: RunnerClient, routed_copies: list[str]
) -> None:
    stub = FakeRunnerStub()
    servicer = RiverbeamServicer(_gateway(runner, stub))

    for _ in range(2):
        await servicer.Invoke(_invoke_request(), Ctx())

    assert routed_copies == []
    # The runner is sent the configured model all the same.
    assert [wire.model for wire in stub.sent] == [ModelList.default().models[0].to_proto()] * 2


async def test_an_in_process_runner_still_gets_a_copy_of_the_routed_model(
    routed_copies: list[str],
) -> None:
    local = LocalRunner()
    models = ModelList.default()
    gateway = Gateway(
        authenticator=DevAuthenticator(), runner=local, store=InMemoryStore(), models=models
    )

    await gateway.invoke(gateway.authenticate(None), InvokeRequest.from_proto(_invoke_request()))

    (model,) = local.models
    assert routed_copies == [model.name]
    assert model == models.models[0] and model is not models.models[0]
