"""The tool-call policy chain: every decision, in order, recorded with the call."""

from __future__ import annotations

from typing import Any

import pytest
from agents_kit import Recorder, envelope, make_context, make_input, push_tool, run

from riverbeam.agents import (
    PendingToolCall,
    ResumedAction,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.agents._layer_config import AgentLayerConfig
from riverbeam.agents._policies import (
    ApprovePathOutside,
    ApproveTools,
    DenyTools,
    MaxToolCalls,
    PolicyCall,
    RedactResult,
    RewriteArgs,
    ShortCircuit,
    parse_policies,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import StreamChunk


def call(name: str, args: dict[str, Any] | None = None, id: str | None = None) -> PendingToolCall:
    return PendingToolCall(name, args or {}, id=id or f"c_{name}")


def writer() -> Recorder:
    return Recorder("write_file", params={"path": {"type": "string"}}, required=("path",))


def results(frames: list[StreamChunk]) -> list[Any]:
    return [
        f.data.tool_result
        for f in frames
        if f.type == "tool" and f.data and f.data.type == "tool_result"
    ]


async def test_confirm_required_is_a_policy_and_approval_runs_the_stored_call_once() -> None:
    push = push_tool()
    client = ScriptedClient([ToolCalls([call("git_push", {"ref": "main"})]), Text("pushed")])
    runner = RigAgentRunner("p", client, [push])
    first = await run(runner, make_input("push"))
    done = first[-1].result
    assert done is not None and done.interrupted
    (held,) = done.action_required
    assert push.calls == []
    assert done.metadata["agent_layer"]["held"][0]["decisions"] == [
        {
            "policy": "confirm_required",
            "action": "require_approval",
            "message": "git_push is marked confirm_required",
        }
    ]
    resumed = ResumedAction(
        held.action_id, held.tool, dict(held.args), held.tool_call_id, envelope(held.action_id)
    )
    second = await run(runner, make_input("", actions=[resumed]))
    assert push.calls == [{"ref": "main"}]
    record = second[-1].result.tool_calls[0]  # type: ignore[union-attr]
    assert [(d.policy, d.action) for d in record.decisions] == [("person", "approved")]


async def test_approve_tools_holds_only_the_named_tool() -> None:
    push = Recorder("git_push")
    read = Recorder("read_file")
    client = ScriptedClient(
        [ToolCalls([call("read_file"), call("git_push", {"ref": "x"})]), Text("x")]
    )
    runner = RigAgentRunner(
        "p", client, [read, push], options=RigOptions(policies=[ApproveTools(tools=["git_push"])])
    )
    frames = await run(runner, make_input("go"))
    assert read.calls == [{}] and push.calls == []
    result = frames[-1].result
    assert result is not None and result.interrupted
    assert [a.tool for a in result.action_required] == ["git_push"]


async def test_approval_is_skipped_when_the_caller_confirmed() -> None:
    push = Recorder("git_push")
    client = ScriptedClient([ToolCalls([call("git_push")]), Text("done")])
    policy = ApproveTools(tools=["git_push"])
    runner = RigAgentRunner("p", client, [push], options=RigOptions(policies=[policy]))
    input = make_input("go", metadata={"confirm": True}, confirm_allowed=True)
    frames = await run(runner, input)
    assert frames[-1].type == "done" and push.calls == [{}]


@pytest.mark.parametrize(
    ("path", "held"),
    [("docs/a.md", False), ("docs", False), ("src/a.py", True), ("docs/../x", True)],
)
async def test_approve_write_file_outside_docs(path: str, held: bool) -> None:
    tool = writer()
    client = ScriptedClient([ToolCalls([call("write_file", {"path": path})]), Text("ok")])
    policy = ApprovePathOutside(tools=["write_file"], prefixes=["docs/"])
    runner = RigAgentRunner("p", client, [tool], options=RigOptions(policies=[policy]))
    frames = await run(runner, make_input("write"))
    result = frames[-1].result
    assert result is not None and result.interrupted is held
    assert tool.calls == ([] if held else [{"path": path}])


async def test_max_tool_calls_denies_with_a_message_the_model_sees() -> None:
    tool = Recorder("t")
    client = ScriptedClient(
        [ToolCalls([call("t", id="1"), call("t", id="2"), call("t", id="3")]), Text("stopped")]
    )
    policy = MaxToolCalls(limit=2)
    runner = RigAgentRunner("p", client, [tool], options=RigOptions(policies=[policy]))
    frames = await run(runner, make_input("go"))
    assert len(tool.calls) == 2
    denied = results(frames)[2]
    assert denied["denied"] is True and denied["policy"] == "max_tool_calls"
    assert "already made 2" in client.calls[1].messages[-1]["content"]
    record = frames[-1].result.tool_calls[2]  # type: ignore[union-attr]
    assert [(d.policy, d.action) for d in record.decisions] == [("max_tool_calls", "deny")]


async def test_fatal_deny_ends_the_run_with_210_after_answering_the_call() -> None:
    tool = Recorder("rm")
    client = ScriptedClient([ToolCalls([call("rm")]), Text("never")])
    policy = DenyTools(tools=["rm"], fatal=True, message="no deleting")
    runner = RigAgentRunner("p", client, [tool], options=RigOptions(policies=[policy]))
    frames = await run(runner, make_input("go"))
    assert frames[-1].error_code == "BEM-210" and tool.calls == []
    assert results(frames)[0]["denied"] is True
    assert frames[-1].result is not None
    (record,) = frames[-1].result.tool_calls
    assert record.decisions[0].action == "deny_fatal"


class Rewriter:
    name = "pin-branch"

    async def before(self, call: PolicyCall) -> Any:
        return RewriteArgs({**call.args, "ref": "feature"}, "pinned")

    async def after(self, call: PolicyCall, result: Any) -> Any:
        return None


class Cache:
    name = "cache"

    async def before(self, call: PolicyCall) -> Any:
        return ShortCircuit({"cached": True}) if call.tool == "lookup" else None

    async def after(self, call: PolicyCall, result: Any) -> Any:
        return None


async def test_rewrite_then_short_circuit_and_after_redaction() -> None:
    push = Recorder("git_push", result={"by": "ada@example.com"})
    lookup = Recorder("lookup")
    client = ScriptedClient(
        [ToolCalls([call("git_push", {"ref": "main"}), call("lookup")]), Text("ok")]
    )
    policies = [Rewriter(), Cache(), RedactResult(detect=["email"])]
    runner = RigAgentRunner("p", client, [push, lookup], options=RigOptions(policies=policies))
    frames = await run(runner, make_input("go"))
    assert push.calls == [{"ref": "feature"}] and lookup.calls == []
    first, second = results(frames)
    assert first == {"by": "[email]"} and second == {"cached": True}
    records = frames[-1].result.tool_calls  # type: ignore[union-attr]
    assert [(d.policy, d.action) for d in records[0].decisions] == [
        ("pin-branch", "rewrite_args"),
        ("redact_result", "rewrite_result"),
    ]
    assert records[0].args == {"ref": "feature"}
    assert [(d.policy, d.action) for d in records[1].decisions][:2] == [
        ("pin-branch", "rewrite_args"),
        ("cache", "short_circuit"),
    ]


async def test_deployment_policies_run_first() -> None:
    push = Recorder("git_push")
    client = ScriptedClient([ToolCalls([call("git_push")]), Text("x")])
    layer = AgentLayerConfig.parse(
        {"tool_policies": [{"kind": "deny_tools", "tools": ["git_push"]}]}
    )
    runner = RigAgentRunner("p", client, [push])
    frames = await run(runner, make_input("go"), make_context(agent_layer=layer))
    assert push.calls == [] and results(frames)[0]["denied"] is True


def test_policy_configs_parse_and_refuse() -> None:
    parsed = parse_policies(
        [{"kind": "approve_tools", "tools": ["git_push"]}, {"kind": "max_tool_calls", "limit": 20}]
    )
    assert [p.name for p in parsed] == ["approve_tools", "max_tool_calls"]
    with pytest.raises(RiverbeamError) as info:
        parse_policies([{"kind": "approve_tools", "tools": []}])
    assert info.value.code is ErrorCode.TOOL_POLICY_INVALID


async def test_decisions_are_counted_in_the_metric() -> None:
    from riverbeam.telemetry._metrics import TOOL_DECISIONS

    counter = TOOL_DECISIONS.labels("deny_tools", "deny")
    before = counter._value.get()
    client = ScriptedClient([ToolCalls([call("rm")]), Text("ok")])
    runner = RigAgentRunner(
        "p", client, [Recorder("rm")], options=RigOptions(policies=[DenyTools(tools=["rm"])])
    )
    await run(runner, make_input("go"))
    assert counter._value.get() == before + 1
