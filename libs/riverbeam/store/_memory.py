"""InMemoryStore: the BeamStore of tests and single-process development."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks
from riverbeam.store._lending import handed_out, kept
from riverbeam.store._memory_checkpoints import MemoryCheckpoints
from riverbeam.store._memory_children import MemoryChildRuns
from riverbeam.store._memory_ledger import MemoryLedger
from riverbeam.store._memory_scopes import MemoryScopes
from riverbeam.store._memory_sweeps import MemorySweeps
from riverbeam.store._memory_tables import Tables
from riverbeam.store._nul import nul_safe
from riverbeam.store._run_config import recorded_options, with_session_config
from riverbeam.store._steps import action_result_message, check_resume_agent, resolution
from riverbeam.store._types import (
    BeginRunResult,
    FinishStatus,
    MessageKind,
    NewAction,
    NewMessage,
    RecordedOutcome,
)
from riverbeam.store._usage import UsageRow, check_usage_query, summarize
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
    deep_copy,
)
from riverbeam.types._copying import updated_copy

if TYPE_CHECKING:
    from riverbeam.agents._io import MemoryWriter
    from riverbeam.store._base import BeamStore

__all__ = ["InMemoryStore"]

_M = TypeVar("_M", bound=BaseModel)


def _copy(record: _M) -> _M:
    return deep_copy(record)


def _utcnow() -> datetime:
    return datetime.now(UTC)


class InMemoryStore(MemoryScopes, MemoryLedger, MemoryCheckpoints, MemoryChildRuns, MemorySweeps):
    """A BeamStore in process memory, with the same semantics as PgBeamStore.

    One asyncio.Lock serialises every operation, and each operation checks everything before
    it changes anything (and never awaits in between), so a step is applied whole or not at
    all. Records are copied on the way in and out: callers never hold what is stored.
    """

    def __init__(self, *, clock: Callable[[], datetime] = _utcnow) -> None:
        self._clock = clock
        self._lock = asyncio.Lock()
        self._t = Tables()
        self._checkpoints = {}

    async def __aenter__(self) -> InMemoryStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        return None

    # ---- reads ---------------------------------------------------------------------------------
    @nul_safe
    async def get_session(self, *, session_id: str) -> Session:
        async with self._lock:
            return _copy(self._t.session(session_id))

    @nul_safe
    async def get_interaction(self, *, interaction_id: str) -> Interaction:
        async with self._lock:
            return _copy(self._t.interaction(interaction_id))

    @nul_safe
    async def get_run(self, *, run_id: str) -> Run:
        async with self._lock:
            return _copy(self._t.run(run_id))

    @nul_safe
    async def get_action(self, *, action_id: str) -> Action:
        async with self._lock:
            return _copy(self._t.action(action_id))

    @nul_safe
    async def get_run_by_request(self, *, request_id: str) -> Run | None:
        async with self._lock:
            run_id = self._t.run_by_request.get(request_id)
            return None if run_id is None else _copy(self._t.runs[run_id])

    @nul_safe
    async def list_runs(self, *, interaction_id: str) -> list[Run]:
        async with self._lock:
            self._t.interaction(interaction_id)
            return [_copy(r) for r in self._t.runs.values() if r.interaction_id == interaction_id]

    @nul_safe
    async def list_messages(
        self, *, session_id: str, page_size: int = 100, page_token: str | None = None
    ) -> tuple[list[Message], str | None]:
        size = _checks.page_size(page_size)
        after = _checks.decode_page_token(page_token)
        async with self._lock:
            self._t.session(session_id)
            # Sequence numbers are dense from 1, so seq n sits at index n - 1.
            rows = self._t.messages.get(session_id, [])[after : after + size + 1]
            page = [_copy(m) for m in rows[:size]]
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
        async with self._lock:
            now = self._clock()
            found: list[tuple[int, Action]] = []
            for action_id, action in self._t.actions.items():
                pos = self._t.action_pos[action_id]
                if (
                    pos > after
                    and action.status == "pending"
                    and (action.expires_at is None or action.expires_at > now)
                    and (session_id is None or action.session_id == session_id)
                    and (user_id is None or action.user_id == user_id)
                ):
                    found.append((pos, _copy(action)))
                    if len(found) > size:
                        break
        page = found[:size]
        token = _checks.encode_page_token(page[-1][0]) if len(found) > size else None
        return [a for _, a in page], token

    # ---- pipeline steps ------------------------------------------------------------------------
    @nul_safe
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
        policy = _checks.version_policy(version_policy)
        ttl = _checks.lease_ttl(lease_ttl_s)
        limit = _checks.history_limit(history_limit)
        t = self._t
        async with self._lock:
            now = self._clock()
            # Checks, in the order PgBeamStore meets them.
            if request_id is not None and request_id in t.run_by_request:
                raise RiverbeamError(ErrorCode.REQUEST_ID_REUSED, request_id=request_id)
            t.check_owner(session_id, require_owner, require_org)
            session = with_session_config(
                t.upserted_session(session_id, user_id, profile_id, org_id, now),
                session_config,
                narrows=session_config_narrows,
            )
            interaction = t.opened_interaction(
                session_id, agent_name, interaction_id, bool(action_responses), now, agent_version
            )
            if action_responses:
                check_resume_agent(interaction, agent_name)
                _checks.version_pin(interaction, agent_version, policy)
            answered = [
                t.answered(r.action_id, interaction.interaction_id, now) for r in action_responses
            ]
            # After the actions, as in PgBeamStore: a second resume of one action is told 066.
            holder = t.busy_run(session_id, now) if exclusive else None
            if holder is not None:
                raise _checks.session_busy(session_id, holder.run_id, holder.request_id)
            if run_id in t.runs:
                raise RiverbeamError(ErrorCode.STORE_CONFLICT, "run_id already used", run_id=run_id)

            # Everything is checked: apply.
            resolved: list[Action] = []
            new_messages: list[NewMessage] = []
            keep = kept(_copy)  # no copy of what the caller gave (records_lent)
            for action, response in zip(answered, action_responses, strict=True):
                status, outcome = resolution(response)
                update = {"status": status, "outcome": outcome, "resolved_at": now}
                done = updated_copy(action, {**update, "response": keep(response)})
                resolved.append(done)
                new_messages.append(action_result_message(done, response))
            if human_content:
                new_messages.append(
                    NewMessage(role="human", content=list(human_content), metadata=message_metadata)
                )
            run = Run(
                run_id=run_id,
                interaction_id=interaction.interaction_id,
                session_id=session_id,
                agent_name=agent_name,
                status="running",
                request_id=request_id,
                started_at=now,
                lease_owner=lease_owner,
                lease_expires_at=now + ttl,
                lease_epoch=1,
                agent_version=agent_version,
                options=recorded_options(run_options),
            )
            out = handed_out(_copy)  # records_lent: the caller only serialises
            earlier = t.messages.get(session_id, [])
            known = _checks.known_history(earlier, history_after, history_after_id)
            start = max(len(earlier) - limit, known)
            history = [out(m) for m in earlier[start:]] if limit else []
            t.sessions[session_id] = session
            t.interactions[interaction.interaction_id] = interaction
            t.actions.update((a.action_id, a) for a in resolved)
            t.runs[run_id] = run
            if request_id is not None:
                t.run_by_request[request_id] = run_id
            saved = t.save_messages(
                session_id, new_messages, interaction.interaction_id, run_id, now
            )
            return BeginRunResult(
                session=out(t.sessions[session_id]),
                interaction=out(interaction),
                run=out(run),
                human_message=out(saved[-1]) if human_content else None,
                resolved_actions=[out(a) for a in resolved],
                action_messages=[out(m) for m in saved[: len(resolved)]],
                history=history,
                history_after=known if limit else 0,
            )

    @nul_safe
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
        expiry = _checks.action_ttl(action_ttl_s)
        # Not copied here: save_messages and save_pending store copies (unless given).
        new_messages = list(messages)
        new_actions = list(pending_actions)
        t = self._t
        async with self._lock:
            now = self._clock()
            run = t.run(run_id)
            if epoch is not None:
                if run.lease_epoch != epoch:
                    raise _checks.stale_epoch(run_id, epoch, run.lease_epoch)
                if run.status != "running" and run.lease_owner == lease_owner:
                    # This owner already finished the run at this epoch: a retry.
                    return _copy(run)
            if run.status != "running" or run.lease_owner != lease_owner:
                raise RiverbeamError(
                    ErrorCode.STORE_CONFLICT,
                    "the run is no longer running under this lease",
                    run_id=run_id,
                    status=run.status,
                )
            t.check_new_ids(new_messages, new_actions)
            t.ledger.apply(run, tool_executions)  # checked whole first: refused, nothing written

            # The caller's values copied in (unless given); the rest is the old record's (no one holds it).
            keep = kept(_copy)
            finished = updated_copy(
                run,
                {
                    "status": final,
                    "finished_at": now,
                    "error_code": error_code,
                    "error_message": error_message,
                    "token_usage": None if token_usage is None else keep(token_usage),
                    "model_used": model_used,
                    "result": None if result is None else keep(result),
                },
            )
            t.runs[run_id] = finished
            interaction = t.interactions[run.interaction_id]
            t.interactions[run.interaction_id] = updated_copy(
                interaction, {"status": after, "updated_at": now}
            )
            session = t.sessions[run.session_id]
            t.sessions[run.session_id] = updated_copy(session, {"last_active_at": now})
            t.save_messages(run.session_id, new_messages, run.interaction_id, run_id, now)
            t.save_pending(finished, new_actions, session.user_id, now, expiry)
            return handed_out(_copy)(finished)

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
        async with self._lock:
            if run_id is not None and epoch is not None:
                holder = self._t.run(run_id)
                if holder.lease_epoch != epoch:
                    raise _checks.stale_epoch(run_id, epoch, holder.lease_epoch)
            action = self._t.action(action_id)
            if action.status != "resolved" or action.outcome != "approved_unknown":
                raise RiverbeamError(
                    ErrorCode.STORE_CONFLICT,
                    "only an approved action awaiting its outcome takes one",
                    action_id=action_id,
                    status=action.status,
                    outcome=action.outcome,
                )
            updated = _copy(
                action.model_copy(update={"outcome": recorded, "result": result, "error": error})
            )
            self._t.actions[action_id] = updated
            return _copy(updated)

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
        t = self._t
        async with self._lock:
            now = self._clock()
            session = t.session(session_id)
            if interaction_id is not None:
                t.interaction(interaction_id)
            if run_id is not None:
                held = t.run(run_id)
                if epoch is not None and (held.lease_epoch != epoch or held.status != "running"):
                    raise _checks.stale_epoch(run_id, epoch, held.lease_epoch)
            t.check_new_ids([new], [])
            t.sessions[session_id] = updated_copy(session, {"last_active_at": now})
            (saved,) = t.save_messages(session_id, [new], interaction_id, run_id, now)
            return _copy(saved)

    # ---- leases --------------------------------------------------------------------------------
    @nul_safe
    async def renew_lease(
        self, *, run_id: str, lease_owner: str, ttl_s: float, lease_epoch: int | None = None
    ) -> bool:
        ttl = _checks.lease_ttl(ttl_s)
        epoch = _checks.lease_epoch(lease_epoch)
        async with self._lock:
            run = self._t.runs.get(run_id)
            if run is None or run.status != "running" or run.lease_owner != lease_owner:
                return False
            if epoch is not None and run.lease_epoch != epoch:
                return False
            self._t.runs[run_id] = updated_copy(run, {"lease_expires_at": self._clock() + ttl})
            return True

    # ---- retention -----------------------------------------------------------------------------
    async def delete_idle_sessions(self, *, older_than: timedelta) -> int:
        idle = _checks.idle_cutoff(older_than)
        async with self._lock:
            now = self._clock()
            doomed = {
                s.session_id
                for s in self._t.sessions.values()
                if s.last_active_at < now - idle and not self._t.busy(s.session_id, now)
            }
            self._t.purge(doomed)
            self._forget_checkpoints()
            return len(doomed)

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
        async with self._lock:
            runs = [(r, self._t.sessions.get(r.session_id)) for r in self._t.runs.values()]
            return summarize(
                runs,
                group=group,
                start=start,
                end=end,
                user_id=user_id,
                org_id=org_id,
                session_id=session_id,
            )


if TYPE_CHECKING:  # mypy proves the implementation satisfies both protocols

    def _is_beam_store(store: InMemoryStore) -> BeamStore:
        return store

    def _is_memory_writer(store: InMemoryStore) -> MemoryWriter:
        return store
