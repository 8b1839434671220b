"""A begin-run result whose history is lent, not copied (StoreClient.begin_run_lending).

A runner's StoreClient holds each session's history window (_session_history.py) and hands
out copies of it, so that an agent changing its history changes nothing held. Copying the
window costs about as much as the rest of a turn when the window is long, and an agent that
never reads its history (the echo agent, a proxy to an outside service) has no use for the
copies. A lent result carries the held messages themselves in `history`, to be read and
never changed, and `copy_history`, which makes the copies: the pipeline calls it when the
agent first reads its history (runtime/_deferred_history.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from riverbeam.store._types import BeginRunResult
from riverbeam.types import Message

__all__ = ["LentBeginRun"]


@dataclass(frozen=True, slots=True)
class LentBeginRun(BeginRunResult):
    """BeginRunResult whose `history` messages are lent: read them, never change them.

    `copy_history()` returns a new list of copies of them (equal to them, sharing no mutable
    value with them or with an earlier call's copies), as begin_run's `history` would be.
    """

    copy_history: Callable[[], list[Message]] = field(kw_only=True)
