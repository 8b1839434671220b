"""Frames -> AI SDK UI message stream parts (ChatTranslator), and a chat's session id."""

from __future__ import annotations

import uuid

from riverbeam.console import ChatTranslator, chat_session_id
from riverbeam.types import (
    ActionRequired,
    AgentMessage,
    AgentResult,
    ContentPart,
    StreamAck,
    StreamChunk,
    TokenUsage,
)

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
ACK = StreamAck(
    request_id="9c1b2d3e-4f50-4a61-8273-849506172839",
    interaction_id="40744652-2720-4b10-86ee-7333c1be8165",
    session_id=SESSION,
    subject="riverbeam.stream.9c1b2d3e-4f50-4a61-8273-849506172839",
    stream_name="RIVERBEAM_STREAM",
)


def chunk(text: str, *, kind: str = "text") -> StreamChunk:
    part = ContentPart(type=kind, text=text)  # type: ignore[arg-type]
    return StreamChunk(
        type="chunk", data=AgentMessage(role="ai", content=[part], is_delta=True, phase="final")
    )


def tool_call(name: str, call_id: str | None, args: dict[str, object]) -> StreamChunk:
    data = AgentMessage(
        role="ai", type="action", tool_name=name, tool_call_id=call_id, tool_args=args
    )
    return StreamChunk(type="tool", data=data)


def tool_result(name: str, call_id: str | None, result: object) -> StreamChunk:
    data = AgentMessage(
        role="tool", type="tool_result", tool_name=name, tool_call_id=call_id, tool_result=result
    )
    return StreamChunk(type="tool", data=data)


def done(**fields: object) -> StreamChunk:
    return StreamChunk(type="done", result=AgentResult(agent_name="author", **fields))  # type: ignore[arg-type]


def translate(*frames: StreamChunk) -> list[dict[str, object]]:
    translator = ChatTranslator()
    parts = translator.start(ACK)
    for frame in frames:
        parts += translator.frame(frame)
    assert translator.finished
    return parts


def test_text_tools_and_finish_in_protocol_order() -> None:
    parts = translate(
        StreamChunk(type="placeholder"),
        chunk("Writing "),
        chunk("it."),
        tool_call("write_file", "call-1", {"path": "a.md"}),
        tool_result("write_file", "call-1", {"bytes": 3}),
        chunk("Done."),
        done(
            model_used="m",
            token_usage=TokenUsage(prompt_tokens=3, completion_tokens=4, total_tokens=7),
            run_id="r",
        ),
    )
    assert [p["type"] for p in parts] == [
        "start", "start-step",
        "text-start", "text-delta", "text-delta", "text-end",
        "tool-input-available", "tool-output-available",
        "text-start", "text-delta", "text-end",
        "finish-step", "finish",
    ]  # fmt: skip
    assert parts[0] == {
        "type": "start",
        "messageId": ACK.request_id,
        "messageMetadata": {
            "request_id": ACK.request_id,
            "session_id": SESSION,
            "interaction_id": ACK.interaction_id,
        },
    }
    assert parts[2]["id"] == parts[3]["id"] == parts[5]["id"] != parts[8]["id"]
    assert parts[6] == {
        "type": "tool-input-available",
        "toolCallId": "call-1",
        "toolName": "write_file",
        "input": {"path": "a.md"},
    }
    assert parts[7] == {
        "type": "tool-output-available",
        "toolCallId": "call-1",
        "output": {"bytes": 3},
    }
    finish = parts[-1]
    assert finish["finishReason"] == "stop"
    assert finish["messageMetadata"] == {
        "model_used": "m",
        "token_usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
        "interrupted": False,
        "run_id": "r",
    }


def test_interrupted_run_ends_with_an_approval_part_per_action() -> None:
    action = ActionRequired(action_id=str(uuid.uuid4()), tool="git_push", args={"ref": "x"})
    parts = translate(
        tool_call("git_push", None, {}),
        done(interrupted=True, action_required=[action], session_id=SESSION, interaction_id="i"),
    )
    assert parts[2]["type"] == "tool-input-available" and parts[2]["toolCallId"]
    [approval] = [p for p in parts if p["type"] == "data-approval"]
    assert approval["id"] == action.action_id
    assert approval["data"] == {
        "action_id": action.action_id,
        "kind": "confirmation",
        "tool": "git_push",
        "args": {"ref": "x"},
        "session_id": SESSION,
        "interaction_id": "i",
    }
    assert parts[-1]["finishReason"] == "tool-calls"


def test_error_frame_becomes_an_error_part_then_finish() -> None:
    parts = translate(
        chunk("par"),
        StreamChunk(type="error", error="model endpoint failed", error_code="BEM-082"),
    )
    assert [p["type"] for p in parts[-4:]] == ["text-end", "error", "finish-step", "finish"]
    assert parts[-3]["errorText"] == "BEM-082: model endpoint failed"
    assert parts[-1]["finishReason"] == "error"


def test_reply_without_chunks_comes_from_the_done_frame() -> None:
    parts = translate(done(content=[ContentPart.of_text("whole reply")]))
    deltas = [p["delta"] for p in parts if p["type"] == "text-delta"]
    assert deltas == ["whole reply"]


def test_reasoning_parts_are_reasoning_deltas() -> None:
    parts = translate(chunk("hmm", kind="reasoning"), chunk("answer"), done())
    kinds = [p["type"] for p in parts]
    assert kinds[2:7] == [
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
    ]


def test_nothing_after_finish() -> None:
    translator = ChatTranslator()
    translator.frame(done())
    assert translator.frame(chunk("late")) == []
    assert translator.error("late") == []


def test_chat_session_id() -> None:
    sid = str(uuid.uuid4())
    assert chat_session_id(sid) == sid
    assert chat_session_id(sid.upper()) == sid
    derived = chat_session_id("chat-abc")
    assert derived == chat_session_id("chat-abc") != chat_session_id("chat-abd")
    assert uuid.UUID(derived).version == 5
    assert uuid.UUID(chat_session_id(None)).version == 4


def test_a_child_runs_frames_stay_out_of_the_message() -> None:
    child = {"parent_run_id": "run-1", "agent_name": "helper"}
    parts = translate(
        tool_call("ask_helper", "c1", {"task": "t"}),
        chunk("the helper's own words").model_copy(update=child),
        tool_call("look", "c2", {}).model_copy(update=child),
        tool_result("ask_helper", "c1", {"answer": "42"}),
        chunk("It is 42."),
        done(content=[ContentPart.of_text("It is 42.")]),
    )
    texts = [p["delta"] for p in parts if p["type"] == "text-delta"]
    assert texts == ["It is 42."]
    tools = [p.get("toolName") for p in parts if p["type"] == "tool-input-available"]
    assert tools == ["ask_helper"]
