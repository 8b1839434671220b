"""Run limits: time, tokens and rounds, from agent, deployment and request (smallest wins)."""

from __future__ import annotations

import asyncio

import pytest
from agents_kit import Blocking, Recorder, make_context, make_input, run

from riverbeam.agents import (
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.agents._layer_config import AgentLayerConfig
from riverbeam.agents._limits import RunLimits
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import TokenUsage


def used(n: int) -> TokenUsage:
    return TokenUsage(prompt_tokens=n, completion_tokens=0, total_tokens=n)


async def test_time_limit_ends_a_hanging_tool_with_215() -> None:
    slow = Blocking()
    client = ScriptedClient([ToolCalls([PendingToolCall("slow", {}, id="c1")], text="working")])
    runner = RigAgentRunner("l", client, [slow], options=RigOptions(time_limit_s=0.05))
    frames = await run(runner, make_input("go"))
    assert frames[-1].error_code == "BEM-215"
    assert slow.cancelled
    result = frames[-1].result
    assert result is not None and result.text == "working"  # the partial answer
    assert result.metadata["agent_layer"]["limit_hit"] == "time"


async def test_request_may_only_shorten_the_time_limit() -> None:
    slow = Blocking()
    client = ScriptedClient([ToolCalls([PendingToolCall("slow", {}, id="c1")])])
    runner = RigAgentRunner("l", client, [slow], options=RigOptions(time_limit_s=3600))
    input = make_input("go")
    input.time_limit_s = 0.05
    frames = await run(runner, input)
    assert frames[-1].error_code == "BEM-215"
    limits = frames[-1].result.metadata["agent_layer"]["limits"]  # type: ignore[union-attr]
    assert limits["time_limit_s"] == 0.05

    longer = make_input("go")
    longer.time_limit_s = 7200
    client = ScriptedClient([Text("quick")])
    runner = RigAgentRunner("l", client, [], options=RigOptions(time_limit_s=60))
    frames = await run(runner, longer)
    assert frames[-1].result.metadata["agent_layer"]["limits"]["time_limit_s"] == 60  # type: ignore[union-attr]


async def test_deployment_time_limit_applies_to_a_hanging_model() -> None:
    class Hanging(ScriptedClient):
        async def stream_structured(self, *args, **kwargs):  # type: ignore[no-untyped-def,override]
            await asyncio.Event().wait()
            yield Text("never")

    runner = RigAgentRunner("l", Hanging([]), [])
    layer = AgentLayerConfig(time_limit_s=0.05)
    frames = await run(runner, make_input("go"), make_context(agent_layer=layer))
    assert frames[-1].error_code == "BEM-215"


async def test_token_budget_ends_the_run_with_216_and_usage() -> None:
    tool = Recorder("t")
    client = ScriptedClient(
        [
            ToolCalls([PendingToolCall("t", {}, id="1")], usage=used(60)),
            ToolCalls([PendingToolCall("t", {}, id="2")], usage=used(60)),
            Text("never"),
        ]
    )
    runner = RigAgentRunner("l", client, [tool], options=RigOptions(token_budget=100))
    frames = await run(runner, make_input("go"))
    assert frames[-1].error_code == "BEM-216"
    result = frames[-1].result
    assert result is not None and result.token_usage is not None
    assert result.token_usage.total_tokens == 120
    assert len(tool.calls) == 1  # the second round's calls never ran
    assert result.metadata["agent_layer"]["limit_hit"] == "tokens"


async def test_max_rounds_from_the_deployment_lowers_the_agent_s() -> None:
    tool = Recorder("t")
    steps = [ToolCalls([PendingToolCall("t", {}, id=str(i))]) for i in range(3)]
    runner = RigAgentRunner("l", ScriptedClient(steps), [tool])
    frames = await run(
        runner, make_input("go"), make_context(agent_layer=AgentLayerConfig(max_rounds=1))
    )
    assert frames[-1].error_code == "BEM-088"
    assert len(tool.calls) == 1


def test_invalid_limits_are_refused() -> None:
    with pytest.raises(RiverbeamError) as info:
        RunLimits(time_limit_s=0, token_budget=None, max_rounds=8)
    assert info.value.code is ErrorCode.RUN_LIMIT_INVALID
    with pytest.raises(RiverbeamError):
        RunLimits(time_limit_s=None, token_budget=-1, max_rounds=8)
