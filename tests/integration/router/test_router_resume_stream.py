"""ResumeStream: the resumed run's StreamAck, then exactly the frames JetStream holds, in one
call; who may follow them is who may follow the request after Resume."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from riverbeam.agents import Text
from riverbeam.client import RiverbeamClient, action_response
from riverbeam.core.errors import RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.types import StreamAck, StreamChunk
from riverbeam.v1 import riverbeam_service_pb2 as pb
from tests.integration.router.router_kit import (
    GUARD_S,
    Stack,
    auth,
    pause_author,
    refused_stream,
)
from tests.integration.router.test_router_follow import consumers, direct
from tests.integration.router.test_router_invoke_stream import events_of
from tests.integration.router.test_router_refusals import resume_request

pytestmark = pytest.mark.nats


async def answers(client: RiverbeamClient, session_id: str, interaction_id: str) -> list[Any]:
    return [action_response(a) for a in await client.pending_for(session_id, interaction_id)]


async def test_the_ack_comes_first_then_every_frame_of_the_resumed_run(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    stack.script.push(Text("pushed"))
    envelopes = await answers(alice, paused.session_id, paused.interaction_id)

    ack, *frames = await events_of(
        alice.resume_stream(None, paused.session_id, paused.interaction_id, envelopes)
    )

    assert isinstance(ack, StreamAck) and ack.run_id
    assert ack.interaction_id == paused.interaction_id
    assert frames and all(isinstance(f, StreamChunk) for f in frames)
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert frames[-1].type == "done" and frames[-1].agent_name == "author"
    async with asyncio.timeout(GUARD_S):
        straight = [f async for f in direct(stack, ack.request_id)]
    assert frames == straight
    assert stack.tools["push"].calls == [{"v": "main"}]
    run = await stack.wait_run(ack.request_id, status="completed")
    assert run.run_id == ack.run_id


async def test_an_approver_follows_the_run_its_answer_resumes(stack: Stack) -> None:
    """The approver may not read alice's session, and needs no grant to see the resumed run."""
    alice, approver = stack.client("alice"), stack.client("approver")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    stack.script.push(Text("pushed"))
    request_id = new_id()
    envelopes = await answers(approver, paused.session_id, paused.interaction_id)

    ack, *frames = await events_of(
        approver.resume_stream(
            None, paused.session_id, paused.interaction_id, envelopes, request_id=request_id
        )
    )

    assert ack.request_id == request_id
    assert frames[-1].type == "done"
    assert frames == await events_of(alice.follow(request_id))
    assert stack.tools["push"].calls == [{"v": "main"}]


async def test_a_refused_resume_runs_nothing_and_leaves_no_consumer(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    (pending,) = paused.action_required
    baseline = await consumers(stack)
    before = stack.records()
    stub = stack.stub()

    for who, bem in (("bob", "BEM-065"), ("carol", "BEM-065"), (None, "BEM-050")):
        request = resume_request(paused.session_id, paused.interaction_id, [pending.action_id])
        call = stub.ResumeStream(pb.ResumeStreamRequest(request=request), metadata=auth(who))
        assert (await refused_stream(call)).bem == bem, who

    assert await consumers(stack) == baseline
    assert stack.records() == before
    assert stack.tools["push"].calls == []
    with pytest.raises(RiverbeamError) as twice:
        # Answered once: the same answer again is refused, and nothing runs twice.
        stack.script.push(Text("pushed"))
        envelopes = await answers(alice, paused.session_id, paused.interaction_id)
        await events_of(
            alice.resume_stream(None, paused.session_id, paused.interaction_id, envelopes)
        )
        await events_of(
            alice.resume_stream(None, paused.session_id, paused.interaction_id, envelopes)
        )
    assert twice.value.bem == "BEM-066"
    assert stack.tools["push"].calls == [{"v": "main"}]
