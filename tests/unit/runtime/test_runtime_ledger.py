"""The tool-execution ledger as the runner keeps it (docs/durability.md).

Every tool call of a run gets an entry; a side-effecting call is on record as `started`
before it runs (the one synchronous write), everything else goes with the finish step.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from riverbeam.agents import (
    AgentInput,
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
    ToolSpec,
    json_params,
)
from riverbeam.agents._policies import MaxToolCalls
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.runtime import RiverBeam, reap_once
from riverbeam.runtime._facade import MemorySinks
from riverbeam.store import InMemoryStore
from riverbeam.types import AgentResult, ContentPart, StreamAck, ToolExecution, result_digest
from tests.unit.runtime.runtime_kit import approval, text_request

GUARD_S = 10.0  # a hang guard, never a timing assertion


class CountingStore(InMemoryStore):
    """Counts the ledger writes made outside the finish step; can refuse them."""

    def __init__(self) -> None:
        super().__init__()
        self.ledger_writes: list[list[ToolExecution]] = []
        self.refuse: RiverbeamError | None = None

    async def record_tool_executions(
        self, *, run_id: str, entries: Sequence[ToolExecution], lease_epoch: int | None = None
    ) -> list[ToolExecution]:
        self.ledger_writes.append(list(entries))
        if self.refuse is not None:
            raise self.refuse
        return await super().record_tool_executions(
            run_id=run_id, entries=entries, lease_epoch=lease_epoch
        )


class SeeingTool:
    """Records, when it runs, what the store's ledger says about its own call."""

    def __init__(
        self,
        name: str,
        store: InMemoryStore,
        *,
        read_only: bool = False,
        confirm: bool = False,
        delay_s: float = 0.0,
    ) -> None:
        self.name, self.store, self.read_only, self.confirm = name, store, read_only, confirm
        self.delay_s = delay_s
        self.calls: list[dict[str, Any]] = []
        self.seen: list[list[str]] = []
        self.started = asyncio.Event()

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=f"test tool {self.name}",
            parameters=json_params({"v": {"type": "string"}}, ["v"]),
            confirm_required=self.confirm,
            read_only=self.read_only,
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        entries, _ = await self.store.list_tool_executions(run_id=input.run_id)
        self.seen.append([f"{e.tool}:{e.status}" for e in entries])
        self.calls.append(dict(args))
        self.started.set()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return {"tool": self.name, "got": args["v"]}


def beam_with(
    steps: list[Any], store: InMemoryStore, tools: list[SeeingTool], **options: Any
) -> RiverBeam:
    beam = RiverBeam(store=store)
    beam.register_agent(
        RigAgentRunner.new(
            "author", ScriptedClient(steps), tools, None, options=RigOptions(**options)
        )
    )
    return beam


async def run_ledger(store: InMemoryStore, run_id: str) -> list[ToolExecution]:
    entries, _ = await store.list_tool_executions(run_id=run_id)
    return entries


async def test_every_call_gets_an_entry_and_only_a_side_effect_is_written_before_it_runs() -> None:
    store = CountingStore()
    read = SeeingTool("read", store, read_only=True)
    write = SeeingTool("write", store)
    steps = [
        ToolCalls(
            [
                PendingToolCall("read", {"v": "1"}, id="c1"),
                PendingToolCall("write", {"v": "2"}, id="c2"),
                PendingToolCall("read", {"v": "3"}, id="c3"),
            ]
        ),
        Text("done"),
    ]
    result = await beam_with(steps, store, [read, write]).invoke(text_request("author", "go"))
    assert isinstance(result, AgentResult)
    # The read-only calls were not written before they ran; the side-effecting one was on
    # record as started (with the earlier, finished call) when it ran.
    assert read.seen[0] == []
    assert write.seen == [["read:succeeded", "write:started"]]
    assert len(store.ledger_writes) == 1
    entries = await run_ledger(store, result.run_id or "")
    assert [(e.seq, e.tool, e.status, e.tool_call_id) for e in entries] == [
        (1, "read", "succeeded", "c1"),
        (2, "write", "succeeded", "c2"),
        (3, "read", "succeeded", "c3"),
    ]
    first = entries[0]
    assert first.read_only and not entries[1].read_only
    assert first.result_digest == result_digest({"tool": "read", "got": "1"})
    assert first.result_preview == '{"got":"1","tool":"read"}'
    assert first.args == {"v": "1"}
    assert first.runner_id and first.lease_epoch == 1
    assert first.started_at is not None and first.finished_at is not None
    assert first.interaction_id == result.interaction_id
    assert first.session_id == result.session_id


async def test_refused_unknown_and_invalid_calls_are_recorded_without_starting() -> None:
    store = CountingStore()
    write = SeeingTool("write", store)
    steps = [
        ToolCalls(
            [
                PendingToolCall("nope", {}, id="c1"),
                PendingToolCall("write", {"w": 1}, id="c2"),
                PendingToolCall("write", {"v": "ok"}, id="c3"),
                PendingToolCall("write", {"v": "again"}, id="c4"),
            ]
        ),
        Text("done"),
    ]
    beam = beam_with(steps, store, [write], policies=[MaxToolCalls(limit=3)], tool_errors="model")
    result = await beam.invoke(text_request("author", "go"))
    assert isinstance(result, AgentResult)
    entries = await run_ledger(store, result.run_id or "")
    assert [(e.tool, e.status, e.error_code) for e in entries] == [
        ("nope", "failed", "BEM-089"),
        ("write", "failed", "BEM-090"),
        ("write", "succeeded", None),
        ("write", "denied", None),
    ]
    assert [e.started_at is None for e in entries] == [True, True, False, True]
    assert "max_tool_calls" in (entries[3].error_message or "")
    assert write.calls == [{"v": "ok"}]


async def test_a_held_call_and_its_approved_run_share_the_interactions_ledger() -> None:
    store = CountingStore()
    read = SeeingTool("read", store, read_only=True)
    push = SeeingTool("push", store, confirm=True)
    steps = [
        ToolCalls(
            [
                PendingToolCall("push", {"v": "ref"}, id="p1"),
                PendingToolCall("read", {"v": "after"}, id="r1"),
            ]
        ),
        Text("pushed"),
    ]
    beam = beam_with(steps, store, [read, push])
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("author", "push", sid))
    assert isinstance(first, AgentResult) and first.interrupted
    (pending,) = first.action_required
    held = await run_ledger(store, first.run_id or "")
    assert [(e.tool, e.status, e.action_id) for e in held] == [
        ("push", "held", pending.action_id),
        ("read", "cancelled", None),
    ]
    assert store.ledger_writes == []  # nothing ran: it all went with the finish step

    ack = await beam.resume(
        {
            "agent_name": "author",
            "session_id": sid,
            "interaction_id": first.interaction_id,
            "actions": [approval(pending.action_id)],
        }
    )
    await beam.wait_idle()
    assert push.seen == [["push:started"]]  # on record before the approved push ran
    resumed = await run_ledger(store, ack.run_id or "")
    assert [(e.tool, e.status, e.action_id) for e in resumed] == [
        ("push", "succeeded", pending.action_id)
    ]
    everything, _ = await store.list_tool_executions(interaction_id=first.interaction_id)
    assert [(e.run_id, e.status) for e in everything] == [
        (first.run_id, "held"),
        (first.run_id, "cancelled"),
        (ack.run_id, "succeeded"),
    ]


async def test_a_declined_approval_is_recorded_denied() -> None:
    store = CountingStore()
    push = SeeingTool("push", store, confirm=True)
    steps = [ToolCalls([PendingToolCall("push", {"v": "ref"}, id="p1")]), Text("ok")]
    beam = beam_with(steps, store, [push])
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("author", "push", sid))
    assert isinstance(first, AgentResult)
    (pending,) = first.action_required
    ack = await beam.resume(
        {
            "agent_name": "author",
            "session_id": sid,
            "interaction_id": first.interaction_id,
            "actions": [approval(pending.action_id, status="cancelled")],
        }
    )
    await beam.wait_idle()
    [entry] = await run_ledger(store, ack.run_id or "")
    assert (entry.status, entry.action_id) == ("denied", pending.action_id)
    assert "declined" in (entry.error_message or "")
    assert push.calls == []


async def test_a_side_effect_whose_start_cannot_be_recorded_does_not_run() -> None:
    store = CountingStore()
    store.refuse = RiverbeamError(ErrorCode.STORE_UNAVAILABLE, "store down")
    write = SeeingTool("write", store)
    steps = [ToolCalls([PendingToolCall("write", {"v": "x"}, id="w1")]), Text("never")]
    beam = beam_with(steps, store, [write])
    ack = await beam.invoke(text_request("author", "go", stream=True))
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    assert write.calls == []
    run = await beam.get_run(ack.run_id or "")
    assert run.status == "failed" and run.error_code == "BEM-120"
    [entry] = await run_ledger(store, ack.run_id or "")
    assert (entry.status, entry.error_code) == ("failed", "BEM-120")


async def test_a_call_cut_short_by_a_cancel_is_recorded_cancelled() -> None:
    store = CountingStore()
    slow = SeeingTool("slow", store, delay_s=30)
    steps = [ToolCalls([PendingToolCall("slow", {"v": "x"}, id="s1")]), Text("never")]
    beam = beam_with(steps, store, [slow])
    ack = await beam.invoke(text_request("author", "work", stream=True))
    assert isinstance(ack, StreamAck)
    await asyncio.wait_for(slow.started.wait(), GUARD_S)
    assert await beam.cancel(ack.request_id, "stop")
    await asyncio.wait_for(beam.wait_idle(), GUARD_S)
    [entry] = await run_ledger(store, ack.run_id or "")
    assert entry.status == "cancelled" and entry.started_at is not None
    assert "cancelled" in (entry.error_message or "")


async def test_the_reaper_marks_a_dead_runners_started_call_unknown() -> None:
    now = [datetime.now(UTC)]
    store = InMemoryStore(clock=lambda: now[0])
    begun = await store.begin_run(
        session_id=new_id(),
        agent_name="author",
        run_id=new_id(),
        lease_owner="runner-a",
        lease_ttl_s=15,
        human_content=[ContentPart.of_text("push it")],
    )
    started = ToolExecution(
        execution_id=new_id(),
        run_id=begun.run.run_id,
        interaction_id=begun.interaction.interaction_id,
        session_id=begun.session.session_id,
        seq=1,
        tool="git_push",
        status="started",
        requested_at=now[0],
        started_at=now[0],
    )
    await store.record_tool_executions(run_id=begun.run.run_id, entries=[started], lease_epoch=1)
    now[0] += timedelta(minutes=1)  # the runner stopped renewing its lease
    assert await reap_once(store, MemorySinks()) == 1
    [entry] = await run_ledger(store, begun.run.run_id)
    assert (entry.status, entry.error_code) == ("unknown", "BEM-034")
