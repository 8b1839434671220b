"""The begin and finish steps' statements for the common one-message step, with the message's
nine columns as nine plain parameters instead of one text[] (_sql.column_slices).

asyncpg encodes a text[] parameter element by element in Python-level code (its array codec);
nine text parameters go through the plain text codec. The statement is still one call of the
same step function (migrations 0013 and 0014) with the same arguments: `ARRAY[$n]` is the
one-element text[] (lower bound 1, a NULL element for a NULL parameter) that slicing a flat
array of one value per column gives. Steps with no messages or several, or with pending
actions, keep the statements of _sql.py and _pg_begin.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from functools import cache
from typing import Any

from riverbeam.store import _rows
from riverbeam.store._migrations import quote_schema
from riverbeam.store._sql import RUN_COLS, Statements
from riverbeam.store._types import NewAction, NewMessage

__all__ = ["begin_one_message", "finish_call", "finish_one_message"]

_EMPTY = "'{}'::text[]"


def _one(first: int) -> list[str]:
    """The nine message columns as one-element arrays of parameters first..first+8."""
    return [f"ARRAY[${i}::text]" for i in range(first, first + 9)]


@cache
def begin_one_message(schema: str) -> str:
    """begin_step for one message: $1..$18 as _pg_begin's, the message's columns in
    $19..$27, then options, whether the configuration is replaced, and the new one."""
    params = [f"${i}" for i in range(1, 19)] + _one(19) + ["$28", "$29", "$30"]
    return f"SELECT * FROM {quote_schema(schema)}.begin_step({', '.join(params)})"


@cache
def finish_one_message(schema: str) -> str:
    """finish_step for one message and no pending action: $1..$10 as Statements.finish_step's,
    the message's columns in $11..$19, the interaction's status $20 and the action expiry $21."""
    params = (
        [f"${i}" for i in range(1, 11)] + _one(11) + ["$20"] + [_EMPTY] * 5 + ["$21"] + [_EMPTY] * 2
    )
    return f"SELECT {RUN_COLS} FROM {quote_schema(schema)}.finish_step({', '.join(params)})"


def finish_call(
    sql: Statements,
    schema: str,
    head: tuple[Any, ...],
    messages: Sequence[NewMessage],
    after: str,
    actions: Sequence[NewAction],
    expiry: timedelta | None,
    *,
    one: bool | None = None,
) -> tuple[str, list[Any]]:
    """finish_run's statement and its parameters: `head` ($1..$9: run id, owner, status, error
    code and message, usage, model, result, epoch), then the messages, the interaction's
    status and the pending actions. The one-message statement when `one` (by default: one
    message and no action), else Statements.finish_step."""
    if one is None:
        one = len(messages) == 1 and not actions
    if one:
        values = _rows.message_values(messages[0])
        return finish_one_message(schema), [*head, 1, *values, after, expiry]
    flat = _rows.message_flat(messages)
    tail = [_rows.action_flat(actions), expiry, len(messages), len(actions)]
    return sql.finish_step, [*head, len(messages), flat, after, *tail]
