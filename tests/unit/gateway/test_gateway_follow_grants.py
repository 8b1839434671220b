"""A FollowStream right after the StreamAck this router handed to the same caller skips the
store read; every other follow is checked as before, and refused exactly as before."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from riverbeam.auth import DevAuthenticator, Principal, Role
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway import Gateway
from riverbeam.gateway._grants import GRANT_TTL_S, StreamGrants
from riverbeam.routing import ModelList
from riverbeam.runtime import Grant, RunnerReply
from riverbeam.store import InMemoryStore, NewAction
from riverbeam.types import (
    ActionRequired,
    ActionResponseEnvelope,
    AgentMetadata,
    AgentResult,
    ContentPart,
    InvokeAuthContext,
    InvokeRequest,
    ModelConfig,
    ResumePayload,
    StreamAck,
    StreamChunk,
)
from riverbeam.v1 import runner_service_pb2 as runner_pb
from tests.unit.gateway.follow_kit import (
    CountingStore,
    ScriptedFrames,
    SubscribingFrames,
    chunk,
    done,
)

AGENT = "assistant"
ALICE = Principal("alice", org_id="acme")
BOB = Principal("bob", org_id="acme")
ALICE_AT_GLOBEX = Principal("alice", org_id="globex")
GLOBEX_BACKEND = Principal("svc-globex", org_id="globex", roles=frozenset({Role.BACKEND}))
ACME_APPROVER = Principal("carol", org_id="acme", roles=frozenset({Role.APPROVER}))


class BeginningRunner:
    """Begins each run as the runner does (the store's owner check under the Grant's
    require_owner / require_org, the session made with the caller's ids) and answers a
    StreamAck naming the run, or for stream=false the finished run's result."""

    def __init__(self, store: InMemoryStore, *, run_ids: bool = True) -> None:
        self.store = store
        self.run_ids = run_ids

    async def list_agents(self) -> list[AgentMetadata]:
        return [AgentMetadata(name=AGENT, description="test")]

    async def _begin(self, request: Any, grant: Grant, **extra: Any) -> tuple[str, str]:
        auth = request.auth_context
        run_id = str(uuid.uuid4())
        begun = await self.store.begin_run(
            session_id=request.session_id,
            agent_name=request.agent_name or AGENT,
            run_id=run_id,
            lease_owner="r1",
            lease_ttl_s=30,
            user_id=auth.user_id if auth else None,
            org_id=auth.org_id if auth else None,
            request_id=request.request_id,
            human_content=request.content,
            require_owner=grant.require_owner,
            require_org=grant.require_org,
            **extra,
        )
        return run_id, begun.interaction.interaction_id

    def _ack(self, request: Any, run_id: str, interaction_id: str) -> StreamAck:
        return StreamAck(
            request_id=request.request_id,
            interaction_id=interaction_id,
            session_id=request.session_id,
            subject=f"riverbeam.stream.{request.request_id}",
            stream_name="RIVERBEAM",
            run_id=run_id if self.run_ids else None,
        )

    async def run_invoke(
        self,
        request: InvokeRequest,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
    ) -> AgentResult | StreamAck:
        run_id, interaction_id = await self._begin(request, grant)
        if request.stream:
            return self._ack(request, run_id, interaction_id)
        result = AgentResult(agent_name=AGENT, content=[ContentPart.of_text("bye")])
        await self.store.finish_run(
            run_id=run_id, lease_owner="r1", status="completed", result=result
        )
        return result.model_copy(update={"run_id": run_id, "request_id": request.request_id})

    async def run_resume(
        self,
        request: ResumePayload,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
    ) -> StreamAck:
        run_id, interaction_id = await self._begin(
            request, grant, interaction_id=request.interaction_id, action_responses=request.actions
        )
        return self._ack(request, run_id, interaction_id)

    async def cancel_run(self, request_id: str, *, reason: str | None = None) -> bool:
        return False


class RelayingRunner(BeginningRunner):
    """As the RunnerClient: the invoke answer comes back as the protobuf it came in."""

    async def run_invoke_reply(
        self,
        request: InvokeRequest,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
        wire: Any | None = None,
        replaced: frozenset[str] = frozenset(),
    ) -> RunnerReply:
        outcome = await self.run_invoke(request, model=model, grant=grant, timeout_s=timeout_s)
        if isinstance(outcome, StreamAck):
            return RunnerReply(runner_pb.RunInvokeResponse(ack=outcome.to_proto()))
        return RunnerReply(runner_pb.RunInvokeResponse(result=outcome.to_proto()))


class FailingRunner(BeginningRunner):
    async def run_invoke(self, request: InvokeRequest, **_: Any) -> AgentResult | StreamAck:
        raise RiverbeamError(ErrorCode.INTERNAL, "the runner failed")


class Router:
    """One router's Gateway over a shared (counted) store and scripted frames."""

    def __init__(
        self,
        store: CountingStore,
        frames: ScriptedFrames,
        *,
        runner: type[BeginningRunner] = BeginningRunner,
        grants: StreamGrants | None = None,
        **runner_options: Any,
    ) -> None:
        self.store = store
        self.frames = frames
        self.grants = grants if grants is not None else StreamGrants()
        self.gateway = Gateway(
            authenticator=DevAuthenticator(),
            runner=runner(store.inner, **runner_options),  # type: ignore[arg-type]
            store=store,  # type: ignore[arg-type]
            models=ModelList.default(),
            frames=frames,
            stream_grants=self.grants,
        )

    async def stream(
        self,
        principal: Principal,
        *,
        session_id: str | None = None,
        auth: InvokeAuthContext | None = None,
        stream: bool = True,
        request_id: str | None = None,
    ) -> Any:
        request = InvokeRequest(
            agent_name=AGENT,
            content=[ContentPart.of_text("hi")],
            session_id=session_id or str(uuid.uuid4()),
            stream=stream,
            auth_context=auth,
            request_id=request_id,
        )
        return await self.gateway.invoke(principal, request)

    async def follow(self, principal: Principal, request_id: str) -> list[StreamChunk]:
        self.store.reads.clear()
        return [f async for f in self.gateway.follow(principal, request_id, after_seq=0)]

    async def refusal(self, principal: Principal, request_id: str) -> RiverbeamError:
        with pytest.raises(RiverbeamError) as info:
            await self.follow(principal, request_id)
        return info.value


def stored(frames: list[StreamChunk] | None = None) -> SubscribingFrames:
    return SubscribingFrames(frames or [chunk(1), done(2)], then=ErrorCode.STREAM_TIMEOUT)


@pytest.mark.parametrize("runner", [BeginningRunner, RelayingRunner], ids=["wire", "relayed"])
async def test_the_acked_caller_follows_without_a_store_read(runner: type[BeginningRunner]) -> None:
    frames = stored()
    router = Router(CountingStore(InMemoryStore()), frames, runner=runner)
    ack = await router.stream(ALICE)
    assert isinstance(ack, StreamAck)

    got = await router.follow(ALICE, ack.request_id)

    assert [f.seq for f in got] == [1, 2]
    assert router.store.reads == []  # no run, no session read: the grant answered
    assert (frames.subscribed, frames.closed) == (1, 1)
    # Relayed from the subscription made at once, as for a running run (no short waits).
    assert frames.calls[0] == {"subscribed": True}
    assert frames.calls[1]["start"] is None
    # A reconnect within the TTL is granted too.
    assert [f.seq for f in await router.follow(ALICE, ack.request_id)] == [1, 2]
    assert router.store.reads == []


@pytest.mark.parametrize(
    "other",
    [BOB, ALICE_AT_GLOBEX, GLOBEX_BACKEND, ACME_APPROVER],
    ids=["same-org-user", "same-user-id-other-org", "other-org-backend", "approver"],
)
async def test_anyone_else_is_refused_exactly_as_without_a_grant(other: Principal) -> None:
    frames = stored()
    store = CountingStore(InMemoryStore())
    router = Router(store, frames)
    ack = await router.stream(ALICE)
    # Another router over the same store never saw the ack: today's answer.
    ungranted = await Router(store, stored()).refusal(other, ack.request_id)

    refused = await router.refusal(other, ack.request_id)

    assert refused.code is ErrorCode.REQUEST_NOT_FOUND
    assert (refused.code, refused.message, refused.details) == (
        ungranted.code,
        ungranted.message,
        ungranted.details,
    )
    assert store.reads[0] == "get_run_with_session"  # the full check ran
    assert frames.calls == [] and (frames.subscribed, frames.closed) == (1, 1)
    # Asking as someone else revoked nothing.
    assert [f.seq for f in await router.follow(ALICE, ack.request_id)] == [1, 2]
    assert store.reads == []


async def test_another_router_checks_in_the_store() -> None:
    store = CountingStore(InMemoryStore())
    ack = await Router(store, stored()).stream(ALICE)
    other = Router(store, stored())
    assert [f.seq for f in await other.follow(ALICE, ack.request_id)] == [1, 2]
    assert store.reads == ["get_run_with_session"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_an_expired_grant_takes_the_store_read() -> None:
    clock = Clock()
    router = Router(CountingStore(InMemoryStore()), stored(), grants=StreamGrants(clock=clock))
    ack = await router.stream(ALICE)

    clock.now += GRANT_TTL_S - 1
    assert [f.seq for f in await router.follow(ALICE, ack.request_id)] == [1, 2]
    assert router.store.reads == []
    clock.now += 1
    assert [f.seq for f in await router.follow(ALICE, ack.request_id)] == [1, 2]
    assert router.store.reads == ["get_run_with_session"]
    assert len(router.grants) == 0


async def test_an_evicted_grant_takes_the_store_read() -> None:
    router = Router(CountingStore(InMemoryStore()), stored(), grants=StreamGrants(max_grants=2))
    acks = [await router.stream(ALICE) for _ in range(3)]
    assert len(router.grants) == 2

    await router.follow(ALICE, acks[0].request_id)
    assert router.store.reads == ["get_run_with_session"]
    await router.follow(ALICE, acks[2].request_id)
    assert router.store.reads == []


async def test_an_invoke_that_is_refused_or_fails_records_no_grant() -> None:
    store = CountingStore(InMemoryStore())
    router = Router(store, stored())
    bobs = await router.stream(BOB)
    assert len(router.grants) == 1

    # Alice streams into Bob's session: the begin-run step refuses her (BEM-025).
    with pytest.raises(RiverbeamError) as info:
        await router.stream(ALICE, session_id=bobs.session_id)
    assert info.value.code is ErrorCode.SESSION_NOT_FOUND
    # Alice names Bob's request id: the begin-run step refuses it (BEM-031).
    with pytest.raises(RiverbeamError) as info:
        await router.stream(ALICE, request_id=bobs.request_id)
    assert info.value.code is ErrorCode.REQUEST_ID_REUSED
    # The runner fails; a non-streaming invoke answers a result; an ack naming no run.
    failing = Router(store, stored(), runner=FailingRunner)
    with pytest.raises(RiverbeamError):
        await failing.stream(ALICE)
    result = await router.stream(ALICE, stream=False)
    assert isinstance(result, AgentResult)
    no_run = Router(store, stored(), run_ids=False)
    acked = await no_run.stream(ALICE)

    assert len(router.grants) == 1 and len(failing.grants) == 0 and len(no_run.grants) == 0
    assert router.grants.lookup(ALICE, bobs.request_id) is None
    assert result.request_id is not None
    await router.follow(ALICE, result.request_id)
    assert store.reads[0] == "get_run_with_session"
    await no_run.follow(ALICE, acked.request_id)
    assert store.reads[0] == "get_run_with_session"


def _acting(user: str, org: str | None = None) -> InvokeAuthContext:
    return InvokeAuthContext(user_id=user, org_id=org)


@pytest.mark.parametrize(
    ("principal", "auth"),
    [
        (ALICE, None),
        (Principal("dave"), None),  # unscoped
        (Principal("svc", org_id="acme", roles=frozenset({Role.BACKEND})), _acting("erin")),
        (Principal("svc", org_id="acme", roles=frozenset({Role.BACKEND})), None),
        (Principal("svc", roles=frozenset({Role.BACKEND})), _acting("erin", "initech")),
        (ACME_APPROVER, None),
        (Principal("root", roles=frozenset({Role.ADMIN})), None),
        (Principal("root", org_id="acme", roles=frozenset({Role.ADMIN})), _acting("erin", "x")),
    ],
    ids=[
        "user",
        "unscoped-user",
        "backend-for-user",
        "backend-as-itself",
        "unscoped-backend-for-user-of-an-org",
        "approver-as-itself",
        "admin",
        "admin-for-user-of-another-org",
    ],
)
@pytest.mark.parametrize("session", ["new", "existing"])
async def test_every_caller_granted_passes_the_full_check(
    principal: Principal, auth: InvokeAuthContext | None, session: str
) -> None:
    """A grant never lets through a follow that the store read and _may_reach would refuse."""
    store = CountingStore(InMemoryStore())
    router = Router(store, stored())
    session_id = None
    if session == "existing":
        session_id = (await router.stream(principal, auth=auth)).session_id
    ack = await router.stream(principal, session_id=session_id, auth=auth)
    assert router.grants.lookup(principal, ack.request_id) is not None

    checked = Router(store, stored())  # no grant: the full check
    assert [f.seq for f in await checked.follow(principal, ack.request_id)] == [1, 2]
    assert store.reads == ["get_run_with_session"]


async def test_a_session_first_made_without_an_org_is_granted_only_to_a_matching_caller() -> None:
    """The first org named sticks: the caller that named it passes the full check."""
    store = CountingStore(InMemoryStore())
    router = Router(store, stored())
    unscoped = await router.stream(Principal("alice"))
    ack = await router.stream(ALICE, session_id=unscoped.session_id)
    session = await store.inner.get_session(session_id=ack.session_id)
    assert session.org_id == "acme"

    checked = Router(store, stored())
    assert [f.seq for f in await checked.follow(ALICE, ack.request_id)] == [1, 2]
    # The same user id of another org is refused before anything is begun.
    with pytest.raises(RiverbeamError) as info:
        await router.stream(ALICE_AT_GLOBEX, session_id=ack.session_id)
    assert info.value.code is ErrorCode.SESSION_NOT_FOUND


async def test_a_granted_follow_ends_a_run_that_never_published_its_end() -> None:
    """Treated as running, the relay still re-reads the run and ends it from the record."""
    frames = ScriptedFrames([chunk(1), chunk(2)], then=ErrorCode.STREAM_TIMEOUT)
    store = CountingStore(InMemoryStore())
    router = Router(store, frames)
    ack = await router.stream(ALICE)
    result = AgentResult(agent_name=AGENT, content=[ContentPart.of_text("bye")])
    assert ack.run_id is not None
    await store.inner.finish_run(
        run_id=ack.run_id, lease_owner="r1", status="completed", result=result
    )

    got = await router.follow(ALICE, ack.request_id)

    assert [f.seq for f in got] == [1, 2, 3]
    assert (got[-1].type, got[-1].run_id, got[-1].request_id) == (
        "done",
        ack.run_id,
        ack.request_id,
    )
    assert got[-1].result is not None and got[-1].result.text == "bye"
    # No access read: only the run, again, each time the stream went quiet.
    assert store.reads == ["get_run", "get_run"]
    # First as a running run's follow, then the short waits of a finished one.
    assert frames.calls[0]["start"] is None and frames.calls[0]["idle"] == 15.0
    assert frames.calls[1]["after_seq"] == 2 and frames.calls[1]["idle"] == 1.0


async def paused(store: InMemoryStore, owner: Principal) -> tuple[str, str, str]:
    """A run of `owner` that paused for one approval: (session, interaction, action) ids."""
    session_id, run_id, action_id = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    begun = await store.begin_run(
        session_id=session_id,
        agent_name=AGENT,
        run_id=run_id,
        lease_owner="r1",
        lease_ttl_s=30,
        user_id=owner.subject,
        org_id=owner.org_id,
        request_id=str(uuid.uuid4()),
        human_content=[ContentPart.of_text("push it")],
    )
    asked = ActionRequired(action_id=action_id, tool="git_push")
    await store.finish_run(
        run_id=run_id,
        lease_owner="r1",
        status="interrupted",
        result=AgentResult(agent_name=AGENT, interrupted=True, action_required=[asked]),
        pending_actions=[NewAction(action_id=action_id, tool="git_push")],
    )
    return session_id, begun.interaction.interaction_id, action_id


@pytest.mark.parametrize(
    ("resumer", "granted"),
    [
        (ALICE, True),
        (Principal("svc", org_id="acme", roles=frozenset({Role.BACKEND})), True),
        (ACME_APPROVER, False),  # may resume, not read: the approval rule reads the store
    ],
    ids=["owner", "backend-of-the-org", "approver"],
)
async def test_a_resume_is_granted_to_who_may_read_the_session(
    resumer: Principal, granted: bool
) -> None:
    store = CountingStore(InMemoryStore())
    router = Router(store, stored())
    session_id, interaction_id, action_id = await paused(store.inner, ALICE)
    auth = _acting("alice") if Role.BACKEND in resumer.roles else None
    payload = ResumePayload(
        session_id=session_id,
        interaction_id=interaction_id,
        actions=[
            ActionResponseEnvelope(
                action_id=action_id, kind="confirmation", request_id=str(uuid.uuid4())
            )
        ],
        auth_context=auth,
    )
    ack = await router.gateway.resume(resumer, payload)

    assert (router.grants.lookup(resumer, ack.request_id) is not None) is granted
    assert [f.seq for f in await router.follow(resumer, ack.request_id)] == [1, 2]
    assert (store.reads == []) is granted
    # Whoever was granted passes the full check too (another router).
    assert [f.seq for f in await Router(store, stored()).follow(resumer, ack.request_id)] == [1, 2]
    assert router.grants.lookup(BOB, ack.request_id) is None


class CancellingRunner(BeginningRunner):
    """Answers every CancelRun true, as a runner that tells its replicas does."""

    def __init__(self, store: InMemoryStore, **options: Any) -> None:
        super().__init__(store, **options)
        self.cancels: list[str] = []

    async def cancel_run(self, request_id: str, *, reason: str | None = None) -> bool:
        self.cancels.append(request_id)
        return True


async def test_the_acked_caller_cancels_with_one_run_read_and_no_session_read() -> None:
    store = CountingStore(InMemoryStore())
    router = Router(store, stored(), runner=CancellingRunner)
    ack = await router.stream(ALICE)
    store.reads.clear()

    assert await router.gateway.cancel(ALICE, ack.request_id, "stop") is True

    assert store.reads == ["get_run_by_request"]  # the status, not who may reach it


async def test_a_granted_cancel_of_a_run_that_ended_answers_false_without_asking_the_runner() -> (
    None
):
    store = CountingStore(InMemoryStore())
    router = Router(store, stored(), runner=CancellingRunner)
    ack = await router.stream(ALICE)
    assert ack.run_id is not None
    await store.inner.finish_run(
        run_id=ack.run_id,
        lease_owner="r1",
        status="completed",
        result=AgentResult(agent_name=AGENT, content=[ContentPart.of_text("bye")]),
    )

    assert await router.gateway.cancel(ALICE, ack.request_id, None) is False
    runner = router.gateway._runner
    assert isinstance(runner, CancellingRunner) and runner.cancels == []


@pytest.mark.parametrize(
    "other",
    [BOB, ALICE_AT_GLOBEX, GLOBEX_BACKEND, ACME_APPROVER],
    ids=["same-org-user", "same-user-id-other-org", "other-org-backend", "approver"],
)
async def test_anyone_elses_cancel_is_refused_exactly_as_without_a_grant(
    other: Principal,
) -> None:
    store = CountingStore(InMemoryStore())
    router = Router(store, stored(), runner=CancellingRunner)
    ack = await router.stream(ALICE)
    ungranted = Router(store, stored(), runner=CancellingRunner)
    with pytest.raises(RiverbeamError) as before:
        await ungranted.gateway.cancel(other, ack.request_id, None)
    store.reads.clear()

    with pytest.raises(RiverbeamError) as refused:
        await router.gateway.cancel(other, ack.request_id, None)

    assert refused.value.code is ErrorCode.REQUEST_NOT_FOUND
    assert (refused.value.message, refused.value.details) == (
        before.value.message,
        before.value.details,
    )
    assert store.reads[0] == "get_run_with_session"  # the full check, in one read
    # The owner without a grant (another router) is checked in that one read and may cancel.
    store.reads.clear()
    assert await ungranted.gateway.cancel(ALICE, ack.request_id, None) is True
    assert store.reads == ["get_run_with_session"]
