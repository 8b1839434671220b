"""asyncpg errors translated to catalog errors. Used inside the Postgres adapter only."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import asyncpg

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["reraise_translated", "translate_pg_errors"]

# Constraint names are fixed by the migrations.
_CONSTRAINTS: dict[str, tuple[ErrorCode, str]] = {
    "runs_request_id_key": (ErrorCode.REQUEST_ID_REUSED, "request_id already used"),
    "runs_pkey": (ErrorCode.STORE_CONFLICT, "run_id already used"),
    "interactions_pkey": (
        ErrorCode.INTERACTION_NOT_RESUMABLE,
        "interaction belongs to another session",
    ),
    "messages_pkey": (ErrorCode.STORE_CONFLICT, "message_id already used"),
    "messages_session_seq_key": (ErrorCode.STORE_CONFLICT, "message sequence number taken"),
    "actions_pkey": (ErrorCode.STORE_CONFLICT, "action_id already used"),
    "memory_entries_entry_id_key": (ErrorCode.STORE_CONFLICT, "entry_id already used"),
    "messages_session_id_fkey": (ErrorCode.SESSION_NOT_FOUND, "session not found"),
    "messages_interaction_id_fkey": (ErrorCode.INTERACTION_NOT_FOUND, "interaction not found"),
    "messages_run_id_fkey": (ErrorCode.RUN_NOT_FOUND, "run not found"),
}

# The connection is gone or unusable: the caller may retry against a healthy store.
_UNAVAILABLE = (
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    asyncpg.exceptions.OperatorInterventionError,  # admin shutdown, crash, statement timeout
    asyncpg.exceptions.InsufficientResourcesError,  # too many connections, disk full
    asyncpg.exceptions.CannotConnectNowError,
    OSError,
    asyncio.TimeoutError,  # pool acquire or command timeout
)


def _translate(exc: BaseException) -> RiverbeamError | None:
    if isinstance(exc, asyncpg.IntegrityConstraintViolationError):
        known = _CONSTRAINTS.get(getattr(exc, "constraint_name", None) or "")
        if known is not None:
            code, message = known
            return RiverbeamError(code, message, constraint=exc.constraint_name)
        if isinstance(exc, asyncpg.exceptions.CheckViolationError):
            return RiverbeamError(ErrorCode.INVALID_ENUM, str(exc), constraint=exc.constraint_name)
        return RiverbeamError(ErrorCode.STORE_CONFLICT, str(exc), sqlstate=exc.sqlstate)
    if isinstance(exc, asyncpg.exceptions.TransactionRollbackError):  # deadlock, serialization
        return RiverbeamError(ErrorCode.STORE_CONFLICT, str(exc), sqlstate=exc.sqlstate)
    if isinstance(exc, _UNAVAILABLE):
        return RiverbeamError(ErrorCode.STORE_UNAVAILABLE, f"{type(exc).__name__}: {exc}")
    if isinstance(exc, asyncpg.PostgresError):
        return RiverbeamError(ErrorCode.INTERNAL, f"database error: {exc}", sqlstate=exc.sqlstate)
    return None


def reraise_translated(exc: Exception) -> NoReturn:
    """Raise what translate_pg_errors() raises for `exc`, from inside its except block."""
    if isinstance(exc, RiverbeamError):
        raise exc
    translated = _translate(exc)
    if translated is None:
        raise exc
    raise translated from exc


@contextmanager
def translate_pg_errors() -> Iterator[None]:
    """Re-raise database and connection errors as RiverbeamError; let everything else through."""
    try:
        yield
    except RiverbeamError:
        raise
    except Exception as exc:
        translated = _translate(exc)
        if translated is None:
            raise
        raise translated from exc
