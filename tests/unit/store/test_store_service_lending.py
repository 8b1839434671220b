"""The store service serialises a begin or finish step's records without copying them first;
a caller of InMemoryStore itself still gets copies."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from riverbeam.store import InMemoryStore, NewAction, NewMessage
from riverbeam.store import _memory as memory_module
from riverbeam.store import _memory_ledger as ledger_module
from riverbeam.store import _memory_tables as tables_module
from riverbeam.store._lending import lending, records_lent
from riverbeam.types import AgentResult, ContentPart, Message, TokenUsage, ToolExecution
from riverbeam.v1 import records_pb2
from riverbeam.v1 import store_service_pb2 as pb
from services.store.servicer import StoreServicer


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The records InMemoryStore copies on their way out."""
    seen: list[str] = []
    original = memory_module._copy

    def counting(record: memory_module._M) -> memory_module._M:
        seen.append(type(record).__name__)
        return original(record)

    monkeypatch.setattr(memory_module, "_copy", counting)
    yield seen


def _begin(session_id: str, run_id: str) -> pb.BeginRunRequest:
    return pb.BeginRunRequest(
        session_id=session_id,
        agent_name="a",
        run_id=run_id,
        lease_owner="w",
        lease_ttl_s=30,
        human_content=[ContentPart(type="text", text="hello").to_proto()],
        history_limit=10,
    )


def _finish(run_id: str) -> pb.FinishRunRequest:
    reply = NewMessage(role="ai", content=[ContentPart(type="text", text="hi")])
    return pb.FinishRunRequest(
        run_id=run_id,
        lease_owner="w",
        status="RUN_STATUS_COMPLETED",
        messages=[reply.to_proto()],
        lease_epoch=1,
    )


async def test_the_service_serialises_step_records_without_copies(copies: list[str]) -> None:
    store = InMemoryStore()
    servicer = StoreServicer(store)
    session_id = str(uuid.uuid4())
    for turn in range(3):  # later turns bring history back too
        run_id = str(uuid.uuid4())
        begun = await servicer.BeginRun(_begin(session_id, run_id), None)
        assert len(begun.history) == 2 * turn
        finished = await servicer.FinishRun(_finish(run_id), None)
        assert finished.run.status == records_pb2.RUN_STATUS_COMPLETED
    assert copies == []
    assert not lending()  # the service's context is restored

    # What was serialised is what is stored; a later read still gets copies.
    messages, _ = await store.list_messages(session_id=session_id)
    assert [Message.from_proto(m) for m in begun.history] == messages[:4]
    assert copies


async def test_direct_callers_still_get_copies(copies: list[str]) -> None:
    store = InMemoryStore()
    begun = await store.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="a",
        run_id=str(uuid.uuid4()),
        lease_owner="w",
        lease_ttl_s=30,
        human_content=[ContentPart(type="text", text="hello")],
    )
    assert {"Session", "Interaction", "Run", "Message"} <= set(copies)
    begun.session.user_id = "changed"
    assert (await store.get_session(session_id=begun.session.session_id)).user_id is None
    with records_lent():
        assert lending()
    assert not lending()


@pytest.fixture
def stored_copies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The records InMemoryStore copies on their way in (messages, actions, ledger entries)."""
    seen: list[str] = []
    for module in (tables_module, ledger_module):
        original = module.deep_copy

        def counting(record: Any, original: Any = original) -> Any:
            seen.append(type(record).__name__)
            return original(record)

        monkeypatch.setattr(module, "deep_copy", counting)
    yield seen


def _full_finish(begun: pb.BeginRunResponse) -> pb.FinishRunRequest:
    """A finish with everything a step may store: a message, an approval, usage, a result and
    a ledger entry."""
    usage = TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3)
    run_id = begun.run.run_id
    return pb.FinishRunRequest(
        run_id=run_id,
        lease_owner="w",
        status="RUN_STATUS_INTERRUPTED",
        messages=[NewMessage(role="ai", content=[ContentPart.of_text("may I?")]).to_proto()],
        pending_actions=[
            NewAction(action_id=str(uuid.uuid4()), tool="push", args={"ref": "main"}).to_proto()
        ],
        token_usage=usage.to_proto(),
        result=AgentResult(agent_name="a", content=[ContentPart.of_text("may I?")]).to_proto(),
        tool_executions=[
            ToolExecution(
                execution_id=str(uuid.uuid4()),
                tool_call_id="call-1",
                run_id=run_id,
                interaction_id=begun.interaction.interaction_id,
                session_id=begun.session.session_id,
                seq=1,
                tool="search",
                args={"q": "x"},
                runner_id="w",
                lease_epoch=1,
                requested_at=datetime.now(UTC),
            ).to_proto()
        ],
        lease_epoch=1,
    )


async def test_the_service_gives_the_store_what_it_built_without_copies(
    copies: list[str], stored_copies: list[str]
) -> None:
    store = InMemoryStore()
    servicer = StoreServicer(store)
    run_id = str(uuid.uuid4())
    begun = await servicer.BeginRun(_begin(str(uuid.uuid4()), run_id), None)
    finished = await servicer.FinishRun(_full_finish(begun), None)
    assert finished.run.status == records_pb2.RUN_STATUS_INTERRUPTED
    assert copies == [] and stored_copies == []

    # What is stored is what the request said; later reads are copies of it.
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [m.text for m in messages] == ["hello", "may I?"]
    run = await store.get_run(run_id=run_id)
    assert run.result is not None and run.result.text == "may I?"
    assert run.token_usage is not None and run.token_usage.total_tokens == 3
    [entry], _ = await store.list_tool_executions(run_id=run_id)
    assert entry.tool == "search" and entry.args == {"q": "x"}


async def test_direct_callers_records_are_still_copied_in(stored_copies: list[str]) -> None:
    store = InMemoryStore()
    begun = await store.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="a",
        run_id=str(uuid.uuid4()),
        lease_owner="w",
        lease_ttl_s=30,
        human_content=[ContentPart(type="text", text="hello")],
    )
    reply = NewMessage(role="ai", content=[ContentPart(type="text", text="hi")])
    await store.finish_run(
        run_id=begun.run.run_id, lease_owner="w", status="completed", messages=[reply]
    )
    assert stored_copies == ["Message", "Message"]
    reply.content[0].text = "changed"
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert messages[-1].text == "hi"
    with records_lent(given=True):
        assert lending()
    assert not lending()
