"""Every refusal of the public API, on the wire: the code, the ErrorInfo, and nothing recorded."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from riverbeam.agents import PendingToolCall, Text, ToolCalls
from riverbeam.client import action_response
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import (
    AgentResult,
    ContentPart,
    InvokeAuthContext,
    InvokePayload,
    StreamAck,
)
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import types_pb2
from tests.integration.router.router_kit import (
    TOKENS,
    Stack,
    WireError,
    auth,
    collect,
    pause_author,
    refused,
    refused_stream,
)

pytestmark = pytest.mark.nats


def new_id() -> str:
    return str(uuid.uuid4())


def invoke_request(
    agent: str = "assistant", text: str = "hi", *, session_id: str | None = None, **extra: Any
) -> types_pb2.InvokeRequest:
    payload = InvokePayload.parse(
        {
            "agent_name": agent,
            "content": [{"type": "text", "text": text}],
            "session_id": session_id or new_id(),
            **extra,
        }
    )
    message: types_pb2.InvokeRequest = payload.to_proto()
    return message


def resume_request(
    session_id: str, interaction_id: str, action_ids: list[str], *, agent: str = "author"
) -> pb.ResumeRequest:
    request = pb.ResumeRequest(
        agent_name=agent, session_id=session_id, interaction_id=interaction_id
    )
    for action_id in action_ids:
        request.actions.add(action_id=action_id, kind="confirmation", request_id=new_id())
    return request


def seen_by(result: AgentResult) -> dict[str, Any]:
    """What the inspect agent reported it received."""
    seen: dict[str, Any] = json.loads(result.text)
    return seen


# ---- authentication ----------------------------------------------------------------------------
def every_rpc(stub: Any) -> dict[str, Callable[[Any], Any]]:
    """One call of each RPC, with valid ids, given only the metadata."""
    some = new_id()
    return {
        "Invoke": lambda md: stub.Invoke(invoke_request(), metadata=md),
        "Resume": lambda md: stub.Resume(resume_request(some, some, [some]), metadata=md),
        "Cancel": lambda md: stub.Cancel(pb.CancelRequest(request_id=some), metadata=md),
        "ListAgents": lambda md: stub.ListAgents(pb.ListAgentsRequest(), metadata=md),
        "GetAgent": lambda md: stub.GetAgent(pb.GetAgentRequest(name="assistant"), metadata=md),
        "ListModels": lambda md: stub.ListModels(pb.ListModelsRequest(), metadata=md),
        "GetSession": lambda md: stub.GetSession(
            pb.GetSessionRequest(session_id=some), metadata=md
        ),
        "ListMessages": lambda md: stub.ListMessages(
            pb.ListMessagesRequest(session_id=some), metadata=md
        ),
        "GetInteraction": lambda md: stub.GetInteraction(
            pb.GetInteractionRequest(interaction_id=some), metadata=md
        ),
        "GetRun": lambda md: stub.GetRun(pb.GetRunRequest(run_id=some), metadata=md),
        "GetAction": lambda md: stub.GetAction(pb.GetActionRequest(action_id=some), metadata=md),
        "ListPendingActions": lambda md: stub.ListPendingActions(
            pb.ListPendingActionsRequest(), metadata=md
        ),
    }


@pytest.mark.parametrize(
    "metadata",
    [
        (),
        (("authorization", "Bearer not-a-known-token-at-all"),),
        (("authorization", f"Basic {TOKENS['alice']}"),),
        (("authorization", "Bearer"),),
    ],
    ids=["missing", "unknown", "other-scheme", "empty"],
)
async def test_every_rpc_needs_a_valid_token(stack: Stack, metadata: Any) -> None:
    stub = stack.stub()
    before = stack.records()
    for name, call in every_rpc(stub).items():
        error = await refused(call(metadata))
        assert (error.code, error.bem, error.domain) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "BEM-050",
            "riverbeam",
        ), name
    follow = stub.FollowStream(pb.FollowStreamRequest(request_id=new_id()), metadata=metadata)
    assert (await refused_stream(follow)).bem == "BEM-050"
    assert stack.records() == before


async def test_the_sdk_reports_a_missing_token_with_its_code(stack: Stack) -> None:
    with pytest.raises(RiverbeamError) as info:
        await stack.client(None).list_agents()
    assert info.value.code is ErrorCode.UNAUTHENTICATED


# ---- identity ----------------------------------------------------------------------------------
async def test_a_user_may_not_act_for_another_user(stack: Stack) -> None:
    stub = stack.stub()
    before = stack.records()
    request = invoke_request(auth_context={"user_id": "bob"})
    error = await refused(stub.Invoke(request, metadata=auth("alice")))
    assert (error.code, error.bem) == (grpc.StatusCode.PERMISSION_DENIED, "BEM-052")
    assert error.metadata == {"field": "auth_context.user_id"}
    assert stack.records() == before
    # Naming itself is fine, and an org it sends is replaced by its own.
    mine = await stack.client("alice").invoke(
        "inspect", "hi", auth_context=InvokeAuthContext(user_id="alice", org_id="o9")
    )
    assert seen_by(mine)["auth"] == {"user_id": "alice", "org_id": "o1"}


async def test_a_backend_acting_for_a_user_runs_as_that_user(stack: Stack) -> None:
    result = await stack.client("backend").invoke(
        "inspect",
        "hi",
        auth_context=InvokeAuthContext(user_id="alice", profile_id="p1"),
    )
    assert seen_by(result)["auth"] == {"user_id": "alice", "org_id": "o1", "profile_id": "p1"}
    assert result.session_id
    assert (await stack.client("alice").get_session(result.session_id)).user_id == "alice"
    # And alice may continue it herself.
    again = await stack.client("alice").invoke("inspect", "more", session_id=result.session_id)
    assert again.session_id == result.session_id


# ---- ownership ---------------------------------------------------------------------------------
async def test_another_users_records_look_like_missing_ones(stack: Stack) -> None:
    """alice guesses every id of bob's; each answer is the one for an id that does not exist."""
    bob = stack.client("bob")
    paused = await pause_author(stack, bob)
    assert paused.session_id and paused.interaction_id and paused.run_id
    (required,) = paused.action_required
    stack.gate.gate(1)  # bob's second request stays running
    live = await bob.invoke("gated", "go", stream=True, session_id=new_id())
    await stack.gate.reached[1].wait()
    stub = stack.stub()
    alice = auth("alice")
    before = stack.records()

    async def same_as_missing(call: Callable[[str], Any], bobs_id: str) -> WireError:
        theirs = await refused(call(bobs_id))
        missing = await refused(call(new_id()))
        # The details may name the id asked for; with that masked the answers are identical.
        assert theirs == masked(missing, bobs_id), (theirs, missing)
        return theirs

    def masked(error: WireError, value: str) -> WireError:
        metadata = {k: (value if _is_uuid(v) else v) for k, v in error.metadata.items()}
        return WireError(error.code, error.message, error.reason, error.domain, metadata)

    session = await same_as_missing(
        lambda i: stub.GetSession(pb.GetSessionRequest(session_id=i), metadata=alice),
        paused.session_id,
    )
    assert session.bem == "BEM-025"
    messages = await same_as_missing(
        lambda i: stub.ListMessages(pb.ListMessagesRequest(session_id=i), metadata=alice),
        paused.session_id,
    )
    assert messages == session
    inbox = await same_as_missing(
        lambda i: stub.ListPendingActions(
            pb.ListPendingActionsRequest(session_id=i), metadata=alice
        ),
        paused.session_id,
    )
    assert inbox == session
    interaction = await same_as_missing(
        lambda i: stub.GetInteraction(pb.GetInteractionRequest(interaction_id=i), metadata=alice),
        paused.interaction_id,
    )
    assert interaction.bem == "BEM-026"
    run = await same_as_missing(
        lambda i: stub.GetRun(pb.GetRunRequest(run_id=i), metadata=alice), paused.run_id
    )
    assert run.bem == "BEM-028"
    action = await same_as_missing(
        lambda i: stub.GetAction(pb.GetActionRequest(action_id=i), metadata=alice),
        required.action_id,
    )
    assert action.bem == "BEM-027"
    cancel = await same_as_missing(
        lambda i: stub.Cancel(pb.CancelRequest(request_id=i), metadata=alice), live.request_id
    )
    assert cancel.bem == "BEM-032"
    follow = await refused_stream(
        stub.FollowStream(pb.FollowStreamRequest(request_id=live.request_id), metadata=alice)
    )
    missing_follow = await refused_stream(
        stub.FollowStream(pb.FollowStreamRequest(request_id=new_id()), metadata=alice)
    )
    assert follow == masked(missing_follow, live.request_id) and follow.bem == "BEM-032"
    # Approving bob's action in his session: the answer for a session that does not exist.
    resume = await refused(
        stub.Resume(
            resume_request(paused.session_id, paused.interaction_id, [required.action_id]),
            metadata=alice,
        )
    )
    missing_resume = await refused(
        stub.Resume(resume_request(new_id(), new_id(), [required.action_id]), metadata=alice)
    )
    assert resume == missing_resume and resume.bem == "BEM-065"
    # Continuing bob's session: refused as a session that is not there (BEM-025).
    invoke = await refused(
        stub.Invoke(invoke_request(session_id=paused.session_id), metadata=alice)
    )
    assert invoke == session

    assert stack.records() == before
    assert stack.tools["push"].calls == []
    assert (await stack.store.get_action(action_id=required.action_id)).status == "pending"
    assert (await stack.run_of(live.request_id)).status == "running"
    assert (await stack.store.get_session(session_id=paused.session_id)).user_id == "bob"


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


async def test_bob_still_reads_his_own_records(stack: Stack) -> None:
    bob = stack.client("bob")
    paused = await pause_author(stack, bob)
    assert paused.session_id and paused.interaction_id and paused.run_id
    assert (await bob.get_session(paused.session_id)).user_id == "bob"
    assert (await bob.get_run(paused.run_id)).status == "interrupted"
    admin = stack.client("admin")  # admins read everyone's
    assert (await admin.get_interaction(paused.interaction_id)).session_id == paused.session_id


# ---- confirm -----------------------------------------------------------------------------------
async def test_confirm_from_a_user_is_ignored_and_from_an_approver_honoured(stack: Stack) -> None:
    alice = stack.client("alice")
    plain = await pause_author(stack, alice, metadata={"confirm": True})
    assert plain.interrupted and stack.tools["push"].calls == []

    approver = stack.client("approver")
    stack.script.push(ToolCalls((PendingToolCall("push", {"v": "main"}),)), Text("pushed"))
    granted = await approver.invoke("author", "push it", metadata={"confirm": True})

    assert not granted.interrupted and granted.action_required == []
    assert granted.text == "pushed"
    assert stack.tools["push"].calls == [{"v": "main"}]


# ---- privileged metadata -----------------------------------------------------------------------
PRIVILEGED = {
    "sandbox_root": "/etc",
    "Protected_Refs": ["main"],
    " memory_scopes": [{"name": "user", "id": "bob"}],
    "confirm": True,
    "keep": {"n": 1},
}


async def test_privileged_metadata_is_stripped_for_users(stack: Stack) -> None:
    result = await stack.client("alice").invoke("inspect", "hi", metadata=PRIVILEGED)
    seen = seen_by(result)
    assert seen["metadata"] == {"keep": {"n": 1}}
    assert seen["confirm_allowed"] is False


async def test_privileged_metadata_is_kept_for_those_allowed(stack: Stack) -> None:
    admin = seen_by(await stack.client("admin").invoke("inspect", "hi", metadata=PRIVILEGED))
    assert admin["metadata"] == PRIVILEGED and admin["confirm_allowed"] is True
    backend = seen_by(
        await stack.client("backend").invoke(
            "inspect",
            "hi",
            auth_context=InvokeAuthContext(user_id="alice"),
            metadata={
                "memory_scopes": [{"name": "user", "id": "alice"}, {"name": "user", "id": "bob"}],
                "sandbox_root": "/etc",
            },
        )
    )
    assert backend["metadata"] == {"memory_scopes": [{"name": "user", "id": "alice"}]}


# ---- malformed and oversized requests ----------------------------------------------------------
def big_metadata() -> struct_pb2.Struct:
    metadata = struct_pb2.Struct()
    metadata.update({"blob": "x" * (70 << 10)})
    return metadata


def deep_metadata() -> struct_pb2.Struct:
    nested: dict[str, Any] = {"leaf": 1}
    for _ in range(20):
        nested = {"n": nested}
    metadata = struct_pb2.Struct()
    metadata.update(nested)
    return metadata


def invalid_invokes() -> dict[str, tuple[types_pb2.InvokeRequest, grpc.StatusCode, str]]:
    bad = grpc.StatusCode.INVALID_ARGUMENT
    huge = invoke_request(text="x" * ((1 << 20) + 1))
    many = invoke_request()
    for _ in range(64):
        many.content.add(type="text", text="more")
    too_big_metadata = invoke_request()
    too_big_metadata.metadata.CopyFrom(big_metadata())
    too_deep = invoke_request()
    too_deep.metadata.CopyFrom(deep_metadata())
    bad_session = invoke_request()
    bad_session.session_id = "not-a-uuid"
    bad_request_id = invoke_request()
    bad_request_id.request_id = "12345"
    unknown_type = invoke_request()
    unknown_type.content.add(type="hologram", text="?")
    with_actions = invoke_request()
    with_actions.actions.add(action_id=new_id(), kind="confirmation", request_id=new_id())
    bad_action_id = invoke_request()
    bad_action_id.actions.add(action_id="nope", kind="confirmation", request_id=new_id())
    no_agent = invoke_request(agent="nobody")
    return {
        "content too large": (huge, bad, "BEM-012"),
        "too many parts": (many, bad, "BEM-012"),
        "metadata too large": (too_big_metadata, bad, "BEM-013"),
        "metadata too deep": (too_deep, bad, "BEM-013"),
        "session id not a uuid": (bad_session, bad, "BEM-010"),
        "request id not a uuid": (bad_request_id, bad, "BEM-010"),
        "unknown content type": (unknown_type, bad, "BEM-014"),
        "actions in invoke": (with_actions, bad, "BEM-002"),
        "action id not a uuid": (bad_action_id, bad, "BEM-063"),
        "unknown agent": (no_agent, grpc.StatusCode.NOT_FOUND, "BEM-020"),
    }


@pytest.mark.parametrize("case", list(invalid_invokes()))
async def test_bad_invokes_are_refused_and_record_nothing(stack: Stack, case: str) -> None:
    request, code, bem = invalid_invokes()[case]
    before = stack.records()
    error = await refused(stack.stub().Invoke(request, metadata=auth("alice")))
    assert (error.code, error.bem, error.domain) == (code, bem, "riverbeam")
    assert stack.records() == before


async def test_bad_resumes_are_refused_and_record_nothing(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    (required,) = paused.action_required
    stub = stack.stub()
    before = stack.records()

    async def resume_error(request: pb.ResumeRequest) -> WireError:
        return await refused(stub.Resume(request, metadata=auth("alice")))

    nothing = resume_request(paused.session_id, paused.interaction_id, [])
    assert (await resume_error(nothing)).bem == "BEM-067"
    not_uuid = resume_request(paused.session_id, paused.interaction_id, ["nope"])
    assert (await resume_error(not_uuid)).bem == "BEM-063"
    unknown = resume_request(paused.session_id, paused.interaction_id, [new_id()])
    assert (await resume_error(unknown)).bem == "BEM-027"
    no_interaction = resume_request(paused.session_id, "", [required.action_id])
    assert (await resume_error(no_interaction)).bem == "BEM-062"
    other_interaction = resume_request(paused.session_id, new_id(), [required.action_id])
    assert (await resume_error(other_interaction)).bem == "BEM-065"
    big = resume_request(paused.session_id, paused.interaction_id, [required.action_id])
    big.actions[0].payload.CopyFrom(big_metadata())
    assert (await resume_error(big)).bem == "BEM-013"
    user_naming_bob = resume_request(paused.session_id, paused.interaction_id, [required.action_id])
    user_naming_bob.auth_context.user_id = "bob"
    assert (await resume_error(user_naming_bob)).bem == "BEM-052"
    wrong_agent = resume_request(
        paused.session_id, paused.interaction_id, [required.action_id], agent="nobody"
    )
    assert (await resume_error(wrong_agent)).bem == "BEM-020"

    assert stack.records() == before
    assert stack.tools["push"].calls == []
    assert (await alice.get_action(required.action_id)).status == "pending"


async def test_an_action_is_answered_once(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    action = await alice.get_action(paused.action_required[0].action_id)
    stack.script.push(Text("pushed"))
    ack = await alice.resume(
        "author", paused.session_id, paused.interaction_id, [action_response(action)]
    )
    await collect(alice.follow(ack.request_id))
    before = stack.records()

    error = await refused(
        stack.stub().Resume(
            resume_request(paused.session_id, paused.interaction_id, [action.action_id]),
            metadata=auth("alice"),
        )
    )

    assert (error.code, error.bem) == (grpc.StatusCode.FAILED_PRECONDITION, "BEM-066")
    assert stack.records() == before
    assert stack.tools["push"].calls == [{"v": "main"}]


async def test_bad_ids_in_reads_are_refused(stack: Stack) -> None:
    stub = stack.stub()
    alice = auth("alice")
    cases = {
        "BEM-010": [
            stub.GetSession(pb.GetSessionRequest(session_id="nope"), metadata=alice),
            stub.ListMessages(pb.ListMessagesRequest(session_id="x"), metadata=alice),
            stub.GetInteraction(pb.GetInteractionRequest(interaction_id=""), metadata=alice),
            stub.GetRun(pb.GetRunRequest(run_id="1234"), metadata=alice),
            stub.ListPendingActions(pb.ListPendingActionsRequest(session_id="s"), metadata=alice),
            stub.Cancel(pb.CancelRequest(request_id="r"), metadata=alice),
        ],
        "BEM-063": [stub.GetAction(pb.GetActionRequest(action_id="nope"), metadata=alice)],
    }
    for bem, calls in cases.items():
        for call in calls:
            error = await refused(call)
            assert (error.code, error.bem) == (grpc.StatusCode.INVALID_ARGUMENT, bem)
    follow = stub.FollowStream(pb.FollowStreamRequest(request_id="nope"), metadata=alice)
    assert (await refused_stream(follow)).bem == "BEM-010"


async def test_a_content_part_too_large_in_a_resume(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    request = resume_request(
        paused.session_id, paused.interaction_id, [paused.action_required[0].action_id]
    )
    request.content.append(ContentPart.of_text("x" * ((1 << 20) + 1)).to_proto())
    before = stack.records()
    error = await refused(stack.stub().Resume(request, metadata=auth("alice")))
    assert error.bem == "BEM-012"
    assert stack.records() == before


async def test_a_namesake_in_another_org_is_another_user(stack: Stack) -> None:
    """User ids are per organisation: "alice" of o2 is not alice of o1."""
    admin = stack.client("admin")
    theirs = await pause_author(
        stack, admin, auth_context=InvokeAuthContext(user_id="alice", org_id="o2")
    )
    assert theirs.session_id and theirs.run_id
    session = await admin.get_session(theirs.session_id)
    assert (session.user_id, session.org_id) == ("alice", "o2")
    stub = stack.stub()
    alice = auth("alice")

    error = await refused(
        stub.GetSession(pb.GetSessionRequest(session_id=theirs.session_id), metadata=alice)
    )
    assert error.bem == "BEM-025"
    error = await refused(stub.GetRun(pb.GetRunRequest(run_id=theirs.run_id), metadata=alice))
    assert error.bem == "BEM-028"
    error = await refused(stub.Invoke(invoke_request(session_id=theirs.session_id), metadata=alice))
    assert error.bem == "BEM-025"
    assert await stack.client("alice").list_pending_actions() == []
    assert [a.session_id for a in await admin.list_pending_actions()] == [theirs.session_id]


async def test_an_approver_answers_only_in_its_organisation(stack: Stack) -> None:
    alice = stack.client("alice")
    ours = await pause_author(stack, alice)
    theirs = await pause_author(stack, stack.client("carol"))  # org o2
    assert ours.session_id and theirs.session_id and theirs.interaction_id
    stub = stack.stub()
    approver = auth("approver")
    before = stack.records()

    # In o1 an approver may answer, not read the conversation itself.
    error = await refused(
        stub.GetSession(pb.GetSessionRequest(session_id=ours.session_id), metadata=approver)
    )
    assert error.bem == "BEM-025"
    # o2 is out of reach altogether, answered as if nothing were there.
    (their_action,) = theirs.action_required
    error = await refused(
        stub.GetAction(pb.GetActionRequest(action_id=their_action.action_id), metadata=approver)
    )
    assert error.bem == "BEM-027"
    error = await refused(
        stub.ListPendingActions(
            pb.ListPendingActionsRequest(session_id=theirs.session_id), metadata=approver
        )
    )
    assert error.bem == "BEM-025"
    error = await refused(
        stub.Resume(
            resume_request(theirs.session_id, theirs.interaction_id, [their_action.action_id]),
            metadata=approver,
        )
    )
    assert error.bem == "BEM-065"
    assert stack.records() == before
    assert stack.tools["push"].calls == []


async def test_a_request_id_is_used_once(stack: Stack) -> None:
    alice = stack.client("alice")
    request_id = new_id()
    await alice.invoke("assistant", "one", request_id=request_id)
    before = stack.records()
    error = await refused(
        stack.stub().Invoke(invoke_request(request_id=request_id), metadata=auth("alice"))
    )
    assert (error.code, error.bem) == (grpc.StatusCode.ALREADY_EXISTS, "BEM-031")
    assert stack.records() == before


async def test_a_busy_session_takes_one_run_at_a_time(stack: Stack) -> None:
    alice = stack.client("alice")
    opened = stack.gate.gate(1)
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.gate.reached[1].wait()
    before = stack.records()
    error = await refused(
        stack.stub().Invoke(invoke_request(session_id=ack.session_id), metadata=auth("alice"))
    )
    assert (error.code, error.bem) == (grpc.StatusCode.FAILED_PRECONDITION, "BEM-030")
    assert stack.records() == before
    opened.set()
    await stack.wait_run(ack.request_id)


async def test_two_approvals_at_once_run_the_tool_once(stack: Stack) -> None:
    alice = stack.client("alice")
    paused = await pause_author(stack, alice)
    assert paused.session_id and paused.interaction_id
    action = await alice.get_action(paused.action_required[0].action_id)
    stack.script.push(Text("pushed"), Text("pushed again"))

    outcomes = await asyncio.gather(
        *(
            alice.resume(
                "author", paused.session_id, paused.interaction_id, [action_response(action)]
            )
            for _ in range(2)
        ),
        return_exceptions=True,
    )

    acks = [o for o in outcomes if isinstance(o, StreamAck)]
    errors = [o for o in outcomes if isinstance(o, RiverbeamError)]
    assert len(acks) == 1 and len(errors) == 1, outcomes
    # The loser lost the compare-and-set: it is told the action was answered (066).
    assert errors[0].code is ErrorCode.ACTION_NOT_PENDING
    await collect(alice.follow(acks[0].request_id))
    assert stack.tools["push"].calls == [{"v": "main"}]


async def test_a_malformed_memory_scope_is_refused_before_recording(stack: Stack) -> None:
    before = stack.records()
    with pytest.raises(RiverbeamError) as info:
        await stack.client("admin").invoke("inspect", "hi", metadata={"memory_scopes": ["x"]})
    assert info.value.code is ErrorCode.INVALID_MEMORY_SCOPE
    assert stack.records() == before


async def test_another_users_action_in_a_resume_looks_like_a_missing_one(stack: Stack) -> None:
    alice, bob = stack.client("alice"), stack.client("bob")
    mine = await pause_author(stack, alice)
    assert mine.session_id and mine.interaction_id
    bobs = (await pause_author(stack, bob)).action_required[0].action_id
    stub = stack.stub()
    before = stack.records()

    async def answer(action_id: str) -> WireError:
        request = resume_request(mine.session_id or "", mine.interaction_id or "", [action_id])
        return await refused(stub.Resume(request, metadata=auth("alice")))

    theirs = await answer(bobs)
    missing = new_id()
    nobody = await answer(missing)
    assert nobody.bem == "BEM-027"
    assert theirs.metadata == {"action_id": bobs}
    assert theirs == WireError(
        nobody.code, nobody.message, nobody.reason, nobody.domain, {"action_id": bobs}
    )
    assert stack.records() == before
    assert (await bob.get_action(bobs)).status == "pending"


async def test_an_action_of_another_interaction_of_ones_own(stack: Stack) -> None:
    alice = stack.client("alice")
    first = await pause_author(stack, alice)
    assert first.session_id and first.interaction_id
    second = await pause_author(stack, alice, session_id=first.session_id)
    assert second.interaction_id != first.interaction_id
    before = stack.records()
    request = resume_request(
        first.session_id, first.interaction_id, [second.action_required[0].action_id]
    )
    error = await refused(stack.stub().Resume(request, metadata=auth("alice")))
    assert (error.code, error.bem) == (grpc.StatusCode.FAILED_PRECONDITION, "BEM-064")
    assert stack.records() == before
