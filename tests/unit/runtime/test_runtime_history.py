"""The begin-run step brings the run's history and checks the session's owner (one store call)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import Grant, PipelineOptions, RiverBeam
from riverbeam.runtime._client import _grant as grant_to_proto
from riverbeam.store import BeginRunResult, InMemoryStore, NewMessage
from riverbeam.types import AgentResult, ContentPart, InvokeRequest, StreamChunk
from services.runner.servicer import _grant as grant_from_proto
from tests.unit.runtime.runtime_kit import FramesAgent, text_request


class CountingStore(InMemoryStore):
    """Counts message listings and keeps what each begin_run was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.listings = 0
        self.begins: list[dict[str, Any]] = []

    async def list_messages(self, **kwargs: Any) -> Any:
        self.listings += 1
        return await super().list_messages(**kwargs)

    async def begin_run(self, **kwargs: Any) -> BeginRunResult:
        self.begins.append(kwargs)
        return await super().begin_run(**kwargs)


class Peek(FramesAgent):
    """Records the texts of the history it was given, and answers "ok"."""

    def __init__(self, name: str) -> None:
        super().__init__(name, [])
        self.seen: list[list[str]] = []

    async def stream(self, input: Any, context: Any) -> Any:
        self.seen.append([m.text for m in context.history])
        yield StreamChunk(
            type="done",
            result=AgentResult(agent_name=self.name, content=[ContentPart.of_text("ok")]),
        )


def _as(user: str, text: str, session_id: str, agent: str = "peek") -> dict[str, Any]:
    return text_request(agent, text, session_id, auth_context={"user_id": user})


async def test_history_comes_with_the_begin_run_step() -> None:
    store = CountingStore()
    beam = RiverBeam(store=store, options=PipelineOptions(max_history_messages=2))
    peek = Peek("peek")
    beam.register_agent(peek)
    sid = str(uuid.uuid4())
    for text in ("one", "two", "three"):
        await beam.invoke(text_request("peek", text, sid))
    # Newest two before each turn, this turn's human message excluded.
    assert peek.seen == [[], ["one", "ok"], ["two", "ok"]]
    assert [b["history_limit"] for b in store.begins] == [2, 2, 2]
    assert store.listings == 0  # no separate read of the session


async def test_a_long_session_is_not_read_whole() -> None:
    store = CountingStore()
    first = await store.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="peek",
        run_id=str(uuid.uuid4()),
        lease_owner="elsewhere",
        lease_ttl_s=60,
        human_content=[ContentPart.of_text("m1")],
    )
    sid = first.session.session_id
    await store.finish_run(
        run_id=first.run.run_id,
        lease_owner="elsewhere",
        status="completed",
        messages=[
            NewMessage(role="human" if i % 2 else "ai", content=[ContentPart.of_text(f"m{i}")])
            for i in range(2, 1001)
        ],
    )
    beam = RiverBeam(store=store)  # max_history_messages: 200
    peek = Peek("peek")
    beam.register_agent(peek)
    prepared = await beam.pipeline.prepare(InvokeRequest.parse(text_request("peek", "now", sid)))
    assert [m.seq for m in prepared.begun.history] == list(range(801, 1001))
    await beam.pipeline.execute(prepared)
    (seen,) = peek.seen
    assert seen == [f"m{i}" for i in range(801, 1001)]
    assert store.listings == 0


async def test_the_grant_s_required_owner_reaches_the_store() -> None:
    store = CountingStore()
    beam = RiverBeam(store=store)
    beam.register_agent(Peek("peek"))
    sid = str(uuid.uuid4())
    await beam.invoke(_as("alice", "hi", sid), grant=Grant(require_owner="alice"))
    before = await beam.list_messages(sid)
    bob = InvokeRequest.parse({**_as("bob", "mine now", sid), "request_id": str(uuid.uuid4())})
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(bob, grant=Grant(require_owner="bob"))
    assert info.value.code is ErrorCode.SESSION_NOT_FOUND
    assert await beam.list_messages(sid) == before
    assert await store.get_run_by_request(request_id=bob.request_id or "") is None
    assert (await beam.get_session(sid)).user_id == "alice"
    # The owner continues; a grant without an owner (an admin's, a resume's) checks nothing.
    await beam.invoke(_as("alice", "again", sid), grant=Grant(require_owner="alice"))
    await beam.invoke(_as("admin", "look", sid), grant=Grant())
    assert [b["require_owner"] for b in store.begins] == ["alice", "bob", "alice", None]


@pytest.mark.parametrize("owner", ["alice", None, ""])
def test_the_required_owner_crosses_the_runner_wire(owner: str | None) -> None:
    grant = Grant(may_confirm=True, subject="backend-svc", require_owner=owner)
    message = grant_to_proto(grant)
    assert message.HasField("require_owner") is (owner is not None)
    assert grant_from_proto(message) == grant
