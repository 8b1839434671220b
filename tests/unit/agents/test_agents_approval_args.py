"""ApprovalTool: a held call is stored, framed and run with the arguments its approval covers."""

from __future__ import annotations

from typing import Any

from agents_kit import envelope, make_input, run

from riverbeam.agents import (
    ApprovalTool,
    PendingToolCall,
    ResumedAction,
    RigAgentRunner,
    ScriptedClient,
    Text,
    ToolCalls,
    ToolSpec,
    json_params,
)
from riverbeam.agents._io import AgentInput
from riverbeam.core.errors import ErrorCode, RiverbeamError


class StatingPush:
    """A confirm_required push that names its branch and workspace when held."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.runs: list[dict[str, Any]] = []

    def spec(self) -> ToolSpec:
        return ToolSpec(
            "git_push",
            "Push.",
            json_params({"ref": {"type": "string"}, "workspace": {"type": "string"}}),
            confirm_required=True,
        )

    async def approval_args(self, args: dict[str, Any], input: AgentInput) -> dict[str, Any]:
        if self.fail:
            raise RiverbeamError(ErrorCode.NO_BRANCH, "HEAD is not on a branch")
        return {"ref": args.get("ref") or "riverbeam/s-1", "workspace": "s-1"}

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        self.runs.append(dict(args))
        return {"pushed": args}


def test_the_protocol() -> None:
    assert isinstance(StatingPush(), ApprovalTool)


async def test_the_held_call_carries_the_stated_arguments_and_they_are_what_runs() -> None:
    push = StatingPush()
    client = ScriptedClient(
        [ToolCalls((PendingToolCall("git_push", {}, id="c1"),)), Text("Pushed.")]
    )
    agent = RigAgentRunner.new("author", client, [push], None)
    frames = await run(agent, make_input("push it"))
    done = frames[-1].result
    assert done is not None and done.interrupted
    (held,) = done.action_required
    stated = {"ref": "riverbeam/s-1", "workspace": "s-1"}
    assert held.args == stated
    (call_frame,) = [f for f in frames if f.type == "tool"]
    assert call_frame.data is not None and call_frame.data.tool_args == stated
    assert push.runs == []

    approved = ResumedAction(
        action_id=held.action_id,
        tool=held.tool,
        args=dict(held.args),
        tool_call_id=held.tool_call_id,
        response=envelope(held.action_id),
    )
    again = await run(agent, make_input("", actions=[approved]))
    assert again[-1].result is not None and again[-1].result.text == "Pushed."
    assert push.runs == [stated]


async def test_a_call_that_cannot_state_its_approval_fails_instead_of_being_held() -> None:
    push = StatingPush(fail=True)
    client = ScriptedClient([ToolCalls((PendingToolCall("git_push", {}, id="c1"),))])
    agent = RigAgentRunner.new("author", client, [push], None)
    frames = await run(agent, make_input("push it"))
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-326"
    results = [f.data.tool_result for f in frames if f.data and f.data.type == "tool_result"]
    assert results == [
        {
            "error": {
                "code": "BEM-326",
                "message": "HEAD is not on a branch",
                "details": {"tool": "git_push"},
            }
        }
    ]
    assert push.runs == []
