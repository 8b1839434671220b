"""PgBeamStore: the BeamStore on PostgreSQL (asyncpg)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import asyncpg

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks, _rows
from riverbeam.store._migrations import apply_migrations, quote_schema
from riverbeam.store._nul import nul_free_call, nul_safe, nul_safe_but
from riverbeam.store._pg_begin import (
    BeginArgs,
    begin_in_one_call,
    begin_in_statements,
    one_call_config,
)
from riverbeam.store._pg_checkpoints import PgCheckpoints
from riverbeam.store._pg_children import PgChildRuns
from riverbeam.store._pg_errors import translate_pg_errors
from riverbeam.store._pg_leases import PgLeases
from riverbeam.store._pg_ledger import PgLedger, write_entries
from riverbeam.store._pg_memory import PgMemory
from riverbeam.store._pg_one_message import finish_call
from riverbeam.store._pg_pool import KeptConnections, PooledConnection
from riverbeam.store._pg_step_parts import (
    check_fence,
    why_not_finished,
)
from riverbeam.store._sql import Statements
from riverbeam.store._types import (
    BeginRunResult,
    FinishStatus,
    MessageKind,
    NewAction,
    NewMessage,
    RecordedOutcome,
)
from riverbeam.store._usage import UsageRow, check_usage_query, usage_sql
from riverbeam.store._usage import row_of as usage_row_of
from riverbeam.types import (
    Action,
    ActionResponseEnvelope,
    AgentResult,
    ContentPart,
    Interaction,
    InteractionStatus,
    Message,
    MessageRole,
    Run,
    RunOptions,
    Session,
    TokenUsage,
    ToolExecution,
    TurnConfig,
)

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    from riverbeam.agents._io import MemoryWriter
    from riverbeam.store._base import BeamStore

    Pool = asyncpg.Pool[asyncpg.Record]
    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = ["DEFAULT_SCHEMA", "PgBeamStore", "StepHook"]

DEFAULT_SCHEMA = "ref_beam"

StepHook = Callable[[str, "Connection"], Awaitable[None]]
"""Called as hook(step, connection) inside a step's transaction, just before it commits.

For fault-injection tests (kill the connection, then check that nothing of the step remains).
"""


async def _keep_session(conn: asyncpg.Connection[asyncpg.Record]) -> None:
    """Pool release without the default reset query (RESET ALL, UNLISTEN *, ...).

    The store leaves no session state behind (only SET LOCAL and transaction-level advisory
    locks), and asyncpg still rolls back an open transaction on release, so skipping the
    query saves a round trip on every operation.
    """


class PgBeamStore(PgLeases, PgMemory, PgLedger, PgCheckpoints, PgChildRuns):
    """A BeamStore on PostgreSQL.

    Build it with `await PgBeamStore.connect(url)` (a pool of its own, migrations applied) or
    `PgBeamStore.new(pool)` (your pool, no DDL; call `await store.migrate()` if you want them).
    Every pipeline step is one transaction; message sequence numbers come from a counter on
    the session row bumped in the same transaction, guarded by UNIQUE (session_id, seq).
    Leases live in `_pg_leases.PgLeases`, memory in `_pg_memory.PgMemory`.
    """

    def __init__(
        self,
        pool: Pool,
        *,
        schema: str = DEFAULT_SCHEMA,
        owns_pool: bool = False,
        acquire_timeout: float = 10.0,
        before_commit: StepHook | None = None,
    ) -> None:
        self._pool = pool
        self._schema = schema
        self._sql = Statements.for_schema(quote_schema(schema))
        self._owns_pool = owns_pool
        self._acquire_timeout = acquire_timeout
        self._before_commit = before_commit
        self._closed = False
        # Only on a pool of its own: one someone else closes must not wait on its steps'.
        self._kept = KeptConnections(pool) if owns_pool else None

    @classmethod
    def new(
        cls, pool: Pool, *, schema: str = DEFAULT_SCHEMA, before_commit: StepHook | None = None
    ) -> PgBeamStore:
        """A store on a pool you manage; runs no DDL and does not close the pool."""
        return cls(pool, schema=schema, before_commit=before_commit)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        min_size: int = 1,
        max_size: int = 10,
        command_timeout: float | None = 60.0,
        before_commit: StepHook | None = None,
    ) -> PgBeamStore:
        """Open a pool to `url`, apply pending migrations to `schema`, and return the store.

        Safe when several replicas start at once. BEM-120 when the database cannot be reached,
        BEM-122 when a migration fails.
        """
        quote_schema(schema)
        with translate_pg_errors():
            pool = await asyncpg.create_pool(
                url,
                min_size=min_size,
                max_size=max_size,
                command_timeout=command_timeout,
                reset=_keep_session,
            )
        store = cls(pool, schema=schema, owns_pool=True, before_commit=before_commit)
        try:
            await store.migrate()
        except BaseException:
            await store.aclose()
            raise
        return store

    @property
    def schema(self) -> str:
        return self._schema

    async def migrate(self) -> list[int]:
        """Apply pending migrations; returns the versions applied by this call."""
        async with self._connection() as conn:
            return await apply_migrations(conn, self._schema)

    async def __aenter__(self) -> PgBeamStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._kept is not None:
            await self._kept.aclose()
        if self._owns_pool:
            await self._pool.close()

    def _connection(self) -> contextlib.AbstractAsyncContextManager[Connection]:
        return PooledConnection(self._pool, self._acquire_timeout, self._kept)

    @asynccontextmanager
    async def _transaction(self, step: str) -> AsyncIterator[Connection]:
        async with self._connection() as conn, conn.transaction():
            yield conn
            if self._before_commit is not None:
                await self._before_commit(step, conn)

    def _step(self, step: str) -> contextlib.AbstractAsyncContextManager[Connection]:
        """A step of one statement: a plain connection (the statement is its own transaction),
        or a transaction when a before_commit hook is set, so the hook runs before it commits."""
        return self._connection() if self._before_commit is None else self._transaction(step)

    # ---- reads ---------------------------------------------------------------------------------
    @nul_safe
    async def get_session(self, *, session_id: str) -> Session:
        async with self._connection() as conn:
            row = await conn.fetchrow(self._sql.get_session, session_id)
        if row is None:
            raise RiverbeamError(ErrorCode.SESSION_NOT_FOUND, session_id=session_id)
        return _rows.session_of(row)

    @nul_safe
    async def get_interaction(self, *, interaction_id: str) -> Interaction:
        async with self._connection() as conn:
            row = await conn.fetchrow(self._sql.get_interaction, interaction_id)
        if row is None:
            raise RiverbeamError(ErrorCode.INTERACTION_NOT_FOUND, interaction_id=interaction_id)
        return _rows.interaction_of(row)

    @nul_safe
    async def get_run(self, *, run_id: str) -> Run:
        async with self._connection() as conn:
            row = await conn.fetchrow(self._sql.get_run, run_id)
        if row is None:
            raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
        return _rows.run_of(row)

    @nul_safe
    async def get_action(self, *, action_id: str) -> Action:
        async with self._connection() as conn:
            row = await conn.fetchrow(self._sql.get_action, action_id)
        if row is None:
            raise RiverbeamError(ErrorCode.ACTION_NOT_FOUND, action_id=action_id)
        return _rows.action_of(row)

    @nul_safe
    async def get_run_by_request(self, *, request_id: str) -> Run | None:
        async with self._connection() as conn:
            row = await conn.fetchrow(self._sql.get_run_by_request, request_id)
        return None if row is None else _rows.run_of(row)

    @nul_safe
    async def list_runs(self, *, interaction_id: str) -> list[Run]:
        async with self._connection() as conn:
            rows = await conn.fetch(self._sql.list_runs, interaction_id)
            if not rows and not await conn.fetchval(self._sql.interaction_exists, interaction_id):
                raise RiverbeamError(ErrorCode.INTERACTION_NOT_FOUND, interaction_id=interaction_id)
        return [_rows.run_of(r) for r in rows]

    @nul_safe
    async def list_messages(
        self, *, session_id: str, page_size: int = 100, page_token: str | None = None
    ) -> tuple[list[Message], str | None]:
        size = _checks.page_size(page_size)
        after = _checks.decode_page_token(page_token)
        async with self._connection() as conn:
            rows = await conn.fetch(self._sql.list_messages, session_id, after, size + 1)
            if not rows and not await conn.fetchval(self._sql.session_exists, session_id):
                raise RiverbeamError(ErrorCode.SESSION_NOT_FOUND, session_id=session_id)
        page = [_rows.message_of(r) for r in rows[:size]]
        return page, _checks.encode_page_token(page[-1].seq) if len(rows) > size else None

    @nul_safe
    async def list_pending_actions(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> tuple[list[Action], str | None]:
        size = _checks.page_size(page_size)
        after = _checks.decode_page_token(page_token)
        async with self._connection() as conn:
            rows = await conn.fetch(self._sql.list_pending, after, session_id, user_id, size + 1)
        page = rows[:size]
        token = _checks.encode_page_token(int(page[-1]["pos"])) if len(rows) > size else None
        return [_rows.action_of(r) for r in page], token

    # ---- pipeline steps ------------------------------------------------------------------------
    # The new messages' arguments are scrubbed by the one-call step only when their parameters
    # may hold a U+0000 (nul_free_call); the statement-by-statement step scrubs them first.
    @nul_safe_but("human_content", "message_metadata")
    async def begin_run(
        self,
        *,
        session_id: str,
        agent_name: str,
        run_id: str,
        lease_owner: str,
        lease_ttl_s: float,
        user_id: str | None = None,
        profile_id: str | None = None,
        org_id: str | None = None,
        interaction_id: str | None = None,
        request_id: str | None = None,
        human_content: Sequence[ContentPart] = (),
        message_metadata: dict[str, Any] | None = None,
        exclusive: bool = False,
        action_responses: Sequence[ActionResponseEnvelope] = (),
        history_limit: int = 0,
        require_owner: str | None = None,
        require_org: str | None = None,
        agent_version: str | None = None,
        version_policy: str | None = None,
        session_config: TurnConfig | None = None,
        run_options: RunOptions | None = None,
        session_config_narrows: bool = False,
        history_after: int = 0,
        history_after_id: str | None = None,
    ) -> BeginRunResult:
        _checks.action_responses(action_responses)
        args = BeginArgs(
            session_id=session_id,
            agent_name=agent_name,
            run_id=run_id,
            lease_owner=lease_owner,
            ttl=_checks.lease_ttl(lease_ttl_s),
            user_id=user_id,
            profile_id=profile_id,
            org_id=org_id,
            interaction_id=interaction_id,
            request_id=request_id,
            human_content=human_content,
            message_metadata=message_metadata,
            exclusive=exclusive,
            action_responses=action_responses,
            limit=_checks.history_limit(history_limit),
            require_owner=require_owner,
            require_org=require_org,
            agent_version=agent_version,
            policy=_checks.version_policy(version_policy),
            session_config=session_config,
            run_options=run_options,
            session_config_narrows=session_config_narrows,
            history_after=history_after,
            history_after_id=history_after_id,
        )
        config = one_call_config(args)
        if config is not None:  # one round trip: its own transaction, or the hook's
            async with self._step("begin_run") as conn:
                return await begin_in_one_call(conn, self._schema, args, config)
        async with self._transaction("begin_run") as conn:
            return await begin_in_statements(conn, self._sql, self._schema, args)

    @nul_safe_but("messages", "token_usage", "result")  # scrubbed by nul_free_call
    async def finish_run(
        self,
        *,
        run_id: str,
        lease_owner: str,
        status: FinishStatus,
        messages: Sequence[NewMessage] = (),
        pending_actions: Sequence[NewAction] = (),
        interaction_status: InteractionStatus | None = None,
        error_code: str | None = None,
        error_message: str | None = None,
        token_usage: TokenUsage | None = None,
        model_used: str | None = None,
        result: AgentResult | None = None,
        lease_epoch: int | None = None,
        action_ttl_s: float | None = None,
        tool_executions: Sequence[ToolExecution] = (),
    ) -> Run:
        final = _checks.finish_status(status)
        after = _checks.interaction_after(final, interaction_status)
        epoch = _checks.lease_epoch(lease_epoch)
        sql, expiry = self._sql, _checks.action_ttl(action_ttl_s)
        # One statement, its own transaction (a transaction around it only for the test hook),
        # and, with ledger entries, the ledger's write after it in the same transaction: a
        # refused batch refuses the whole step.
        step = self._transaction("finish_run") if tool_executions else self._step("finish_run")

        def call(
            messages: Sequence[NewMessage], usage: TokenUsage | None, result: AgentResult | None
        ) -> tuple[str, list[Any]]:
            head = (
                run_id,
                lease_owner,
                final,
                error_code,
                error_message,
                _rows.dump(usage),
                model_used,
                _rows.dump(result),
                epoch,
            )
            return finish_call(sql, self._schema, head, messages, after, pending_actions, expiry)

        async with step as conn:
            query, params = nul_free_call(call, messages, token_usage, result)
            row = await conn.fetchrow(query, *params)
            if row is None:
                # A repeat of this owner's own finish at this epoch returns what it stored.
                return await why_not_finished(conn, sql, run_id, lease_owner, epoch)
            run = _rows.run_of(row)
            await write_entries(conn, self._schema, run, tool_executions)
        return run

    @nul_safe
    async def record_action_outcome(
        self,
        *,
        action_id: str,
        outcome: RecordedOutcome,
        result: Any = None,
        error: str | None = None,
        run_id: str | None = None,
        lease_epoch: int | None = None,
    ) -> Action:
        recorded = _checks.recorded_outcome(outcome)
        epoch = _checks.lease_epoch(lease_epoch)
        fenced = run_id is not None and epoch is not None
        step = self._transaction("record_action_outcome") if fenced else self._connection()
        async with step as conn:
            if run_id is not None and epoch is not None:
                await check_fence(conn, self._sql, run_id, epoch, running=False)
            row = await conn.fetchrow(
                self._sql.record_outcome, action_id, recorded, _rows.dump(result), error
            )
            if row is None:
                current = await conn.fetchrow(self._sql.get_action, action_id)
                if current is None:
                    raise RiverbeamError(ErrorCode.ACTION_NOT_FOUND, action_id=action_id)
                raise RiverbeamError(
                    ErrorCode.STORE_CONFLICT,
                    "only an approved action awaiting its outcome takes one",
                    action_id=action_id,
                    status=current["status"],
                    outcome=current["outcome"],
                )
        return _rows.action_of(row)

    @nul_safe
    async def append_message(
        self,
        *,
        session_id: str,
        role: MessageRole,
        content: Sequence[ContentPart] = (),
        type: MessageKind = "message",
        interaction_id: str | None = None,
        run_id: str | None = None,
        message_id: str | None = None,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        tool_args: dict[str, Any] | None = None,
        tool_result: Any = None,
        metadata: dict[str, Any] | None = None,
        lease_epoch: int | None = None,
    ) -> Message:
        epoch = _checks.lease_epoch(lease_epoch)
        new = _checks.new_message(
            role=role,
            type=type,
            content=list(content),
            message_id=message_id,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            tool_args=tool_args,
            tool_result=tool_result,
            metadata=metadata,
        )
        message_id, *values = _rows.message_values(new)
        fenced = run_id is not None and epoch is not None
        step = self._transaction("append_message") if fenced else self._connection()
        async with step as conn:
            if run_id is not None and epoch is not None:
                await check_fence(conn, self._sql, run_id, epoch, running=True)
            row = await conn.fetchrow(
                self._sql.append_message, session_id, message_id, interaction_id, run_id, *values
            )
        if row is None:
            raise RiverbeamError(ErrorCode.SESSION_NOT_FOUND, session_id=session_id)
        return _rows.message_of(row)

    # ---- retention -----------------------------------------------------------------------------
    async def delete_idle_sessions(self, *, older_than: timedelta) -> int:
        idle = _checks.idle_cutoff(older_than)
        async with self._connection() as conn:
            deleted = await conn.fetchval(self._sql.delete_idle, idle)
        return int(deleted or 0)

    # ---- usage ---------------------------------------------------------------------------------
    async def summarize_usage(
        self,
        *,
        group_by: str,
        start: datetime | None = None,
        end: datetime | None = None,
        user_id: str | None = None,
        org_id: str | None = None,
        session_id: str | None = None,
    ) -> list[UsageRow]:
        group = check_usage_query(group_by, start, end)
        query = usage_sql(quote_schema(self._schema), group)
        async with self._connection() as conn:
            rows = await conn.fetch(query, start, end, user_id, org_id, session_id)
        return [usage_row_of(r) for r in rows]


if TYPE_CHECKING:  # mypy proves the implementation satisfies both protocols

    def _is_beam_store(store: PgBeamStore) -> BeamStore:
        return store

    def _is_memory_writer(store: PgBeamStore) -> MemoryWriter:
        return store
