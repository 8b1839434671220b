"""Session ownership holds under concurrency: the store repeats the router's check atomically."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import pytest

from riverbeam.store import BeginRunResult
from riverbeam.types import InvokeAuthContext, InvokePayload
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import types_pb2
from tests.integration.router.router_kit import GUARD_S, Stack, auth, refused, wire_error

pytestmark = pytest.mark.nats


def new_id() -> str:
    return str(uuid.uuid4())


def invoke_request(text: str, session_id: str) -> types_pb2.InvokeRequest:
    payload = InvokePayload.parse(
        {
            "agent_name": "assistant",
            "content": [{"type": "text", "text": text}],
            "session_id": session_id,
        }
    )
    message: types_pb2.InvokeRequest = payload.to_proto()
    return message


async def test_two_users_creating_one_new_session_at_once_never_share_it(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hold every begin-run step until both have arrived: by then both requests have passed
    # the router's ownership check, which saw no session (the race the store must close).
    original = stack.store.begin_run
    arrived: list[str] = []
    both = asyncio.Event()

    async def together(**kwargs: Any) -> BeginRunResult:
        arrived.append(kwargs["session_id"])
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), GUARD_S)
        return await original(**kwargs)

    monkeypatch.setattr(stack.store, "begin_run", together)
    stub = stack.stub()
    sid = new_id()
    users = ("alice", "bob")
    outcomes = await asyncio.gather(
        *(stub.Invoke(invoke_request(f"I am {u}", sid), metadata=auth(u)) for u in users),
        return_exceptions=True,
    )
    assert arrived == [sid, sid]
    replies = {
        u: o for u, o in zip(users, outcomes, strict=True) if isinstance(o, pb.InvokeResponse)
    }
    assert len(replies) == 1, outcomes
    ((winner, reply),) = replies.items()
    (loser,) = set(users) - {winner}
    failure = outcomes[users.index(loser)]
    assert isinstance(failure, grpc.aio.AioRpcError), failure
    refusal = wire_error(failure)
    assert refusal.bem == "BEM-025"
    # Exactly the answer for a session that does not exist, or is someone else's.
    missing = await refused(
        stub.GetSession(pb.GetSessionRequest(session_id=new_id()), metadata=auth(loser))
    )
    assert refusal == missing
    assert await refused(stub.Invoke(invoke_request("again", sid), metadata=auth(loser))) == missing
    assert reply.result.session_id == sid

    # The session holds the winner's turn only.
    session = await stack.store.get_session(session_id=sid)
    assert session.user_id == winner
    messages, _ = await stack.store.list_messages(session_id=sid)
    assert [(m.role, m.text) for m in messages] == [
        ("human", f"I am {winner}"),
        ("ai", f"Echo: I am {winner}"),
    ]
    assert {m.run_id for m in messages} == {reply.result.run_id}
    runs = [r for r in stack.records()["runs"].values() if r.session_id == sid]
    assert [r.run_id for r in runs] == [reply.result.run_id]


async def test_admins_and_backends_still_continue_a_users_session(stack: Stack) -> None:
    alice = stack.client("alice")
    sid = new_id()
    await alice.invoke("assistant", "mine", session_id=sid)
    # An admin may use any session (no owner required); a backend acts for its owner.
    await stack.client("admin").invoke("assistant", "admin here", session_id=sid)
    await stack.client("backend").invoke(
        "assistant",
        "for alice",
        session_id=sid,
        auth_context=InvokeAuthContext(user_id="alice"),
    )
    messages = await alice.list_messages(sid)
    assert [m.text for m in messages if m.role == "human"] == ["mine", "admin here", "for alice"]
    assert (await alice.get_session(sid)).user_id == "alice"
