"""Per-turn and per-session configuration: narrow tools, add instructions."""

from __future__ import annotations

import pytest
from agents_kit import Recorder, make_input, run

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Skill, Text, ToolCalls
from riverbeam.agents._turn_config import effective_turn
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import TurnConfig


def test_effective_turn_only_narrows() -> None:
    turn = effective_turn(
        ["a", "b", "c"],
        ("session_config", TurnConfig(exclude_tools=["c"], append_instructions="S")),
        ("turn_config", TurnConfig(include_tools=["a", "c"], prepend_instructions="P")),
    )
    assert turn.tools == ("a",)
    assert turn.system_prompt("base") == "P\n\nbase\n\nS"
    assert turn.as_json() == {
        "tools": ["a"],
        "prepend_instructions": ["P"],
        "append_instructions": ["S"],
    }
    with pytest.raises(RiverbeamError) as info:
        effective_turn(["a"], ("turn_config", TurnConfig(include_tools=["zzz"])))
    assert info.value.code is ErrorCode.TURN_CONFIG_INVALID


async def test_a_turn_narrows_the_tools_the_model_sees_and_may_call() -> None:
    a, b = Recorder("a"), Recorder("b")
    client = ScriptedClient([ToolCalls([PendingToolCall("b", {}, id="1")]), Text("ok")])
    skill = Skill("s", "d", "You help.", ())
    runner = RigAgentRunner("t", client, [a, b], skill=skill)
    input = make_input("go")
    input.turn_config = TurnConfig(exclude_tools=["b"], append_instructions="Be brief.")
    frames = await run(runner, input)
    assert client.calls[0].tool_names == ["a"]
    assert client.calls[0].messages[0]["content"] == "You help.\n\nBe brief."
    assert b.calls == []  # an excluded tool is unknown to this run
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-089"


async def test_a_turn_naming_a_foreign_tool_fails_with_220_before_the_model() -> None:
    client = ScriptedClient([Text("x")])
    runner = RigAgentRunner("t", client, [Recorder("a")])
    input = make_input("go")
    input.turn_config = TurnConfig(include_tools=["shell"])
    frames = await run(runner, input)
    assert frames[-1].error_code == "BEM-220" and client.calls == []
