"""Builders shared by the store tests."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any

import asyncpg
import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import BeamStore, BeginRunResult, NewAction, NewMessage, PgBeamStore
from riverbeam.types import ActionResponseEnvelope, ContentPart

OWNER = "runner-a"

PgStoreFactory = Callable[..., Awaitable[PgBeamStore]]
"""make_pg_store(before_commit=..., max_size=...) -> a PgBeamStore on the test's schema."""


ConnectionHook = Callable[[asyncpg.Connection], Awaitable[None]]

AgeSessions = Callable[[timedelta], Awaitable[None]]
"""age_sessions(by): every stored session last active `by` earlier than it was."""


@contextlib.asynccontextmanager
async def one_connection_store(
    pg_url: str,
    schema: str,
    *,
    init: ConnectionHook | None = None,
    setup: ConnectionHook | None = None,
) -> AsyncIterator[PgBeamStore]:
    """A migrated PgBeamStore on a pool of one connection, which keeps its session when it is
    released (no reset query, as PgBeamStore.connect's pools): what `init` sets on it holds for
    every step; `setup` runs at each acquire."""

    async def keep_session(conn: asyncpg.Connection) -> None:
        """No reset query on release."""

    pool = await asyncpg.create_pool(
        pg_url, min_size=1, max_size=1, init=init, setup=setup, reset=keep_session
    )
    store = PgBeamStore.new(pool, schema=schema)
    try:
        await store.migrate()
        yield store
    finally:
        await pool.close()


async def age_pg_sessions(pg_url: str, schema: str, by: timedelta) -> None:
    """Every session of `schema` last active `by` earlier than it was (see age_sessions)."""
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute(
            f'UPDATE "{schema}".sessions SET last_active_at = last_active_at - $1::interval', by
        )
    finally:
        await conn.close()


def new_schema_name() -> str:
    return f"t_store_{uuid.uuid4().hex[:16]}"


def uid() -> str:
    return str(uuid.uuid4())


async def begin(store: BeamStore, **overrides: Any) -> BeginRunResult:
    """A begin_run with sensible defaults; any argument can be overridden."""
    args: dict[str, Any] = {
        "session_id": uid(),
        "agent_name": "author",
        "run_id": uid(),
        "request_id": uid(),
        "lease_owner": OWNER,
        "lease_ttl_s": 60.0,
        "human_content": [ContentPart.of_text("hello")],
    }
    args.update(overrides)
    return await store.begin_run(**args)


async def interrupted_with(
    store: BeamStore, count: int = 1, **overrides: Any
) -> tuple[BeginRunResult, list[str]]:
    """A run that paused for `count` approvals: (its begin result, the pending action ids)."""
    begun = await begin(store, **overrides)
    ids = [uid() for _ in range(count)]
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=overrides.get("lease_owner", OWNER),
        status="interrupted",
        messages=[NewMessage(role="ai", content=[ContentPart.of_text("may I push?")])],
        pending_actions=[
            NewAction(
                action_id=a,
                tool="git_push",
                args={"ref": f"docs/{i}", "force": False},
                tool_call_id=f"call-{i}",
            )
            for i, a in enumerate(ids)
        ],
    )
    return begun, ids


def answer(action_id: str, status: str = "submitted", **extra: Any) -> ActionResponseEnvelope:
    return ActionResponseEnvelope(
        action_id=action_id,
        kind="confirmation",
        request_id=uid(),
        status=status,
        **extra,  # type: ignore[arg-type]
    )


def unchecked_answer(action_id: str) -> ActionResponseEnvelope:
    """An answer that skipped validation, as a careless caller could build it."""
    checked = answer(uid())
    return ActionResponseEnvelope.model_construct(**{**dict(checked), "action_id": action_id})


async def resume(
    store: BeamStore, begun: BeginRunResult, *answers: ActionResponseEnvelope, **overrides: Any
) -> BeginRunResult:
    args: dict[str, Any] = {
        "session_id": begun.session.session_id,
        "interaction_id": begun.interaction.interaction_id,
        "human_content": [],
        "action_responses": list(answers),
    }
    args.update(overrides)
    return await begin(store, **args)


@contextlib.contextmanager
def expect(code: ErrorCode) -> Iterator[pytest.ExceptionInfo[RiverbeamError]]:
    """Like pytest.raises, for a RiverbeamError with exactly this code."""
    with pytest.raises(RiverbeamError) as info:
        yield info
    assert info.value.code is code, f"expected {code.code}, got {info.value!r} {info.value.details}"
