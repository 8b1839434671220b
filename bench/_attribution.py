"""Where the time of an operation goes: wrap a few functions with timers for one pass.

Used outside the timed loops (the wrappers cost a little), to split a figure into conversion,
json_format and the rest. Nothing in the library is changed: the wrappers are set on the
classes and modules for the duration of a `with` block and removed afterwards.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format

from riverbeam.types import WireModel

__all__ = ["Tally", "conversion_tally"]


@dataclass(slots=True)
class Tally:
    """Calls and seconds per wrapped function."""

    calls: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, seconds: float) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds


def _timed(tally: Tally, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            tally.add(name, time.perf_counter() - start)

    return wrapper


@contextlib.contextmanager
def conversion_tally() -> Iterator[Tally]:
    """Time WireModel.to_proto / from_proto and json_format.ParseDict / MessageToDict.

    The json_format figures include the calls made inside to_proto/from_proto and the ones the
    store client and servicer make for Struct fields.
    """
    tally = Tally()
    to_proto = WireModel.__dict__["to_proto"]
    from_proto = WireModel.__dict__["from_proto"]
    parse_dict = json_format.ParseDict
    to_dict = json_format.MessageToDict
    WireModel.to_proto = _timed(tally, "to_proto", to_proto)  # type: ignore[method-assign]
    WireModel.from_proto = classmethod(  # type: ignore[method-assign,assignment]
        _timed(tally, "from_proto", from_proto.__func__)
    )
    json_format.ParseDict = _timed(tally, "json_format.ParseDict", parse_dict)
    json_format.MessageToDict = _timed(tally, "json_format.MessageToDict", to_dict)
    try:
        yield tally
    finally:
        WireModel.to_proto = to_proto  # type: ignore[method-assign]
        WireModel.from_proto = from_proto  # type: ignore[method-assign]
        json_format.ParseDict = parse_dict
        json_format.MessageToDict = to_dict
