"""asyncpg errors become catalog errors inside the Postgres adapter."""

from __future__ import annotations

import asyncpg
import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store._pg_errors import translate_pg_errors


def _raised(exc: BaseException) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as info, translate_pg_errors():
        raise exc
    assert info.value.__cause__ is exc
    return info.value


def _pg(
    cls: type[asyncpg.PostgresError], sqlstate: str, constraint: str | None = None
) -> asyncpg.PostgresError:
    fields = {"C": sqlstate, "M": "boom"}
    if constraint:
        fields["n"] = constraint
    return cls.new(fields)  # type: ignore[no-any-return,attr-defined]


@pytest.mark.parametrize(
    ("constraint", "code"),
    [
        ("runs_request_id_key", ErrorCode.REQUEST_ID_REUSED),
        ("runs_pkey", ErrorCode.STORE_CONFLICT),
        ("interactions_pkey", ErrorCode.INTERACTION_NOT_RESUMABLE),
        ("messages_session_seq_key", ErrorCode.STORE_CONFLICT),
        ("actions_pkey", ErrorCode.STORE_CONFLICT),
        ("something_else", ErrorCode.STORE_CONFLICT),
    ],
)
def test_unique_violations_by_constraint(constraint: str, code: ErrorCode) -> None:
    assert _raised(_pg(asyncpg.UniqueViolationError, "23505", constraint)).code is code


def test_foreign_keys_and_checks() -> None:
    fk = _pg(asyncpg.ForeignKeyViolationError, "23503", "messages_run_id_fkey")
    assert _raised(fk).code is ErrorCode.RUN_NOT_FOUND
    check = _pg(asyncpg.CheckViolationError, "23514", "runs_status_check")
    assert _raised(check).code is ErrorCode.INVALID_ENUM


@pytest.mark.parametrize(
    "exc",
    [
        asyncpg.ConnectionDoesNotExistError("gone"),
        asyncpg.InterfaceError("connection is closed"),
        asyncpg.exceptions.InternalClientError("cannot switch to state"),
        ConnectionRefusedError(111, "refused"),
        TimeoutError(),
    ],
)
def test_lost_connections_are_store_unavailable(exc: BaseException) -> None:
    assert _raised(exc).code is ErrorCode.STORE_UNAVAILABLE


def test_admin_shutdown_is_store_unavailable() -> None:
    assert (
        _raised(_pg(asyncpg.exceptions.AdminShutdownError, "57P01")).code
        is ErrorCode.STORE_UNAVAILABLE
    )


def test_deadlocks_are_conflicts_and_the_rest_internal() -> None:
    assert (
        _raised(_pg(asyncpg.exceptions.DeadlockDetectedError, "40P01")).code
        is ErrorCode.STORE_CONFLICT
    )
    other = _raised(_pg(asyncpg.exceptions.UndefinedTableError, "42P01"))
    assert other.code is ErrorCode.INTERNAL and other.details["sqlstate"] == "42P01"


def test_other_errors_pass_through() -> None:
    with pytest.raises(KeyError), translate_pg_errors():
        raise KeyError("mine")
    original = RiverbeamError(ErrorCode.SESSION_BUSY)
    with pytest.raises(RiverbeamError) as info, translate_pg_errors():
        raise original
    assert info.value is original
