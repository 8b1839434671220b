"""Handoff: an agent gives the conversation to another for the rest of the interaction."""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path

import pytest

from riverbeam.agents import (
    AgentTool,
    HandoffTool,
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import RunnerSettings
from riverbeam.runtime import RiverBeam, wire_agents
from riverbeam.runtime._facade import MemorySinks
from riverbeam.types import AgentResult, StreamAck, TokenUsage
from tests.unit.runtime.runtime_kit import CountingTool, approval, text_request

USAGE = TokenUsage(prompt_tokens=5, completion_tokens=5, total_tokens=10)


def _beam(billing_steps: list[object]) -> tuple[RiverBeam, ScriptedClient, ScriptedClient]:
    beam = RiverBeam()
    billing = ScriptedClient(billing_steps)  # type: ignore[arg-type]
    beam.register_agent(
        RigAgentRunner.new("billing", billing, [], None, description="Answers about invoices")
    )
    triage = ScriptedClient(
        [ToolCalls([PendingToolCall("transfer_to_billing", {"reason": "invoice"})], usage=USAGE)]
    )
    beam.register_agent(
        RigAgentRunner.new("triage", triage, [HandoffTool(beam.registry(), "billing")], None)
    )
    return beam, triage, billing


async def test_the_target_answers_the_turn_and_the_handoff_is_recorded() -> None:
    beam, triage, billing = _beam([Text("Your invoice is paid.", usage=USAGE)])
    spec = beam.registry().get("triage").tool_specs[0]  # type: ignore[attr-defined]
    assert spec.name == "transfer_to_billing" and "invoices" in spec.description
    session = str(uuid.uuid4())
    result = await beam.invoke(text_request("triage", "is my invoice paid?", session))
    assert isinstance(result, AgentResult)
    assert result.text == "Your invoice is paid."
    assert result.handoff_to == "billing"
    assert result.metadata is not None
    handoff = result.metadata["handoff"]
    assert (handoff["from"], handoff["to"], handoff["reason"]) == ("triage", "billing", "invoice")
    assert [c.tool_name for c in result.tool_calls] == ["transfer_to_billing"]
    # The target saw the user's own turn; the source made one model call only.
    assert billing.calls[0].messages[-1] == {"role": "user", "content": "is my invoice paid?"}
    assert len(triage.calls) == 1
    run = await beam.get_run(result.run_id or "")
    assert run.agent_name == "triage" and run.result is not None
    assert run.result.handoff_to == "billing"
    assert run.token_usage is not None and run.token_usage.total_tokens == 20
    # The interaction record is the target's now (its agent and version pin).
    interaction = await beam.get_interaction(run.interaction_id)
    assert interaction.agent_name == "billing"
    runs = await beam.store.list_runs(interaction_id=run.interaction_id)
    [child] = [r for r in runs if r.parent_run_id == run.run_id]
    assert (child.agent_name, child.status, handoff["run_id"]) == (
        "billing",
        "completed",
        child.run_id,
    )


async def test_later_turns_of_the_interaction_go_to_the_target() -> None:
    beam, triage, billing = _beam([Text("Paid.", usage=USAGE), Text("It was 12 EUR.", usage=USAGE)])
    session = str(uuid.uuid4())
    first = await beam.invoke(text_request("triage", "invoice?", session))
    assert isinstance(first, AgentResult)
    # The caller names triage again, in the same interaction: billing answers.
    again = await beam.invoke(
        text_request("triage", "how much?", session, interaction_id=first.interaction_id)
    )
    assert isinstance(again, AgentResult)
    assert again.text == "It was 12 EUR." and again.agent_name == "billing"
    assert len(triage.calls) == 1 and len(billing.calls) == 2
    run = await beam.get_run(again.run_id or "")
    assert run.agent_name == "billing" and run.parent_run_id is None
    # The target saw the conversation so far, the handed-off answer included.
    contents = [m.get("content") for m in billing.calls[1].messages]
    assert "Paid." in contents and contents[-1] == "how much?"
    # A new interaction starts with the agent the caller names.
    triage.push(Text("Hello again.", usage=USAGE))
    fresh = await beam.invoke(text_request("triage", "hi", session))
    assert isinstance(fresh, AgentResult) and fresh.agent_name == "triage"


async def test_the_handoff_and_the_targets_frames_are_on_the_stream() -> None:
    beam, _, _ = _beam([Text("Paid.", usage=USAGE)])
    ack = await beam.invoke(text_request("triage", "invoice?", stream=True))
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    sinks = beam.sinks
    assert isinstance(sinks, MemorySinks)
    frames = sinks.frames(ack.request_id)
    assert any(
        f.type == "tool" and f.data and f.data.tool_name == "transfer_to_billing" for f in frames
    )
    marked = [f for f in frames if f.parent_run_id == ack.run_id]
    assert marked and {f.agent_name for f in marked} == {"billing"}
    done = frames[-1]
    assert done.type == "done" and done.result is not None
    assert done.result.handoff_to == "billing" and done.result.text == "Paid."


async def test_bad_handoffs_are_refused_with_bem_236() -> None:
    beam = RiverBeam()
    client = ScriptedClient(
        [ToolCalls([PendingToolCall("transfer_to_nobody", {})]), Text("could not")]
    )
    beam.register_agent(
        RigAgentRunner.new(
            "lonely",
            client,
            [HandoffTool(beam.registry(), "nobody")],
            None,
            options=RigOptions(tool_errors="model"),
        )
    )
    result = await beam.invoke(text_request("lonely", "x"))
    assert isinstance(result, AgentResult) and result.handoff_to is None
    assert result.tool_calls[0].result["error"]["code"] == ErrorCode.HANDOFF_INVALID.code

    # From inside a child run (an agent called as a tool) a handoff is refused too.
    beam = RiverBeam()
    beam.register_agent(RigAgentRunner.new("other", ScriptedClient([]), [], None))
    helper = ScriptedClient([ToolCalls([PendingToolCall("transfer_to_other", {})])])
    beam.register_agent(
        RigAgentRunner.new("helper", helper, [HandoffTool(beam.registry(), "other")], None)
    )
    lead = ScriptedClient([ToolCalls([PendingToolCall("ask_helper", {"task": "t"})]), Text("fine")])
    beam.register_agent(
        RigAgentRunner.new(
            "lead",
            lead,
            [AgentTool(beam.registry(), "helper")],
            None,
            options=RigOptions(tool_errors="model"),
        )
    )
    result = await beam.invoke(text_request("lead", "x"))
    assert isinstance(result, AgentResult) and result.handoff_to is None
    assert "BEM-236" in str(result.tool_calls[0].result)


async def test_handoffs_from_config(tmp_path: Path) -> None:
    config = tmp_path / "riverbeam.yaml"
    config.write_text(
        textwrap.dedent(
            """\
            builtin_agents: [assistant]
            agents:
              - name: triage
                instructions: Route the user.
                tools: []
                handoffs: [assistant]
            """
        )
    )
    client = ScriptedClient([ToolCalls([PendingToolCall("transfer_to_assistant", {})])])
    beam = RiverBeam()
    await wire_agents(
        beam, RunnerSettings(sandbox_url=None, store_url=None, config=config), client=client
    )
    result = await beam.invoke(text_request("triage", "hello"))
    assert isinstance(result, AgentResult)
    assert result.handoff_to == "assistant" and result.text == "Echo: hello"

    config.write_text("agents:\n  - name: triage\n    instructions: x\n    handoffs: [nobody]\n")
    with pytest.raises(RiverbeamError) as info:
        await wire_agents(
            RiverBeam(),
            RunnerSettings(sandbox_url=None, store_url=None, config=config),
            client=ScriptedClient([]),
        )
    assert info.value.code is ErrorCode.CONFIG_UNKNOWN_NAME
    assert (info.value.details["field"], info.value.details["line"]) == (
        "agents[0].handoffs[0]",
        "4",
    )


async def test_an_approval_after_a_handoff_is_resumed_by_the_target() -> None:
    beam = RiverBeam()
    billing = ScriptedClient(
        [
            Text("Paid.", usage=USAGE),
            ToolCalls([PendingToolCall("refund", {"v": "12"})]),
            Text("Refunded.", usage=USAGE),
        ]
    )
    refund = CountingTool("refund", confirm=True)
    beam.register_agent(RigAgentRunner.new("billing", billing, [refund], None))
    triage = ScriptedClient([ToolCalls([PendingToolCall("transfer_to_billing", {})])])
    beam.register_agent(
        RigAgentRunner.new("triage", triage, [HandoffTool(beam.registry(), "billing")], None)
    )
    session = str(uuid.uuid4())
    first = await beam.invoke(text_request("triage", "invoice?", session))
    assert isinstance(first, AgentResult)
    held = await beam.invoke(
        text_request("triage", "refund it", session, interaction_id=first.interaction_id)
    )
    assert isinstance(held, AgentResult) and held.interrupted
    [action] = held.action_required
    # The caller resumes naming the agent it started with: the interaction is billing's.
    ack = await beam.resume(
        {
            "agent_name": "triage",
            "session_id": session,
            "interaction_id": first.interaction_id,
            "actions": [approval(action.action_id)],
        }
    )
    await beam.wait_idle()
    run = await beam.get_run(ack.run_id or "")
    assert (run.agent_name, run.status) == ("billing", "completed")
    assert refund.calls == [{"v": "12"}]
