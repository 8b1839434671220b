"""Logging: human text by default, one JSON object a line with RIVERBEAM_LOG_FORMAT=json."""

from __future__ import annotations

import json
import logging
import math
import sys
import time
from datetime import UTC, datetime
from typing import Any

from riverbeam.telemetry._log_context import stamp_log_context

__all__ = ["JsonFormatter", "LogContextFilter", "TextFormatter", "configure_logging"]

_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
}
_SECRET_KEYS = ("token", "authorization", "api_key", "password", "secret")
# One encoder for every line: json.dumps with `default` builds a new one on each call.
_encode = json.JSONEncoder(default=str).encode
# What a JSON line does with a record's attribute, by its name: the same few names come on
# every line, so each is decided once (one dict lookup a key, instead of a set lookup, a
# startswith and a call).
_LEFT_OUT, _WRITTEN, _REDACTED = 0, 1, 2
_key_use: dict[str, int] = {}
_KEYS_HELD = 4096


def _use_of(key: str) -> int:
    """Whether a record attribute is left out (a standard one, or private), written, or
    written as "[redacted]" (its name names a secret)."""
    if key in _STANDARD or key.startswith("_"):
        use = _LEFT_OUT
    else:
        lowered = key.lower()
        use = _REDACTED if any(s in lowered for s in _SECRET_KEYS) else _WRITTEN
    if len(_key_use) < _KEYS_HELD:
        _key_use[key] = use
    return use


class LogContextFilter(logging.Filter):
    """Stamps the bound correlation ids (riverbeam.telemetry.log_context) on each record as it
    is emitted, so formatting later, or elsewhere, still sees them."""

    def filter(self, record: logging.LogRecord) -> bool:
        # A LogRecord's attributes are all its own (no class ones): set the ids not set.
        stamp_log_context(record.__dict__)
        return True


class _LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """logging.StreamHandler, each line flushed under the lock `handle` already holds.

    StreamHandler.emit flushes through StreamHandler.flush, which takes the handler's lock a
    second time; the stream gets the same writes and flushes in the same order.
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = self.format(record)
            stream = self.stream
            stream.write(msg + self.terminator)
            # StreamHandler.flush's test, in the same place.
            if stream and hasattr(stream, "flush"):
                stream.flush()
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)


class JsonFormatter(logging.Formatter):
    """One JSON object a line; `extra` fields (request_id, session_id, run_id, ...) kept as keys.

    `ts` is `datetime.fromtimestamp(record.created, UTC).isoformat()`, its date and time part
    made once a second (isoformat costs ~5 us a line): the same text.
    """

    def __init__(self) -> None:
        super().__init__()
        # (second, its isoformat date and time), replaced whole so threads never mix the two.
        self._second: tuple[int, str] = (-1, "")

    def _stamp(self, created: float) -> str:
        # fromtimestamp's rounding: the fraction to the nearest microsecond, half to even
        # (Python's round of a float), a carry into the next second.
        fraction, whole = math.modf(created)
        micro = round(fraction * 1e6)
        second = int(whole)
        if micro >= 1_000_000:
            micro -= 1_000_000
            second += 1
        elif micro < 0:
            micro += 1_000_000
            second -= 1
        held = self._second
        if held[0] != second:
            held = (second, datetime.fromtimestamp(second, UTC).isoformat()[:-6])
            self._second = held
        if micro:
            return f"{held[1]}.{micro:06d}+00:00"
        return f"{held[1]}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": self._stamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        uses = _key_use
        for key, value in record.__dict__.items():
            use = uses.get(key)
            if use is None:
                use = _use_of(key)
            if use:
                out[key] = value if use == _WRITTEN else "[redacted]"
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return _encode(out)


class TextFormatter(logging.Formatter):
    """The human format, `%(asctime)s %(levelname)s %(name)s: %(message)s`.

    The stamp's date and time part is made once a second, not on every line (logging's own
    formatTime runs localtime and strftime each time); the lines are the same.
    """

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        # (second, its formatted date and time), replaced whole so threads never mix the two.
        self._second: tuple[int, str] = (-1, "")

    def format(self, record: logging.LogRecord) -> str:
        # logging.Formatter.format with the format string spelled out: the same attributes set
        # on the record (message, asctime, exc_text) and the same line, without the style
        # object's calls and the `%` over the record's __dict__.
        record.message = record.getMessage()
        record.asctime = self.formatTime(record, self.datefmt)
        s = f"{record.asctime!s} {record.levelname!s} {record.name!s}: {record.message!s}"
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            if s[-1:] != "\n":
                s = s + "\n"
            s = s + record.exc_text
        if record.stack_info:
            if s[-1:] != "\n":
                s = s + "\n"
            s = s + self.formatStack(record.stack_info)
        return s

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        msec_format = self.default_msec_format
        if datefmt is not None or msec_format is None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        held = self._second
        if held[0] != second:
            held = (second, time.strftime(self.default_time_format, self.converter(record.created)))
            self._second = held
        return msec_format % (held[1], record.msecs)


def configure_logging(*, level: str = "INFO", fmt: str = "text") -> None:
    """Log to stderr in `fmt` ("text" or "json") from `level` up, for the whole process.

    Records are made without what neither format writes: the caller's file, line and
    function (logging's findCaller walks the stack for each record) and the thread and
    process ids and names (the switches of logging's optimisation notes). A line's text is
    the same; `pathname`, `lineno`, `funcName`, `thread` and `process` of a record are left
    at logging's "unknown" values.
    """
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    handler = _LineHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter())
    handler.addFilter(LogContextFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
