"""The history a runner already holds, per session, so a turn is not sent it again.

Every turn the begin-run step brings back the session's newest messages (up to 200) before
the run. Stored messages never change and sequence numbers are dense, so a runner that kept
the window it received last turn needs only the messages numbered after the last one it
holds. `StoreClient.begin_run` sends that seq and that message's id (BeginRun's
history_after / history_after_id); the store leaves the held messages out only when its
message at that seq has that id (`BeginRunResult.history_after` says it did), so a session
deleted and made again under the same id (new message ids) gets its whole window.

What would still be wrong is checked here, and the window is then not used:
- the store honoured the seq but the session's `created_at` differs from the one held (a
  recreated session whose message at that seq has a reused id): the caller fetches the
  window again;
- a larger `history_limit` than the held window was cut to (older messages missing): the
  seq is not sent at all.

Bounded: at most `max_messages` messages over all sessions, least recently used session out.
The held models are never handed out: callers get copies (`HeldWindow.copies`), so an agent
that changes its history changes nothing held here. Each held message has its copy maker
(`copy_maker`), made once when the message is first held and kept with it while it stays in
the window: a turn's copies of its 200 messages are built without walking the messages again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import is_

from riverbeam.types import Message
from riverbeam.types._copying import copy_maker

__all__ = ["HeldWindow", "SessionHistory"]

DEFAULT_MAX_MESSAGES = 50_000


@dataclass(frozen=True, slots=True)
class HeldWindow:
    """One session's held window: messages in seq order, dense, ending at `seq`."""

    created_at: datetime | None
    limit: int
    messages: tuple[Message, ...]
    # One per message: a new deep copy of it at every call (the messages never change).
    makers: tuple[Callable[[], Message], ...]

    @property
    def seq(self) -> int:
        return self.messages[-1].seq if self.messages else 0

    @property
    def message_id(self) -> str | None:
        return self.messages[-1].message_id if self.messages else None

    def copies(self) -> list[Message]:
        """The held messages, copied: changing them changes nothing held."""
        return [make() for make in self.makers]

    def covers(self, limit: int) -> bool:
        """Whether this window holds every message a `limit` window may need below its end."""
        return bool(self.messages) and (limit <= self.limit or self.messages[0].seq == 1)


class SessionHistory:
    """The last history window received for each session (bounded, LRU by session)."""

    def __init__(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> None:
        self._max = max(0, max_messages)
        self._windows: OrderedDict[str, HeldWindow] = OrderedDict()
        self._count = 0

    def __len__(self) -> int:
        return len(self._windows)

    @property
    def message_count(self) -> int:
        return self._count

    def anchor(self, session_id: str, limit: int) -> HeldWindow | None:
        """The held window to name in a begin-run asking for `limit` messages, if usable."""
        held = self._windows.get(session_id)
        if held is None or limit <= 0 or not held.covers(limit):
            return None
        self._windows.move_to_end(session_id)
        return held

    def window(
        self,
        held: HeldWindow | None,
        after: int,
        created_at: datetime | None,
        delta: Sequence[Message],
        limit: int,
    ) -> list[Message] | None:
        """The whole window from what the store sent: `delta` alone when it sent the whole
        window (after == 0), the held messages and then `delta` when it honoured `held`;
        None when what it sent cannot be joined to what is held (fetch the window again)."""
        if after == 0:
            return list(delta[-limit:]) if limit > 0 else []
        if held is None or after != held.seq or created_at != held.created_at:
            return None
        if delta and delta[0].seq != after + 1:
            return None
        joined = [*held.messages, *delta]
        return joined[-limit:] if limit > 0 else []

    def keep(
        self, session_id: str, created_at: datetime | None, limit: int, window: Sequence[Message]
    ) -> HeldWindow | None:
        """Remember `window` (the session's newest `limit` messages, seq order) as held.

        The messages of `window` are held as they are: the caller hands out none of them
        (only the returned window's copies). None when nothing is held (a bound of 0, an
        empty window, or one larger than the whole bound).
        """
        if self._max == 0 or limit <= 0:
            return None
        old = self._windows.pop(session_id, None)
        if old is not None:
            self._count -= len(old.messages)
        if not window or len(window) > self._max:
            return None
        held = HeldWindow(created_at, limit, tuple(window), _makers(old, window))
        self._windows[session_id] = held
        self._count += len(window)
        while self._count > self._max:
            _, gone = self._windows.popitem(last=False)
            self._count -= len(gone.messages)
        return held

    def forget(self, session_id: str) -> None:
        old = self._windows.pop(session_id, None)
        if old is not None:
            self._count -= len(old.messages)


def _makers(old: HeldWindow | None, window: Sequence[Message]) -> tuple[Callable[[], Message], ...]:
    """The makers of `window`'s messages: a message still held from `old` (the same object,
    where its seq puts it) keeps its maker, the others (the rest the store sent) get one."""
    start = count = 0
    if old is not None and old.messages and window:
        start = window[0].seq - old.messages[0].seq
        count = min(len(window), len(old.messages) - start) if start >= 0 else 0
        if count > 0 and not all(map(is_, window[:count], old.messages[start : start + count])):
            count = 0
    reused = old.makers[start : start + count] if old is not None and count > 0 else ()
    return reused + tuple(copy_maker(m) for m in window[count:])
