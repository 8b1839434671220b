"""RiverbeamClient.resume_stream: the resumed run's ack, then its frames; an older router gets
Resume and FollowStream."""

from __future__ import annotations

from typing import Any

import pytest

from riverbeam.client import RiverbeamClient, action_response
from riverbeam.core.errors import RiverbeamError
from riverbeam.types import StreamAck, StreamChunk
from tests.unit.client.fake_router import (
    ACTION_PENDING,
    INTERACTION_WAITING,
    SESSION,
    FakeRiverbeam,
    canned_actions,
)


def _approval() -> list[Any]:
    (pending,) = [a for a in canned_actions() if a.action_id == ACTION_PENDING]
    return [action_response(pending, reason="ok")]


async def events_of(client: RiverbeamClient, **kwargs: Any) -> list[Any]:
    stream = client.resume_stream("author", SESSION, INTERACTION_WAITING, _approval(), **kwargs)
    return [event async for event in stream]


def names(fake: FakeRiverbeam) -> list[str]:
    return [name for name, _ in fake.calls]


async def test_the_ack_then_the_resumed_runs_frames_on_one_call(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    ack, *frames = await events_of(client, content="and then tag it", request_id=None)
    assert isinstance(ack, StreamAck) and ack.interaction_id == INTERACTION_WAITING
    assert all(isinstance(f, StreamChunk) for f in frames)
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert [f.type for f in frames] == ["tool", "chunk", "done"]
    assert {f.request_id for f in frames} == {ack.request_id}
    assert names(fake) == ["ResumeStream"]
    (sent,) = fake.resumes
    assert [a.action_id for a in sent.actions] == [ACTION_PENDING]
    assert [p.text for p in sent.content] == ["and then tag it"]


async def test_a_router_without_resume_stream_gets_resume_then_follow(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    fake.older = True
    ack, *frames = await events_of(client)
    assert isinstance(ack, StreamAck) and frames[-1].type == "done"
    assert {f.request_id for f in frames} == {ack.request_id}
    assert names(fake) == ["ResumeStream", "Resume", "FollowStream"]
    assert len(fake.resumes) == 1  # the refused call ran nothing


async def test_a_refused_resume_is_the_routers_error(fake: FakeRiverbeam, address: str) -> None:
    fake.token = "secret"
    async with RiverbeamClient(address, token="wrong") as other:
        with pytest.raises(RiverbeamError) as refused:
            await events_of(other)
    assert refused.value.bem == "BEM-050"
    assert fake.resumes == []
