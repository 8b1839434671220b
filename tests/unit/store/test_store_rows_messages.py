"""A message row becomes the record validation would make of it, built directly where
validation would keep every value, and validated (with its refusals) where it would not."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from riverbeam.store import _rows
from riverbeam.types import Message

T0 = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def _row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "message_id": "m-1",
        "session_id": "s-1",
        "interaction_id": "i-1",
        "run_id": "r-1",
        "seq": 7,
        "role": "ai",
        "type": "message",
        "content": json.dumps([{"type": "text", "text": "hello"}]),
        "tool_call_id": None,
        "tool_name": None,
        "tool_args": None,
        "tool_result": None,
        "metadata": None,
        "created_at": T0,
    }
    row.update(overrides)
    return row


def _validated(row: dict[str, Any]) -> Message:
    """What message_of made of a row before: every value through pydantic."""
    return Message(
        message_id=row["message_id"],
        session_id=row["session_id"],
        interaction_id=row["interaction_id"],
        run_id=row["run_id"],
        seq=row["seq"],
        role=row["role"],
        type=row["type"],
        content=_rows._content(row["content"]),
        tool_call_id=row["tool_call_id"],
        tool_name=row["tool_name"],
        tool_args=_rows._load(row["tool_args"]),
        tool_result=_rows._load(row["tool_result"]),
        metadata=_rows._load(row["metadata"]),
        created_at=row["created_at"],
    )


def _same(a: Message, b: Message) -> None:
    assert a == b
    assert a.model_dump() == b.model_dump()
    assert a.model_fields_set == b.model_fields_set
    assert a.to_proto() == b.to_proto()
    assert a.__pydantic_extra__ is None and b.__pydantic_extra__ is None


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"interaction_id": None, "run_id": None, "seq": 0},
        {"seq": 2**31 - 1, "role": "tool", "type": "tool_result", "tool_call_id": "c"},
        {"tool_name": "search", "tool_args": json.dumps({"q": ["a", 1, 2.5, None]})},
        {"tool_result": json.dumps([1, {"k": "v"}]), "metadata": json.dumps({"n": {"m": 1}})},
        {"tool_result": json.dumps("text"), "content": json.dumps([])},
        {"role": "human", "type": "summary", "content": None},
    ],
)
def test_a_row_validation_would_keep_is_built_as_validation_builds_it(
    overrides: dict[str, Any],
) -> None:
    row = _row(**overrides)
    _same(_rows.message_of(row), _validated(row))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "overrides",
    [
        {"metadata": "{}", "tool_args": "{}"},  # held as None
        {"created_at": T0.astimezone(timezone(timedelta(hours=2)))},  # held in UTC
    ],
)
def test_a_row_validation_changes_is_validated(overrides: dict[str, Any]) -> None:
    row = _row(**overrides)
    built = _rows.message_of(row)  # type: ignore[arg-type]
    _same(built, _validated(row))
    assert built.metadata is None and built.created_at.tzinfo is UTC


@pytest.mark.parametrize(
    "overrides",
    [
        {"message_id": ""},
        {"role": "robot"},
        {"type": "chatter"},
        {"seq": -1},
        {"seq": 2**31},
        {"created_at": T0.replace(tzinfo=None)},
        {"metadata": json.dumps([1, 2])},
    ],
)
def test_a_row_the_model_refuses_is_refused_as_before(overrides: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _rows.message_of(_row(**overrides))  # type: ignore[arg-type]
