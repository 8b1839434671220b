"""begin_run on Postgres, inside its step's connection: in one call, or statement by statement.

The common step (a new interaction, a session configuration that does not depend on the stored
one) is one call of the begin_step function (migration 0013, in fewer statements since 0014):
the request-id check, the session upsert, the interaction, the busy check after the session row
lock, the run, its messages and the history. It refuses by raising one of four SQLSTATEs, which roll the call
back and are turned here into the catalog errors the statement-by-statement path raises.

A resume (its answered actions are compare-and-set one by one, the version pin checked in
Python) and a narrowing session configuration (combined with the stored one in Python) take
the statements begin_open and begin_write of _sql.py, with Python between them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

import asyncpg

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.store import _checks, _rows
from riverbeam.store._migrations import quote_schema
from riverbeam.store._nul import nul_free_call, scrub
from riverbeam.store._pg_one_message import begin_one_message
from riverbeam.store._pg_run_config import set_session_config
from riverbeam.store._pg_step_parts import why_not_resolved
from riverbeam.store._run_config import UNCHANGED, new_session_config
from riverbeam.store._sql import Statements, column_slices
from riverbeam.store._steps import action_result_message, check_resume_agent, resolution
from riverbeam.store._types import BeginRunResult, NewMessage
from riverbeam.types import (
    Action,
    ActionResponseEnvelope,
    ContentPart,
    RunOptions,
    TurnConfig,
)

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    from riverbeam.store._checks import VersionPolicy

    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = [
    "BeginArgs",
    "begin_call",
    "begin_in_one_call",
    "begin_in_statements",
    "one_call_config",
]

_REQUEST_USED, _OTHER_OWNER, _OTHER_SESSION, _BUSY = "RB001", "RB002", "RB003", "RB004"


@dataclass(frozen=True, slots=True)
class BeginArgs:
    """begin_run's arguments, checked."""

    session_id: str
    agent_name: str
    run_id: str
    lease_owner: str
    ttl: timedelta
    user_id: str | None
    profile_id: str | None
    org_id: str | None
    interaction_id: str | None
    request_id: str | None
    human_content: Sequence[ContentPart]
    message_metadata: dict[str, Any] | None
    exclusive: bool
    action_responses: Sequence[ActionResponseEnvelope]
    limit: int
    require_owner: str | None
    require_org: str | None
    agent_version: str | None
    policy: VersionPolicy
    session_config: TurnConfig | None
    run_options: RunOptions | None
    session_config_narrows: bool
    history_after: int
    history_after_id: str | None

    @property
    def human_messages(self) -> list[NewMessage]:
        if not self.human_content:
            return []
        content = list(self.human_content)
        return [NewMessage(role="human", content=content, metadata=self.message_metadata)]

    @property
    def after(self) -> int:
        """The history_after the caller holds up to (0: none)."""
        return max(self.history_after, 0) if self.history_after_id is not None else 0

    @property
    def options(self) -> str | None:
        empty = self.run_options is None or self.run_options.is_empty
        return None if empty else _rows.dump(self.run_options)


def one_call_config(args: BeginArgs) -> tuple[bool, TurnConfig | None] | None:
    """When the step can be one call: what it does to the session's configuration, (False,
    None) leaving it or (True, new) replacing it with new. None for a resume, and when the
    new configuration depends on the stored one (a non-empty narrowing one)."""
    if args.action_responses:
        return None
    new = new_session_config(None, args.session_config, narrows=args.session_config_narrows)
    if new is UNCHANGED:
        return False, None
    if args.session_config_narrows:
        return None
    assert new is None or isinstance(new, TurnConfig)
    return True, new


@cache
def _call(schema: str) -> str:
    # The message columns come in $19, $23 values each (_sql.column_slices).
    params = ", ".join(
        [f"${i}" for i in range(1, 19)]
        + column_slices("$19", "$23", range(9))
        + ["$20", "$21", "$22"]
    )
    return f"SELECT * FROM {quote_schema(schema)}.begin_step({params})"


async def begin_in_one_call(
    conn: Connection, schema: str, args: BeginArgs, config: tuple[bool, TurnConfig | None]
) -> BeginRunResult:
    """The step as one call of begin_step; its refusals as BEM-031, 025, 065 or 030.

    The human message's content and metadata may hold a U+0000 (nul_safe_but): scrubbed
    only when the call's parameters may hold one (nul_free_call)."""
    interaction_id = args.interaction_id or new_id()

    def call(
        content: Sequence[ContentPart], metadata: dict[str, Any] | None
    ) -> tuple[str, list[Any]]:
        same = content is args.human_content and metadata is args.message_metadata
        step = args if same else replace(args, human_content=content, message_metadata=metadata)
        return begin_call(schema, step, interaction_id, step.human_messages, config)

    query, params = nul_free_call(call, args.human_content, args.message_metadata)
    try:
        row = await conn.fetchrow(query, *params)
    except asyncpg.PostgresError as exc:
        refusal = _refusal(exc, args, interaction_id)
        if refusal is None:
            raise
        raise refusal from None
    assert row is not None
    saved = [_rows.message_of(r) for r in row["o_saved"]]
    return BeginRunResult(
        session=_rows.session_of(row["o_session"]),
        interaction=_rows.interaction_of(row["o_interaction"]),
        run=_rows.run_of(row["o_run"]),
        human_message=saved[-1] if args.human_content else None,
        resolved_actions=[],
        action_messages=[],
        history=[_rows.message_of(r) for r in row["o_history"]],
        history_after=int(row["o_known"]) if args.limit else 0,
    )


def begin_call(
    schema: str,
    args: BeginArgs,
    interaction_id: str,
    messages: list[NewMessage],
    config: tuple[bool, TurnConfig | None],
    *,
    one: bool | None = None,
) -> tuple[str, list[Any]]:
    """begin_step's call and its parameters: the message's columns one by one
    (begin_one_message) when `one` (by default: for one message), else all in one array
    followed by their count (_call)."""
    head = [
        args.session_id,
        args.user_id,
        args.profile_id,
        args.org_id,
        len(messages),
        args.require_owner,
        args.require_org,
        args.request_id,
        interaction_id,
        args.agent_name,
        args.agent_version,
        args.run_id,
        args.lease_owner,
        args.ttl,
        args.exclusive,
        args.limit,
        args.after,
        args.history_after_id,
    ]
    tail = [args.options, config[0], _rows.dump(config[1])]
    if one is None:
        one = len(messages) == 1
    if one:
        values = _rows.message_values(messages[0])
        return begin_one_message(schema), [*head, *values, *tail]
    return _call(schema), [*head, _rows.message_flat(messages), *tail, len(messages)]


# The refusals of both paths, alike whichever path met them.
def _request_used(args: BeginArgs) -> RiverbeamError:
    return RiverbeamError(ErrorCode.REQUEST_ID_REUSED, request_id=args.request_id)


def _other_owner(args: BeginArgs) -> RiverbeamError:
    """The session exists and is not require_owner's: as if there were none."""
    return RiverbeamError(ErrorCode.SESSION_NOT_FOUND, session_id=args.session_id)


def _not_resumable(args: BeginArgs, interaction_id: str | None) -> RiverbeamError:
    return RiverbeamError(
        ErrorCode.INTERACTION_NOT_RESUMABLE,
        interaction_id=interaction_id,
        session_id=args.session_id,
    )


def _refusal(
    exc: asyncpg.PostgresError, args: BeginArgs, interaction_id: str
) -> RiverbeamError | None:
    state = getattr(exc, "sqlstate", None)
    if state == _REQUEST_USED:
        return _request_used(args)
    if state == _OTHER_OWNER:
        return _other_owner(args)
    if state == _OTHER_SESSION:
        return _not_resumable(args, interaction_id)
    if state == _BUSY:
        busy = json.loads(getattr(exc, "detail", None) or "{}")
        return _checks.session_busy(args.session_id, busy["run_id"], busy.get("request_id"))
    return None


async def begin_in_statements(
    conn: Connection, sql: Statements, schema: str, args: BeginArgs
) -> BeginRunResult:
    """The step as begin_open, the configuration, the resume's compare-and-sets and
    begin_write, inside the step's transaction. The human message's content and metadata
    are scrubbed first (nul_safe_but left them as given)."""
    args = replace(
        args,
        human_content=scrub(args.human_content),
        message_metadata=scrub(args.message_metadata),
    )
    resume = bool(args.action_responses)
    session_id, interaction_id = args.session_id, args.interaction_id
    n_messages = len(args.action_responses) + (1 if args.human_content else 0)
    # Creates or locks the session row: begin_runs of one session queue here, which
    # makes the owner check (in the statement) and the exclusive check race-free.
    new = None if resume else (interaction_id or new_id())
    opened = await conn.fetchrow(
        sql.begin_open,
        session_id,
        args.user_id,
        args.profile_id,
        args.org_id,
        n_messages,
        args.require_owner,
        args.require_org,
        args.request_id,
        new,
        args.agent_name,
        args.agent_version,
        not resume,
    )
    assert opened is not None
    if opened["used"]:
        raise _request_used(args)
    if opened["session"] is None:
        raise _other_owner(args)
    session = await set_session_config(
        conn,
        schema,
        _rows.session_of(opened["session"]),
        args.session_config,
        narrows=args.session_config_narrows,
    )
    row = opened["interaction"]
    if resume:
        row = await conn.fetchrow(sql.resume_interaction, interaction_id, session_id)
    if row is None:
        raise _not_resumable(args, interaction_id)
    interaction = _rows.interaction_of(row)
    if resume:  # the version pin and the agent check; a refusal rolls the step back
        check_resume_agent(interaction, args.agent_name)
        _checks.version_pin(interaction, args.agent_version, args.policy)

    resolved: list[Action] = []
    for response in args.action_responses:
        status, outcome = resolution(response)
        row = await conn.fetchrow(
            sql.resolve_action,
            response.action_id,
            interaction.interaction_id,
            status,
            outcome,
            _rows.dump(response),
        )
        if row is None:
            await why_not_resolved(conn, sql, response.action_id, interaction.interaction_id)
        resolved.append(_rows.action_of(row))
    new_messages = [
        action_result_message(a, r) for a, r in zip(resolved, args.action_responses, strict=True)
    ]
    new_messages += args.human_messages
    # After the compare-and-set of each answered action, so that of concurrent resumes
    # of one action the losers learn it was answered (066), not just that the winner's
    # run is busy (030); a busy session still rolls the whole step back. The history is
    # everything numbered before this step's first message (the session row is
    # locked, so no other step adds messages meanwhile).
    first_seq = session.last_seq - n_messages + 1
    written = await conn.fetchrow(
        sql.begin_write,
        args.run_id,
        interaction.interaction_id,
        session_id,
        args.agent_name,
        args.request_id,
        args.lease_owner,
        args.ttl,
        args.agent_version,
        args.exclusive,
        first_seq,
        first_seq - 1,
        args.limit,
        args.after,
        args.history_after_id,
        _rows.message_flat(new_messages),
        args.options,
        len(new_messages),
    )
    assert written is not None
    if written["busy_run_id"] is not None:
        raise _checks.session_busy(session_id, written["busy_run_id"], written["busy_request_id"])
    assert written["run_id"] is not None
    saved = [_rows.message_of(r) for r in written["saved"]]
    return BeginRunResult(
        session=session,
        interaction=interaction,
        run=_rows.run_of(written),
        human_message=saved[-1] if args.human_content else None,
        resolved_actions=resolved,
        action_messages=saved[: len(resolved)],
        history=[_rows.message_of(r) for r in written["history"]],
        history_after=int(written["known"]) if args.limit else 0,
    )
