"""Every RPC of the public API, through a real gRPC channel to the router (happy paths)."""

from __future__ import annotations

import uuid

import grpc
import pytest

from riverbeam.agents import Text
from riverbeam.client import action_response
from riverbeam.types import AgentResult, InvokeAuthContext, InvokePayload, StreamAck
from riverbeam.v1 import riverbeam_service_pb2 as pb
from tests.integration.router.router_kit import (
    Stack,
    auth,
    collect,
    eventually,
    pause_author,
    refused,
)

pytestmark = pytest.mark.nats


async def test_invoke_without_stream_returns_the_recorded_result(stack: Stack) -> None:
    alice = stack.client("alice")
    result = await alice.invoke("assistant", "what is riverbeam?")

    assert isinstance(result, AgentResult)
    assert result.text == "Echo: what is riverbeam?"
    assert result.model_used == "small"  # ties with "local" on cost; first in the list wins
    assert result.session_id and result.interaction_id and result.run_id and result.request_id
    session = await alice.get_session(result.session_id)
    assert (session.user_id, session.org_id) == ("alice", "o1")
    interaction = await alice.get_interaction(result.interaction_id)
    assert (interaction.status, interaction.agent_name) == ("completed", "assistant")
    run = await alice.get_run(result.run_id)
    assert run.status == "completed" and run.request_id == result.request_id
    assert run.result == result
    messages = await alice.list_messages(result.session_id)
    assert [(m.seq, m.role, m.text) for m in messages] == [
        (1, "human", "what is riverbeam?"),
        (2, "ai", "Echo: what is riverbeam?"),
    ]


async def test_invoke_with_stream_acks_before_the_agent_runs(stack: Stack) -> None:
    alice = stack.client("alice")
    opened = stack.gate.gate(0)  # the agent waits before its first frame
    request_id = str(uuid.uuid4())

    ack = await alice.invoke("gated", "go", stream=True, request_id=request_id)

    assert isinstance(ack, StreamAck)
    assert ack.request_id == request_id
    assert ack.subject == f"riverbeam.stream.{request_id}"
    assert ack.stream_name == stack.stream_config.name
    assert ack.interaction_id and ack.session_id and ack.run_id
    assert (await stack.run_of(request_id)).status == "running"  # acked while it runs
    opened.set()
    frames = await collect(alice.follow(request_id))
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "part 0 part 1 part 2 "
    assert (await alice.get_run(ack.run_id or "")).status == "completed"


async def test_stream_ack_request_id_is_generated_when_not_given(stack: Stack) -> None:
    alice = stack.client("alice")
    ack = await alice.invoke("assistant", "hi", stream=True)
    assert uuid.UUID(ack.request_id)
    frames = await collect(alice.follow(ack.request_id))
    assert [f.type for f in frames][-1] == "done"


async def test_agents_are_listed_and_fetched(stack: Stack) -> None:
    alice = stack.client("alice")
    names = {a.name for a in await alice.list_agents()}
    assert {"assistant", "author", "inspect", "gated"} <= names
    author = await alice.get_agent("author")
    assert author.name == "author" and "rig" in author.tags
    error = await refused(
        stack.stub().GetAgent(pb.GetAgentRequest(name="nobody"), metadata=auth("alice"))
    )
    assert (error.code, error.bem, error.domain) == (
        grpc.StatusCode.NOT_FOUND,
        "BEM-020",
        "riverbeam",
    )


async def test_models_are_listed_without_api_keys(stack: Stack) -> None:
    reply = await stack.stub().ListModels(pb.ListModelsRequest(), metadata=auth("bob"))
    assert [m.name for m in reply.models] == ["small", "coder", "local", "vision"]
    assert not any(m.HasField("api_key") for m in reply.models)
    models = await stack.client("bob").list_models()
    assert all(m.api_key is None for m in models)
    assert models[1].provider_config == {"base_url": "http://coder.invalid/v1"}
    assert models[3].modalities == ["text", "image"]


async def test_messages_are_paginated(stack: Stack) -> None:
    alice = stack.client("alice")
    session_id = str(uuid.uuid4())
    for text in ("one", "two", "three"):
        await alice.invoke("assistant", text, session_id=session_id)
    stub = stack.stub()

    first = await stub.ListMessages(
        pb.ListMessagesRequest(session_id=session_id, page_size=4), metadata=auth("alice")
    )
    assert [m.seq for m in first.messages] == [1, 2, 3, 4] and first.next_page_token
    second = await stub.ListMessages(
        pb.ListMessagesRequest(
            session_id=session_id, page_size=4, page_token=first.next_page_token
        ),
        metadata=auth("alice"),
    )
    assert [m.seq for m in second.messages] == [5, 6] and second.next_page_token == ""

    every = await alice.list_messages(session_id, page_size=1)  # the SDK follows all pages
    assert [m.text for m in every] == [
        "one",
        "Echo: one",
        "two",
        "Echo: two",
        "three",
        "Echo: three",
    ]
    bad = await refused(
        stub.ListMessages(
            pb.ListMessagesRequest(session_id=session_id, page_token="garbage"),
            metadata=auth("alice"),
        )
    )
    assert (bad.code, bad.bem) == (grpc.StatusCode.INVALID_ARGUMENT, "BEM-015")


async def test_pause_approve_resume_runs_the_tool_once(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    (required,) = paused.action_required
    assert required.tool == "push" and stack.tools["push"].calls == []
    assert paused.session_id and paused.interaction_id and paused.run_id

    (pending,) = await alice.list_pending_actions()
    assert (pending.action_id, pending.status, pending.user_id) == (
        required.action_id,
        "pending",
        "alice",
    )
    assert (await alice.get_action(required.action_id)).status == "pending"
    assert (await alice.get_run(paused.run_id)).status == "interrupted"
    assert (await alice.get_interaction(paused.interaction_id)).status == "in_progress"

    stack.script.push(Text("pushed"))
    ack = await alice.approve(paused.session_id, paused.interaction_id)

    assert isinstance(ack, StreamAck) and ack.interaction_id == paused.interaction_id
    frames = await collect(alice.follow(ack.request_id))
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "pushed"
    assert stack.tools["push"].calls == [{"v": "main"}]
    action = await alice.get_action(required.action_id)
    assert (action.status, action.outcome) == ("resolved", "approved_ran")
    assert action.response is not None and action.response.responder_id == "alice"
    assert await alice.list_pending_actions() == []
    assert (await alice.get_interaction(paused.interaction_id)).status == "completed"


async def test_resume_answers_with_a_stream_ack_even_when_declined(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    (required,) = paused.action_required
    stack.script.push(Text("not pushed"))

    ack = await alice.resume(
        "author",
        paused.session_id,
        paused.interaction_id,
        [action_response(await alice.get_action(required.action_id), status="cancelled")],
    )

    assert isinstance(ack, StreamAck)
    frames = await collect(alice.follow(ack.request_id))
    assert frames[-1].type == "done"
    assert stack.tools["push"].calls == []
    assert (await alice.get_action(required.action_id)).outcome == "declined"


async def test_cancel_stops_a_running_request(stack: Stack) -> None:
    alice = stack.client("alice")
    stack.gate.gate(1)  # never opened: the run waits after its first frame
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.gate.reached[1].wait()

    assert await alice.cancel(ack.request_id, reason="changed my mind") is True

    frames = await collect(alice.follow(ack.request_id))
    assert [f.type for f in frames] == ["chunk", "error"]
    assert frames[-1].error_code == "BEM-033"
    run = await stack.wait_run(ack.request_id)
    assert (run.status, run.error_code) == ("cancelled", "BEM-033")
    assert await alice.cancel(ack.request_id) is False  # nothing left to cancel


async def test_the_inbox_holds_what_the_caller_may_answer(stack: Stack) -> None:
    alice, bob, carol = stack.client("alice"), stack.client("bob"), stack.client("carol")
    mine = (await pause_author(stack, alice)).action_required[0].action_id
    other_org = (await pause_author(stack, carol)).action_required[0].action_id  # o2
    bobs = (await pause_author(stack, bob)).action_required[0].action_id

    assert [a.action_id for a in await alice.list_pending_actions()] == [mine]
    assert [a.action_id for a in await bob.list_pending_actions()] == [bobs]
    approver = stack.client("approver")
    # An approver sees the inbox of its organisation (o1), not o2's; page by page.
    assert [a.action_id for a in await approver.list_pending_actions(page_size=1)] == [mine, bobs]
    admin = stack.client("admin")
    assert [a.action_id for a in await admin.list_pending_actions()] == [mine, other_org, bobs]


async def test_an_approver_answers_a_users_action(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    (required,) = paused.action_required
    approver = stack.client("approver")

    # What an approver needs to decide: the inbox of that session, and the action itself.
    (pending,) = await approver.list_pending_actions(session_id=paused.session_id)
    assert pending.action_id == required.action_id
    assert (await approver.get_action(required.action_id)).tool == "push"

    stack.script.push(Text("pushed"))
    ack = await approver.approve(paused.session_id, paused.interaction_id)
    frames = await collect(approver.follow(ack.request_id))

    assert frames[-1].type == "done"
    assert stack.tools["push"].calls == [{"v": "main"}]
    action = await alice.get_action(required.action_id)
    assert action.response is not None and action.response.responder_id == "approver"
    session = await alice.get_session(paused.session_id)  # still alice's session
    assert session.user_id == "alice"


async def test_a_backend_acts_for_a_user(stack: Stack) -> None:
    backend = stack.client("backend")
    result = await backend.invoke(
        "inspect", "hi", auth_context=InvokeAuthContext(user_id="alice", org_id="o2")
    )
    assert result.session_id
    session = await stack.client("alice").get_session(result.session_id)
    assert (session.user_id, session.org_id) == ("alice", "o1")  # the backend's org, not o2
    assert (await backend.get_session(result.session_id)).session_id == result.session_id
    # The session is alice's: bob cannot see it, and the backend's own inbox is not hers.
    error = await refused(
        stack.stub().GetSession(
            pb.GetSessionRequest(session_id=result.session_id), metadata=auth("bob")
        )
    )
    assert error.bem == "BEM-025"


async def test_followers_can_poll_the_run_to_the_end(stack: Stack) -> None:
    alice = stack.client("alice")
    ack = await alice.invoke("assistant", "hi", stream=True)

    async def completed() -> bool:
        return (await alice.get_run(ack.run_id or "")).status == "completed"

    assert await eventually(completed)


async def test_a_failed_run_surfaces_its_code_through_both_hops(stack: Stack) -> None:
    request_id = str(uuid.uuid4())
    # No script step left for author: its model call fails and it ends with an error frame.
    error = await refused(
        stack.stub().Invoke(
            InvokePayload.parse(
                {
                    "agent_name": "author",
                    "content": [{"type": "text", "text": "go"}],
                    "session_id": str(uuid.uuid4()),
                    "request_id": request_id,
                }
            ).to_proto(),
            metadata=auth("alice"),
        )
    )
    run = await stack.run_of(request_id)
    assert (error.code, error.bem, error.domain) == (
        grpc.StatusCode.INTERNAL,
        "BEM-087",
        "riverbeam",
    )
    assert error.metadata == {"agent_error_code": "BEM-081", "run_id": run.run_id}
    assert (run.status, run.error_code) == ("failed", "BEM-081")
