"""StoreClient's step lanes: begin and finish steps on RunSteps streams, against a real store
service in this process (in memory). The conformance suite runs every store behaviour through
lanes too (the `grpc` kind); this file covers what only the lanes have: batching, errors as
the unary call's, deadlines, a stopping store handing steps back, an older store without
RunSteps, stream rotation, and oversized steps."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from store_kit import OWNER, begin, uid

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer, ServiceBinding
from riverbeam.server import _step_lanes as lanes_module
from riverbeam.store import InMemoryStore, StoreClient
from riverbeam.types import AgentResult, ContentPart
from riverbeam.v1 import store_service_pb2 as pb
from riverbeam.v1 import store_service_pb2_grpc as pb_grpc
from services.store.app import SERVICE_NAME
from services.store.servicer import StoreServicer


class _Counting:
    """A servicer context that counts the messages and steps RunSteps reads."""

    def __init__(self, inner: Any, seen: _Seen) -> None:
        self._inner = inner
        self._seen = seen

    async def read(self) -> Any:
        message = await self._inner.read()
        if isinstance(message, pb.RunStepsRequest):
            self._seen.messages += 1
            self._seen.steps += len(message.steps)
            self._seen.largest_read = max(self._seen.largest_read, message.ByteSize())
        return message

    async def write(self, message: pb.RunStepsResponse) -> None:
        self._seen.results_per_write.append(len(message.results))
        await self._inner.write(message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@dataclass
class _Seen:
    messages: int = 0
    steps: int = 0
    unary: dict[str, int] = field(default_factory=lambda: {"BeginRun": 0, "FinishRun": 0})
    streams: int = 0
    largest_read: int = 0
    results_per_write: list[int] = field(default_factory=list)


class _Servicer(StoreServicer):
    """The store servicer, counting unary calls (a context) apart from steps (none), and
    holding a begin of agent "slow" until `release` is set."""

    def __init__(self, store: InMemoryStore, seen: _Seen) -> None:
        super().__init__(store)
        self.seen = seen
        self.release = asyncio.Event()
        self.holding = asyncio.Event()
        self.held_now = self.held_most = 0

    async def BeginRun(self, request: pb.BeginRunRequest, context: Any) -> pb.BeginRunResponse:
        if context is not None:
            self.seen.unary["BeginRun"] += 1
        if request.agent_name == "slow":
            self.held_now += 1
            self.held_most = max(self.held_most, self.held_now)
            self.holding.set()
            try:
                await self.release.wait()
            finally:
                self.held_now -= 1
        return await super().BeginRun(request, context)

    async def FinishRun(self, request: pb.FinishRunRequest, context: Any) -> pb.FinishRunResponse:
        if context is not None:
            self.seen.unary["FinishRun"] += 1
        return await super().FinishRun(request, context)

    async def RunSteps(self, request_iterator: Any, context: Any) -> None:
        self.seen.streams += 1
        await super().RunSteps(request_iterator, _Counting(context, self.seen))


@dataclass
class _Served:
    store: InMemoryStore
    servicer: _Servicer
    server: GrpcServer
    seen: _Seen


@pytest.fixture
async def served() -> AsyncIterator[_Served]:
    store, seen = InMemoryStore(), _Seen()
    servicer = _Servicer(store, seen)
    binding = ServiceBinding(
        SERVICE_NAME,
        lambda server: pb_grpc.add_StoreServiceServicer_to_server(servicer, server),  # type: ignore[no-untyped-call]
        stopping=servicer.stopping,
    )
    async with GrpcServer([binding], listen="127.0.0.1:0", grace_s=1.0) as server:
        yield _Served(store, servicer, server, seen)


@pytest.fixture
async def client(served: _Served) -> AsyncIterator[StoreClient]:
    store_client = StoreClient(served.server.address, timeout_s=10.0, step_lanes=2)
    yield store_client
    await store_client.aclose()


async def _finish(store: Any, run_id: str, **overrides: Any) -> Any:
    args: dict[str, Any] = {"run_id": run_id, "lease_owner": OWNER, "status": "completed"}
    args.update(overrides)
    return await store.finish_run(**args)


async def test_steps_travel_on_the_stream_and_write_what_unary_steps_write(
    served: _Served, client: StoreClient
) -> None:
    unary = StoreClient(served.server.address, timeout_s=10.0)
    try:
        results = []
        for store in (client, unary):
            begun = await begin(store, human_content=[ContentPart.of_text("hi")])
            reply = [ContentPart.of_text("Echo: hi")]
            result = AgentResult(
                content=reply,
                agent_name="author",
                session_id=begun.session.session_id,
                interaction_id=begun.interaction.interaction_id,
                run_id=begun.run.run_id,
            )
            run = await _finish(store, begun.run.run_id, result=result)
            results.append((begun, run))
    finally:
        await unary.aclose()
    assert served.seen.steps == 2 and served.seen.unary == {"BeginRun": 1, "FinishRun": 1}
    (lane_begun, lane_run), (unary_begun, unary_run) = results
    assert lane_begun.human_message is not None and unary_begun.human_message is not None
    assert lane_begun.human_message.seq == unary_begun.human_message.seq == 1
    assert lane_run.status == unary_run.status == "completed"
    stored = await served.store.get_run(run_id=lane_run.run_id)
    assert stored.status == "completed" and stored.result is not None
    assert stored.result.content[0].text == "Echo: hi"


async def test_steps_queued_together_share_messages(served: _Served, client: StoreClient) -> None:
    await asyncio.gather(*(begin(client) for _ in range(64)))
    assert served.seen.steps == 64
    assert served.seen.messages < 64  # steps queued during a write went out together
    assert served.seen.unary == {"BeginRun": 0, "FinishRun": 0}


async def test_a_refused_step_is_the_unary_calls_error(
    served: _Served, client: StoreClient
) -> None:
    unary = StoreClient(served.server.address, timeout_s=10.0)
    begun = await begin(served.store)
    missing = uid()
    errors = []
    try:
        for store in (client, unary):
            for run_id, owner in ((missing, OWNER), (begun.run.run_id, "runner-b")):
                with pytest.raises(RiverbeamError) as info:
                    await _finish(store, run_id, lease_owner=owner)
                errors.append(info.value)
    finally:
        await unary.aclose()
    lane_errors, unary_errors = errors[:2], errors[2:]
    assert [e.code for e in lane_errors] == [e.code for e in unary_errors]
    assert lane_errors[0].code is ErrorCode.RUN_NOT_FOUND
    for lane, via_unary in zip(lane_errors, unary_errors, strict=True):
        assert lane.message == via_unary.message and lane.details == via_unary.details
    assert served.seen.steps == 2  # the lane's two went as steps


async def test_a_step_past_its_timeout_is_store_unavailable_and_the_lane_goes_on(
    served: _Served,
) -> None:
    # The slow step is held until released, so it times out whatever the timeout; the next
    # step must finish within it, on a loaded CI host too.
    store_client = StoreClient(served.server.address, timeout_s=1.0, step_lanes=1)
    try:
        with pytest.raises(RiverbeamError) as info:
            await begin(store_client, agent_name="slow")
        assert info.value.code is ErrorCode.STORE_UNAVAILABLE
        assert "DEADLINE_EXCEEDED" in info.value.message
        served.servicer.release.set()
        begun = await begin(store_client)  # the same lane, still open
        assert begun.run.status == "running"
    finally:
        await store_client.aclose()
    assert served.seen.streams == 1 and served.seen.unary["BeginRun"] == 0


@pytest.mark.parametrize("lanes", [1, 2], ids=["one_stream", "two_streams"])
async def test_a_stopping_store_answers_what_it_read_and_hands_back_the_rest(
    served: _Served, lanes: int
) -> None:
    """With one lane the later step is queued behind the slow one on the same stream; with
    two it goes on a stream that has nothing running."""
    client = StoreClient(served.server.address, timeout_s=10.0, step_lanes=lanes)
    try:
        await _stop_while_a_step_is_held(served, client)
    finally:
        await client.aclose()


async def _stop_while_a_step_is_held(served: _Served, client: StoreClient) -> None:
    slow = asyncio.create_task(begin(client, agent_name="slow"))
    await asyncio.wait_for(served.servicer.holding.wait(), 5)
    served.servicer.stopping()  # as GrpcServer.stop does first
    later = asyncio.create_task(begin(client))
    # The later step was not carried out on any stream: handed back at once (not once the
    # slow step ends), it went as a unary call, exactly once.
    later_begun = await asyncio.wait_for(later, 5)
    assert not slow.done()
    # The slow step was read before the drain: answered on its stream when it ends.
    served.servicer.release.set()
    slow_begun = await asyncio.wait_for(slow, 5)
    assert slow_begun.run.status == later_begun.run.status == "running"
    assert served.seen.unary == {"BeginRun": 1, "FinishRun": 0}
    runs = [served.store._t.runs.get(b.run.run_id) for b in (slow_begun, later_begun)]
    assert all(run is not None for run in runs)
    for _ in range(100):  # every stream ends once drained
        if not served.servicer._steps._open:
            break
        await asyncio.sleep(0.01)
    assert not served.servicer._steps._open


async def test_a_store_without_run_steps_gets_unary_calls() -> None:
    store = InMemoryStore()
    servicer = StoreServicer(store)
    unary_only = grpc.method_handlers_generic_handler(
        SERVICE_NAME,
        {
            name: grpc.unary_unary_rpc_method_handler(
                getattr(servicer, name),
                request_deserializer=getattr(pb, f"{name}Request").FromString,
                response_serializer=getattr(pb, f"{name}Response").SerializeToString,
            )
            for name in ("BeginRun", "FinishRun")
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((unary_only,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    store_client = StoreClient(f"127.0.0.1:{port}", timeout_s=10.0, step_lanes=2)
    try:
        first = await begin(store_client)
        second = await begin(store_client)
        await _finish(store_client, first.run.run_id)
        assert store_client._steps._unsupported
        assert (await store.get_run(run_id=first.run.run_id)).status == "completed"
        assert (await store.get_run(run_id=second.run.run_id)).status == "running"
    finally:
        await store_client.aclose()
        await server.stop(None)


async def test_an_unreachable_store_is_store_unavailable(served: _Served) -> None:
    address = served.server.address
    await served.server.stop(0.1)
    store_client = StoreClient(address, timeout_s=5.0, step_lanes=1)
    try:
        with pytest.raises(RiverbeamError) as info:
            await begin(store_client)
        assert info.value.code is ErrorCode.STORE_UNAVAILABLE
    finally:
        await store_client.aclose()


async def test_lanes_rotate_their_streams_and_close_the_old_ones(
    served: _Served, client: StoreClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lanes_module, "ROTATE_S", 0.0)
    for _ in range(6):
        begun = await begin(client)
        await _finish(client, begun.run.run_id)
    assert served.seen.streams == 12 and served.seen.steps == 12
    for _ in range(100):  # a retired stream closes once its steps are answered
        if len(served.servicer._steps._open) <= 2:
            break
        await asyncio.sleep(0.01)
    assert len(served.servicer._steps._open) <= 2


async def test_a_step_too_large_for_a_lane_goes_as_a_unary_call(
    served: _Served, client: StoreClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lanes_module, "MAX_STEP_BYTES", 200)
    small = await begin(client, human_content=[ContentPart.of_text("hi")])
    large = await begin(client, human_content=[ContentPart.of_text("x" * 500)])
    assert small.run.status == large.run.status == "running"
    assert served.seen.steps == 1 and served.seen.unary["BeginRun"] == 1


async def test_a_step_in_flight_when_the_client_closes_is_not_sent_again(
    served: _Served,
) -> None:
    store_client = StoreClient(served.server.address, timeout_s=10.0, step_lanes=1)
    slow = asyncio.create_task(begin(store_client, agent_name="slow"))
    await asyncio.wait_for(served.servicer.holding.wait(), 5)
    await store_client.aclose()
    with pytest.raises(RiverbeamError) as info:
        await slow
    assert info.value.code is ErrorCode.STORE_UNAVAILABLE
    assert served.seen.unary == {"BeginRun": 0, "FinishRun": 0}  # its outcome is unknown
    served.servicer.release.set()


async def test_queued_steps_and_results_share_messages_only_up_to_a_size(
    served: _Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    from riverbeam.server import _step_wire

    text = "y" * 2_000
    monkeypatch.setattr(_step_wire, "MAX_BATCH_BYTES", 5_000)  # both ends
    store_client = StoreClient(served.server.address, timeout_s=10.0, step_lanes=1)
    try:
        begun = await asyncio.gather(
            *(begin(store_client, human_content=[ContentPart.of_text(text)]) for _ in range(24))
        )
    finally:
        await store_client.aclose()
    assert len({b.run.run_id for b in begun}) == 24 and served.seen.steps == 24
    # At most two 2 kB steps fit a 5 kB message: more messages than a batch of 24 would need,
    # and none much over the bound (its steps' own framing aside).
    assert served.seen.messages >= 12 and served.seen.largest_read < 5_000 + 200
    # Each begin's reply holds the 2 kB human message: two at most share a message.
    assert sum(served.seen.results_per_write) == 24
    assert max(served.seen.results_per_write) <= 2


async def test_a_stream_opened_while_the_store_stops_hands_its_steps_back_at_once(
    served: _Served, client: StoreClient
) -> None:
    served.servicer.stopping()
    begun = await asyncio.wait_for(begin(client), 3)  # not held until the grace runs out
    assert begun.run.status == "running"
    # Read, not carried out: it went again as a unary call.
    assert served.seen.unary == {"BeginRun": 1, "FinishRun": 0} and served.seen.steps == 1


async def test_a_stream_carries_out_a_bounded_number_of_steps_at_once(
    served: _Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    from riverbeam.server import _step_serving as serving_module

    monkeypatch.setattr(serving_module, "MAX_IN_FLIGHT", 3)
    store_client = StoreClient(served.server.address, timeout_s=10.0, step_lanes=1)
    try:
        held = [asyncio.create_task(begin(store_client, agent_name="slow")) for _ in range(8)]
        await asyncio.wait_for(served.servicer.holding.wait(), 5)
        await asyncio.sleep(0.2)
        assert served.servicer.held_now == 3  # the others wait, read no further
        served.servicer.release.set()
        begun = await asyncio.wait_for(asyncio.gather(*held), 5)
    finally:
        await store_client.aclose()
    assert len({b.run.run_id for b in begun}) == 8 and served.servicer.held_most == 3
    assert served.seen.unary == {"BeginRun": 0, "FinishRun": 0}
