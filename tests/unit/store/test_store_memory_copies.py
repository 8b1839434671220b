"""InMemoryStore copies what it stores with deep_copy, never through copy.deepcopy (pydantic's
model_copy(deep=True)), and still shares nothing with the caller."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from riverbeam.store import InMemoryStore, NewAction, NewMessage
from riverbeam.types import ContentPart


@pytest.fixture
def deepcopies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    seen: list[str] = []
    original = BaseModel.__deepcopy__

    def counting(self: BaseModel, memo: dict[int, Any] | None = None) -> Any:
        seen.append(type(self).__name__)
        return original(self, memo)

    monkeypatch.setattr(BaseModel, "__deepcopy__", counting)
    yield seen


async def test_begin_and_finish_copy_without_deepcopy(deepcopies: list[str]) -> None:
    store = InMemoryStore()
    human = [ContentPart(type="text", text="hello")]
    begun = await store.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="a",
        run_id=str(uuid.uuid4()),
        lease_owner="w",
        lease_ttl_s=30,
        human_content=human,
        history_limit=10,
    )
    reply = NewMessage(role="ai", content=[ContentPart(type="text", text="hi")])
    pending = NewAction(action_id=str(uuid.uuid4()), tool="t", args={"k": ["v"]})
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner="w",
        status="completed",
        messages=[reply],
        pending_actions=[pending],
        lease_epoch=1,
    )
    assert deepcopies == []

    # What the caller still holds is not what is stored.
    human[0].text = "changed"
    reply.content[0].text = "changed"
    pending.args["k"].append("changed")
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [m.content[0].text for m in messages] == ["hello", "hi"]
    action = await store.get_action(action_id=pending.action_id)
    assert action.args == {"k": ["v"]}
