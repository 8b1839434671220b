"""Records lent instead of copied, and records given instead of copied, for the store service.

InMemoryStore copies every record it returns, so that no caller holds what is stored, and
every record it is handed, so that no caller can change what is stored afterwards. The store
service converts a step's records to protobuf at once and drops them, and the records it hands
a step are fresh ones it built from the request and never touches again: for it both copies
are pure cost. Inside `records_lent()` InMemoryStore's begin and finish steps return the
stored records themselves; with `given=True` they also keep the caller's records (messages,
actions, responses, usage, results, ledger entries) as they are. Only for code that reads
what it gets, synchronously, before its next await, never keeps or changes it, and holds no
reference to what it passed in (the StoreService servicer). PgBeamStore builds fresh records
anyway and ignores both.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from types import TracebackType
from typing import TypeVar

__all__ = ["handed_out", "kept", "lending", "records_lent"]

T = TypeVar("T")

_LENT = 1  # returned records may be the stored ones
_GIVEN = 2  # argument records may be stored as they are

_MODE: ContextVar[int] = ContextVar("riverbeam_store_records_lent", default=0)


def records_lent(*, given: bool = False) -> _Lent:
    """Within this block (this task's context only), steps may return stored records and,
    with `given`, store the caller's records without copying them."""
    return _Lent(_LENT | (_GIVEN if given else 0))


class _Lent:
    """The block of records_lent: a plain class rather than a contextlib generator (~1 us to
    enter and leave instead of ~4, on each of the two steps of every invoke)."""

    __slots__ = ("_mode", "_token")

    def __init__(self, mode: int) -> None:
        self._mode = mode
        self._token: Token[int] | None = None

    def __enter__(self) -> None:
        self._token = _MODE.set(self._mode)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _MODE.reset(self._token)
            self._token = None


def lending() -> bool:
    """Whether the current context accepts lent records."""
    return bool(_MODE.get() & _LENT)


def handed_out(copy: Callable[[T], T]) -> Callable[[T], T]:
    """What a step hands its caller a stored record through: `copy`, or inside
    `records_lent` the record itself."""
    return _itself if _MODE.get() & _LENT else copy


def kept(copy: Callable[[T], T]) -> Callable[[T], T]:
    """What a step stores a caller's record through: `copy`, or inside
    `records_lent(given=True)` the record itself."""
    return _itself if _MODE.get() & _GIVEN else copy


def _itself(record: T) -> T:
    return record
