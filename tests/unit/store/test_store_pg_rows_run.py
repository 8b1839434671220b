"""_rows.run_of makes of any run row the record validation makes of it, or refuses it as
validation does: generated rows, each column valid or odd."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from riverbeam.store import _rows
from riverbeam.types import RunOptions
from tests.unit.store.test_store_rows_records import (
    RESULT,
    T0,
    USAGE,
    _run_row,
    _same,
    _validated_run,
)

_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_TIMES = st.sampled_from(
    [
        T0,
        T0 + timedelta(seconds=60),
        T0.astimezone(timezone(timedelta(hours=2))),
        T0.replace(tzinfo=None),
    ]
)
_NAME = st.sampled_from(["r-1", "x", "", None, 1])
_OPTIONAL = st.sampled_from([None, "v", "", 3])
_COLUMNS: dict[str, st.SearchStrategy[Any]] = {
    "run_id": _NAME,
    "interaction_id": _NAME,
    "session_id": _NAME,
    "agent_name": _NAME,
    "status": st.sampled_from(["running", "completed", "failed", "sleeping", None]),
    "request_id": _OPTIONAL,
    "started_at": _TIMES,
    "finished_at": st.none() | _TIMES,
    "error_code": _OPTIONAL,
    "error_message": _OPTIONAL,
    "token_usage": st.sampled_from(
        [None, _rows.dump(USAGE), "{}", "null", '{"prompt_tokens": -1}']
    ),
    "model_used": _OPTIONAL,
    "lease_owner": _OPTIONAL,
    "lease_expires_at": st.none() | _TIMES,
    "result": st.sampled_from([None, _rows.dump(RESULT), '{"agent_name": ""}']),
    "lease_epoch": st.sampled_from([None, 0, 1, 2**31 - 1, "one", 1.0, True]),
    "agent_version": _OPTIONAL,
    "options": st.sampled_from([None, _rows.dump(RunOptions()), '{"x": 1}']),
    "holders": st.sampled_from([None, [], ["a"], ["a", "b"], ["a", None], [1]]),
    "parent_run_id": _OPTIONAL,
}


@_SETTINGS
@given(st.fixed_dictionaries({}, optional=_COLUMNS))
def test_a_run_row_is_read_as_validation_reads_it(overrides: dict[str, Any]) -> None:
    row = _run_row(**overrides)
    try:
        expected = _validated_run(row)
    except ValidationError as exc:
        try:
            _rows.run_of(row)
        except ValidationError as got:
            assert got.errors() == exc.errors()
        else:
            raise AssertionError("run_of kept a row validation refuses") from None
        return
    _same(_rows.run_of(row), expected)
    assert _rows.run_of(row).started_at.tzinfo is UTC
    assert isinstance(_rows.run_of(row).started_at, datetime)
