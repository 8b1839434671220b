"""An agent's history, copied and trimmed when the agent first reads it.

The begin-run step brings back up to max_history_messages of the session's history, and the
agent gets its own copies of them (so that changing them changes nothing the store client
holds), trimmed to the model's budget. Copying a 200-message window was most of what a long
session's turn cost the runner, for every agent, while an agent that never reads its history
(the echo agent, a proxy to an outside service) has no use for it. So the context's
`history` and `full_history` are made on first read, from the copies the step's result makes
(LentBeginRun.copy_history, or the result's own history), with the budget memory left: the
agent sees exactly what it would have seen had they been made before it started, and the
two lists share their messages as before (`history` is the newest part of `full_history`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from riverbeam.agents._io import AgentContext
from riverbeam.runtime._context import trim_history
from riverbeam.store import BeginRunResult
from riverbeam.store._lent_history import LentBeginRun
from riverbeam.types import Message

__all__ = ["DeferredHistoryContext", "history_copier"]

# AgentContext's own slots, read and written past the properties below.
_HISTORY: Any = AgentContext.__dict__["history"]
_FULL_HISTORY: Any = AgentContext.__dict__["full_history"]


def history_copier(begun: BeginRunResult) -> Callable[[], list[Message]]:
    """What makes the run's own copy of the step's history: a lent result's copy_history, or
    (a result whose history is already the caller's own) a list of those messages."""
    if isinstance(begun, LentBeginRun):
        return begun.copy_history
    return partial(list, begun.history)


class DeferredHistoryContext(AgentContext):
    """An AgentContext whose history and full_history are made when first read or written.

    `copies()` returns the whole window, copied; `budget` is the token budget the history is
    trimmed to (trim_history). Both are used once, and then let go.
    """

    __slots__ = ("_deferred",)

    def __init__(
        self,
        copies: Callable[[], list[Message]] | None = None,
        budget: int = 0,
        **fields: Any,
    ) -> None:
        # Without `copies`, an AgentContext like any other (dataclasses.replace of one).
        self._deferred: tuple[Callable[[], list[Message]], int] | None = None
        super().__init__(**fields)
        if copies is not None:
            self._deferred = (copies, budget)

    def _settle(self) -> None:
        deferred = self._deferred
        if deferred is None:
            return
        self._deferred = None
        copies, budget = deferred
        full = copies()
        _FULL_HISTORY.__set__(self, full)
        _HISTORY.__set__(self, trim_history(full, budget))

    @property
    def history(self) -> list[Message]:
        self._settle()
        value: list[Message] = _HISTORY.__get__(self)
        return value

    @history.setter
    def history(self, value: list[Message]) -> None:
        self._settle()
        _HISTORY.__set__(self, value)

    @property
    def full_history(self) -> list[Message] | None:
        self._settle()
        value: list[Message] | None = _FULL_HISTORY.__get__(self)
        return value

    @full_history.setter
    def full_history(self, value: list[Message] | None) -> None:
        self._settle()
        _FULL_HISTORY.__set__(self, value)
