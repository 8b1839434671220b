"""The event loop a service runs on: uvloop when it is installed (and asked for), else asyncio's.

`RIVERBEAM_EVENT_LOOP` picks it: `auto` (default) uses uvloop if it can be imported and the
standard loop otherwise, `uvloop` requires it, `asyncio` never uses it. Nothing else changes:
the service code is the same on both loops.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

__all__ = ["EventLoopChoice", "loop_factory", "run_on_loop"]

EventLoopChoice = Literal["auto", "asyncio", "uvloop"]
_T = TypeVar("_T")


def loop_factory(
    choice: EventLoopChoice = "auto",
) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's `new_event_loop` for `uvloop` (ImportError if missing) and for `auto` when it is
    installed; None (asyncio's default loop) otherwise."""
    if choice == "asyncio":
        return None
    try:
        # Optional, so not imported statically (mypy checks without it installed).
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        if choice == "uvloop":
            raise
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run_on_loop(main: Coroutine[Any, Any, _T], choice: EventLoopChoice = "auto") -> _T:
    """asyncio.run(main), on the loop `choice` names."""
    factory = loop_factory(choice)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
