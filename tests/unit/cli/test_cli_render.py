"""Frame rendering and the error → exit code mapping, without any server."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentResult, StreamChunk
from services.cli._errors import ExitCode, exit_code_for, print_error
from services.cli._render import FrameRenderer, compact_json, render_interrupted, render_result


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200, color_system=None, highlight=False), buffer


def _chunk(text: str, **data: Any) -> StreamChunk:
    return StreamChunk.parse(
        {
            "type": "chunk",
            "data": {"role": "ai", "content": [{"type": "text", "text": text}], **data},
        }
    )


def test_streamed_text_stays_on_one_line_until_something_else() -> None:
    console, out = _console()
    r = FrameRenderer(console)
    r.frame(_chunk("Hel", is_delta=True))
    r.frame(_chunk("lo", is_delta=True))
    r.frame(
        StreamChunk.parse(
            {"type": "tool", "data": {"role": "ai", "type": "action", "tool_name": "read_file", "tool_args": {"path": "a.md"}}}
        )
    )  # fmt: skip
    r.frame(_chunk("!", is_delta=True))
    r.end_line()
    assert out.getvalue() == 'Hello\n→ tool read_file {"path": "a.md"}\n!\n'
    assert r.streamed_text


def test_thinking_is_shown_once_then_reasoning_text() -> None:
    console, out = _console()
    r = FrameRenderer(console)
    thinking = StreamChunk.parse({"type": "thinking", "data": {"role": "ai", "phase": "thinking"}})
    r.frame(thinking)
    r.frame(thinking)
    r.frame(
        StreamChunk.parse(
            {"type": "thinking", "data": {"role": "ai", "content": [{"type": "reasoning", "text": "plan: read"}]}}
        )
    )  # fmt: skip
    r.frame(_chunk("hmm", phase="thinking"))
    r.end_line()
    assert out.getvalue() == "thinking…\nplan: read\nhmm\n"
    assert not r.streamed_text  # thinking text is not the reply


def test_tool_result_and_long_args_are_cut() -> None:
    console, out = _console()
    r = FrameRenderer(console)
    r.frame(
        StreamChunk.parse(
            {"type": "tool", "data": {"role": "tool", "type": "tool_result", "tool_name": "read_file", "tool_result": "x" * 500}}
        )
    )  # fmt: skip
    line = out.getvalue().rstrip("\n")
    assert line.startswith('← read_file "xxx')
    assert line.endswith("…")
    assert len(line) < 200


def test_markup_in_text_is_printed_literally() -> None:
    console, out = _console()
    r = FrameRenderer(console)
    r.frame(_chunk("[bold]not bold[/bold] [link]"))
    r.end_line()
    assert out.getvalue() == "[bold]not bold[/bold] [link]\n"


def test_frames_track_the_last_seq() -> None:
    console, _ = _console()
    r = FrameRenderer(console)
    r.frame(StreamChunk.parse({"type": "placeholder", "seq": 4}))
    assert r.last_seq == 4 and r.frames == 1


def test_render_result_prints_text_once() -> None:
    result = AgentResult.parse(
        {"agent_name": "a", "content": [{"type": "text", "text": "Done."}], "model_used": "m",
         "token_usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}
    )  # fmt: skip
    console, out = _console()
    render_result(console, result, streamed=True)
    assert out.getvalue() == "tokens 1 in · 2 out · 3 total · model m\n"
    console, out = _console()
    render_result(console, result, streamed=False)
    assert out.getvalue().startswith("Done.\n")


def test_tool_calls_shown_as_frames_are_not_listed_again() -> None:
    """A resumed run's held call streams as tool frames and its text arrives whole with done:
    the summary prints the text, not the calls a second time."""
    done = StreamChunk.parse(
        {"type": "done", "result": {
            "agent_name": "author", "content": [{"type": "text", "text": "Pushed."}],
            "tool_calls": [{"tool_name": "git_push", "args": {"ref": "x"}, "result": {"ok": True}}],
        }}
    )  # fmt: skip
    console, out = _console()
    r = FrameRenderer(console)
    r.frame(StreamChunk.parse(
        {"type": "tool", "data": {"role": "ai", "type": "action", "tool_name": "git_push", "tool_args": {"ref": "x"}}}
    ))  # fmt: skip
    r.frame(StreamChunk.parse(
        {"type": "tool", "data": {"role": "tool", "type": "tool_result", "tool_name": "git_push", "tool_result": {"ok": True}}}
    ))  # fmt: skip
    r.frame(done)
    assert done.result is not None
    render_result(console, done.result, streamed=r.streamed_text, tools_shown=r.shown_tools)
    lines = out.getvalue().splitlines()
    assert [line for line in lines if "git_push" in line] == [
        '→ tool git_push {"ref": "x"}',
        '← git_push {"ok": true}',
    ]
    assert "Pushed." in lines
    # Without the frames (a waited-for invoke), the summary lists the calls.
    console, out = _console()
    render_result(console, done.result, streamed=False)
    assert out.getvalue().startswith(
        '→ tool git_push {"ref": "x"}\n← git_push {"ok": true}\nPushed.\n'
    )


def test_render_interrupted_prints_the_commands() -> None:
    result = AgentResult.parse(
        {"agent_name": "a", "interrupted": True, "session_id": "S", "interaction_id": "I",
         "action_required": [{"action_id": "9c1b2d3e-4f50-4a61-8273-849506172839", "tool": "git_push", "args": {"ref": "x"}}]}
    )  # fmt: skip
    console, out = _console()
    render_interrupted(console, result)
    text = out.getvalue()
    assert "9c1b2d3e-4f50-4a61-8273-849506172839" in text
    assert "approve: riverbeam approve I --session S" in text
    assert "decline: riverbeam decline I --session S" in text


def test_compact_json() -> None:
    assert compact_json({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert compact_json("é") == '"é"'
    assert len(compact_json("y" * 1000, 20)) == 20


@pytest.mark.parametrize(
    ("code", "exit_code"),
    [
        (ErrorCode.INVALID_UUID, ExitCode.USAGE),
        (ErrorCode.AGENT_NOT_REGISTERED, ExitCode.USAGE),
        (ErrorCode.UNAUTHENTICATED, ExitCode.USAGE),
        (ErrorCode.ACTION_NOT_PENDING, ExitCode.USAGE),
        (ErrorCode.SESSION_BUSY, ExitCode.USAGE),
        (ErrorCode.RUN_CANCELLED, ExitCode.RUN_FAILED),
        (ErrorCode.AGENT_ERROR_FRAME, ExitCode.RUN_FAILED),
        (ErrorCode.TOO_MANY_TOOL_ROUNDS, ExitCode.RUN_FAILED),
        (ErrorCode.MODEL_UNAVAILABLE, ExitCode.RUN_FAILED),
        (ErrorCode.MODEL_CONTEXT_LENGTH, ExitCode.RUN_FAILED),
        (ErrorCode.STORE_UNAVAILABLE, ExitCode.UNAVAILABLE),
        (ErrorCode.RUN_LOST, ExitCode.UNAVAILABLE),
        (ErrorCode.STREAM_TIMEOUT, ExitCode.UNAVAILABLE),
        (ErrorCode.INTERNAL, ExitCode.ERROR),
        (ErrorCode.STREAM_GAP, ExitCode.ERROR),
    ],
)
def test_exit_codes(code: ErrorCode, exit_code: ExitCode) -> None:
    assert exit_code_for(RiverbeamError(code)) is exit_code


def test_every_code_has_an_exit_code() -> None:
    for code in ErrorCode:
        assert exit_code_for(RiverbeamError(code)) in {1, 2, 4, 5}


def test_print_error_shows_code_message_and_hint() -> None:
    console, out = _console()
    print_error(console, RiverbeamError(ErrorCode.SESSION_BUSY, "session s is busy"))
    assert out.getvalue() == (
        "error BEM-030: session s is busy\n"
        "hint: wait for the running request to finish, or cancel it\n"
    )
    console, out = _console()
    print_error(console, RiverbeamError(ErrorCode.RUN_NOT_FOUND))
    assert out.getvalue() == "error BEM-028: run not found\n"  # no hint in the catalog


def _child(frame: dict[str, Any]) -> StreamChunk:
    return StreamChunk.parse({**frame, "agent_name": "helper", "parent_run_id": "p1"})


def test_a_child_runs_frames_are_indented_under_its_agent() -> None:
    console, out = _console()
    r = FrameRenderer(console)
    r.frame(
        StreamChunk.parse(
            {"type": "tool", "data": {"role": "ai", "type": "action", "tool_name": "ask_helper", "tool_args": {"task": "t"}}}
        )
    )  # fmt: skip
    r.frame(_child({"type": "placeholder"}))
    r.frame(
        _child({"type": "tool", "data": {"role": "ai", "type": "action", "tool_name": "look", "tool_args": {"v": 1}}})
    )  # fmt: skip
    r.frame(
        _child(
            {"type": "chunk", "data": {"role": "ai", "content": [{"type": "text", "text": "4"}]}}
        )
    )
    r.frame(
        _child(
            {"type": "chunk", "data": {"role": "ai", "content": [{"type": "text", "text": "2"}]}}
        )
    )
    r.frame(_chunk("It is 42."))
    r.end_line()
    assert out.getvalue() == (
        '→ tool ask_helper {"task": "t"}\n'
        '  ↳ helper → tool look {"v": 1}\n'
        "  ↳ helper: 42\n"
        "It is 42.\n"
    )


def test_a_handoff_is_named_with_how_to_continue() -> None:
    console, out = _console()
    result = AgentResult.parse(
        {
            "agent_name": "triage",
            "content": [{"type": "text", "text": "Paid."}],
            "handoff_to": "billing",
            "session_id": "s1",
            "interaction_id": "i1",
        }
    )
    render_result(console, result, streamed=True)
    assert "⇢ handed off to billing  (its turns: --session s1 --interaction i1)" in out.getvalue()
