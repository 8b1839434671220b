"""The runs a replica holds, and how a cancellation reaches them."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from riverbeam.runtime._lease_keeper import LeaseKeeper

__all__ = ["LiveRun", "raise_if_cancel_was_swallowed"]


class LiveRun:
    """A run this replica holds: registered by prepare(), its task set once execute() starts."""

    __slots__ = ("cancel_reason", "cancel_requested", "lease", "task")

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        # Renews the run's lease from when execute() starts until the finish step is written.
        self.lease: LeaseKeeper | None = None
        self.cancel_reason: str | None = None
        self.cancel_requested = False

    def cancel(self, reason: str | None) -> bool:
        """Stop the run (or, before it starts, make it start cancelled). False once it ended."""
        if self.task is not None and self.task.done():
            return False
        if reason is not None or not self.cancel_requested:
            self.cancel_reason = reason
        self.cancel_requested = True
        if self.task is not None:
            self.task.cancel()
        return True


def raise_if_cancel_was_swallowed() -> None:
    """Deliver a cancellation that an await consumed without raising it.

    On Python 3.11, asyncio.wait_for (which nats-py uses to wait for a publish acknowledgement)
    returns the result instead of raising when the awaited future completes in the same loop
    iteration as the cancel; the task then carries on with its cancel request pending. A run
    cancelled while it publishes a frame would go on waiting in its agent forever.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling() > 0:
        raise asyncio.CancelledError
