"""Records lent instead of copied, for a caller that only serialises them.

InMemoryStore copies every record it returns, so that no caller holds what is stored. The store
service converts a step's records to protobuf at once and drops them: for it the copies are
pure cost. Inside `records_lent()` InMemoryStore's begin and finish steps return the stored
records themselves. Only for code that reads them, synchronously, before its next await and
never keeps or changes them (the StoreService servicer). PgBeamStore builds fresh records
anyway and ignores it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["handed_out", "lending", "records_lent"]

T = TypeVar("T")

_LENT: ContextVar[bool] = ContextVar("riverbeam_store_records_lent", default=False)


@contextlib.contextmanager
def records_lent() -> Iterator[None]:
    """Within this block (this task's context only), steps may return stored records."""
    token = _LENT.set(True)
    try:
        yield
    finally:
        _LENT.reset(token)


def lending() -> bool:
    """Whether the current context accepts lent records."""
    return _LENT.get()


def handed_out(copy: Callable[[T], T]) -> Callable[[T], T]:
    """What a step hands its caller a stored record through: `copy`, or inside
    `records_lent` the record itself."""
    return _itself if _LENT.get() else copy


def _itself(record: T) -> T:
    return record
