"""The input checks every store implementation shares."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import MIN_RETENTION_IDLE_DAYS
from riverbeam.store import _checks
from riverbeam.types import ActionResponseEnvelope

ACTION = "9c1b2d3e-4f50-4a61-8273-849506172839"


def _code(fn: object, *args: object) -> ErrorCode:
    with pytest.raises(RiverbeamError) as info:
        fn(*args)  # type: ignore[operator]
    return info.value.code


@given(st.integers(min_value=0, max_value=2**62))
def test_page_tokens_round_trip(position: int) -> None:
    token = _checks.encode_page_token(position)
    assert token.isascii() and "=" not in token
    assert _checks.decode_page_token(token) == position


@pytest.mark.parametrize("token", ["%%%", "YWJj", "LTE", "MS4w", "\u00e9"])
def test_foreign_page_tokens_are_refused(token: str) -> None:
    assert _code(_checks.decode_page_token, token) is ErrorCode.INVALID_PAGE_TOKEN


def test_no_token_is_the_start() -> None:
    assert _checks.decode_page_token(None) == _checks.decode_page_token("") == 0


def test_page_size_defaults_and_clamps() -> None:
    assert _checks.page_size(0) == _checks.page_size(None) == 100
    assert _checks.page_size(7) == 7
    assert _checks.page_size(10**6) == 1000
    assert _code(_checks.page_size, -1) is ErrorCode.INVALID_ARGUMENT


def _envelope(action_id: str) -> ActionResponseEnvelope:
    valid = ActionResponseEnvelope(action_id=ACTION, kind="confirmation", request_id=ACTION)
    return ActionResponseEnvelope.model_construct(**{**dict(valid), "action_id": action_id})


@pytest.mark.parametrize(
    "action_id",
    ["x", "9c1b2d3e4f504a618273849506172839", "{9c1b2d3e-4f50-4a61-8273-849506172839}", ""],
)
def test_action_ids_must_be_uuids(action_id: str) -> None:
    assert _code(_checks.action_responses, [_envelope(action_id)]) is ErrorCode.ACTION_ID_NOT_UUID


def test_an_action_is_answered_once_per_request() -> None:
    _checks.action_responses([_envelope(ACTION)])
    twice = [_envelope(ACTION), _envelope(ACTION.upper())]
    assert _code(_checks.action_responses, twice) is ErrorCode.DUPLICATE_ACTION


def test_run_and_interaction_statuses() -> None:
    assert _checks.finish_status("interrupted") == "interrupted"
    assert _code(_checks.finish_status, "running") is ErrorCode.INVALID_ENUM
    assert _checks.interaction_after("interrupted", None) == "in_progress"
    assert _checks.interaction_after("completed", None) == "completed"
    assert _checks.interaction_after("failed", "in_progress") == "in_progress"
    assert _code(_checks.interaction_after, "failed", "done") is ErrorCode.INVALID_ENUM
    assert _code(_checks.recorded_outcome, "approved_unknown") is ErrorCode.INVALID_ENUM


def test_the_stores_idle_minimum_is_the_retention_settings() -> None:
    assert _checks.MIN_IDLE_WINDOW == timedelta(days=MIN_RETENTION_IDLE_DAYS)


def test_leases_and_retention_windows() -> None:
    assert _checks.lease_ttl(1.5) == timedelta(seconds=1.5)
    assert _code(_checks.lease_ttl, 0) is ErrorCode.INVALID_ARGUMENT
    assert _code(_checks.lease_ttl, float("nan")) is ErrorCode.INVALID_ARGUMENT
    assert _code(_checks.idle_cutoff, timedelta(seconds=-1)) is ErrorCode.INVALID_ARGUMENT
    assert _code(_checks.idle_cutoff, timedelta(minutes=59)) is ErrorCode.INVALID_ARGUMENT
    assert _code(_checks.idle_cutoff, timedelta(0)) is ErrorCode.INVALID_ARGUMENT
    assert _checks.idle_cutoff(timedelta(hours=1)) == timedelta(hours=1)
    assert _checks.positive_limit(0, 20) == 20
    assert _code(_checks.positive_limit, -5, 20) is ErrorCode.INVALID_ARGUMENT


@pytest.mark.parametrize(
    ("name", "scope_id"),
    [
        ("", "u1"),
        ("user", ""),
        ("us\x00er", "u1"),
        ("user", "u\x7f1"),
        ("n" * 129, "u1"),
        ("user", "i" * 257),
    ],
)
def test_memory_scopes(name: str, scope_id: str) -> None:
    _checks.memory_scope("user", "alice@example.com")
    assert _code(_checks.memory_scope, name, scope_id) is ErrorCode.INVALID_MEMORY_SCOPE


def test_new_message_validates_role_and_type() -> None:
    assert _checks.new_message(role="ai", metadata=None).message_id
    assert _code(lambda: _checks.new_message(role="bot")) is ErrorCode.INVALID_ENUM
    assert _code(lambda: _checks.new_message(role="ai", type="step")) is ErrorCode.INVALID_ENUM


def test_history_limit_zero_is_none_and_large_is_clamped() -> None:
    assert _checks.history_limit(0) == 0
    assert _checks.history_limit(7) == 7
    assert _checks.history_limit(10**6) == _checks.MAX_HISTORY_LIMIT == 1000
    assert _code(_checks.history_limit, -1) is ErrorCode.INVALID_ARGUMENT
