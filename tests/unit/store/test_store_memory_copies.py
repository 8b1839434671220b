"""InMemoryStore copies what it stores with deep_copy, never through copy.deepcopy (pydantic's
model_copy(deep=True)), copies the caller's values once, and still shares nothing with the
caller; the U+0000 scrub rebuilds only values that hold one."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from riverbeam.store import InMemoryStore, NewAction, NewMessage, _nul
from riverbeam.types import AgentResult, ContentPart, TokenUsage


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


async def test_a_finished_run_shares_nothing_with_the_callers_result() -> None:
    store = InMemoryStore()
    begun = await store.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="a",
        run_id=str(uuid.uuid4()),
        lease_owner="w",
        lease_ttl_s=30,
    )
    result = AgentResult(
        agent_name="a",
        content=[ContentPart(type="text", text="done")],
        token_usage=TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3),
        metadata={"k": ["v"]},
    )
    returned = await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner="w",
        status="completed",
        result=result,
        token_usage=result.token_usage,
        lease_epoch=1,
    )
    result.content[0].text = "changed"
    assert result.metadata is not None and result.token_usage is not None
    result.metadata["k"].append("changed")
    result.token_usage.total_tokens = 99
    assert returned.result is not None
    returned.result.content[0].text = "changed too"
    stored = await store.get_run(run_id=begun.run.run_id)
    assert stored.result is not None and stored.token_usage is not None
    assert stored.result.text == "done"
    assert stored.result.metadata == {"k": ["v"]}
    assert stored.token_usage.total_tokens == 3


async def test_values_without_nul_are_only_looked_at(monkeypatch: pytest.MonkeyPatch) -> None:
    rebuilt: list[object] = []
    original = _nul._scrub

    def counting(value: Any) -> tuple[Any, bool]:
        rebuilt.append(value)
        return original(value)

    monkeypatch.setattr(_nul, "_scrub", counting)
    store = InMemoryStore()
    begun = await store.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="a",
        run_id=str(uuid.uuid4()),
        lease_owner="w",
        lease_ttl_s=30,
        human_content=[ContentPart(type="text", text="hello")],
        message_metadata={"k": "v"},
    )
    assert rebuilt == []
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner="w",
        status="completed",
        messages=[NewMessage(role="ai", content=[ContentPart(type="text", text="a\x00b")])],
        lease_epoch=1,
    )
    # Only the argument holding a U+0000 is rebuilt (and it is replaced).
    assert len(rebuilt) >= 1
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert messages[-1].content[0].text == "a\ufffdb"
