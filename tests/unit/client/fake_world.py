"""The canned world of the fake router: records of one session, and scripted frames.

One session with two interactions. The first (agent "assistant") completed; the second (agent
"author") ran twice: its first run asked to write a file (approved and ran), its second asks to
push (pending). A third pending action lives in another session. Streaming invokes replay
scripted frames per agent: "assistant" thinks, calls a tool and streams text; "author" pauses
for approval; "broken" ends with an error frame.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from riverbeam.types import (
    Action,
    ActionRequired,
    AgentResult,
    ContentPart,
    Interaction,
    Message,
    ResumePayload,
    Run,
    StreamChunk,
    TokenUsage,
    ToolCallRecord,
    ToolExecution,
    result_digest,
    result_preview,
)

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
OTHER_SESSION = "0a0a0a0a-1111-4222-8333-444444444444"
INTERACTION_DONE = "11111111-1111-4111-8111-111111111111"
INTERACTION_WAITING = "40744652-2720-4b10-86ee-7333c1be8165"
RUN_DONE = "c36c753f-b90d-4834-9112-e12a343f6a0d"
RUN_WROTE = "22222222-2222-4222-8222-222222222222"
RUN_WAITING = "33333333-3333-4333-8333-333333333333"
ACTION_RAN = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
ACTION_PENDING = "9c1b2d3e-4f50-4a61-8273-849506172839"
ACTION_OTHER = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"  # pending, in OTHER_SESSION
T0 = datetime(2026, 6, 9, 9, 45, tzinfo=UTC)
STREAM = "RIVERBEAM_STREAM"


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _text(text: str) -> list[ContentPart]:
    return [ContentPart.of_text(text)]


def _msg(seq: int, role: Any, text: str, interaction: str, run: str, **extra: Any) -> Message:
    return Message(
        message_id=str(uuid.UUID(int=seq)),
        session_id=SESSION,
        interaction_id=interaction,
        run_id=run,
        seq=seq,
        role=role,
        content=_text(text) if text else [],
        created_at=at(seq),
        **extra,
    )


def canned_actions() -> list[Action]:
    return [
        Action(
            action_id=ACTION_RAN,
            session_id=SESSION,
            interaction_id=INTERACTION_WAITING,
            run_id=RUN_WROTE,
            tool="write_file",
            args={"path": "docs/index.md"},
            status="resolved",
            outcome="approved_ran",
            result={"ok": True},
            created_at=at(3),
            resolved_at=at(4),
            agent_name="author",
        ),
        Action(
            action_id=ACTION_PENDING,
            session_id=SESSION,
            interaction_id=INTERACTION_WAITING,
            run_id=RUN_WAITING,
            tool="git_push",
            args={"ref": "docs/update"},
            created_at=at(6),
            agent_name="author",
        ),
        Action(
            action_id=ACTION_OTHER,
            session_id=OTHER_SESSION,
            interaction_id=str(uuid.UUID(int=77)),
            run_id=str(uuid.UUID(int=78)),
            tool="delete_file",
            args={"path": "x"},
            created_at=at(7),
            agent_name="author",
        ),
    ]


def canned_messages() -> list[Message]:
    return [
        _msg(1, "human", "hello", INTERACTION_DONE, RUN_DONE),
        _msg(2, "ai", "Hi there!", INTERACTION_DONE, RUN_DONE),
        _msg(3, "human", "update the docs and push", INTERACTION_WAITING, RUN_WROTE),
        _msg(4, "ai", "I will write docs/index.md.", INTERACTION_WAITING, RUN_WROTE),
        _msg(
            5,
            "tool",
            "",
            INTERACTION_WAITING,
            RUN_WAITING,
            type="action_result",
            tool_name="write_file",
            tool_result={"ok": True},
        ),
        _msg(6, "ai", "Written. May I push docs/update?", INTERACTION_WAITING, RUN_WAITING),
    ]


def _result(agent: str, text: str, **extra: Any) -> AgentResult:
    extra.setdefault("session_id", SESSION)
    return AgentResult(
        agent_name=agent,
        content=_text(text),
        model_used="echo-1",
        token_usage=TokenUsage(prompt_tokens=12, completion_tokens=5, total_tokens=17),
        latency_ms=1234.0,
        **extra,
    )


def canned_runs() -> dict[str, Run]:
    waiting = _result(
        "author",
        "Written. May I push docs/update?",
        interaction_id=INTERACTION_WAITING,
        run_id=RUN_WAITING,
        interrupted=True,
        action_required=[
            ActionRequired(action_id=ACTION_PENDING, tool="git_push", args={"ref": "docs/update"})
        ],
    )
    wrote = _result(
        "author",
        "I will write docs/index.md.",
        interaction_id=INTERACTION_WAITING,
        run_id=RUN_WROTE,
        interrupted=True,
        action_required=[
            ActionRequired(action_id=ACTION_RAN, tool="write_file", args={"path": "docs/index.md"})
        ],
    )
    common = {"session_id": SESSION, "token_usage": TokenUsage(total_tokens=17)}
    return {
        RUN_DONE: Run(
            run_id=RUN_DONE,
            interaction_id=INTERACTION_DONE,
            agent_name="assistant",
            status="completed",
            started_at=at(1),
            finished_at=at(2),
            model_used="echo-1",
            **common,
        ),
        RUN_WROTE: Run(
            run_id=RUN_WROTE,
            interaction_id=INTERACTION_WAITING,
            agent_name="author",
            status="interrupted",
            started_at=at(3),
            model_used="echo-1",
            result=wrote,
            **common,
        ),
        RUN_WAITING: Run(
            run_id=RUN_WAITING,
            interaction_id=INTERACTION_WAITING,
            agent_name="author",
            status="interrupted",
            started_at=at(5),
            model_used="echo-1",
            result=waiting,
            **common,
        ),
    }


def canned_tool_executions() -> list[ToolExecution]:
    """The ledger: the first author run held write_file; the second ran it and holds git_push."""
    common = {"session_id": SESSION, "interaction_id": INTERACTION_WAITING, "lease_epoch": 1}
    return [
        ToolExecution(
            execution_id="e1",
            run_id=RUN_WROTE,
            seq=1,
            tool="write_file",
            args={"path": "docs/index.md"},
            status="held",
            action_id=ACTION_RAN,
            requested_at=at(3),
            finished_at=at(3),
            **common,
        ),
        ToolExecution(
            execution_id="e2",
            run_id=RUN_WAITING,
            seq=1,
            tool="write_file",
            args={"path": "docs/index.md"},
            status="succeeded",
            action_id=ACTION_RAN,
            result_digest=result_digest({"ok": True}),
            result_preview=result_preview({"ok": True}),
            requested_at=at(5),
            started_at=at(5),
            finished_at=at(5) + timedelta(milliseconds=42),
            **common,
        ),
        ToolExecution(
            execution_id="e3",
            run_id=RUN_WAITING,
            seq=2,
            tool="read_file",
            args={"path": "missing.md"},
            status="failed",
            read_only=True,
            error_code="BEM-301",
            error_message="no such file",
            requested_at=at(5),
            started_at=at(5),
            finished_at=at(5),
            **common,
        ),
        ToolExecution(
            execution_id="e4",
            run_id=RUN_WAITING,
            seq=3,
            tool="git_push",
            args={"ref": "docs/update"},
            status="held",
            action_id=ACTION_PENDING,
            requested_at=at(6),
            finished_at=at(6),
            **common,
        ),
    ]


def canned_interactions() -> dict[str, Interaction]:
    return {
        INTERACTION_DONE: Interaction(
            interaction_id=INTERACTION_DONE,
            session_id=SESSION,
            agent_name="assistant",
            status="completed",
            created_at=at(1),
            updated_at=at(2),
        ),
        INTERACTION_WAITING: Interaction(
            interaction_id=INTERACTION_WAITING,
            session_id=SESSION,
            agent_name="author",
            status="in_progress",
            created_at=at(3),
            updated_at=at(6),
        ),
    }


def _frames(
    agent: str, request_id: str, session_id: str, frames: list[dict[str, Any]]
) -> list[StreamChunk]:
    out = []
    for seq, frame in enumerate(frames, start=1):
        out.append(
            StreamChunk.parse(
                {
                    "agent_name": agent,
                    "session_id": session_id,
                    "request_id": request_id,
                    "seq": seq,
                    **frame,
                }
            )
        )
    return out


def _ai(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "ai", "content": [{"type": "text", "text": text}], **extra}


def script_for(
    agent: str, request_id: str, session_id: str, interaction_id: str
) -> list[StreamChunk]:
    """The frames of a streamed invoke of `agent`."""
    if agent == "author":
        result = _result(
            "author",
            "I need your approval to push.",
            session_id=session_id,
            interaction_id=interaction_id,
            request_id=request_id,
            interrupted=True,
            action_required=[
                ActionRequired(
                    action_id=ACTION_PENDING, tool="git_push", args={"ref": "docs/update"}
                )
            ],
        ).to_json_dict()
        return _frames(
            agent,
            request_id,
            session_id,
            [
                {"type": "chunk", "data": _ai("I need your approval to push.", is_delta=True)},
                {
                    "type": "tool",
                    "data": {
                        "role": "ai",
                        "type": "action",
                        "tool_name": "git_push",
                        "tool_call_id": "c1",
                        "tool_args": {"ref": "docs/update"},
                    },
                },
                {"type": "done", "result": result},
            ],
        )
    if agent == "broken":
        return _frames(
            agent,
            request_id,
            session_id,
            [
                {"type": "chunk", "data": _ai("Let me", is_delta=True)},
                {
                    "type": "error",
                    "error": "agent reported an error: boom",
                    "error_code": "BEM-087",
                },
            ],
        )
    result = _result(
        agent,
        "Hello world",
        session_id=session_id,
        interaction_id=interaction_id,
        request_id=request_id,
        tool_calls=[
            ToolCallRecord(tool_name="write_file", args={"path": "notes.md"}, result={"ok": True})
        ],
    ).to_json_dict()
    return _frames(
        agent,
        request_id,
        session_id,
        [
            {"type": "placeholder", "data": {"role": "ai"}},
            {"type": "thinking", "data": {"role": "ai", "type": "step", "phase": "thinking"}},
            {
                "type": "tool",
                "data": {
                    "role": "ai",
                    "type": "action",
                    "tool_name": "write_file",
                    "tool_call_id": "c1",
                    "tool_args": {"path": "notes.md"},
                },
            },
            {
                "type": "tool",
                "data": {
                    "role": "tool",
                    "type": "tool_result",
                    "tool_name": "write_file",
                    "tool_call_id": "c1",
                    "tool_result": {"ok": True},
                },
            },
            {"type": "chunk", "data": _ai("Hello", is_delta=True, phase="final")},
            {"type": "chunk", "data": _ai(" world", is_delta=True, phase="final")},
            {"type": "done", "result": result},
        ],
    )


def resume_script(agent: str, request_id: str, payload: ResumePayload) -> list[StreamChunk]:
    """Frames of a resume: the approved tools' results, then a reply."""
    frames: list[dict[str, Any]] = []
    approved = [a for a in payload.actions if a.status == "submitted"]
    for answer in approved:
        frames.append(
            {
                "type": "tool",
                "data": {
                    "role": "tool",
                    "type": "tool_result",
                    "tool_name": "git_push",
                    "tool_result": {"pushed": answer.action_id},
                },
            }
        )
    text = "Pushed." if approved else "Understood, not pushing."
    frames.append({"type": "chunk", "data": _ai(text, is_delta=True)})
    result = _result(
        agent,
        text,
        session_id=payload.session_id,
        interaction_id=payload.interaction_id,
        request_id=request_id,
    )
    frames.append({"type": "done", "result": result.to_json_dict()})
    return _frames(agent, request_id, payload.session_id, frames)
