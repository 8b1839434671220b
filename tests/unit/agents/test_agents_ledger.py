"""ToolLedger: what the agent keeps of its tool calls, and when it writes them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from riverbeam.agents import ToolSpec
from riverbeam.agents._ledger import ToolLedger
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ToolExecution, result_digest


class Writer:
    def __init__(self) -> None:
        self.batches: list[list[ToolExecution]] = []
        self.fail: RiverbeamError | None = None

    async def record_tool_executions(
        self, *, run_id: str, entries: Sequence[ToolExecution], lease_epoch: int | None = None
    ) -> list[ToolExecution]:
        if self.fail is not None:
            raise self.fail
        assert lease_epoch == 3
        self.batches.append(list(entries))
        return list(entries)


def ledger(writer: Writer | None = None) -> ToolLedger:
    return ToolLedger(
        run_id="r", interaction_id="i", session_id="s", writer=writer, runner_id="a", lease_epoch=3
    )


READ = ToolSpec(name="read", description="r", read_only=True)
PUT = ToolSpec(name="put", description="p", idempotent=True)
PUSH = ToolSpec(name="push", description="p")


async def test_only_a_side_effecting_start_is_written_and_it_carries_the_backlog() -> None:
    writer = Writer()
    book = ledger(writer)
    for spec in (READ, PUT):
        entry = book.request(tool=spec.name, args={}, tool_call_id=None, spec=spec)
        await book.start(entry)
        book.finish(entry, "succeeded", result=1)
    assert writer.batches == []
    push = book.request(tool="push", args={"ref": "x"}, tool_call_id="c3", spec=PUSH)
    await book.start(push)
    [batch] = writer.batches
    assert [(e.tool, e.status) for e in batch] == [
        ("read", "succeeded"),
        ("put", "succeeded"),
        ("push", "started"),
    ]
    assert batch[2].runner_id == "a" and batch[2].lease_epoch == 3
    book.finish(push, "succeeded", result={"pushed": True})
    assert [(e.tool, e.status) for e in book.unwritten()] == [("push", "succeeded")]
    book.written(book.unwritten())
    assert book.unwritten() == []
    assert book.synchronous_writes == 1


async def test_an_unknown_tool_is_treated_as_having_side_effects() -> None:
    writer = Writer()
    book = ledger(writer)
    entry = book.request(tool="mystery", args={}, tool_call_id=None, spec=None)
    await book.start(entry)
    assert len(writer.batches) == 1
    assert not book.entry(entry).read_only and not book.entry(entry).idempotent


async def test_a_start_that_cannot_be_written_fails_the_entry_and_raises() -> None:
    writer = Writer()
    writer.fail = RiverbeamError(ErrorCode.STALE_EPOCH, "taken over")
    book = ledger(writer)
    entry = book.request(tool="push", args={}, tool_call_id=None, spec=PUSH)
    with pytest.raises(RiverbeamError):
        await book.start(entry)
    stored = book.entry(entry)
    assert (stored.status, stored.error_code) == ("failed", "BEM-035")
    assert book.unwritten() == [stored]  # the finish step carries it


def test_results_are_digested_and_previewed_within_bounds() -> None:
    book = ledger()
    big = {"body": "x" * 10_000, "n": 1}
    entry = book.request(tool="read", args={}, tool_call_id=None, spec=READ)
    book.finish(entry, "succeeded", result=big)
    stored = book.entry(entry)
    assert stored.result_digest == result_digest(big)
    assert stored.result_preview is not None and len(stored.result_preview) == 2048
    assert stored.result_preview.startswith('{"body":"xxx')


def test_hold_and_settle() -> None:
    book = ledger()
    held = book.request(tool="push", args={}, tool_call_id="c1", spec=PUSH)
    open_ = book.request(tool="read", args={}, tool_call_id="c2", spec=READ)
    book.hold("c1", "action-1")
    book.settle_open("the run ended")
    assert (book.entry(held).status, book.entry(held).action_id) == ("held", "action-1")
    assert (book.entry(open_).status, book.entry(open_).error_message) == (
        "cancelled",
        "the run ended",
    )
    assert [e.seq for e in book.entries] == [1, 2]
