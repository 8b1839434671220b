"""A run's per-request options are recorded on it, and a resume inherits them (issue 12)."""

from __future__ import annotations

import uuid
from typing import Any

from riverbeam.agents import (
    PendingToolCall,
    RigAgentRunner,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.runtime import Grant, RiverBeam
from riverbeam.runtime._run_options import combined_options
from riverbeam.types import AgentResult, RunOptions, TurnConfig
from tests.unit.runtime.runtime_kit import CountingTool, approval, text_request

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


# ---- combining: a resume's own options never loosen the inherited ones -------------------------
def test_the_smaller_limit_wins_and_both_schemas_apply() -> None:
    first = RunOptions(response_schema=SCHEMA, time_limit_s=5, token_budget=100)
    then = RunOptions(response_schema={"required": ["m"]}, time_limit_s=50, token_budget=10)
    out = combined_options(first, then)
    assert out.time_limit_s == 5 and out.token_budget == 10
    assert out.response_schema == {"allOf": [SCHEMA, {"required": ["m"]}]}
    assert combined_options(first, RunOptions()) == first
    assert combined_options(RunOptions(), then) == then


def test_turn_configs_narrow_further_and_an_empty_intersection_leaves_no_tool() -> None:
    a = TurnConfig(include_tools=["x", "y"], exclude_tools=["z"], append_instructions="A.")
    b = TurnConfig(include_tools=["y", "w"], append_instructions="B.")
    out = combined_options(RunOptions(turn_config=a), RunOptions(turn_config=b)).turn_config
    assert out is not None
    assert out.include_tools == ["x", "y"]
    # x is not in b's list, w not in a's: both excluded, so only y is left (and w is still
    # checked against the agent's allowlist).
    assert out.exclude_tools == ["z", "x", "w"]
    assert out.append_instructions == "A.\n\nB."
    disjoint = combined_options(
        RunOptions(turn_config=TurnConfig(include_tools=["x"])),
        RunOptions(turn_config=TurnConfig(include_tools=["y"])),
    ).turn_config
    assert disjoint is not None
    kept = [t for t in ["x", "y"] if t in disjoint.include_tools]
    assert [t for t in kept if t not in disjoint.exclude_tools] == []


# ---- through the facade ------------------------------------------------------------------------
def _paused_beam(
    steps: list[Any],
) -> tuple[RiverBeam, ScriptedClient, CountingTool, CountingTool]:
    client = ScriptedClient(steps)
    push, read = CountingTool("push", confirm=True), CountingTool("read")
    beam = RiverBeam()
    beam.register_agent(RigAgentRunner.new("a", client, [push, read], None))
    return beam, client, push, read


async def test_a_resume_inherits_the_interrupted_run_s_options() -> None:
    beam, client, push, _ = _paused_beam(
        [
            ToolCalls([PendingToolCall("push", {"v": "1"})]),
            Text('{"m": 1}'),  # after the resume: refused by the inherited schema ...
            Text('{"n": 2}'),  # ... and repaired
        ]
    )
    sid = str(uuid.uuid4())
    options = {
        "response_schema": SCHEMA,
        "time_limit_s": 30,
        "token_budget": 9000,
        "turn_config": {"exclude_tools": ["read"], "append_instructions": "Short."},
    }
    paused = await beam.invoke(text_request("a", "push it", sid, **options))
    assert isinstance(paused, AgentResult) and paused.interrupted
    first = await beam.get_run(paused.run_id or "")
    assert first.options == RunOptions.model_validate(options)
    (held,) = paused.action_required

    ack = await beam.resume(
        {
            "agent_name": "a",
            "session_id": sid,
            "interaction_id": paused.interaction_id,
            "actions": [approval(held.action_id)],
        }
    )
    await beam.wait_idle()
    assert len(push.calls) == 1
    runs = await beam.store.list_runs(interaction_id=paused.interaction_id or "")
    resumed = runs[-1]
    assert resumed.request_id == ack.request_id and resumed.status == "completed"
    assert resumed.options == first.options
    assert resumed.result is not None and resumed.result.output == {"n": 2}
    layer = (resumed.result.metadata or {})["agent_layer"]
    assert layer["limits"] == {"time_limit_s": 30, "token_budget": 9000, "max_rounds": 8}
    assert layer["output"]["repairs"] == 1
    assert layer["turn"] == {"tools": ["push"], "append_instructions": ["Short."]}
    assert client.calls[1].tool_names == ["push"]
    assert "Short." in client.calls[1].messages[0]["content"]


async def test_a_resume_request_may_narrow_the_inherited_options_never_loosen_them() -> None:
    beam, client, _, _ = _paused_beam(
        [ToolCalls([PendingToolCall("push", {"v": "1"})]), Text("done")]
    )
    sid = str(uuid.uuid4())
    paused = await beam.invoke(
        text_request("a", "push it", sid, time_limit_s=20, token_budget=5000)
    )
    assert isinstance(paused, AgentResult)
    (held,) = paused.action_required
    await beam.invoke(
        {
            "agent_name": "a",
            "session_id": sid,
            "interaction_id": paused.interaction_id,
            "content": [],
            "actions": [approval(held.action_id)],
            "time_limit_s": 600,  # looser: the inherited 20 stands
            "token_budget": 4000,  # tighter: taken
            "turn_config": {"exclude_tools": ["read"]},
        }
    )
    await beam.wait_idle()
    runs = await beam.store.list_runs(interaction_id=paused.interaction_id or "")
    resumed = runs[-1]
    assert resumed.options == RunOptions(
        time_limit_s=20, token_budget=4000, turn_config=TurnConfig(exclude_tools=["read"])
    )
    assert resumed.result is not None
    limits = (resumed.result.metadata or {})["agent_layer"]["limits"]
    assert limits["time_limit_s"] == 20 and limits["token_budget"] == 4000
    assert client.calls[1].tool_names == ["push"]


async def test_a_new_interaction_inherits_nothing() -> None:
    beam, _, _, _ = _paused_beam([Text("one"), Text("two")])
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("a", "hi", sid, time_limit_s=7))
    second = await beam.invoke(text_request("a", "again", sid))
    assert isinstance(first, AgentResult) and isinstance(second, AgentResult)
    assert (await beam.get_run(first.run_id or "")).options == RunOptions(time_limit_s=7)
    assert (await beam.get_run(second.run_id or "")).options is None


# ---- who may replace a session's configuration ---------------------------------------------------
async def test_a_caller_granted_narrowing_only_cannot_clear_or_widen_the_session_s() -> None:
    beam, client, _, _ = _paused_beam([Text("1"), Text("2"), Text("3")])
    sid = str(uuid.uuid4())
    config = {"exclude_tools": ["push"], "append_instructions": "Be brief."}
    await beam.invoke(text_request("a", "one", sid, session_config=config))
    narrow = Grant(session_config_narrows_only=True)
    await beam.invoke(text_request("a", "two", sid, session_config={}), grant=narrow)
    assert (await beam.get_session(sid)).config == TurnConfig.model_validate(config)
    assert client.calls[1].tool_names == ["read"]
    await beam.invoke(
        text_request("a", "three", sid, session_config={"include_tools": ["push", "read"]}),
        grant=narrow,
    )
    stored = (await beam.get_session(sid)).config
    assert stored is not None and stored.append_instructions == "Be brief."
    assert client.calls[2].tool_names == ["read"]  # push stays excluded


def test_the_grant_s_narrowing_flag_crosses_the_runner_api() -> None:
    from riverbeam.runtime._client import _grant as to_proto
    from services.runner.servicer import _grant as from_proto

    for flag in (True, False):
        grant = Grant(subject="alice", session_config_narrows_only=flag)
        assert from_proto(to_proto(grant)) == grant
