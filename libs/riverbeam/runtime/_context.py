"""Building an agent's context: history and memory, trimmed to the model's budget."""

from __future__ import annotations

import json
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import MemoryEntry, Message

__all__ = ["estimate_tokens", "memory_scopes", "trim_history", "trim_memory", "trim_to_budget"]

# Room kept free for the model's answer, as a share of the budget.
ANSWER_SHARE = 0.25


def estimate_tokens(message: Message) -> int:
    """A cheap, model-independent estimate: ~4 characters a token plus per-message overhead."""
    # A plain loop: run for every history message of every turn, a generator's frame per
    # message cost more than the sums.
    size = 0
    for part in message.content:
        text, url = part.text, part.url
        if text:
            size += len(text)
        if url:
            size += len(url)
    if message.tool_args:
        size += len(json.dumps(message.tool_args))
    if message.tool_result is not None:
        size += len(json.dumps(message.tool_result, default=str))
    return size // 4 + 4


def trim_to_budget(
    history: list[Message], memory: list[MemoryEntry], *, max_tokens: int
) -> tuple[list[Message], list[MemoryEntry]]:
    """Keep the newest history and memory that fit in the budget.

    Memory goes first (it is usually small and always relevant); the oldest history
    messages are dropped until the rest fits. A tool result is never kept without the
    message that asked for it: trimming starts at a human message.
    """
    kept_memory, budget = trim_memory(memory, max_tokens=max_tokens)
    return trim_history(history, budget), kept_memory


def trim_memory(memory: list[MemoryEntry], *, max_tokens: int) -> tuple[list[MemoryEntry], int]:
    """trim_to_budget's memory, and the budget it leaves for the history (trim_history)."""
    budget = int(max_tokens * (1 - ANSWER_SHARE))
    kept_memory: list[MemoryEntry] = []
    for entry in memory:
        cost = len(entry.content) // 4 + 4
        if cost > budget:
            break
        kept_memory.append(entry)
        budget -= cost
    return kept_memory, budget


def trim_history(history: list[Message], budget: int) -> list[Message]:
    """trim_to_budget's history, for the budget trim_memory left."""
    kept: list[Message] = []
    for message in reversed(history):
        cost = estimate_tokens(message)
        if cost > budget:
            break
        kept.append(message)
        budget -= cost
    kept.reverse()
    while kept and kept[0].role != "human":
        kept.pop(0)
    return kept


def memory_scopes(
    metadata: dict[str, Any] | None, *, org_id: str | None = None
) -> list[tuple[str, str]]:
    """The (name, id) scopes of `metadata.memory_scopes`; BEM-100 for a malformed entry.

    Scopes are read and written in the request's organisation (`org_id`) only; an entry that
    names another organisation in its optional `org_id` is refused (BEM-100), never honoured.
    """
    raw = (metadata or {}).get("memory_scopes")
    scopes: list[tuple[str, str]] = []
    if not isinstance(raw, list):
        return scopes
    for item in raw:
        if (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and item.get("id") is not None
        ):
            named_org = item.get("org_id")
            if named_org is not None and (named_org or None) != (org_id or None):
                raise RiverbeamError(
                    ErrorCode.INVALID_MEMORY_SCOPE,
                    "a memory scope names another organisation than the request's",
                    field="metadata.memory_scopes",
                )
            scopes.append((item["name"], str(item["id"])))
        else:
            raise RiverbeamError(
                ErrorCode.INVALID_MEMORY_SCOPE, "memory_scopes entries are {name, id}"
            )
    return scopes
