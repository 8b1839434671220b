"""approve / decline: envelopes for the pending actions of an interaction, then resume."""

from __future__ import annotations

import uuid

import pytest

from riverbeam.client import RiverbeamClient, action_response
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ActionResponseEnvelope
from tests.unit.client.fake_router import (
    ACTION_OTHER,
    ACTION_PENDING,
    ACTION_RAN,
    INTERACTION_DONE,
    INTERACTION_WAITING,
    OTHER_SESSION,
    SESSION,
    FakeRiverbeam,
    canned_actions,
)


def test_action_response_approves_with_the_stored_call() -> None:
    pending = canned_actions()[1]
    envelope = action_response(pending, responder_id="u1")
    assert envelope.action_id == ACTION_PENDING
    assert envelope.kind == "confirmation"
    assert envelope.status == "submitted"
    assert envelope.payload == {
        "approved": True,
        "tool": "git_push",
        "args": {"ref": "docs/update"},
    }
    assert envelope.responder_id == "u1"
    assert uuid.UUID(envelope.request_id)  # the id of this response
    # it survives the wire
    assert ActionResponseEnvelope.from_proto(envelope.to_proto()) == envelope


def test_action_response_declines() -> None:
    envelope = action_response(canned_actions()[1], status="cancelled", reason="not today")
    assert envelope.status == "cancelled"
    assert envelope.payload == {"approved": False, "reason": "not today"}


async def test_approve_answers_every_pending_action_of_the_interaction(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    ack = await client.approve(SESSION, INTERACTION_WAITING, responder_id="u1")
    resumed = fake.resumes[-1]
    assert resumed.agent_name == "author"  # from the pending action
    assert resumed.session_id == SESSION
    assert resumed.interaction_id == INTERACTION_WAITING
    assert [(a.action_id, a.status) for a in resumed.actions] == [(ACTION_PENDING, "submitted")]
    assert resumed.actions[0].responder_id == "u1"
    frames = [f async for f in client.follow(ack.request_id)]
    assert frames[-1].result is not None and frames[-1].result.text == "Pushed."


async def test_decline_one_action(client: RiverbeamClient, fake: FakeRiverbeam) -> None:
    await client.decline(SESSION, INTERACTION_WAITING, action_id=ACTION_PENDING.upper())
    resumed = fake.resumes[-1]
    assert [(a.action_id, a.status) for a in resumed.actions] == [(ACTION_PENDING, "cancelled")]
    assert resumed.actions[0].payload == {"approved": False}


async def test_agent_name_falls_back_to_the_interaction(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    for action in fake.actions:
        action.agent_name = None
    await client.approve(SESSION, INTERACTION_WAITING)
    assert fake.resumes[-1].agent_name == "author"
    assert any(name == "GetInteraction" for name, _ in fake.calls)


async def test_explicit_agent_name_wins(client: RiverbeamClient, fake: FakeRiverbeam) -> None:
    await client.approve(SESSION, INTERACTION_WAITING, agent_name="reviewer")
    assert fake.resumes[-1].agent_name == "reviewer"


@pytest.mark.parametrize(
    ("session", "interaction", "action", "code"),
    [
        (SESSION, INTERACTION_WAITING, "not-a-uuid", ErrorCode.ACTION_ID_NOT_UUID),
        (SESSION, "nope", None, ErrorCode.INVALID_UUID),
        (
            SESSION,
            INTERACTION_WAITING,
            "dddddddd-dddd-4ddd-8ddd-dddddddddddd",
            ErrorCode.ACTION_NOT_FOUND,
        ),
        (SESSION, INTERACTION_WAITING, ACTION_OTHER, ErrorCode.ACTION_WRONG_INTERACTION),
        (SESSION, INTERACTION_WAITING, ACTION_RAN, ErrorCode.ACTION_NOT_PENDING),
        (SESSION, INTERACTION_DONE, None, ErrorCode.ACTION_NOT_PENDING),
        (OTHER_SESSION, INTERACTION_DONE, None, ErrorCode.INTERACTION_NOT_RESUMABLE),
    ],
)
async def test_approve_refuses_what_it_cannot_answer(
    client: RiverbeamClient,
    fake: FakeRiverbeam,
    session: str,
    interaction: str,
    action: str | None,
    code: ErrorCode,
) -> None:
    with pytest.raises(RiverbeamError) as info:
        await client.approve(session, interaction, action_id=action)
    assert info.value.code is code
    assert fake.resumes == []


async def test_resume_sends_the_envelopes(client: RiverbeamClient, fake: FakeRiverbeam) -> None:
    envelope = action_response(canned_actions()[1])
    ack = await client.resume("author", SESSION, INTERACTION_WAITING, [envelope], content="go")
    assert ack.interaction_id == INTERACTION_WAITING
    resumed = fake.resumes[-1]
    assert resumed.actions == [envelope]
    assert [p.text for p in resumed.content] == ["go"]
