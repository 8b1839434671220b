"""Counting the Python calls riverbeam.types._copying makes: what a copy costs, without a clock."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["copying_calls"]


def copying_calls(make: Callable[[], Any], times: int = 1) -> int:
    """Python function calls of _copying.py made by `times` calls of `make`."""
    calls = 0

    def profile(frame: Any, event: str, _: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.endswith("_copying.py"):
            calls += 1

    sys.setprofile(profile)
    try:
        for _ in range(times):
            make()
    finally:
        sys.setprofile(None)
    return calls
