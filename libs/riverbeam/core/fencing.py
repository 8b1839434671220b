"""Fencing tokens: which run a side effect is made for, and the lease epoch it holds.

A run's lease has an epoch: 1 when the run begins, bumped by every takeover (the reaper, a
recovering replica). The pipeline sets the run's fence for everything the run's agent does
(`fenced`), and clients of services that act for a run (the sandbox) send `current_fence()`
with each call, so the service can refuse a holder whose epoch is stale. See
docs/failure-model.md.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["Fence", "current_fence", "fenced"]


@dataclass(frozen=True, slots=True)
class Fence:
    """The run a call acts for and the lease epoch its caller holds (>= 1)."""

    run_id: str
    epoch: int

    def __post_init__(self) -> None:
        if not self.run_id or len(self.run_id) > 128:
            raise RiverbeamError(ErrorCode.FENCE_INVALID, "fence needs a run_id")
        if isinstance(self.epoch, bool) or not isinstance(self.epoch, int) or self.epoch < 1:
            raise RiverbeamError(
                ErrorCode.FENCE_INVALID, "fence epoch must be an integer >= 1", run_id=self.run_id
            )


_CURRENT: contextvars.ContextVar[Fence | None] = contextvars.ContextVar(
    "riverbeam_fence", default=None
)


def current_fence() -> Fence | None:
    """The fence of the run this code acts for, or None outside a run."""
    return _CURRENT.get()


@contextlib.contextmanager
def fenced(fence: Fence | None) -> Iterator[None]:
    """Act for `fence` inside the block (and in the tasks started from it)."""
    token = _CURRENT.set(fence)
    try:
        yield
    finally:
        _CURRENT.reset(token)
