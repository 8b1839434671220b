"""Logging: human text by default, one JSON object a line with RIVERBEAM_LOG_FORMAT=json.

A service's log lines are written by a thread of their own: a log call on the event loop only
hands its record over, so a slow or stalled stderr (a full pipe to the log collector) never
holds the loop, and the formatting and the write are not on the path of the call that logged.
"""

from __future__ import annotations

import atexit
import copy
import json
import logging
import logging.handlers
import queue
import sys
from datetime import UTC, datetime
from typing import IO, Any

from riverbeam.telemetry import current_log_context

__all__ = ["JsonFormatter", "LogContextFilter", "configure_logging", "flush_logging"]

# Records waiting for the writer thread; beyond this many the newest are dropped and counted.
LOG_BACKLOG = 10_000

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}
_SECRET_KEYS = ("token", "authorization", "api_key", "password", "secret")


class LogContextFilter(logging.Filter):
    """Stamps the bound correlation ids (riverbeam.telemetry.log_context) on each record as it
    is emitted, so formatting later, or elsewhere, still sees them."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in current_log_context().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line; `extra` fields (request_id, session_id, run_id, ...) kept as keys."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key in _STANDARD or key.startswith("_"):
                continue
            if any(s in key.lower() for s in _SECRET_KEYS):
                value = "[redacted]"
            out[key] = value
        # A record handed to the writer thread carries its traceback as text (exc_text).
        exc = self.formatException(record.exc_info) if record.exc_info else record.exc_text
        if exc:
            out["exc"] = exc
        return json.dumps(out, default=str)


class _HandOver(logging.handlers.QueueHandler):
    """Hands each record to the writer thread, prepared where it was logged: the message with
    its arguments merged, the traceback rendered (frames are not kept alive for the writer),
    the bound correlation ids stamped (by the LogContextFilter on this handler). A full
    backlog drops the record and counts it; the next record that fits says how many went."""

    def __init__(self, backlog: queue.Queue[logging.LogRecord]) -> None:
        super().__init__(backlog)
        self._exc = logging.Formatter()
        self.dropped = 0

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        record = copy.copy(record)
        record.msg = record.getMessage()
        record.args = None
        if record.exc_info:
            record.exc_text = record.exc_text or self._exc.formatException(record.exc_info)
            record.exc_info = None
        return record

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            if self.dropped:
                note = logging.LogRecord(
                    "riverbeam.logging",
                    logging.WARNING,
                    __file__,
                    0,
                    "%d log records dropped: the log writer fell behind",
                    (self.dropped,),
                    None,
                )
                self.queue.put_nowait(self.prepare(note))
                self.dropped = 0
            self.queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1


class _Writer(logging.handlers.QueueListener):
    """The writer thread; stopping it waits a bounded time, for a writer stuck on its stream."""

    def __init__(self, backlog: queue.Queue[logging.LogRecord], output: logging.Handler) -> None:
        super().__init__(backlog, output)
        self._backlog = backlog

    def stop_within(self, timeout_s: float) -> None:
        thread = self._thread
        if thread is None:
            return
        try:
            # What QueueListener's thread stops at (its `_sentinel`, None).
            self._backlog.put(getattr(self, "_sentinel", None), timeout=timeout_s)  # type: ignore[arg-type]
        except queue.Full:
            return
        thread.join(timeout_s)
        self._thread = None


# How long exiting waits for the writer to write what was logged before it.
_FLUSH_TIMEOUT_S = 5.0
_writer: _Writer | None = None


def flush_logging() -> None:
    """Write every record handed over so far and stop the writer thread (at exit); waits at
    most a few seconds for a stream that does not take them."""
    global _writer
    writer, _writer = _writer, None
    if writer is not None:
        writer.stop_within(_FLUSH_TIMEOUT_S)


def configure_logging(
    *, level: str = "INFO", fmt: str = "text", stream: IO[str] | None = None
) -> None:
    """Log to `stream` (stderr) from a writer thread, in `fmt` ("text" or "json")."""
    global _writer
    output = logging.StreamHandler(sys.stderr if stream is None else stream)
    if fmt == "json":
        output.setFormatter(JsonFormatter())
    else:
        output.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    backlog: queue.Queue[logging.LogRecord] = queue.Queue(LOG_BACKLOG)
    hand_over = _HandOver(backlog)
    hand_over.addFilter(LogContextFilter())
    writer = _Writer(backlog, output)
    writer.start()
    root = logging.getLogger()
    root.handlers[:] = [hand_over]
    root.setLevel(level.upper())
    # The previous writer (configured again) writes what it was handed, then stops.
    previous, _writer = _writer, writer
    if previous is not None:
        previous.stop_within(_FLUSH_TIMEOUT_S)


# Before logging's own shutdown (atexit runs the later registration first).
atexit.register(flush_logging)
