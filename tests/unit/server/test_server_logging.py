"""A service's log lines are written by a thread of their own: a log call never waits on stderr."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
from collections.abc import Iterator

import pytest

from riverbeam.server import _logging
from riverbeam.server._logging import configure_logging, flush_logging
from riverbeam.telemetry import log_context


class _StalledStream(io.StringIO):
    """stderr as a full pipe: every write waits until `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.writes_started = 0

    def write(self, text: str) -> int:
        self.writes_started += 1
        self.release.wait(10)
        return super().write(text)


@pytest.fixture
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    flush_logging()
    root.handlers[:] = handlers
    root.setLevel(level)


def _lines(stream: io.StringIO) -> list[str]:
    return [line for line in stream.getvalue().splitlines() if line]


@pytest.mark.usefixtures("restore_root")
async def test_a_log_call_on_the_loop_returns_while_stderr_does_not_take_the_line() -> None:
    stream = _StalledStream()
    configure_logging(fmt="json", stream=stream)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        for _ in range(5):
            ticks += 1
            await asyncio.sleep(0)

    log = logging.getLogger("riverbeam.test")
    log.info("first")
    log.info("second %s", "line", extra={"request_id": "r-1"})
    await tick()
    # The loop went on while the writer is stuck on the first line.
    assert ticks == 5
    assert stream.getvalue() == ""
    stream.release.set()
    flush_logging()
    lines = [json.loads(line) for line in _lines(stream)]
    assert [line["msg"] for line in lines] == ["first", "second line"]
    assert lines[1]["request_id"] == "r-1"


@pytest.mark.usefixtures("restore_root")
def test_the_ids_bound_where_a_record_was_logged_reach_the_writer() -> None:
    stream = io.StringIO()
    configure_logging(fmt="json", stream=stream)
    with log_context(request_id="r-9", run_id="run-9"):
        logging.getLogger("riverbeam.test").info("bound")
    flush_logging()
    (line,) = [json.loads(line) for line in _lines(stream)]
    assert (line["request_id"], line["run_id"]) == ("r-9", "run-9")


@pytest.mark.usefixtures("restore_root")
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_logged_exception_keeps_its_traceback(fmt: str) -> None:
    stream = io.StringIO()
    configure_logging(fmt=fmt, stream=stream)
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("riverbeam.test").exception("failed")
    flush_logging()
    text = stream.getvalue()
    if fmt == "json":
        (line,) = [json.loads(line) for line in _lines(stream)]
        assert line["msg"] == "failed"
        assert "ValueError: boom" in line["exc"]
    else:
        assert "failed" in text
        assert "Traceback" in text
        assert "ValueError: boom" in text


@pytest.mark.usefixtures("restore_root")
def test_a_full_backlog_drops_records_and_says_how_many(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_logging, "LOG_BACKLOG", 3)
    stream = _StalledStream()
    configure_logging(fmt="json", stream=stream)
    log = logging.getLogger("riverbeam.test")
    log.info("0")
    # The writer holds record 0 (stuck in write); 1-3 fill the backlog; 4-6 are dropped.
    while stream.writes_started == 0:
        threading.Event().wait(0.001)
    for i in range(1, 7):
        log.info(str(i))
    stream.release.set()
    flush_logging()
    before = [json.loads(line)["msg"] for line in _lines(stream)]
    assert before == ["0", "1", "2", "3"]
    stream2 = io.StringIO()
    configure_logging(fmt="json", stream=stream2)
    log.info("after")
    flush_logging()
    # A newly configured writer starts with nothing dropped.
    assert [json.loads(line)["msg"] for line in _lines(stream2)] == ["after"]


@pytest.mark.usefixtures("restore_root")
def test_dropped_records_are_counted_in_a_line_before_the_next_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_logging, "LOG_BACKLOG", 2)
    stream = _StalledStream()
    configure_logging(fmt="json", stream=stream)
    log = logging.getLogger("riverbeam.test")
    log.info("0")
    while stream.writes_started == 0:
        threading.Event().wait(0.001)
    for i in range(1, 6):
        log.info(str(i))  # 1, 2 queued; 3, 4, 5 dropped
    stream.release.set()
    # Wait until the writer took 1 and 2, then log again: the drop note goes first.
    while stream.getvalue().count("\n") < 3:
        threading.Event().wait(0.001)
    log.info("6")
    flush_logging()
    msgs = [json.loads(line)["msg"] for line in _lines(stream)]
    assert msgs == ["0", "1", "2", "3 log records dropped: the log writer fell behind", "6"]


@pytest.mark.usefixtures("restore_root")
def test_configuring_again_writes_what_the_previous_writer_was_handed() -> None:
    first, second = io.StringIO(), io.StringIO()
    configure_logging(fmt="json", stream=first)
    logging.getLogger("riverbeam.test").info("to the first")
    configure_logging(fmt="json", stream=second)
    logging.getLogger("riverbeam.test").info("to the second")
    flush_logging()
    assert [json.loads(line)["msg"] for line in _lines(first)] == ["to the first"]
    assert [json.loads(line)["msg"] for line in _lines(second)] == ["to the second"]
