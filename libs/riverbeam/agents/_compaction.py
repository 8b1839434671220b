"""Context compaction: keep what a model call sends within the model's context budget.

The budget counts everything sent (system prompt with memory and instructions, the tool
schemas, the history, the current turn and the tool loop's own messages; see _tokens.py).
Over budget, in this order:

1. summarise: the older turns (all but the newest `keep_turns` user turns) are summarised
   by the model into one summary message (role system, type "summary", its metadata naming
   the last seq it covers). It is stored with the run, and later turns use it instead of the
   messages it covers;
2. trim: the oldest remaining history is dropped (from a user turn on, so no tool answer is
   left without its call);
3. elide: the tool loop's oldest tool results are replaced by a short note;
4. still over: BEM-225.

A provider's context-length error (BEM-084) compacts with a halved budget and retries once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from riverbeam.agents._completion import ChatMessage, CompletionClient, Text
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.types import ContentPart, Message

__all__ = [
    "SUMMARY_PREFIX",
    "CompactionOptions",
    "Summary",
    "elide_tool_results",
    "history_after_summary",
    "summarize",
    "trim_oldest_turn",
]

SUMMARY_PREFIX = "Summary of the earlier conversation:"
ELIDED = "[tool result elided to fit the model's context]"

_SUMMARY_SYSTEM = (
    "You compress conversations. Write a concise summary of the conversation below that keeps "
    "every fact, decision, name, number, file path and open question a continuation needs. "
    "Write plain text, no preamble."
)


class CompactionOptions(BaseModel):
    """How a RigAgentRunner keeps its calls within the context (riverbeam.yaml `compaction:`).

    Attributes:
        context_tokens: The model's context size; default: the resolved model's max_tokens
            (the model list), else 8192.
        answer_share: Share of the context kept free for the answer.
        summarize: Summarise older turns (else only trim).
        keep_turns: Newest user turns never summarised or trimmed first.
        summary_model: Model for the summary call (default: the run's).
    """

    # Built with the first agent run that compacts, not at import.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    context_tokens: int | None = Field(default=None, gt=0)
    answer_share: float = Field(default=0.25, ge=0, lt=1)
    summarize: bool = True
    keep_turns: int = Field(default=2, ge=1)
    summary_model: str | None = None

    def budget(self, model_max_tokens: int | None) -> int:
        size = self.context_tokens or model_max_tokens or 8192
        return max(1, int(size * (1 - self.answer_share)))


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary made in this run: to be stored as a message of type "summary"."""

    text: str
    covers_until_seq: int
    messages: int

    def record(self, session_id: str) -> Message:
        """The in-memory record that stands for the summarised history in this run."""
        return Message(
            message_id=new_id(),
            session_id=session_id,
            seq=0,
            role="system",
            type="summary",
            content=[ContentPart.of_text(self.text)],
            metadata={"covers_until_seq": self.covers_until_seq},
            created_at=datetime.now(UTC),
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "covers_until_seq": self.covers_until_seq,
            "messages": self.messages,
        }


def history_after_summary(history: Sequence[Message]) -> list[Message]:
    """The newest stored summary, then only the messages it does not cover."""
    summaries = [m for m in history if m.type == "summary"]
    if not summaries:
        return list(history)
    newest = summaries[-1]
    covers = (newest.metadata or {}).get("covers_until_seq")
    if not isinstance(covers, int):
        return [m for m in history if m.type != "summary"]
    rest = [m for m in history if m.type != "summary" and m.seq > covers]
    return [newest, *rest]


def _human_starts(history: Sequence[Message]) -> list[int]:
    return [i for i, m in enumerate(history) if m.role == "human"]


def _transcript(history: Sequence[Message]) -> str:
    lines: list[str] = []
    for message in history:
        text = "".join(p.text or "" for p in message.content if p.type == "text")
        if message.type == "summary":
            lines.append(f"(earlier summary) {text}")
        elif message.role == "tool":
            result = json.dumps(message.tool_result, ensure_ascii=False, default=str)
            lines.append(f"tool {message.tool_name}: {result[:2000]}")
        elif message.tool_name:
            args = json.dumps(message.tool_args or {}, ensure_ascii=False)
            lines.append(f"{message.role} called {message.tool_name}({args}) {text}".strip())
        elif text:
            lines.append(f"{message.role}: {text}")
    return "\n".join(lines)


async def summarize(
    client: CompletionClient,
    history: Sequence[Message],
    *,
    keep_turns: int,
    model: str | None,
) -> tuple[Summary, list[Message], Any] | None:
    """Summarise all but the newest `keep_turns` user turns; None when there is nothing to.

    Returns:
        The summary, the history with the summary in place of what it covers, and the
        completion's usage.

    Raises:
        RiverbeamError: The model's failure.
    """
    starts = _human_starts(history)
    if len(starts) <= keep_turns:
        return None
    split = starts[-keep_turns]
    old = list(history[:split])
    if not any(m.type != "summary" for m in old):
        return None
    messages: list[ChatMessage] = [
        {"role": "system", "content": _SUMMARY_SYSTEM},
        {"role": "user", "content": _transcript(old)},
    ]
    completion = await client.complete(messages, [], model=model)
    if not isinstance(completion, Text) or not completion.text.strip():
        raise RiverbeamError(
            ErrorCode.MODEL_BAD_RESPONSE, "the summary call returned no text", purpose="summary"
        )
    covered = [m.seq for m in old if m.type != "summary"]
    summary = Summary(
        text=f"{SUMMARY_PREFIX}\n{completion.text.strip()}",
        covers_until_seq=max(covered) if covered else 0,
        messages=len(old),
    )
    session_id = history[0].session_id
    return summary, [summary.record(session_id), *history[split:]], completion.usage


def trim_oldest_turn(history: Sequence[Message]) -> list[Message] | None:
    """The history without its oldest user turn (a leading summary goes first); None if empty."""
    if not history:
        return None
    if history[0].type == "summary":
        return list(history[1:])
    starts = _human_starts(history)
    nxt = next((i for i in starts if i > 0), None)
    return [] if nxt is None else list(history[nxt:])


def elide_tool_results(loop: list[ChatMessage]) -> bool:
    """Replace the oldest not yet elided tool result of the loop; False when none is left."""
    for message in loop:
        if message.get("role") == "tool" and message.get("content") != ELIDED:
            message["content"] = ELIDED
            return True
    return False
