"""Session, interaction and run rows become the records validation would make of them, built
directly where validation would keep every value, and validated (with its refusals) where it
would not (as message rows: test_store_rows_messages.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from riverbeam.store import _rows
from riverbeam.types import (
    AgentResult,
    ContentPart,
    Interaction,
    Run,
    RunOptions,
    Session,
    TokenUsage,
    TurnConfig,
)

T0 = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
PLUS2 = timezone(timedelta(hours=2))
USAGE = TokenUsage(prompt_tokens=14, completion_tokens=15, total_tokens=29)
RESULT = AgentResult(
    content=[ContentPart.of_text("Echo: hi")],
    agent_name="assistant",
    session_id="s-1",
    interaction_id="i-1",
    run_id="r-1",
    token_usage=USAGE,
    latency_ms=1.5,
)


def _session_row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "session_id": "s-1",
        "user_id": "u-1",
        "profile_id": None,
        "org_id": None,
        "metadata": None,
        "last_seq": 3,
        "created_at": T0,
        "last_active_at": T0,
        "config": None,
    }
    row.update(overrides)
    return row


def _interaction_row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "interaction_id": "i-1",
        "session_id": "s-1",
        "agent_name": "assistant",
        "status": "in_progress",
        "created_at": T0,
        "updated_at": T0,
        "agent_version": None,
    }
    row.update(overrides)
    return row


def _run_row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run_id": "r-1",
        "interaction_id": "i-1",
        "session_id": "s-1",
        "agent_name": "assistant",
        "status": "running",
        "request_id": None,
        "started_at": T0,
        "finished_at": None,
        "error_code": None,
        "error_message": None,
        "token_usage": None,
        "model_used": None,
        "lease_owner": "runner-1",
        "lease_expires_at": T0 + timedelta(seconds=60),
        "result": None,
        "lease_epoch": 1,
        "agent_version": None,
        "options": None,
        "holders": None,
        "parent_run_id": None,
    }
    row.update(overrides)
    return row


def _validated_session(row: dict[str, Any]) -> Session:
    """What session_of made of a row before: every value through pydantic."""
    return Session(
        session_id=row["session_id"],
        user_id=row["user_id"],
        profile_id=row["profile_id"],
        org_id=row["org_id"],
        metadata=_rows._load(row["metadata"]),
        last_seq=row["last_seq"],
        created_at=row["created_at"],
        last_active_at=row["last_active_at"],
        config=_rows._model(TurnConfig, row["config"]),
    )


def _validated_interaction(row: dict[str, Any]) -> Interaction:
    return Interaction(**row)


def _validated_run(row: dict[str, Any]) -> Run:
    return Run(
        **{
            **row,
            "token_usage": _rows._model(TokenUsage, row["token_usage"]),
            "result": _rows._model(AgentResult, row["result"]),
            "options": _rows._model(RunOptions, row["options"]),
            "holders": list(row["holders"] or []),
        }
    )


def _same(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b)
    assert a == b
    assert a.model_dump() == b.model_dump()
    assert list(a.__dict__) == list(b.__dict__)
    assert a.model_fields_set == b.model_fields_set
    assert a.to_proto() == b.to_proto()  # type: ignore[attr-defined]
    assert a.__pydantic_extra__ is None and b.__pydantic_extra__ is None


Reader = Callable[[Any], BaseModel]
CASES: dict[str, tuple[Reader, Callable[..., dict[str, Any]], Callable[[Any], BaseModel]]] = {
    "session": (_rows.session_of, _session_row, _validated_session),
    "interaction": (_rows.interaction_of, _interaction_row, _validated_interaction),
    "run": (_rows.run_of, _run_row, _validated_run),
}

KEPT = [
    ("session", {}),
    ("session", {"user_id": None, "profile_id": "p", "org_id": "o", "last_seq": 0}),
    ("session", {"last_seq": 2**31 - 1, "metadata": json.dumps({"k": [1, "v"]})}),
    (
        "session",
        {"config": json.dumps({"include_tools": ["search"], "append_instructions": "be brief"})},
    ),
    ("interaction", {}),
    ("interaction", {"status": "completed", "agent_version": "v2"}),
    ("run", {}),
    ("run", {"request_id": "q-1", "lease_epoch": None, "holders": ["a", "b"]}),
    (
        "run",
        {
            "status": "completed",
            "finished_at": T0,
            "token_usage": _rows.dump(USAGE),
            "result": _rows.dump(RESULT),
            "model_used": "m",
            "error_code": "BEM-001",
            "error_message": "boom",
            "agent_version": "v1",
            "parent_run_id": "r-0",
            "lease_owner": None,
            "lease_expires_at": None,
        },
    ),
]


@pytest.mark.parametrize(("kind", "overrides"), KEPT)
def test_a_row_validation_would_keep_is_built_as_validation_builds_it(
    kind: str, overrides: dict[str, Any]
) -> None:
    read, row_of, validated = CASES[kind]
    row = row_of(**overrides)
    _same(read(row), validated(row))


CHANGED = [
    ("session", {"metadata": "{}"}),  # held as None
    ("session", {"created_at": T0.astimezone(PLUS2)}),  # held in UTC
    ("interaction", {"updated_at": T0.astimezone(PLUS2)}),
    ("run", {"lease_expires_at": T0.astimezone(PLUS2), "finished_at": T0.astimezone(PLUS2)}),
    ("run", {"started_at": T0.astimezone(PLUS2)}),
]


@pytest.mark.parametrize(("kind", "overrides"), CHANGED)
def test_a_row_validation_changes_is_validated(kind: str, overrides: dict[str, Any]) -> None:
    read, row_of, validated = CASES[kind]
    row = row_of(**overrides)
    built = read(row)
    _same(built, validated(row))
    for name in ("created_at", "updated_at", "started_at", "finished_at", "lease_expires_at"):
        value = getattr(built, name, None)
        assert value is None or value.tzinfo is UTC
    assert getattr(built, "metadata", None) is None


REFUSED = [
    ("session", {"session_id": ""}),
    ("session", {"last_seq": -1}),
    ("session", {"last_seq": 2**31}),
    ("session", {"last_active_at": T0.replace(tzinfo=None)}),
    ("session", {"metadata": json.dumps([1, 2])}),
    ("interaction", {"agent_name": ""}),
    ("interaction", {"status": "paused"}),
    ("interaction", {"created_at": T0.replace(tzinfo=None)}),
    ("run", {"run_id": ""}),
    ("run", {"status": "sleeping"}),
    ("run", {"started_at": T0.replace(tzinfo=None)}),
    ("run", {"holders": ["a", None]}),
    ("run", {"lease_epoch": "one"}),
]


@pytest.mark.parametrize(("kind", "overrides"), REFUSED)
def test_a_row_the_model_refuses_is_refused_as_before(kind: str, overrides: dict[str, Any]) -> None:
    read, row_of, _ = CASES[kind]
    with pytest.raises(ValidationError):
        read(row_of(**overrides))
