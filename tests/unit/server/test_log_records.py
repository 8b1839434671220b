"""What configure_logging's JSON lines carry, and the bound ids added where a record has none.

That its records look up no thread, process or caller is pinned, for both formats, in
test_json_log_lines.py."""

from __future__ import annotations

import io
import json
import logging

import pytest

from riverbeam.server import configure_logging
from riverbeam.server._logging import LogContextFilter
from riverbeam.telemetry import log_context


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """configure_logging's root handler, writing into a buffer; logging's switches restored."""
    for name in ("logThreads", "logProcesses", "logMultiprocessing", "_srcfile"):
        monkeypatch.setattr(logging, name, getattr(logging, name))
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    configure_logging(level="INFO", fmt="json")
    out = io.StringIO()
    handler = root.handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(out)
    return out


def test_a_json_line_keeps_its_fields(configured: io.StringIO) -> None:
    log = logging.getLogger("riverbeam.pipeline")
    with log_context(request_id="r-1", run_id="x-1"):
        log.info("run_finished", extra={"run_id": "x-2", "status": "completed", "model": None})
    line = json.loads(configured.getvalue())
    assert list(line) == ["ts", "level", "logger", "msg", "run_id", "status", "model", "request_id"]
    assert line["run_id"] == "x-2"  # the record's own value, not the bound one
    assert line["request_id"] == "r-1" and line["msg"] == "run_finished"


def test_the_filter_adds_only_what_a_record_lacks() -> None:
    record = logging.makeLogRecord({"msg": "m", "run_id": "own"})
    with log_context(run_id="bound", session_id="s-1"):
        assert LogContextFilter().filter(record)
    assert record.run_id == "own" and record.session_id == "s-1"
