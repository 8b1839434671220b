"""A unary invoke whose runner connection breaks after the run began is answered from the run
record once the run ends (another replica continued it), as the runner would have answered."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from riverbeam.auth import DevAuthenticator
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway import Gateway
from riverbeam.routing import ModelList
from riverbeam.store import InMemoryStore
from riverbeam.types import (
    ActionRequired,
    AgentMetadata,
    AgentResult,
    ContentPart,
    InvokeRequest,
    StreamAck,
)

AID = str(uuid.uuid4())


def transport_error() -> RiverbeamError:
    err = RiverbeamError(ErrorCode.SERVICE_UNAVAILABLE, "connection reset")
    err.transport = True
    return err


class DyingRunner:
    """Begins the run, then its connection breaks; `then` finishes the run (or not)."""

    def __init__(self, store: InMemoryStore, then: dict[str, Any] | None, *, begin: bool = True):
        self.store = store
        self.then = then
        self.begin = begin
        self.finisher: asyncio.Task[None] | None = None

    async def list_agents(self) -> list[AgentMetadata]:
        return [AgentMetadata(name="assistant", description="test")]

    async def run_invoke(self, request: InvokeRequest, **_: Any) -> AgentResult | StreamAck:
        if self.begin:
            run_id = str(uuid.uuid4())
            await self.store.begin_run(
                session_id=request.session_id,
                agent_name="assistant",
                run_id=run_id,
                lease_owner="dead-runner",
                lease_ttl_s=30,
                request_id=request.request_id,
                human_content=request.content,
            )
            if self.then is not None:
                self.finisher = asyncio.create_task(self._finish(run_id, self.then))
        raise transport_error()

    async def _finish(self, run_id: str, then: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        # The replica that took it over records the end (the owner check is the test's).
        await self.store.finish_run(run_id=run_id, lease_owner="dead-runner", **then)


def gateway(runner: DyingRunner, *, wait_s: float = 30.0) -> tuple[Gateway, Any]:
    auth = DevAuthenticator()
    gw = Gateway(
        authenticator=auth,
        runner=runner,  # type: ignore[arg-type]
        store=runner.store,
        models=ModelList.default(),
        recovery_wait_s=wait_s,
    )
    return gw, auth.principal


def request(*, stream: bool = False) -> InvokeRequest:
    return InvokeRequest(
        agent_name="assistant",
        content=[ContentPart.of_text("hi")],
        session_id=str(uuid.uuid4()),
        stream=stream,
    )


def answer(text: str, **extra: Any) -> AgentResult:
    return AgentResult(agent_name="assistant", content=[ContentPart.of_text(text)], **extra)


async def test_a_run_continued_elsewhere_answers_the_caller_with_its_result() -> None:
    store = InMemoryStore()
    runner = DyingRunner(store, {"status": "completed", "result": answer("recovered")})
    gw, principal = gateway(runner)
    result = await gw.invoke(principal, request())
    assert isinstance(result, AgentResult) and result.text == "recovered"


async def test_an_interrupted_run_answers_with_its_pending_actions() -> None:
    store = InMemoryStore()
    action = ActionRequired(action_id=AID, kind="outcome_unknown", tool="commit")
    held = answer("", action_required=[action], interrupted=True)
    runner = DyingRunner(store, {"status": "interrupted", "result": held})
    gw, principal = gateway(runner)
    result = await gw.invoke(principal, request())
    assert isinstance(result, AgentResult) and result.interrupted
    assert [(a.action_id, a.kind) for a in result.action_required] == [(AID, "outcome_unknown")]


@pytest.mark.parametrize(
    ("then", "code"),
    [
        ({"status": "failed", "error_code": "BEM-034", "error_message": "lost"}, "BEM-034"),
        ({"status": "failed", "error_code": "BEM-267", "error_message": "again"}, "BEM-267"),
        ({"status": "cancelled", "error_code": "BEM-033"}, "BEM-033"),
    ],
)
async def test_a_run_that_ended_badly_answers_with_its_code(
    then: dict[str, Any], code: str
) -> None:
    store = InMemoryStore()
    runner = DyingRunner(store, then)
    gw, principal = gateway(runner)
    with pytest.raises(RiverbeamError) as info:
        await gw.invoke(principal, request())
    assert info.value.bem == code
    assert info.value.details["run_id"]


async def test_a_run_still_running_when_the_wait_ends_is_bem_270() -> None:
    store = InMemoryStore()
    gw, principal = gateway(DyingRunner(store, None), wait_s=0.3)
    with pytest.raises(RiverbeamError) as info:
        await gw.invoke(principal, request())
    assert info.value.code is ErrorCode.RUN_STILL_RECOVERING
    assert info.value.details.keys() >= {"run_id", "request_id"}


@pytest.mark.parametrize("stream", [False, True], ids=["no-wait", "streaming"])
async def test_without_a_wait_or_for_a_stream_a_running_run_is_bem_034_at_once(
    stream: bool,
) -> None:
    store = InMemoryStore()
    gw, principal = gateway(DyingRunner(store, None), wait_s=0.0 if not stream else 30.0)
    with pytest.raises(RiverbeamError) as info:
        await gw.invoke(principal, request(stream=stream))
    assert info.value.code is ErrorCode.RUN_LOST


async def test_a_run_never_begun_is_the_transport_error() -> None:
    store = InMemoryStore()
    gw, principal = gateway(DyingRunner(store, None, begin=False))
    with pytest.raises(RiverbeamError) as info:
        await gw.invoke(principal, request())
    assert info.value.code is ErrorCode.SERVICE_UNAVAILABLE and info.value.transport


class CountingStore(InMemoryStore):
    """Counts the run reads of the router's polls."""

    def __init__(self, clock: Any) -> None:
        super().__init__(clock=clock)
        self.reads = 0
        self.read = asyncio.Condition()

    async def get_run(self, *, run_id: str) -> Any:
        run = await super().get_run(run_id=run_id)
        async with self.read:
            self.reads += 1
            self.read.notify_all()
        return run

    async def reads_past(self, count: int) -> None:
        async with asyncio.timeout(5.0):  # a hang guard
            async with self.read:
                await self.read.wait_for(lambda: self.reads > count)


class CancelRecorder(DyingRunner):
    def __init__(self, store: InMemoryStore) -> None:
        super().__init__(store, None)
        self.cancels: list[tuple[str, str | None]] = []
        self.cancelled = asyncio.Event()

    async def cancel_run(self, request_id: str, *, reason: str | None = None) -> bool:
        self.cancels.append((request_id, reason))
        self.cancelled.set()
        return True


async def test_a_caller_that_leaves_while_waiting_cancels_the_run_once_it_is_held_again() -> None:
    now = [datetime.now(UTC)]
    store = CountingStore(lambda: now[0])
    runner = CancelRecorder(store)
    gw, principal = gateway(runner)
    req = request().model_copy(update={"request_id": str(uuid.uuid4())})
    call = asyncio.create_task(gw.invoke(principal, req))
    await store.reads_past(0)  # the router is polling the run
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # Nobody holds the run yet: there is nothing to cancel, and nothing is sent.
    reads = store.reads
    await store.reads_past(reads + 1)
    assert runner.cancels == []

    now[0] += timedelta(seconds=60)  # the dead runner's lease expired
    [taken] = await store.take_over_expired_runs(new_owner="runner-b", lease_ttl_s=30)
    async with asyncio.timeout(5.0):
        await runner.cancelled.wait()
    assert runner.cancels[0] == (req.request_id, "caller cancelled the request")

    # Once the run has ended, the router stops.
    await store.finish_run(
        run_id=taken.run.run_id,
        lease_owner="runner-b",
        status="cancelled",
        error_code="BEM-033",
        lease_epoch=taken.run.lease_epoch,
    )
    async with asyncio.timeout(5.0):
        await asyncio.gather(*gw._cancelling)
    assert not gw._cancelling


def cut_by_grpc() -> RiverbeamError:
    """What RunnerClient raises for a call gRPC cancelled in transit (a stopping server)."""
    err = RiverbeamError(ErrorCode.RUN_CANCELLED, "runner CANCELLED: CANCELLED")
    err.transport = True
    return err


class CutThenServing:
    """The first call is cut by gRPC (after beginning the run when `begin`); later ones are
    answered, as another replica would."""

    def __init__(self, store: InMemoryStore, *, begin: bool = False, cuts: int = 1) -> None:
        self.store = store
        self.begin = begin
        self.cuts = cuts
        self.calls = 0

    async def list_agents(self) -> list[AgentMetadata]:
        return [AgentMetadata(name="assistant", description="test")]

    async def run_invoke(self, request: InvokeRequest, **_: Any) -> AgentResult | StreamAck:
        self.calls += 1
        if self.calls <= self.cuts:
            if self.begin:
                await self.store.begin_run(
                    session_id=request.session_id,
                    agent_name="assistant",
                    run_id=str(uuid.uuid4()),
                    lease_owner="stopping-runner",
                    lease_ttl_s=30,
                    request_id=request.request_id,
                    human_content=request.content,
                )
            raise cut_by_grpc()
        return answer("from the other replica")


async def test_a_call_cut_before_its_run_began_is_sent_once_more() -> None:
    store = InMemoryStore()
    runner = CutThenServing(store)
    gw, principal = gateway(runner)  # type: ignore[arg-type]
    result = await gw.invoke(principal, request())
    assert isinstance(result, AgentResult) and result.text == "from the other replica"
    assert runner.calls == 2


async def test_a_call_cut_twice_is_the_cut_and_sent_only_once_more() -> None:
    store = InMemoryStore()
    runner = CutThenServing(store, cuts=2)
    gw, principal = gateway(runner)  # type: ignore[arg-type]
    with pytest.raises(RiverbeamError) as info:
        await gw.invoke(principal, request())
    assert info.value.code is ErrorCode.RUN_CANCELLED and info.value.transport
    assert runner.calls == 2


async def test_a_call_cut_after_its_run_began_is_not_sent_again() -> None:
    """The run exists: it is answered from its record (here, still running past a zero
    wait: BEM-034), never begun a second time."""
    store = InMemoryStore()
    runner = CutThenServing(store, begin=True)
    gw, principal = gateway(runner, wait_s=0.0)  # type: ignore[arg-type]
    with pytest.raises(RiverbeamError) as info:
        await gw.invoke(principal, request())
    assert info.value.code is ErrorCode.RUN_LOST
    assert runner.calls == 1


async def test_a_cancel_the_runner_answered_itself_is_not_sent_again() -> None:
    store = InMemoryStore()

    class Cancelling(CutThenServing):
        async def run_invoke(self, request: InvokeRequest, **_: Any) -> AgentResult | StreamAck:
            self.calls += 1
            raise RiverbeamError(ErrorCode.RUN_CANCELLED, "cancelled on request")

    runner = Cancelling(store)
    gw, principal = gateway(runner)  # type: ignore[arg-type]
    with pytest.raises(RiverbeamError) as info:
        await gw.invoke(principal, request())
    assert info.value.code is ErrorCode.RUN_CANCELLED and not info.value.transport
    assert runner.calls == 1
