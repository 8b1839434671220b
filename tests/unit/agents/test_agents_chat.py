"""Rebuilding the OpenAI message list from recorded history."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from agents_kit import make_input, msg

from riverbeam.agents import PendingToolCall, build_messages
from riverbeam.agents._chat import NO_RESULT, user_content
from riverbeam.types import ContentPart, MemoryEntry, Message


def build(history: list[Message], text: str = "now", **kw: Any) -> list[dict[str, Any]]:
    return build_messages(
        system_prompt=kw.pop("system_prompt", ""),
        memory=kw.pop("memory", []),
        history=history,
        input=kw.pop("input", None) or make_input(text),
        **kw,
    )


def assert_valid(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered right after it, and no answer is orphaned."""
    open_ids: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, m
            open_ids.remove(m["tool_call_id"])
            continue
        assert not open_ids, f"unanswered calls before {m}"
        if m["role"] == "assistant" and m.get("tool_calls"):
            open_ids = [c["id"] for c in m["tool_calls"]]
    assert not open_ids


def test_system_prompt_memory_history_and_the_current_turn_once() -> None:
    memory = [
        MemoryEntry(
            scope_name="user",
            scope_id="u",
            entry_id="e",
            content="likes tea",
            created_at=datetime.now(UTC),
        )
    ]
    history = [msg("human", "hi"), msg("ai", "hello")]
    out = build(history, "and now?", system_prompt="You help.", memory=memory)
    assert (
        out[0]["role"] == "system"
        and out[0]["content"].startswith("You help.")
        and "likes tea" in out[0]["content"]
    )
    assert out[1:] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "and now?"},
    ]


def test_no_system_message_without_prompt_or_memory() -> None:
    assert build([], "x") == [{"role": "user", "content": "x"}]


def test_current_turn_already_in_history_is_not_sent_twice() -> None:
    run_id = str(uuid.uuid4())
    by_run = build(
        [msg("human", "different text", run_id=run_id)], input=make_input("now", run_id=run_id)
    )
    assert by_run == [{"role": "user", "content": "different text"}]
    by_content = build([msg("ai", "earlier"), msg("human", "now")], "now")
    assert [m["content"] for m in by_content] == ["earlier", "now"]
    # The same words in an earlier, answered turn are a new turn.
    again = build([msg("human", "now"), msg("ai", "reply")], "now")
    assert [m["content"] for m in again] == ["now", "reply", "now"]


def test_frame_style_records_group_parallel_calls() -> None:
    history = [
        msg("human", "do it"),
        msg("ai", "Looking.", tool_call_id="a", tool_name="read", tool_args={"p": 1}),
        msg("ai", tool_call_id="b", tool_name="list", tool_args={}),
        msg("tool", type="tool_result", tool_call_id="b", tool_name="list", tool_result=["x"]),
        msg("tool", type="tool_result", tool_call_id="a", tool_name="read", tool_result="text"),
        msg("ai", "done"),
    ]
    out = build(history, "next")
    assert_valid(out)
    assistant = out[1]
    assert assistant["content"] == "Looking."
    assert [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in assistant["tool_calls"]
    ] == [("a", "read", {"p": 1}), ("b", "list", {})]
    assert out[2] == {"role": "tool", "tool_call_id": "a", "content": "text"}
    assert out[3] == {"role": "tool", "tool_call_id": "b", "content": '["x"]'}
    assert out[4:] == [
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "next"},
    ]


def test_sequential_calls_stay_separate_and_duplicates_count_once() -> None:
    history = [
        msg("human", "go"),
        msg("ai", tool_call_id="a", tool_name="read", tool_args={}),
        msg("tool", type="tool_result", tool_call_id="a", tool_result=1),
        msg("ai", tool_call_id="b", tool_name="read", tool_args={}),
        msg("ai", tool_call_id="b", tool_name="read", tool_args={}),
        msg("tool", type="tool_result", tool_call_id="b", tool_result=2),
    ]
    out = build(history)
    assert_valid(out)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "assistant", "tool", "user"]


def test_pipeline_style_tool_records_stand_for_call_and_answer() -> None:
    history = [
        msg("human", "go"),
        msg(
            "tool",
            type="tool_result",
            tool_call_id="a",
            tool_name="read",
            tool_args={"p": "x"},
            tool_result="body",
        ),
        msg(
            "tool",
            type="tool_result",
            tool_call_id="b",
            tool_name="list",
            tool_args={},
            tool_result=[],
        ),
        msg("ai", "final"),
    ]
    out = build(history)
    assert_valid(out)
    assert out[1]["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"p": "x"}'}
    assert out[2] == {"role": "tool", "tool_call_id": "a", "content": "body"}
    assert out[-2] == {"role": "assistant", "content": "final"}


def test_interrupted_reply_with_action_required_and_resume_answers() -> None:
    held = {
        "action_id": str(uuid.uuid4()),
        "kind": "confirmation",
        "tool": "git_push",
        "args": {"ref": "b"},
        "tool_call_id": "p1",
    }
    history = [
        msg("human", "push it"),
        msg("ai", "Waiting for approval.", metadata={"action_required": [held]}),
    ]
    resumed = build(
        history,
        "",
        input=make_input(""),
        answers={"p1": {"pushed": True}},
        resumed_calls=[PendingToolCall("git_push", {"ref": "b"}, id="p1")],
    )
    assert_valid(resumed)
    assert resumed[1]["content"] == "Waiting for approval."
    assert resumed[1]["tool_calls"][0]["id"] == "p1"
    assert resumed[2] == {"role": "tool", "tool_call_id": "p1", "content": '{"pushed": true}'}
    assert resumed[-1]["role"] == "tool"  # no empty user turn on resume
    # A later turn: the pipeline stored the resume's tool result; the held call is answered by it.
    later = build(
        [
            *history,
            msg(
                "tool",
                type="tool_result",
                tool_call_id="p1",
                tool_name="git_push",
                tool_args={"ref": "b"},
                tool_result={"pushed": True},
            ),
            msg("ai", "Pushed."),
        ]
    )
    assert_valid(later)
    assert later[2]["content"] == '{"pushed": true}'


def test_resumed_call_missing_from_history_is_appended() -> None:
    out = build(
        [msg("human", "push")],
        "",
        input=make_input(""),
        answers={"x": "ok"},
        resumed_calls=[PendingToolCall("git_push", {}, id="x")],
    )
    assert_valid(out)
    assert [m["role"] for m in out] == ["user", "assistant", "tool"]


def test_tool_result_records_beat_action_result_records() -> None:
    history = [
        msg("ai", tool_call_id="a", tool_name="git_push", tool_args={}),
        msg("tool", type="tool_result", tool_call_id="a", tool_result="ran"),
        msg("tool", type="action_result", tool_call_id="a", tool_result={"status": "submitted"}),
    ]
    assert build(history)[1]["content"] == "ran"


def test_unanswered_calls_get_a_synthetic_answer_and_orphans_are_dropped() -> None:
    history = [
        msg("human", "go"),
        msg("ai", tool_call_id="a", tool_name="read", tool_args={}),
        msg("tool", type="tool_result", tool_call_id="zzz", tool_result="orphan"),
        msg("ai", "after"),
    ]
    out = build(history)
    assert_valid(out)
    assert out[2] == {"role": "tool", "tool_call_id": "a", "content": json.dumps(NO_RESULT)}
    assert "orphan" not in json.dumps(out)


def test_user_content_with_media() -> None:
    assert (
        user_content([ContentPart.of_text("a"), ContentPart(type="reasoning", text="hidden")])
        == "a"
    )
    parts = user_content(
        [
            ContentPart.of_text("look"),
            ContentPart(type="image_url", url="http://x/p.png"),
            ContentPart(type="image_base64", data="QUJD", mime_type="image/jpeg"),
            ContentPart(type="audio", data="QUJD", mime_type="audio/ogg"),
        ]
    )
    assert parts == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "http://x/p.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}},
        {"type": "text", "text": "[audio/ogg attachment not shown]"},
    ]
