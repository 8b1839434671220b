"""The store service serialises a begin or finish step's records without copying them first;
a caller of InMemoryStore itself still gets copies."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from riverbeam.store import InMemoryStore, NewMessage
from riverbeam.store import _memory as memory_module
from riverbeam.store._lending import lending, records_lent
from riverbeam.types import ContentPart, Message
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
