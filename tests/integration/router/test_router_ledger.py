"""Through the router (issue 13 §3): the tool-execution ledger of a run and an interaction,
readable by whoever may read the session, by an approver only for an interaction that asked
for an approval, and by nobody else (as if it did not exist)."""

from __future__ import annotations

import uuid

import pytest

from riverbeam.agents import PendingToolCall, Text, ToolCalls
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentResult
from tests.integration.router.router_kit import Stack, collect

pytestmark = pytest.mark.nats


async def _refused(call: object) -> ErrorCode:
    with pytest.raises(RiverbeamError) as info:
        await call  # type: ignore[misc]
    return info.value.code


async def test_the_ledger_of_a_run_and_its_interaction(stack: Stack) -> None:
    alice = stack.client("alice")
    stack.script.push(
        ToolCalls((PendingToolCall("note", {"v": "1"}), PendingToolCall("push", {"v": "main"})))
    )
    paused: AgentResult = await alice.invoke("author", "edit and push")
    assert paused.interrupted and paused.run_id and paused.interaction_id and paused.session_id
    (required,) = paused.action_required
    first = await alice.list_tool_executions(run_id=paused.run_id)
    assert [(e.tool, e.status) for e in first] == [("note", "succeeded"), ("push", "held")]
    assert first[1].action_id == required.action_id

    stack.script.push(Text("pushed"))
    ack = await alice.approve(paused.session_id, paused.interaction_id)
    assert (await collect(alice.follow(ack.request_id)))[-1].type == "done"
    entries = await alice.list_tool_executions(interaction_id=paused.interaction_id)
    assert [(e.tool, e.status) for e in entries] == [
        ("note", "succeeded"),
        ("push", "held"),
        ("push", "succeeded"),
    ]
    assert entries[2].run_id == ack.run_id and entries[2].action_id == required.action_id
    # Pages follow call order.
    page, token = await alice.list_tool_executions_page(
        interaction_id=paused.interaction_id, page_size=2
    )
    assert [e.execution_id for e in page] == [e.execution_id for e in entries[:2]] and token

    # An approver of the org reads it (the interaction asked for an approval); an admin too.
    approver = stack.client("approver")
    assert len(await approver.list_tool_executions(interaction_id=paused.interaction_id)) == 3
    assert len(await stack.client("admin").list_tool_executions(run_id=paused.run_id)) == 2
    # Bob (same org, not the owner) and carol (another org) are told it does not exist.
    for who in ("bob", "carol"):
        other = stack.client(who)
        code = await _refused(other.list_tool_executions(run_id=paused.run_id))
        assert code is ErrorCode.RUN_NOT_FOUND
        code = await _refused(other.list_tool_executions(interaction_id=paused.interaction_id))
        assert code is ErrorCode.INTERACTION_NOT_FOUND


async def test_an_approver_does_not_read_a_plain_conversations_ledger(stack: Stack) -> None:
    alice = stack.client("alice")
    stack.script.push(ToolCalls((PendingToolCall("note", {"v": "1"}),)), Text("done"))
    result: AgentResult = await alice.invoke("author", "edit")
    assert result.run_id and result.interaction_id
    assert [e.tool for e in await alice.list_tool_executions(run_id=result.run_id)] == ["note"]
    approver = stack.client("approver")
    code = await _refused(approver.list_tool_executions(run_id=result.run_id))
    assert code is ErrorCode.RUN_NOT_FOUND
    # A backend of the org reads the sessions of the users it acts for.
    backend = stack.client("backend")
    assert len(await backend.list_tool_executions(interaction_id=result.interaction_id)) == 1


async def test_bad_ledger_queries(stack: Stack) -> None:
    alice = stack.client("alice")
    assert await _refused(alice.list_tool_executions()) is ErrorCode.LEDGER_QUERY
    both = alice.list_tool_executions(run_id=str(uuid.uuid4()), interaction_id=str(uuid.uuid4()))
    assert await _refused(both) is ErrorCode.LEDGER_QUERY
    assert await _refused(alice.list_tool_executions(run_id="nope")) is ErrorCode.INVALID_UUID
    unknown = alice.list_tool_executions(run_id=str(uuid.uuid4()))
    assert await _refused(unknown) is ErrorCode.RUN_NOT_FOUND
