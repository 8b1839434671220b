"""The cheaper paths of a log line write what logging's own did: same keys, same bytes, same ids.

- JsonFormatter decides once per attribute name what a line does with it (left out, written,
  redacted): the keys and values are those of the rule, in the record's order.
- configure_logging's handler flushes without taking its lock again: the stream sees the same
  writes and flushes as under logging.StreamHandler, and a stream without flush is written.
- stamp_log_context skips asking for the current span when OpenTelemetry's context is empty,
  and stamps trace_id/span_id when a valid span is current.
"""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from riverbeam.server import JsonFormatter, LogContextFilter, configure_logging
from riverbeam.server._logging import _STANDARD, TextFormatter, _LineHandler
from riverbeam.telemetry import log_context
from riverbeam.telemetry._log_context import stamp_log_context

_SECRETS = ("token", "authorization", "api_key", "password", "secret")
_NAMES = st.sampled_from(
    [
        "run_id",
        "status",
        "_private",
        "__dunder",
        "Token",
        "my_API_KEY",
        "passwordless",
        "secretary",
        "Authorization",
        "model",
        "ts",
        "level",
        "x",
        "tokenizer",
        "ñame",
    ]
) | st.text(min_size=1, max_size=8).filter(lambda k: k not in _STANDARD and k != "message")


def _expected(record: logging.LogRecord, base: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in record.__dict__.items():
        if key in _STANDARD or key.startswith("_"):
            continue
        out[key] = "[redacted]" if any(s in key.lower() for s in _SECRETS) else value
    return out


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_NAMES, st.text(max_size=5) | st.integers() | st.none(), max_size=8))
def test_json_lines_keep_write_and_redact_by_the_rule(extra: dict[str, Any]) -> None:
    record = logging.makeLogRecord(
        {"name": "riverbeam.t", "msg": "m %s", "args": ("a",), "levelname": "INFO"}
    )
    record.__dict__.update(extra)
    line = json.loads(JsonFormatter().format(record))
    base = {k: line[k] for k in ("ts", "level", "logger", "msg")}
    assert base["msg"] == "m a"  # "ts", "level" and "logger" may be an extra's
    expected = json.loads(json.dumps(_expected(record, base), default=str))
    assert list(line.items()) == list(expected.items())


class _Recorder(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []

    def write(self, text: str) -> int:
        self.calls.append(("write", text))
        return super().write(text)

    def flush(self) -> None:
        self.calls.append(("flush", ""))


class _NoFlush:
    def __init__(self) -> None:
        self.written: list[str] = []

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)


def _records() -> list[logging.LogRecord]:
    plain = logging.makeLogRecord({"name": "n", "msg": "plain", "levelno": 20})
    args = logging.makeLogRecord({"name": "n", "msg": "%s and %d", "args": ("x", 3)})
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        failed = logging.makeLogRecord({"name": "n", "msg": "failed", "exc_info": sys.exc_info()})
    return [plain, args, failed]


@pytest.mark.parametrize("formatter", [TextFormatter, JsonFormatter])
def test_the_handler_writes_and_flushes_as_stream_handler(formatter: type[Any]) -> None:
    ours, theirs = _Recorder(), _Recorder()
    mine, reference = _LineHandler(ours), logging.StreamHandler(theirs)
    for handler in (mine, reference):
        handler.setFormatter(formatter())
    for record in _records():
        record.created = 1_700_000_000.25
        mine.handle(logging.makeLogRecord(record.__dict__))
        reference.handle(logging.makeLogRecord(record.__dict__))
    assert ours.calls == theirs.calls
    assert [c for c, _ in ours.calls] == ["write", "flush"] * 3


def test_a_stream_without_flush_is_written() -> None:
    stream = _NoFlush()
    handler = _LineHandler(stream)  # type: ignore[arg-type]
    handler.handle(logging.makeLogRecord({"msg": "no flush"}))
    assert stream.written == ["no flush\n"]


def test_configure_logging_installs_the_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("logThreads", "logProcesses", "logMultiprocessing", "_srcfile"):
        monkeypatch.setattr(logging, name, getattr(logging, name))
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    configure_logging(level="INFO", fmt="text")
    (handler,) = root.handlers
    assert type(handler) is _LineHandler
    assert any(isinstance(f, LogContextFilter) for f in handler.filters)


def test_the_bound_ids_are_stamped_with_an_empty_otel_context() -> None:
    assert not otel_context.get_current()
    fields: dict[str, object] = {"run_id": "own"}
    with log_context(run_id="bound", session_id="s-1"):
        stamp_log_context(fields)
    assert fields == {"run_id": "own", "session_id": "s-1"}


def test_a_valid_current_span_adds_its_ids() -> None:
    span = NonRecordingSpan(
        SpanContext(trace_id=0x1234, span_id=0x56, is_remote=False, trace_flags=TraceFlags(1))
    )
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        fields: dict[str, object] = {}
        with log_context(request_id="r-1"):
            stamp_log_context(fields)
    finally:
        otel_context.detach(token)
    assert fields == {
        "request_id": "r-1",
        "trace_id": format(0x1234, "032x"),
        "span_id": format(0x56, "016x"),
    }


def test_an_otel_context_without_a_span_stamps_the_bound_ids() -> None:
    key = otel_context.create_key("h-runner4-test")
    token = otel_context.attach(otel_context.set_value(key, "v"))
    try:
        fields: dict[str, object] = {}
        with log_context(request_id="r-1"):
            stamp_log_context(fields)
    finally:
        otel_context.detach(token)
    assert fields == {"request_id": "r-1"}
