"""The agent layer through the in-process facade: what is recorded on the run."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from riverbeam.agents import (
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.agents._guardrails import DenyPatterns, PiiDetector
from riverbeam.agents._layer_config import AgentLayerConfig
from riverbeam.agents._output import OutputSpec
from riverbeam.agents._policies import MaxToolCalls
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import PipelineOptions, RiverBeam
from riverbeam.types import AgentResult, StreamAck, TurnConfig
from tests.unit.runtime.runtime_kit import CountingTool, text_request

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def beam_with(
    steps: list[Any], *, layer: AgentLayerConfig | None = None, **options: Any
) -> RiverBeam:
    beam = RiverBeam(options=PipelineOptions(agent_layer=layer))
    tool = CountingTool("t")
    beam.register_agent(
        RigAgentRunner.new("a", ScriptedClient(steps), [tool], None, options=RigOptions(**options))
    )
    return beam


async def test_structured_output_reaches_the_result_the_done_frame_and_the_run() -> None:
    beam = beam_with(
        [Text("{}"), Text('{"n": 3}')], output=OutputSpec.model_validate({"schema": SCHEMA})
    )
    result = await beam.invoke(text_request("a", "count"))
    assert isinstance(result, AgentResult) and result.output == {"n": 3}
    run = await beam.get_run(result.run_id or "")
    assert run.result is not None and run.result.output == {"n": 3}
    assert run.result.metadata["agent_layer"]["output"]["repairs"] == 1  # type: ignore[index]

    ack = await beam.invoke(
        text_request(
            "a", "count", stream=True, response_schema={"type": "object", "required": ["m"]}
        )
    )
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    # The agent's script is used up: the next request fails (but the request schema got through).
    assert frames[-1].type == "error"


async def test_a_tripped_guardrail_is_recorded_and_the_error_frame_carries_no_result() -> None:
    guard = DenyPatterns(name="nope", keywords=["secret"], stages=["output"])
    beam = beam_with([Text("the secret is 42")], guardrails=[guard])
    ack = await beam.invoke(text_request("a", "tell", stream=True))
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-206"
    assert frames[-1].result is None
    assert not [f for f in frames if f.type == "chunk"]
    run = await beam.get_run(ack.run_id or "")
    assert run.status == "failed" and run.error_code == "BEM-206"
    assert run.result is not None and run.result.content == []
    meta = run.result.metadata or {}
    assert meta["agent_layer"]["guardrails"][0]["name"] == "nope"
    assert meta["error"]["code"] == "BEM-206"
    messages = await beam.list_messages(ack.session_id)
    assert all(
        "secret" not in (m.content[0].text or "") for m in messages if m.role == "ai" and m.content
    )


async def test_non_streaming_failure_carries_the_agent_code() -> None:
    beam = beam_with([Text("x")], token_budget=None, guardrails=[PiiDetector(on_match="block")])
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request("a", "I am ada@example.com"))
    assert info.value.code is ErrorCode.AGENT_ERROR_FRAME
    assert info.value.details["agent_error_code"] == "BEM-205"


async def test_decisions_are_recorded_with_the_tool_messages() -> None:
    steps = [
        ToolCalls([PendingToolCall("t", {}, id="1"), PendingToolCall("t", {}, id="2")]),
        Text("ok"),
    ]
    beam = beam_with(steps, policies=[MaxToolCalls(limit=1)])
    result = await beam.invoke(text_request("a", "go"))
    assert isinstance(result, AgentResult)
    messages = await beam.list_messages(result.session_id or "")
    tools = [m for m in messages if m.role == "tool"]
    assert tools[0].metadata is None
    assert tools[1].metadata == {
        "decisions": [
            {
                "policy": "max_tool_calls",
                "action": "deny",
                "message": "no more tool calls: this run already made 1",
            }
        ]
    }


async def test_request_limits_and_turn_config_reach_the_agent() -> None:
    beam = beam_with([Text("hi")], layer=AgentLayerConfig(time_limit_s=60, token_budget=1000))
    request = text_request(
        "a",
        "go",
        time_limit_s=5,
        token_budget=50_000,
        turn_config={"exclude_tools": ["t"], "append_instructions": "Short."},
    )
    result = await beam.invoke(request)
    assert isinstance(result, AgentResult)
    layer = (result.metadata or {})["agent_layer"]
    assert layer["limits"] == {"time_limit_s": 5, "token_budget": 1000, "max_rounds": 8}
    assert layer["turn"] == {"tools": [], "append_instructions": ["Short."]}


async def test_a_foreign_tool_in_turn_config_fails_the_run_with_220() -> None:
    beam = beam_with([Text("hi")])
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(
            text_request(
                "a", "go", turn_config={"include_tools": ["shell"]}, session_id=str(uuid.uuid4())
            )
        )
    assert info.value.details["agent_error_code"] == "BEM-220"


async def test_a_session_configuration_applies_to_later_turns_until_changed() -> None:
    client = ScriptedClient([Text("1"), Text("2"), Text("3"), Text("4")])
    beam = RiverBeam()
    beam.register_agent(
        RigAgentRunner.new("a", client, [CountingTool("t"), CountingTool("u")], None)
    )
    sid = str(uuid.uuid4())
    config = {"exclude_tools": ["t"], "append_instructions": "Be brief."}
    await beam.invoke(text_request("a", "one", sid, session_config=config))
    await beam.invoke(text_request("a", "two", sid))
    await beam.invoke(text_request("a", "three", sid, turn_config={"include_tools": ["u"]}))
    assert [c.tool_names for c in client.calls[:3]] == [["u"], ["u"], ["u"]]
    assert client.calls[1].messages[0] == {"role": "system", "content": "Be brief."}
    result = await beam.invoke(text_request("a", "four", sid, session_config={}))
    assert client.calls[3].tool_names == ["t", "u"]  # cleared
    assert isinstance(result, AgentResult)
    # Stored on the session record, not in the messages.
    assert (await beam.get_session(sid)).config is None
    messages = await beam.list_messages(sid)
    assert all("session_config" not in (m.metadata or {}) for m in messages)


async def test_the_session_configuration_is_on_the_session_record() -> None:
    client = ScriptedClient([Text("1"), Text("2")])
    beam = RiverBeam()
    beam.register_agent(
        RigAgentRunner.new("a", client, [CountingTool("t"), CountingTool("u")], None)
    )
    sid = str(uuid.uuid4())
    config = {"exclude_tools": ["t"], "append_instructions": "Be brief."}
    await beam.invoke(text_request("a", "one", sid, session_config=config))
    assert (await beam.get_session(sid)).config == TurnConfig.model_validate(config)
    second = await beam.invoke(text_request("a", "two", sid))
    assert isinstance(second, AgentResult)
    assert (await beam.get_session(sid)).config == TurnConfig.model_validate(config)
    layer = (second.metadata or {})["agent_layer"]
    assert layer["turn"] == {"tools": ["u"], "append_instructions": ["Be brief."]}


async def test_a_compaction_summary_is_stored_and_reused_by_later_turns() -> None:
    from riverbeam.agents._compaction import CompactionOptions

    words = " ".join(["lorem"] * 80)
    client = ScriptedClient(
        [Text(f"a1 {words}"), Text(f"a2 {words}"), Text("SUMMARY-1"), Text("a3"), Text("a4")]
    )
    compaction = CompactionOptions(context_tokens=260, answer_share=0, keep_turns=1)
    beam = RiverBeam()
    beam.register_agent(
        RigAgentRunner.new("c", client, [], None, options=RigOptions(compaction=compaction))
    )
    sid = str(uuid.uuid4())
    await beam.invoke(text_request("c", f"q1 {words}", sid))
    await beam.invoke(text_request("c", f"q2 {words}", sid))
    third = await beam.invoke(text_request("c", "q3", sid))
    assert isinstance(third, AgentResult) and third.text == "a3"
    messages = await beam.list_messages(sid)
    (summary,) = [m for m in messages if m.type == "summary"]
    assert summary.role == "system" and "SUMMARY-1" in summary.content[0].text  # type: ignore[operator]
    # It covers the first turn (seq 1, 2): the newest user turn before this one is kept.
    assert summary.metadata == {"covers_until_seq": 2}
    await beam.invoke(text_request("c", "q4", sid))
    fourth = client.calls[-1].messages
    assert "SUMMARY-1" in str(fourth) and "q1 " not in str(fourth)
    assert len(client.calls) == 5  # no second summary: the stored one is reused
