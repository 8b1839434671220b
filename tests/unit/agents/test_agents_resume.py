"""Human approval: interrupting before confirm_required tools, and resuming."""

from __future__ import annotations

import json
import uuid
from typing import Any

from agents_kit import (
    Failing,
    Recorder,
    envelope,
    history_from,
    make_context,
    make_input,
    msg,
    push_tool,
    run,
    tool_frames,
)

from riverbeam.agents import (
    PendingToolCall,
    ResumedAction,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ActionRequired, AgentResult, StreamChunk


def calls(*items: tuple[str, dict[str, Any], str], text: str = "") -> ToolCalls:
    return ToolCalls(
        tuple(PendingToolCall(name, args, id=call_id) for name, args, call_id in items), text=text
    )


def result_of(frames: list[StreamChunk]) -> AgentResult:
    assert frames[-1].type == "done", frames[-1]
    assert frames[-1].result is not None
    return frames[-1].result


def resumed(
    action: ActionRequired, status: str = "submitted", payload: dict[str, Any] | None = None
) -> ResumedAction:
    return ResumedAction(
        action_id=action.action_id,
        tool=action.tool,
        args=dict(action.args),
        tool_call_id=action.tool_call_id,
        response=envelope(action.action_id, status, payload),
    )


class Scenario:
    """A run that reads and checks, then wants to push: interrupted before the push."""

    def __init__(self, *, options: RigOptions | None = None) -> None:
        self.read = Recorder(
            "read_file", params={"path": {"type": "string"}}, required=("path",), result="body"
        )
        self.status = Recorder("git_status", result={"clean": False})
        self.push = push_tool()
        self.client = ScriptedClient(
            [
                calls(("read_file", {"path": "a.md"}, "c1")),
                calls(("git_status", {}, "c2")),
                calls(
                    ("git_push", {"ref": "docs/update"}, "c3"), text="Ready to push docs/update."
                ),
            ]
        )
        self.runner = RigAgentRunner.for_skill(
            "author", self.client, [self.read, self.status, self.push], options=options
        )
        self.run_id = str(uuid.uuid4())

    async def first(self, **input_fields: Any) -> list[StreamChunk]:
        return await run(
            self.runner, make_input("push my change", run_id=self.run_id, **input_fields)
        )


async def test_two_tools_then_an_interrupt_before_the_confirm_tool() -> None:
    s = Scenario()
    frames = await s.first()
    result = result_of(frames)
    assert result.interrupted is True
    (action,) = result.action_required
    assert uuid.UUID(action.action_id).version == 4
    assert (action.kind, action.tool, action.args, action.tool_call_id) == (
        "confirmation",
        "git_push",
        {"ref": "docs/update"},
        "c3",
    )
    assert result.text == "Ready to push docs/update."
    assert s.push.calls == []
    assert len(s.read.calls) == 1 and len(s.status.calls) == 1
    assert [r.tool_name for r in result.tool_calls] == ["read_file", "git_status"]
    # The held call is announced (so it is recorded as the assistant's call) but not answered.
    assert tool_frames(frames) == [
        ("action", "read_file", "c1"),
        ("tool_result", "read_file", "c1"),
        ("action", "git_status", "c2"),
        ("tool_result", "git_status", "c2"),
        ("action", "git_push", "c3"),
    ]


async def test_resume_runs_the_stored_call_once_and_the_model_finishes() -> None:
    s = Scenario()
    first = await s.first()
    action = result_of(first).action_required[0]
    history = history_from(first, human="push my change", run_id=s.run_id)
    s.client.push(Text("Pushed docs/update."))
    # The response payload names other args: they must be ignored.
    approval = resumed(action, payload={"tool": "git_push", "args": {"ref": "main"}})
    frames = await run(s.runner, make_input("", actions=[approval]), make_context(history=history))
    result = result_of(frames)
    assert s.push.calls == [{"ref": "docs/update"}]
    assert result.interrupted is False and result.text == "Pushed docs/update."
    assert [(r.tool_name, r.args, r.result) for r in result.tool_calls] == [
        ("git_push", {"ref": "docs/update"}, {"pushed": True})
    ]
    assert tool_frames(frames) == [("action", "git_push", "c3"), ("tool_result", "git_push", "c3")]
    # The model saw the whole conversation: each call followed by its result, the user turn once.
    sent = s.client.calls[-1].messages
    assert sent[0]["role"] == "system"
    assert [m["role"] for m in sent[1:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["push my change"]
    assert (
        sent[-2]["tool_calls"][0]["id"] == "c3"
        and sent[-2]["content"] == "Ready to push docs/update."
    )
    assert json.loads(sent[-1]["content"]) == {"pushed": True} and sent[-1]["tool_call_id"] == "c3"


async def test_resume_from_pipeline_style_records() -> None:
    """The pipeline stores tool records (with name and args) and the reply with action_required."""
    s = Scenario()
    first = await s.first()
    result = result_of(first)
    history = [msg("human", "push my change", run_id=s.run_id)]
    history += [
        msg(
            "tool",
            type="tool_result",
            tool_call_id=r.tool_call_id,
            tool_name=r.tool_name,
            tool_args=r.args,
            tool_result=r.result,
        )
        for r in result.tool_calls
    ]
    history.append(
        msg(
            "ai",
            result.text,
            metadata={"action_required": [a.to_json_dict() for a in result.action_required]},
        )
    )
    s.client.push(Text("Done."))
    frames = await run(
        s.runner,
        make_input("", actions=[resumed(result.action_required[0])]),
        make_context(history=history),
    )
    assert result_of(frames).text == "Done."
    sent = s.client.calls[-1].messages
    assert [m["role"] for m in sent[1:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert s.push.calls == [{"ref": "docs/update"}]


async def test_declined_resume_runs_nothing_and_tells_the_model() -> None:
    s = Scenario()
    first = await s.first()
    action = result_of(first).action_required[0]
    s.client.push(Text("Understood, not pushing."))
    history = history_from(first, human="push my change", run_id=s.run_id)
    frames = await run(
        s.runner,
        make_input("", actions=[resumed(action, status="cancelled")]),
        make_context(history=history),
    )
    result = result_of(frames)
    assert s.push.calls == []
    assert result.text == "Understood, not pushing."
    assert result.tool_calls[0].result["declined"] is True
    assert tool_frames(frames) == [("tool_result", "git_push", "c3")]
    told = json.loads(s.client.calls[-1].messages[-1]["content"])
    assert told["declined"] is True and told["status"] == "cancelled"


async def test_resume_can_return_the_tool_output_as_the_seed_did() -> None:
    s = Scenario(options=RigOptions(resume_returns_tool_output=True))
    first = await s.first()
    action = result_of(first).action_required[0]
    calls_before = len(s.client.calls)
    frames = await run(s.runner, make_input("", actions=[resumed(action)]))
    result = result_of(frames)
    assert json.loads(result.text) == {"pushed": True}
    assert len(s.client.calls) == calls_before
    assert s.push.calls == [{"ref": "docs/update"}]


async def test_confirm_metadata_without_permission_still_interrupts() -> None:
    s = Scenario()
    frames = await s.first(metadata={"confirm": True})
    assert result_of(frames).interrupted is True
    assert s.push.calls == []


async def test_confirm_metadata_with_permission_runs_the_tool() -> None:
    s = Scenario()
    s.client.push(Text("Pushed."))
    frames = await s.first(metadata={"confirm": True}, confirm_allowed=True)
    result = result_of(frames)
    assert result.interrupted is False and result.text == "Pushed."
    assert s.push.calls == [{"ref": "docs/update"}]


async def test_several_held_calls_and_a_skipped_ordinary_call() -> None:
    push = push_tool()
    publish = Recorder("publish_docset", confirm=True)
    note = Recorder("note")
    client = ScriptedClient(
        [calls(("git_push", {"ref": "b"}, "p1"), ("note", {}, "n1"), ("publish_docset", {}, "p2"))]
    )
    frames = await run(RigAgentRunner.new("a", client, [push, publish, note]), make_input())
    result = result_of(frames)
    assert [(a.tool, a.tool_call_id) for a in result.action_required] == [
        ("git_push", "p1"),
        ("publish_docset", "p2"),
    ]
    assert len({a.action_id for a in result.action_required}) == 2
    assert note.calls == [] and push.calls == [] and publish.calls == []
    assert (
        result.tool_calls[0].tool_name == "note" and result.tool_calls[0].result["skipped"] is True
    )


async def test_a_confirm_call_with_invalid_args_is_not_held() -> None:
    push = push_tool()
    client = ScriptedClient([calls(("git_push", {"branch": "x"}, "p1")), Text("I need a ref.")])
    frames = await run(RigAgentRunner.new("a", client, [push]), make_input())
    result = result_of(frames)
    assert result.interrupted is False and result.action_required == []
    assert json.loads(client.calls[1].messages[-1]["content"])["error"]["code"] == "BEM-090"


async def test_resume_of_a_tool_the_agent_lacks_is_bem_089() -> None:
    action = ActionRequired(action_id=str(uuid.uuid4()), tool="gone", args={}, tool_call_id="g1")
    frames = await run(
        RigAgentRunner.new("a", ScriptedClient([]), []), make_input("", actions=[resumed(action)])
    )
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-089"


async def test_resume_failure_of_the_approved_tool_is_fatal_by_default() -> None:
    failing = Failing("git_push", RiverbeamError(ErrorCode.PUSH_REJECTED, "non-fast-forward"))
    action = ActionRequired(
        action_id=str(uuid.uuid4()), tool="git_push", args={}, tool_call_id="p1"
    )
    frames = await run(
        RigAgentRunner.new("a", ScriptedClient([]), [failing]),
        make_input("", actions=[resumed(action)]),
    )
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-330"
    assert tool_frames(frames) == [("action", "git_push", "p1"), ("tool_result", "git_push", "p1")]


async def test_every_frame_is_wire_valid() -> None:
    s = Scenario()
    first = await s.first()
    s.client.push(Text("Pushed."))
    action = result_of(first).action_required[0]
    second = await run(s.runner, make_input("", actions=[resumed(action)]))
    for frame in [*first, *second]:
        assert StreamChunk.parse(frame.to_json()) == frame
        assert StreamChunk.from_proto(frame.to_proto()).to_json_dict() == frame.to_json_dict()
