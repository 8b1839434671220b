"""Tenancy through the router: two organisations' backends acting for users with equal ids."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest

from riverbeam.agents import PendingToolCall, Text, ToolCalls
from riverbeam.client import action_response
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentResult, InvokeAuthContext, ResumePayload
from riverbeam.v1 import riverbeam_service_pb2 as pb
from tests.integration.router.router_kit import (
    Stack,
    auth,
    collect,
    pause_author,
    refused,
    refused_stream,
)
from tests.integration.router.test_router_refusals import resume_request

pytestmark = pytest.mark.nats

ALICE_SCOPE = {"memory_scopes": [{"name": "user", "id": "alice"}]}


def seen_by(result: AgentResult) -> dict[str, Any]:
    seen: dict[str, Any] = json.loads(result.text)
    return seen


async def remember_for_alice(stack: Stack, backend: str, content: str) -> None:
    """`backend` acts for its org's alice, whose run calls the remember tool in her user scope."""
    stack.script.push(
        ToolCalls(
            (
                PendingToolCall(
                    "remember", {"content": content, "scope_name": "user", "scope_id": "alice"}
                ),
            )
        ),
        Text("noted"),
    )
    result = await stack.client(backend).invoke(
        "memo",
        "remember this",
        auth_context=InvokeAuthContext(user_id="alice"),
        metadata=ALICE_SCOPE,
    )
    assert result.text == "noted"
    (call,) = result.tool_calls
    assert call.result["remembered"] is True, call.result


async def alices_memory(stack: Stack, backend: str) -> list[str]:
    result = await stack.client(backend).invoke(
        "inspect",
        "what do you know?",
        auth_context=InvokeAuthContext(user_id="alice"),
        metadata=ALICE_SCOPE,
    )
    seen = seen_by(result)
    assert seen["auth"]["user_id"] == "alice"
    memory: list[str] = seen["memory"]
    return memory


async def test_equal_user_ids_of_two_orgs_share_no_memory(stack: Stack) -> None:
    await remember_for_alice(stack, "backend", "alice-o1's card PIN is 4321")
    assert [(e.org_id, e.scope_id) for e in stack.store._t.memory] == [("o1", "alice")]

    # o2's backend, acting for its own alice with the same scope, reads nothing of o1's.
    assert await alices_memory(stack, "backend2") == []
    assert await alices_memory(stack, "backend") == ["alice-o1's card PIN is 4321"]

    await remember_for_alice(stack, "backend2", "alice-o2 likes tea")
    assert await alices_memory(stack, "backend2") == ["alice-o2 likes tea"]
    assert await alices_memory(stack, "backend") == ["alice-o1's card PIN is 4321"]


async def test_a_scope_naming_another_org_is_dropped_for_a_backend(stack: Stack) -> None:
    await remember_for_alice(stack, "backend", "o1 only")
    result = await stack.client("backend2").invoke(
        "inspect",
        "hi",
        auth_context=InvokeAuthContext(user_id="alice"),
        metadata={"memory_scopes": [{"name": "user", "id": "alice", "org_id": "o1"}]},
    )
    seen = seen_by(result)
    assert "memory_scopes" not in (seen["metadata"] or {})
    assert seen["memory"] == []


# ---- a resume naming another agent (issue 11, section 6) ---------------------------------------
async def test_a_resume_naming_another_agent_is_refused_and_changes_nothing(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    (pending,) = paused.action_required
    before = stack.records()

    for wrong in ("assistant", "echo"):
        error = await refused(
            stack.stub().Resume(
                resume_request(
                    paused.session_id, paused.interaction_id, [pending.action_id], agent=wrong
                ),
                metadata=auth("alice"),
            )
        )
        assert (error.code, error.bem) == (grpc.StatusCode.FAILED_PRECONDITION, "BEM-069")
    assert stack.records() == before
    assert (await alice.get_action(pending.action_id)).status == "pending"
    assert stack.tools["push"].calls == []

    # Past the router, the runner's store refuses it too, atomically with the resolution.
    with pytest.raises(RiverbeamError) as info:
        await stack.beam.resume(
            ResumePayload.parse(
                {
                    "agent_name": "assistant",
                    "session_id": paused.session_id,
                    "interaction_id": paused.interaction_id,
                    "actions": [
                        action_response(await alice.get_action(pending.action_id)).to_json_dict()
                    ],
                }
            )
        )
    assert info.value.code is ErrorCode.RESUME_AGENT_MISMATCH
    assert stack.records() == before

    # A correct resume, naming the agent, still works and runs the held tool once.
    stack.script.push(Text("pushed"))
    action = await alice.get_action(pending.action_id)
    ack = await alice.resume(
        "author", paused.session_id, paused.interaction_id, [action_response(action)]
    )
    frames = await collect(alice.follow(ack.request_id))
    assert frames[-1].type == "done", frames[-1]
    assert stack.tools["push"].calls == [{"v": "main"}]
    assert (await alice.get_action(pending.action_id)).outcome == "approved_ran"


async def test_a_resume_may_leave_the_agent_out(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    (pending,) = paused.action_required
    stack.script.push(Text("pushed"))
    request = resume_request(
        paused.session_id, paused.interaction_id, [pending.action_id], agent=""
    )
    response = await stack.stub().Resume(request, metadata=auth("alice"))
    frames = await collect(alice.follow(response.ack.request_id))
    assert frames[-1].type == "done" and frames[-1].agent_name == "author", frames[-1]
    assert stack.tools["push"].calls == [{"v": "main"}]


# ---- what an approver may follow and cancel (issue 11, section 9) ------------------------------
async def test_an_approver_follows_only_runs_that_asked_for_approval(stack: Stack) -> None:
    alice, approver = stack.client("alice"), stack.client("approver")
    chat = await alice.invoke("echo", "just chatting", stream=True)
    await stack.wait_run(chat.request_id)
    stack.script.push(ToolCalls((PendingToolCall("push", {"v": "main"}),)))
    asking = await alice.invoke("author", "push it", stream=True)
    paused = await stack.wait_run(asking.request_id, status="interrupted")
    theirs = await stack.client("carol").invoke("author", "push it", stream=True)  # org o2
    await stack.wait_run(theirs.request_id)
    stub = stack.stub()

    # A plain conversation of its org is not the approver's to follow or cancel.
    for request_id in (chat.request_id, theirs.request_id):
        error = await refused_stream(
            stub.FollowStream(
                pb.FollowStreamRequest(request_id=request_id), metadata=auth("approver")
            )
        )
        assert error.bem == "BEM-032"
        error = await refused(
            stub.Cancel(pb.CancelRequest(request_id=request_id), metadata=auth("approver"))
        )
        assert error.bem == "BEM-032"

    # The run that asked: the approver sees what it is asked to approve.
    frames = await collect(approver.follow(asking.request_id))
    assert frames == await collect(alice.follow(asking.request_id))
    assert frames[-1].type == "done" and frames[-1].result and frames[-1].result.interrupted
    assert await approver.cancel(asking.request_id) is False  # over: nothing to cancel

    # The run its answer resumes.
    stack.script.push(Text("pushed"))
    ack = await approver.approve(paused.session_id, paused.interaction_id)
    resumed = await collect(approver.follow(ack.request_id))
    assert resumed[-1].type == "done"
    assert stack.tools["push"].calls == [{"v": "main"}]
