"""An agent as another agent's tool (AgentTool), directly and from riverbeam.yaml."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from riverbeam.agents import (
    AgentTool,
    ChildHeld,
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
    ToolSpec,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import RunnerSettings
from riverbeam.runtime import RiverBeam, wire_agents
from riverbeam.types import AgentResult, TokenUsage
from tests.unit.runtime.runtime_kit import CountingTool, text_request

USAGE = TokenUsage(prompt_tokens=10, completion_tokens=5, total_tokens=15)


def lead_and_helper(helper_steps: list[object]) -> tuple[RiverBeam, ScriptedClient, ScriptedClient]:
    beam = RiverBeam()
    helper_client = ScriptedClient(helper_steps)  # type: ignore[arg-type]
    beam.register_agent(
        RigAgentRunner.new(
            "helper", helper_client, [CountingTool("look")], None, description="Looks things up"
        )
    )
    lead_client = ScriptedClient(
        [
            ToolCalls([PendingToolCall("ask_helper", {"task": "find the answer"})], usage=USAGE),
            Text("The helper says 42.", usage=USAGE),
        ]
    )
    tool = AgentTool(beam.registry(), "helper")
    beam.register_agent(
        RigAgentRunner.new(
            "lead", lead_client, [tool], None, options=RigOptions(tool_errors="model")
        )
    )
    return beam, lead_client, helper_client


async def test_the_called_agent_answers_the_task_and_its_tokens_count_for_the_caller() -> None:
    beam, _lead, helper = lead_and_helper(
        [ToolCalls([PendingToolCall("look", {"v": "x"})], usage=USAGE), Text("42", usage=USAGE)]
    )
    spec = beam.registry().get("lead").tool_specs[0]  # type: ignore[attr-defined]
    assert isinstance(spec, ToolSpec) and spec.name == "ask_helper"
    assert "Looks things up" in spec.description
    result = await beam.invoke(text_request("lead", "what is it?"))
    assert isinstance(result, AgentResult) and result.text == "The helper says 42."
    (call,) = result.tool_calls
    assert call.result == {"agent": "helper", "answer": "42", "tool_calls": ["look"]}
    assert helper.calls[0].messages[-1] == {"role": "user", "content": "find the answer"}
    run = await beam.get_run(result.run_id or "")
    # Two model calls of the lead and two of the helper, all in the lead's run.
    assert run.token_usage is not None and run.token_usage.total_tokens == 60


async def test_a_failing_or_approval_needing_child_is_reported_to_the_model() -> None:
    beam, _, _ = lead_and_helper([RiverbeamError(ErrorCode.MODEL_UNAVAILABLE, "down")])
    result = await beam.invoke(text_request("lead", "x"))
    assert isinstance(result, AgentResult)
    assert result.tool_calls[0].result["error"]["code"] == "BEM-087"

    beam = RiverBeam()
    beam.register_agent(
        RigAgentRunner.new(
            "pusher",
            ScriptedClient([ToolCalls([PendingToolCall("push", {"v": "main"})])]),
            [CountingTool("push", confirm=True)],
            None,
        )
    )
    tool = AgentTool(beam.registry(), "pusher")
    # A child that pauses for approval is no error: its caller pauses with it
    # (tests/unit/runtime/test_child_approvals.py).
    with pytest.raises(ChildHeld) as info:
        from riverbeam.agents import AgentContext, AgentInput, ToolCallContext

        parent = AgentInput(content=[], session_id="s", run_id="r", agent_name="lead")
        await tool.invoke_in_context(
            {"task": "push"}, ToolCallContext(parent, AgentContext(), "lead")
        )
    hold = info.value.hold
    assert hold.agent == "pusher" and [a.tool for a in hold.actions] == ["push"]
    assert hold.history[0] == {"role": "human", "content": [{"type": "text", "text": "push"}]}


async def test_agent_tools_from_config_are_checked_against_the_registry(tmp_path: Path) -> None:
    config = tmp_path / "riverbeam.yaml"
    config.write_text(
        textwrap.dedent(
            """\
            builtin_agents: [assistant]
            agents:
              - name: lead
                instructions: Delegate.
                tools: [{kind: agent, agent: assistant, name: echo_it}]
            """
        )
    )
    client = ScriptedClient(
        [ToolCalls([PendingToolCall("echo_it", {"task": "hi"})]), Text("it said Echo: hi")]
    )
    beam = RiverBeam()
    await wire_agents(
        beam, RunnerSettings(sandbox_url=None, store_url=None, config=config), client=client
    )
    result = await beam.invoke(text_request("lead", "x"))
    assert isinstance(result, AgentResult)
    assert result.tool_calls[0].result["answer"] == "Echo: hi"

    config.write_text(
        "agents:\n  - name: lead\n    instructions: x\n    tools: [{kind: agent, agent: nobody}]\n"
    )
    with pytest.raises(RiverbeamError) as info:
        await wire_agents(
            RiverBeam(),
            RunnerSettings(sandbox_url=None, store_url=None, config=config),
            client=ScriptedClient([]),
        )
    assert info.value.code is ErrorCode.CONFIG_UNKNOWN_NAME
    assert info.value.details["field"] == "agents[0].tools[0].agent"


# ---- crews --------------------------------------------------------------------------------------
CREWS = """\
builtin_agents: false
agents:
  - {name: drafter, instructions: Draft.}
  - {name: reviewer, instructions: Review.}
  - {name: billing, instructions: Billing.}
  - {name: tech, instructions: Tech.}
  - {name: triage, instructions: "Answer billing or tech."}
  - {name: merger, instructions: Merge.}
crews:
  - {name: write, kind: sequential, agents: [drafter, reviewer]}
  - {name: both, kind: parallel, agents: [billing, tech], join: merger}
  - {name: desk, kind: route, router: triage, routes: {billing: billing, tech: tech}}
"""


class ByAgent:
    """A model client that answers per agent, from the system prompt it is sent."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.seen: list[tuple[str, str]] = []

    def stream(self, messages, tools, *, model=None):  # type: ignore[no-untyped-def]
        async def events():  # type: ignore[no-untyped-def]
            system = messages[0]["content"]
            user = messages[-1]["content"]
            self.seen.append((system, user))
            yield Text(self.answers[system].format(user=user), usage=USAGE)

        return events()

    async def complete(self, messages, tools, *, model=None):  # type: ignore[no-untyped-def]
        raise NotImplementedError


async def crew_beam(tmp_path: Path, client: ByAgent) -> RiverBeam:
    config = tmp_path / "riverbeam.yaml"
    config.write_text(CREWS)
    beam = RiverBeam()
    await wire_agents(
        beam,
        RunnerSettings(sandbox_url=None, store_url=None, config=config),
        client=client,  # type: ignore[arg-type]
    )
    return beam


ANSWERS = {
    "Draft.": "draft of {user}",
    "Review.": "reviewed ({user})",
    "Billing.": "refund in 3 days",
    "Tech.": "restart it",
    "Answer billing or tech.": "This is a Billing question.",
    "Merge.": "merged: {user}",
}


async def test_a_sequential_crew_pipes_each_answer_into_the_next(tmp_path: Path) -> None:
    beam = await crew_beam(tmp_path, ByAgent(ANSWERS))
    assert "write" in [a.name for a in beam.list_agents()]
    result = await beam.invoke(text_request("write", "notes"))
    assert isinstance(result, AgentResult)
    assert result.text == "reviewed (draft of notes)"
    assert [(c.tool_name, c.args["task"]) for c in result.tool_calls] == [
        ("drafter", "notes"),
        ("reviewer", "draft of notes"),
    ]
    run = await beam.get_run(result.run_id or "")
    assert run.token_usage is not None and run.token_usage.total_tokens == 30


async def test_a_parallel_crew_joins_every_answer(tmp_path: Path) -> None:
    client = ByAgent(ANSWERS)
    beam = await crew_beam(tmp_path, client)
    result = await beam.invoke(text_request("both", "my laptop bill"))
    assert isinstance(result, AgentResult)
    assert result.text.startswith("merged: Request: my laptop bill")
    assert "## billing\nrefund in 3 days" in result.text and "## tech\nrestart it" in result.text
    assert sorted(c.tool_name for c in result.tool_calls) == ["billing", "merger", "tech"]


async def test_a_route_crew_runs_the_agent_the_router_names(tmp_path: Path) -> None:
    beam = await crew_beam(tmp_path, ByAgent(ANSWERS))
    result = await beam.invoke(text_request("desk", "where is my refund?"))
    assert isinstance(result, AgentResult) and result.text == "refund in 3 days"
    assert [(c.tool_name, c.args["task"]) for c in result.tool_calls] == [
        ("triage", "where is my refund?"),
        ("billing", "where is my refund?"),
    ]
    # No route named and no fallback: the run fails with the code.
    beam = await crew_beam(tmp_path, ByAgent({**ANSWERS, "Answer billing or tech.": "dunno"}))
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request("desk", "?"))
    assert info.value.code is ErrorCode.AGENT_ERROR_FRAME


async def test_a_crew_naming_an_unknown_agent_fails_at_start(tmp_path: Path) -> None:
    config = tmp_path / "riverbeam.yaml"
    config.write_text(
        "builtin_agents: [assistant]\ncrews:\n  - {name: c, kind: sequential, agents: [nobody]}\n"
    )
    with pytest.raises(RiverbeamError) as info:
        await wire_agents(
            RiverBeam(),
            RunnerSettings(sandbox_url=None, store_url=None, config=config),
            client=ScriptedClient([]),
        )
    assert info.value.code is ErrorCode.CONFIG_UNKNOWN_NAME
    assert info.value.details["line"] == "3" and "nobody" in info.value.message
