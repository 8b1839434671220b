"""The OpenAI chat messages of a run, rebuilt from the recorded conversation.

The pipeline passes `context.history`: the session's stored Message records in order,
EXCLUDING the current turn's human message (the agent adds that itself, once; if the history
does end with this very turn, it is not added again). Records map to chat messages so:

    role human                                -> {"role": "user", ...}
    role system                               -> {"role": "system", ...}
    role ai, plain                            -> {"role": "assistant", "content": text}
    role ai with tool_call_id and tool_name   -> a call in an assistant message's tool_calls
                                                 (what the agent's `tool` action frames say)
    role ai with metadata.action_required     -> an assistant message (its text) making the
                                                 calls that waited for approval (for a called
                                                 agent's held call, the run's call of that
                                                 agent: entry.child.parent_tool_call_id)
    role tool with tool_call_id               -> the {"role": "tool"} answer to that call; if
                                                 the call was not recorded on its own, a tool
                                                 record with tool_name and tool_args stands
                                                 for the call too

Calls recorded one after another, with no answer in between, share one assistant message.
Each assistant message with tool_calls is followed at once by one tool message per call,
wherever the answers sit in the history. A call recorded twice (same tool_call_id) counts
once. The last answer recorded for a call wins, but a tool_result record beats any other type
(such as an action_result record of a person's response). A call with no answer gets a
synthetic one saying no result was recorded, and an answer with no call is dropped, so the list
is always valid for OpenAI-compatible endpoints. On resume, the results of the calls being
resumed are passed in `answers` and replace anything recorded for them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from riverbeam.agents._completion import ChatMessage, PendingToolCall
from riverbeam.agents._io import AgentInput
from riverbeam.types import ContentPart, MemoryEntry, Message

__all__ = [
    "NO_RESULT",
    "assistant_message",
    "build_messages",
    "resume_call_id",
    "tool_message",
    "user_content",
]

NO_RESULT: dict[str, Any] = {
    "error": {"message": "no result was recorded for this call; it did not complete"}
}


def user_content(parts: Sequence[ContentPart]) -> str | list[dict[str, Any]]:
    """A user message's content: a string for text only, else OpenAI content parts."""
    if all(p.type in ("text", "reasoning") for p in parts):
        return "".join(p.text or "" for p in parts if p.type == "text")
    out: list[dict[str, Any]] = []
    for part in parts:
        if part.type == "text" and part.text:
            out.append({"type": "text", "text": part.text})
        elif part.type == "image_url" and part.url:
            out.append({"type": "image_url", "image_url": {"url": part.url}})
        elif part.type == "image_base64" and part.data:
            mime = part.mime_type or "image/png"
            out.append(
                {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{part.data}"}}
            )
        elif part.type != "reasoning":
            what = part.mime_type or part.type
            out.append({"type": "text", "text": f"[{what} attachment not shown]"})
    return out


def tool_message(tool_call_id: str, result: Any) -> ChatMessage:
    """The tool message answering one call; non-string results are sent as JSON."""
    content = (
        result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    )
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content}


def assistant_message(text: str, calls: Sequence[PendingToolCall]) -> ChatMessage:
    """The assistant message that made `calls`."""
    return {"role": "assistant", "content": text or None, "tool_calls": [c.openai() for c in calls]}


def _text(message: Message) -> str:
    return "".join(p.text or "" for p in message.content if p.type == "text")


def _is_call(message: Message) -> bool:
    return message.role == "ai" and bool(message.tool_call_id) and bool(message.tool_name)


class _Builder:
    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.out: list[ChatMessage] = []
        self.answers: dict[str, Any] = {}
        self.resumed = dict(answers)
        self.seen: set[str] = set()
        self.group: list[PendingToolCall] = []
        self.group_text: list[str] = []
        self.group_answered = False

    def add_call(self, call: PendingToolCall, text: str) -> None:
        if call.id in self.seen:
            return
        if self.group_answered:
            self.flush()
        self.seen.add(call.id)
        self.group.append(call)
        if text:
            self.group_text.append(text)

    def flush(self) -> None:
        if self.group:
            self.out.append(assistant_message("\n".join(self.group_text), self.group))
            for call in self.group:
                if call.id in self.resumed:
                    result = self.resumed.pop(call.id)
                else:
                    result = self.answers.get(call.id, NO_RESULT)
                self.out.append(tool_message(call.id, result))
        self.group, self.group_text, self.group_answered = [], [], False


def build_messages(
    *,
    system_prompt: str,
    memory: Sequence[MemoryEntry],
    history: Sequence[Message],
    input: AgentInput,
    answers: Mapping[str, Any] | None = None,
    resumed_calls: Sequence[PendingToolCall] = (),
) -> list[ChatMessage]:
    """The messages to send: system prompt (with memory), history, then the current turn.

    Args:
        system_prompt: The skill's prompt ("" for none).
        memory: Memory entries loaded for the request, appended to the system prompt.
        history: The conversation before this turn (see the module docstring).
        input: The request; its content is the current user turn (skipped when empty, and when
            the history already ends with this very turn).
        answers: Results of calls being resumed now, by tool_call_id.
        resumed_calls: The calls being resumed; any whose id the history lacks is appended
            as an assistant call so its answer has something to answer.
    """
    out: list[ChatMessage] = []
    system = _system_text(system_prompt, memory)
    if system:
        out.append({"role": "system", "content": system})
    builder = _Builder(answers or {})
    from_results: set[str] = set()
    for message in history:
        # The last answer wins, but a tool_result record beats any other kind (such as the
        # pipeline's action_result record of a person's response).
        call_id = message.tool_call_id
        if message.role != "tool" or not call_id:
            continue
        if message.type == "tool_result":
            from_results.add(call_id)
        elif call_id in from_results:
            continue
        builder.answers[call_id] = message.tool_result
    for message in history:
        if _is_call(message):
            builder.add_call(_call_of(message), _text(message))
        elif message.role == "tool":
            _tool_record(builder, message)
        elif message.role == "ai" and (held := _held_calls(message)):
            _held_reply(builder, message, held)
        else:
            builder.flush()
            _plain(builder.out, message)
    builder.flush()
    for call in resumed_calls:
        if call.id not in builder.seen:
            builder.add_call(call, "")
    builder.flush()
    out.extend(builder.out)
    if input.content and not _already_last(history, input):
        out.append({"role": "user", "content": user_content(input.content)})
    return out


def resume_call_id(action_id: str) -> str:
    """The tool_call_id used for a pending action that has none (older records)."""
    return f"call_{action_id.replace('-', '')[:24]}"


def _call_of(message: Message) -> PendingToolCall:
    return PendingToolCall(
        name=str(message.tool_name),
        args=dict(message.tool_args or {}),
        id=str(message.tool_call_id),
    )


def _tool_record(builder: _Builder, message: Message) -> None:
    """A tool record answers a call of the open group, or stands for a call and its answer."""
    call_id = message.tool_call_id
    if not call_id:
        return
    if any(call.id == call_id for call in builder.group):
        builder.group_answered = True
    elif call_id not in builder.seen and message.tool_name:
        builder.add_call(_call_of(message), "")
        builder.group_answered = True


def _held_reply(builder: _Builder, message: Message, held: list[PendingToolCall]) -> None:
    """The reply of an interrupted run: the assistant turn that made the held calls.

    When the calls were already recorded (from the agent's `tool` frames) and are the open
    group, the reply's text joins that group; otherwise the reply opens a group of its own.
    """
    if not {call.id for call in builder.group} & {call.id for call in held}:
        builder.flush()
    for call in held:
        if call.id not in builder.seen:
            builder.seen.add(call.id)
            builder.group.append(call)
    text = _text(message)
    if not builder.group:
        _plain(builder.out, message)
    elif text and text not in builder.group_text:
        builder.group_text.append(text)


def _held_calls(message: Message) -> list[PendingToolCall]:
    """The calls an ai message's metadata.action_required lists."""
    entries = (message.metadata or {}).get("action_required")
    if not isinstance(entries, list):
        return []
    calls: list[PendingToolCall] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("tool"), str):
            continue
        child = entry.get("child")
        if isinstance(child, dict) and isinstance(child.get("parent_tool_call_id"), str):
            # A called agent's held call: this run's own call was of the agent's tool.
            task = {"task": child.get("task", "")}
            calls.append(
                PendingToolCall(
                    name=str(child.get("parent_tool")), args=task, id=child["parent_tool_call_id"]
                )
            )
            continue
        call_id = entry.get("tool_call_id") or resume_call_id(str(entry.get("action_id", "")))
        args = entry.get("args") if isinstance(entry.get("args"), dict) else {}
        calls.append(PendingToolCall(name=entry["tool"], args=dict(args or {}), id=str(call_id)))
    return calls


def _plain(out: list[ChatMessage], message: Message) -> None:
    if message.role == "human":
        content = user_content(message.content)
        if content:
            out.append({"role": "user", "content": content})
        return
    text = _text(message)
    if text and message.role in ("ai", "system"):
        out.append({"role": "assistant" if message.role == "ai" else "system", "content": text})


def _already_last(history: Sequence[Message], input: AgentInput) -> bool:
    """Whether the history already ends with this turn's human message (then it is not re-sent)."""
    if not history or history[-1].role != "human":
        return False
    last = history[-1]
    if last.run_id is not None and last.run_id == input.run_id:
        return True
    return list(last.content) == list(input.content)


def _system_text(system_prompt: str, memory: Sequence[MemoryEntry]) -> str:
    if not memory:
        return system_prompt
    lines = "\n".join(f"- {entry.content}" for entry in memory)
    note = f"What you remember from earlier conversations:\n{lines}"
    return f"{system_prompt}\n\n{note}" if system_prompt else note
