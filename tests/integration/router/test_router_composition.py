"""Multi-agent composition through the router: agent as tool (child runs on the caller's
stream) and handoff (later turns of the interaction go to the target), over real gRPC and
NATS."""

from __future__ import annotations

import uuid

import pytest

from riverbeam.agents import (
    AgentTool,
    HandoffTool,
    PendingToolCall,
    RigAgentRunner,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.types import AgentResult, InvokeRequest, StreamAck, TokenUsage
from riverbeam.v1 import riverbeam_service_pb2 as pb
from tests.integration.router.router_kit import Stack, auth, collect
from tests.unit.runtime.runtime_kit import CountingTool

pytestmark = pytest.mark.nats

USAGE = TokenUsage(prompt_tokens=4, completion_tokens=2, total_tokens=6)


async def test_a_called_agent_streams_on_the_callers_stream_as_a_child_run(stack: Stack) -> None:
    helper = ScriptedClient(
        [ToolCalls([PendingToolCall("look", {"v": "x"})], usage=USAGE), Text("42", usage=USAGE)]
    )
    stack.beam.register_agent(RigAgentRunner.new("helper", helper, [CountingTool("look")], None))
    lead = ScriptedClient(
        [
            ToolCalls([PendingToolCall("ask_helper", {"task": "find it"})], usage=USAGE),
            Text("It is 42.", usage=USAGE),
        ]
    )
    stack.beam.register_agent(
        RigAgentRunner.new("lead", lead, [AgentTool(stack.beam.registry(), "helper")], None)
    )
    alice = stack.client("alice")
    ack = await alice.invoke("lead", "what is it?", stream=True)
    assert isinstance(ack, StreamAck)
    frames = await collect(alice.follow(ack.request_id))
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    child = [f for f in frames if f.parent_run_id]
    assert child and {(f.agent_name, f.parent_run_id) for f in child} == {("helper", ack.run_id)}
    assert any(f.type == "tool" and f.data and f.data.tool_name == "look" for f in child)
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "It is 42."
    run = await stack.wait_run(ack.request_id)
    runs = await stack.store.list_runs(interaction_id=run.interaction_id)
    [record] = [r for r in runs if r.parent_run_id == run.run_id]
    assert (record.agent_name, record.status) == ("helper", "completed")
    assert {f.run_id for f in child} == {record.run_id}
    assert record.token_usage is not None and record.token_usage.total_tokens == 12
    assert run.token_usage is not None and run.token_usage.total_tokens == 24
    # The caller reads the child run through the router too.
    fetched = await alice.get_run(record.run_id)
    assert fetched.parent_run_id == run.run_id


async def test_after_a_handoff_the_interaction_stays_with_the_target(stack: Stack) -> None:
    billing = ScriptedClient(
        [Text("Paid.", usage=USAGE), Text("12 EUR.", usage=USAGE), Text("Due Friday.")]
    )
    stack.beam.register_agent(RigAgentRunner.new("billing", billing, [], None))
    triage = ScriptedClient([ToolCalls([PendingToolCall("transfer_to_billing", {})])])
    stack.beam.register_agent(
        RigAgentRunner.new("triage", triage, [HandoffTool(stack.beam.registry(), "billing")], None)
    )
    alice = stack.client("alice")
    session = str(uuid.uuid4())
    first = await alice.invoke("triage", "invoice?", session_id=session)
    assert isinstance(first, AgentResult)
    assert (first.text, first.handoff_to) == ("Paid.", "billing")
    # The next turn names triage in the same interaction: billing answers it.
    request = InvokeRequest.parse(
        {
            "agent_name": "triage",
            "content": [{"type": "text", "text": "how much?"}],
            "session_id": session,
            "interaction_id": first.interaction_id,
        }
    )
    reply: pb.InvokeResponse = await stack.stub().Invoke(request.to_proto(), metadata=auth("alice"))
    second = AgentResult.from_proto(reply.result)
    assert (second.text, second.agent_name) == ("12 EUR.", "billing")
    # The SDK continues the interaction the same way.
    third = await alice.invoke(
        "triage", "and the due date?", session_id=session, interaction_id=first.interaction_id
    )
    assert isinstance(third, AgentResult)
    assert (third.text, third.agent_name) == ("Due Friday.", "billing")
    runs = await stack.store.list_runs(interaction_id=first.interaction_id or "")
    top = [
        (r.agent_name, r.result.handoff_to if r.result else None)
        for r in runs
        if not r.parent_run_id
    ]
    assert top == [("triage", "billing"), ("billing", None), ("billing", None)]
    assert len(triage.calls) == 1
