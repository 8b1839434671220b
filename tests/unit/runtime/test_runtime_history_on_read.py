"""An agent's history is copied and trimmed when it first reads it, and is then what it was.

runtime/_deferred_history.py: the context's history and full_history are made on first read
(from the store client's lent window, store/_lent_history.py, or the step's own history).
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from riverbeam.runtime import PipelineOptions, RiverBeam
from riverbeam.runtime._context import trim_memory, trim_to_budget
from riverbeam.runtime._deferred_history import DeferredHistoryContext
from riverbeam.server import GrpcServer
from riverbeam.store import InMemoryStore, StoreClient, _session_history
from riverbeam.store._lent_history import LentBeginRun
from riverbeam.types import AgentResult, ContentPart, InvokeRequest, Message, StreamChunk
from services.store.app import binding
from tests.unit.runtime.runtime_kit import FramesAgent, text_request


def _message(seq: int, text: str) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        session_id="s",
        seq=seq,
        role="human" if seq % 2 else "ai",
        content=[ContentPart.of_text(text)],
        created_at=datetime.now(UTC),
    )


def _window(n: int) -> list[Message]:
    return [_message(seq, "x" * (40 + seq)) for seq in range(1, n + 1)]


@pytest.mark.parametrize("max_tokens", [60, 130, 4096])
def test_the_history_read_is_the_one_trim_to_budget_keeps(max_tokens: int) -> None:
    window = _window(9)
    made: list[int] = []

    def copies() -> list[Message]:
        made.append(1)
        return [m.model_copy(deep=True) for m in window]

    _, budget = trim_memory([], max_tokens=max_tokens)
    context = DeferredHistoryContext(copies, budget, metadata={"k": "v"})
    assert made == []  # nothing copied before the history is read
    assert context.metadata == {"k": "v"}
    assert made == []
    expected, _ = trim_to_budget(window, [], max_tokens=max_tokens)
    assert context.history == expected
    assert context.full_history == window
    assert made == [1]  # once, for both lists
    # As before: the history is the newest part of full_history, the very same messages.
    full = context.full_history
    assert full is not None
    assert all(
        a is b for a, b in zip(context.history, full[len(full) - len(expected) :], strict=True)
    )
    assert not {id(m) for m in full} & {id(m) for m in window}


def test_a_history_set_before_it_is_read_is_the_one_kept() -> None:
    window = _window(4)
    context = DeferredHistoryContext(lambda: list(window), 10_000)
    context.history = window[-1:]
    assert context.history == window[-1:]
    assert context.full_history == window
    context.full_history = None
    assert context.full_history is None and context.history == window[-1:]


def test_a_replaced_context_keeps_the_history_read() -> None:
    window = _window(3)
    context = DeferredHistoryContext(lambda: list(window), 10_000, metadata={"k": 1})
    again = dataclasses.replace(context, metadata={"k": 2})
    assert again.history == context.history == window
    assert again.full_history == window and again.metadata == {"k": 2}


class Reader(FramesAgent):
    """Reads its history (and changes the messages it got), or never looks at it."""

    def __init__(self, name: str, *, reads: bool) -> None:
        super().__init__(name, [])
        self.reads = reads
        self.seen: list[list[str]] = []

    async def stream(self, input: Any, context: Any) -> Any:
        if self.reads:
            self.seen.append([m.text for m in context.full_history])
            assert [m.text for m in context.history] == self.seen[-1]
            for m in context.history:  # what a run does to its history is its own business
                m.content.append(ContentPart.of_text("changed"))
        yield StreamChunk(
            type="done",
            result=AgentResult(agent_name=self.name, content=[ContentPart.of_text(input.text)]),
        )


async def test_a_store_client_lends_the_window_and_copies_only_for_a_reader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    copied: list[int] = []
    copies = _session_history.HeldWindow.copies

    def counting(self: _session_history.HeldWindow) -> list[Message]:
        copied.append(len(self.messages))
        return copies(self)

    monkeypatch.setattr(_session_history.HeldWindow, "copies", counting)
    memory = InMemoryStore()
    async with GrpcServer([binding(memory)], listen="127.0.0.1:0", grace_s=1.0) as server:
        store = StoreClient(server.address)
        beam = RiverBeam(store=store, options=PipelineOptions(max_history_messages=200))
        beam.register_agent(Reader("quiet", reads=False))
        reader = Reader("reader", reads=True)
        beam.register_agent(reader)
        try:
            quiet_sid, reader_sid = str(uuid.uuid4()), str(uuid.uuid4())
            for turn in range(4):
                await beam.invoke(text_request("quiet", f"q{turn}", quiet_sid))
            assert copied == []  # the quiet agent's turns copied nothing
            prepared = await beam.pipeline.prepare(
                InvokeRequest.parse(text_request("quiet", "q4", quiet_sid))
            )
            assert isinstance(prepared.begun, LentBeginRun)
            stored, _ = await memory.list_messages(session_id=quiet_sid, page_size=100)
            assert prepared.begun.history == stored[:-1]  # the held window, lent
            await beam.pipeline.execute(prepared)
            assert copied == []
            for turn in range(4):
                await beam.invoke(text_request("reader", f"r{turn}", reader_sid))
            # Every turn read the stored window, unchanged by what the turn before did to its
            # copies; the window is copied once per turn that reads it.
            assert reader.seen == [
                [],
                ["r0", "r0"],
                ["r0", "r0", "r1", "r1"],
                ["r0", "r0", "r1", "r1", "r2", "r2"],
            ]
            assert copied == [2, 4, 6]
        finally:
            await beam.aclose(grace_s=1.0)
            await store.aclose()
