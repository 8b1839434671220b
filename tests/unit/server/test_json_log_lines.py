"""The JSON log line, byte for byte: operators' log pipelines parse these lines."""

from __future__ import annotations

import datetime
import json
import logging
import random
import sys
from collections.abc import Iterator

import pytest

from riverbeam.server import JsonFormatter, configure_logging
from riverbeam.server._logging import TextFormatter


def _record(
    msg: str = "invoke %s", args: tuple[object, ...] = ("a",), **extra: object
) -> logging.LogRecord:
    record = logging.getLogger("riverbeam.gateway").makeRecord(
        "riverbeam.gateway", logging.INFO, "x.py", 1, msg, args, None, extra=extra
    )
    record.created = 1764637489.471534
    return record


def test_a_line_holds_the_standard_fields_then_the_extra_ones_in_order() -> None:
    record = _record(request_id="r-1", session_id="s-1", model=None, stripped=["confirm"])

    assert JsonFormatter().format(record) == (
        '{"ts": "2025-12-02T01:04:49.471534+00:00", "level": "info", '
        '"logger": "riverbeam.gateway", "msg": "invoke a", "request_id": "r-1", '
        '"session_id": "s-1", "model": null, "stripped": ["confirm"]}'
    )


def test_secrets_are_redacted_private_keys_left_out_and_other_values_written_as_text() -> None:
    formatter = JsonFormatter()
    record = _record(
        api_key="k",
        Authorization="Bearer x",
        my_token=1,
        _private=2,
        when=datetime.date(2020, 1, 2),
        text="é\u2028",
    )

    line = formatter.format(record)

    assert line == (
        '{"ts": "2025-12-02T01:04:49.471534+00:00", "level": "info", '
        '"logger": "riverbeam.gateway", "msg": "invoke a", "api_key": "[redacted]", '
        '"Authorization": "[redacted]", "my_token": "[redacted]", "when": "2020-01-02", '
        '"text": "\\u00e9\\u2028"}'
    )
    # The same keys again (their secrecy is remembered) give the same line.
    assert formatter.format(record) == line


def test_an_exception_is_written_as_its_traceback() -> None:
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError:
        exc_info = sys.exc_info()
    record = logging.getLogger("x").makeRecord(
        "x", logging.ERROR, "x.py", 1, "failed", (), exc_info
    )
    record.created = 1.0

    line = JsonFormatter().format(record)

    assert line.startswith(
        '{"ts": "1970-01-01T00:00:01+00:00", "level": "error", "logger": "x", "msg": "failed", '
        '"exc": "Traceback (most recent call last):\\n'
    )
    assert line.endswith('ZeroDivisionError: boom"}')


def test_a_text_line_is_the_standard_formatters_line() -> None:
    ours = TextFormatter()
    standard = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Within a second, across seconds, back again, and at a second's very start.
    for created in (1764637489.471534, 1764637489.999, 1764637490.0, 1764637489.5, 5.25):
        record = _record()
        record.created = created
        record.msecs = int((created - int(created)) * 1000) + 0.0

        assert ours.format(record) == standard.format(record)


def test_a_text_line_with_a_traceback_and_a_stack_is_the_standard_formatters_line() -> None:
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError:
        exc_info = sys.exc_info()
    standard = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for exc, stack in (
        (exc_info, None),
        (None, "Stack (most recent call last):\n  x"),
        (exc_info, "s"),
    ):
        ours_record, standard_record = (
            logging.getLogger("x").makeRecord(
                "x", logging.ERROR, "x.py", 1, "failed %d", (3,), exc, sinfo=stack
            )
            for _ in range(2)
        )
        for record in (ours_record, standard_record):
            record.created, record.msecs = 5.25, 250.0

        line = TextFormatter().format(ours_record)

        assert line == standard.format(standard_record)
        # What the standard formatter leaves on the record, ours leaves too.
        for name in ("message", "asctime", "exc_text"):
            assert getattr(ours_record, name) == getattr(standard_record, name)


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    switches = (logging._srcfile, logging.logThreads, logging.logProcesses)
    multiprocessing = logging.logMultiprocessing
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logging._srcfile, logging.logThreads, logging.logProcesses = switches
        logging.logMultiprocessing = multiprocessing


@pytest.mark.usefixtures("restored_logging")
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_configured_records_skip_the_caller_and_thread_lookups_and_lines_stay_the_same(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(level="INFO", fmt=fmt)
    captured: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            captured.append(record)

    logging.getLogger().addHandler(Keep())
    logging.getLogger("riverbeam.gateway").info("invoke %s", "a", extra={"request_id": "r-1"})

    (record,) = captured
    assert (record.funcName, record.lineno, record.thread, record.process) == (
        "(unknown function)",
        0,
        None,
        None,
    )
    assert record.threadName is None and record.processName is None
    assert not logging.logThreads and not logging.logProcesses and logging._srcfile is None
    line = capsys.readouterr().err.strip()
    if fmt == "json":
        assert line.endswith(
            '"level": "info", "logger": "riverbeam.gateway", "msg": "invoke a", '
            '"request_id": "r-1"}'
        )
    else:
        assert line.endswith(" INFO riverbeam.gateway: invoke a")


def test_the_json_stamp_is_the_isoformat_of_the_records_time() -> None:
    formatter = JsonFormatter()
    # Within a second, across seconds and back, whole seconds, fractions that round to the
    # next second or exactly to a half microsecond, before 1970, and random times.
    times = [1764637489.471534, 1764637489.999, 1764637490.0, 1764637489.5, 5.25, 0.0, 1.0]
    times += [1.9999996, 1.9999994, 2.0000005, 1764637489.9999997, 0.0000005, 0.0000015]
    times += [-1.5, -0.0000004, -1.9999996, -86400.25]
    generator = random.Random(16)
    times += [generator.uniform(-1e9, 4e9) for _ in range(3000)]
    times += [
        generator.randrange(0, 2**31) + generator.randrange(0, 10**6) / 1e6 for _ in range(3000)
    ]
    for created in times:
        record = _record()
        record.created = created

        stamp = json.loads(formatter.format(record))["ts"]

        assert stamp == datetime.datetime.fromtimestamp(created, datetime.UTC).isoformat(), created
