"""RunInvoke calls on RunInvokes streams (the router's invoke lanes) against unary calls.

A runner servicer is served in process with a stand-in for RiverBeam, so that each test
decides what an invoke does (answer, refuse, hold until cancelled) and sees what the runner
was asked. Every test runs the same invoke both ways (lanes=2, and lanes=0: unary calls) and
asserts that the caller gets the same answer, the same error, and that the runner sees the
same cancellation.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import DEFAULT_MODEL, Grant, RunnerClient
from riverbeam.server import GrpcServer, ServiceBinding
from riverbeam.types import AgentResult, ContentPart, InvokeRequest, StreamAck
from riverbeam.v1 import runner_service_pb2 as pb
from riverbeam.v1 import runner_service_pb2_grpc as pb_grpc
from services.runner.app import SERVICE_NAME
from services.runner.servicer import RunnerServicer

GUARD_S = 5.0


def _counted(code: str) -> float:
    """RunInvoke calls the runner counted with `code`, by the RPC metrics."""
    labels = {"service": "riverbeam.v1.RunnerService", "method": "RunInvoke", "code": code}
    return REGISTRY.get_sample_value("riverbeam_rpc_requests_total", labels) or 0.0


@dataclass
class _Beam:
    """What the servicer calls: answers echo, refuses "busy", holds "hold" until `release`
    (or forever), and records every invoke it was given and every one cancelled."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    holding: asyncio.Event = field(default_factory=asyncio.Event)
    seen: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    cancelled_now: asyncio.Event = field(default_factory=asyncio.Event)

    async def invoke_sent(
        self, request: InvokeRequest, *, model: Any, grant: Grant
    ) -> tuple[AgentResult | StreamAck, Any]:
        text = request.content[0].text or ""
        self.seen.append(text)
        if request.agent_name == "busy":
            raise RiverbeamError(
                ErrorCode.SESSION_BUSY, "the session has a run", session_id=request.session_id
            )
        if request.agent_name == "stray":
            # A CancelledError of the handler's own: what it awaited was cancelled.
            other = asyncio.get_running_loop().create_future()
            other.cancel()
            await other
        if request.agent_name == "hold":
            self.holding.set()
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled.append(text)
                self.cancelled_now.set()
                raise
        if request.stream:
            ack = StreamAck(
                request_id=request.request_id or "",
                interaction_id="i",
                session_id=request.session_id or "",
                subject="s",
                stream_name="RIVERBEAM_STREAM",
            )
            return ack, None
        return AgentResult(content=[ContentPart.of_text(f"Echo: {text}")], agent_name="echo"), None


@dataclass
class _Seen:
    unary: int = 0
    streams: int = 0


class _Servicer(RunnerServicer):
    def __init__(self, beam: _Beam, seen: _Seen) -> None:
        super().__init__(beam)  # type: ignore[arg-type]
        self.seen = seen

    async def RunInvoke(self, request: Any, context: Any) -> Any:
        self.seen.unary += 1
        return await super().RunInvoke(request, context)

    async def RunInvokes(self, request_iterator: Any, context: Any) -> None:
        self.seen.streams += 1
        await super().RunInvokes(request_iterator, context)


@dataclass
class _Served:
    beam: _Beam
    servicer: _Servicer
    server: GrpcServer
    seen: _Seen


@pytest.fixture
async def served() -> AsyncIterator[_Served]:
    beam, seen = _Beam(), _Seen()
    servicer = _Servicer(beam, seen)
    binding = ServiceBinding(
        SERVICE_NAME,
        lambda server: pb_grpc.add_RunnerServiceServicer_to_server(servicer, server),  # type: ignore[no-untyped-call]
        stopping=servicer.stopping,
    )
    async with GrpcServer([binding], listen="127.0.0.1:0", grace_s=1.0) as server:
        yield _Served(beam, servicer, server, seen)


@pytest.fixture(params=[2, 0], ids=["lanes", "unary"])
def lanes(request: pytest.FixtureRequest) -> int:
    count: int = request.param
    return count


@pytest.fixture
async def client(served: _Served, lanes: int) -> AsyncIterator[RunnerClient]:
    runner = RunnerClient(served.server.address, invoke_lanes=lanes)
    yield runner
    await runner.aclose()


def _request(agent: str, text: str, **extra: Any) -> InvokeRequest:
    return InvokeRequest(
        agent_name=agent,
        content=[ContentPart.of_text(text)],
        session_id=str(uuid.uuid4()),
        request_id=str(uuid.uuid4()),
        **extra,
    )


async def _invoke(client: RunnerClient, request: InvokeRequest, **kw: Any) -> Any:
    return await client.run_invoke(request, model=DEFAULT_MODEL, grant=Grant(), **kw)


async def test_invokes_answer_as_unary_calls_and_travel_as_the_lanes_say(
    served: _Served, client: RunnerClient, lanes: int
) -> None:
    ok = _counted("OK")
    answers = await asyncio.wait_for(
        asyncio.gather(*(_invoke(client, _request("echo", f"m{i}")) for i in range(6))), GUARD_S
    )
    assert [a.content[0].text for a in answers] == [f"Echo: m{i}" for i in range(6)]
    ack = await _invoke(client, _request("echo", "s", stream=True))
    assert isinstance(ack, StreamAck) and ack.subject == "s"
    assert sorted(served.beam.seen) == sorted([*(f"m{i}" for i in range(6)), "s"])
    if lanes:
        assert served.seen.unary == 0
        assert 1 <= served.seen.streams <= lanes
    else:
        assert (served.seen.unary, served.seen.streams) == (7, 0)
    # Counted as RunInvoke calls either way (the stream itself is not a call).
    assert _counted("OK") - ok == 7
    reply = await client.run_invoke_reply(
        _request("echo", "raw"), model=DEFAULT_MODEL, grant=Grant()
    )
    assert type(reply.message).DESCRIPTOR.full_name == "riverbeam.v1.InvokeResponse"


async def test_a_refused_invoke_raises_what_the_runner_raised(client: RunnerClient) -> None:
    request = _request("busy", "x")
    with pytest.raises(RiverbeamError) as refused:
        await asyncio.wait_for(_invoke(client, request), GUARD_S)
    assert refused.value.code is ErrorCode.SESSION_BUSY
    assert refused.value.message == "the session has a run"
    assert refused.value.details["session_id"] == request.session_id
    assert not refused.value.transport


async def test_a_handler_that_raises_cancelled_ends_the_call_cancelled(
    client: RunnerClient,
) -> None:
    with pytest.raises(RiverbeamError) as stray:
        await asyncio.wait_for(_invoke(client, _request("stray", "x")), GUARD_S)
    assert stray.value.code is ErrorCode.RUN_CANCELLED and stray.value.transport


async def test_a_caller_that_goes_away_cancels_its_run(
    served: _Served, client: RunnerClient
) -> None:
    cancelled = _counted("CANCELLED")
    held = asyncio.create_task(_invoke(client, _request("hold", "gone")))
    await asyncio.wait_for(served.beam.holding.wait(), GUARD_S)
    held.cancel()
    await asyncio.wait_for(served.beam.cancelled_now.wait(), GUARD_S)
    assert served.beam.cancelled == ["gone"]
    for _ in range(100):  # counted once the handler has ended
        if _counted("CANCELLED") > cancelled:
            break
        await asyncio.sleep(0.01)
    assert _counted("CANCELLED") - cancelled == 1
    # The client goes on: the next invoke is answered.
    answer = await asyncio.wait_for(_invoke(client, _request("echo", "after")), GUARD_S)
    assert answer.content[0].text == "Echo: after"


async def test_a_deadline_ends_the_call_and_the_run_as_a_unary_deadline(
    served: _Served, client: RunnerClient
) -> None:
    with pytest.raises(RiverbeamError) as late:
        await asyncio.wait_for(_invoke(client, _request("hold", "late"), timeout_s=0.3), GUARD_S)
    assert late.value.code is ErrorCode.STREAM_TIMEOUT and late.value.transport
    await asyncio.wait_for(served.beam.cancelled_now.wait(), GUARD_S)
    assert served.beam.cancelled == ["late"]


@pytest.mark.parametrize("stream_lanes", [1, 2], ids=["one_stream", "two_streams"])
async def test_a_stopping_runner_answers_what_it_read_and_hands_back_the_rest(
    served: _Served, stream_lanes: int
) -> None:
    """With one lane the later invoke is queued behind the held one on the same stream;
    with two it goes on a stream that has nothing running."""
    client = RunnerClient(served.server.address, invoke_lanes=stream_lanes)
    try:
        slow = asyncio.create_task(_invoke(client, _request("hold", "read")))
        await asyncio.wait_for(served.beam.holding.wait(), GUARD_S)
        served.servicer.stopping()  # as the runner does when it starts to drain
        # The later one was not read by any stream: handed back at once, not once the held
        # run ends. Sent as a unary call, it is refused before anything is begun (this is
        # the only replica), and never ran.
        with pytest.raises(RiverbeamError) as refused:
            await asyncio.wait_for(_invoke(client, _request("echo", "later")), GUARD_S)
        assert refused.value.code is ErrorCode.RUNNER_STOPPING
        assert "later" not in served.beam.seen
        assert not slow.done()
        # The held invoke was read before the drain: answered on its stream when it ends.
        served.beam.release.set()
        read = await asyncio.wait_for(slow, GUARD_S)
        assert read.content[0].text == "Echo: read"
    finally:
        await client.aclose()


async def test_what_a_stopping_runner_refuses_goes_to_another_replica(
    served: _Served, lanes: int
) -> None:
    other = _Beam()
    other_servicer = _Servicer(other, _Seen())
    binding = ServiceBinding(
        SERVICE_NAME,
        lambda server: pb_grpc.add_RunnerServiceServicer_to_server(other_servicer, server),  # type: ignore[no-untyped-call]
        stopping=other_servicer.stopping,
    )
    async with GrpcServer([binding], listen="127.0.0.1:0", grace_s=1.0) as second:
        target = f"ipv4:{served.server.address},{second.address}"
        client = RunnerClient(target, invoke_lanes=lanes)
        try:
            if not lanes:
                # Both replicas reached first, so that round-robin takes unary calls to each
                # from now on (lanes pin a stream to one replica: their calls are not spread).
                for i in range(50):
                    if served.beam.seen and other.seen:
                        break
                    await asyncio.wait_for(_invoke(client, _request("echo", f"warm{i}")), GUARD_S)
                assert served.beam.seen and other.seen
            began_there, began_here = len(served.beam.seen), len(other.seen)
            calls_there = served.seen.unary
            served.servicer.stopping()
            texts = [f"m{i}" for i in range(12)]
            answers = await asyncio.wait_for(
                asyncio.gather(*(_invoke(client, _request("echo", t)) for t in texts)), GUARD_S
            )
            assert [a.content[0].text for a in answers] == [f"Echo: {t}" for t in texts]
            assert len(served.beam.seen) == began_there  # the stopping replica began none
            assert sorted(other.seen[began_here:]) == sorted(texts)
            if not lanes:
                # Unary calls reached the stopping replica, were refused, and went on.
                assert served.seen.unary > calls_there
        finally:
            await client.aclose()


async def test_a_runner_that_goes_away_mid_invoke_is_unavailable(
    served: _Served, client: RunnerClient
) -> None:
    """What the router's lost-runner path waits on: a transport BEM-003 (BEM-034's trigger)."""
    held = asyncio.create_task(_invoke(client, _request("hold", "cut")))
    await asyncio.wait_for(served.beam.holding.wait(), GUARD_S)
    await served.server.stop(0)
    with pytest.raises(RiverbeamError) as lost:
        await asyncio.wait_for(held, GUARD_S)
    assert lost.value.code is ErrorCode.SERVICE_UNAVAILABLE and lost.value.transport


async def test_a_runner_without_run_invokes_gets_unary_calls() -> None:
    beam, seen = _Beam(), _Seen()
    servicer = _Servicer(beam, seen)
    unary_only = grpc.method_handlers_generic_handler(
        SERVICE_NAME,
        {
            "RunInvoke": grpc.unary_unary_rpc_method_handler(
                servicer.RunInvoke,
                request_deserializer=pb.RunInvokeRequest.FromString,
                response_serializer=pb.RunInvokeResponse.SerializeToString,
            )
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((unary_only,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = RunnerClient(f"127.0.0.1:{port}", invoke_lanes=2)
    try:
        for text in ("one", "two", "three"):
            answer = await asyncio.wait_for(_invoke(client, _request("echo", text)), GUARD_S)
            assert answer.content[0].text == f"Echo: {text}"
        assert seen.unary == 3 and beam.seen == ["one", "two", "three"]
    finally:
        await client.aclose()
        await server.stop(0)


async def test_a_retired_stream_whose_last_invoke_was_cancelled_ends(
    served: _Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    from riverbeam.server import _step_lanes

    monkeypatch.setattr(_step_lanes, "ROTATE_S", 0.0)  # every invoke retires the last stream
    client = RunnerClient(served.server.address, invoke_lanes=1)
    try:
        held = asyncio.create_task(_invoke(client, _request("hold", "old stream")))
        await asyncio.wait_for(served.beam.holding.wait(), GUARD_S)
        answer = await asyncio.wait_for(_invoke(client, _request("echo", "new")), GUARD_S)
        assert answer.content[0].text == "Echo: new"
        assert len(served.servicer._invokes._open) == 2  # the held run keeps the old one
        held.cancel()
        await asyncio.wait_for(served.beam.cancelled_now.wait(), GUARD_S)
        # Nothing is left on the retired stream: it ends, with no result to wake it.
        for _ in range(200):
            if len(served.servicer._invokes._open) == 1:
                break
            await asyncio.sleep(0.01)
        assert len(served.servicer._invokes._open) == 1
    finally:
        await client.aclose()
