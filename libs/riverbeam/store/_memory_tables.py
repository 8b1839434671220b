"""The records of InMemoryStore and the lookups on them. Callers hold the store's lock."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.store._lending import kept
from riverbeam.store._memory_ledger import LedgerTable
from riverbeam.store._types import NewAction, NewMessage
from riverbeam.types import Action, Interaction, MemoryEntry, Message, Run, Session, deep_copy
from riverbeam.types._copying import updated_copy

__all__ = ["RunTable", "Tables"]


class RunTable(MutableMapping[str, Run]):
    """The runs by id, and an index of the running ones by session, kept on every write.

    Every write goes through `__setitem__` / `__delitem__` (the MutableMapping methods `pop`,
    `update`, `clear` ... do too), so the index never disagrees with the rows: a run is in
    `running_in(session_id)` exactly while its stored status is "running". The busy check
    and the reaper look at running runs only, so their cost does not grow with the runs
    that have finished. `scanned` counts the rows those lookups visited (for tests).
    """

    def __init__(self) -> None:
        self._rows: dict[str, Run] = {}
        self._running: dict[str, dict[str, None]] = {}  # session -> run ids, insertion order
        self.scanned = 0

    def __getitem__(self, run_id: str) -> Run:
        return self._rows[run_id]

    def __setitem__(self, run_id: str, run: Run) -> None:
        old = self._rows.get(run_id)
        if old is not None:
            self._unindex(run_id, old)
        self._rows[run_id] = run
        if run.status == "running":
            self._running.setdefault(run.session_id, {})[run_id] = None

    def __delitem__(self, run_id: str) -> None:
        old = self._rows.pop(run_id)
        self._unindex(run_id, old)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._rows

    def get(self, run_id: str, default: Run | None = None) -> Run | None:  # type: ignore[override]
        return self._rows.get(run_id, default)

    def _unindex(self, run_id: str, old: Run) -> None:
        ids = self._running.get(old.session_id)
        if ids is not None:
            ids.pop(run_id, None)
            if not ids:
                del self._running[old.session_id]

    def running_in(self, session_id: str) -> list[Run]:
        """The session's runs whose status is "running"."""
        ids = self._running.get(session_id, {})
        self.scanned += len(ids)
        return [self._rows[r] for r in ids]

    def running(self) -> list[Run]:
        """Every run whose status is "running"."""
        found = [self._rows[r] for ids in self._running.values() for r in ids]
        self.scanned += len(found)
        return found

    def running_sessions(self) -> set[str]:
        """The sessions with a run whose status is "running"."""
        return set(self._running)


@dataclass
class Tables:
    """Stored records. Values are never mutated in place: a change stores a new copy."""

    sessions: dict[str, Session] = field(default_factory=dict)
    interactions: dict[str, Interaction] = field(default_factory=dict)
    runs: RunTable = field(default_factory=RunTable)
    run_by_request: dict[str, str] = field(default_factory=dict)
    messages: dict[str, list[Message]] = field(default_factory=dict)  # per session, seq order
    message_ids: set[str] = field(default_factory=set)
    actions: dict[str, Action] = field(default_factory=dict)  # insertion order = inbox order
    action_pos: dict[str, int] = field(default_factory=dict)
    memory: list[MemoryEntry] = field(default_factory=list)
    positions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    ledger: LedgerTable = field(default_factory=LedgerTable)  # tool executions

    # ---- lookups -------------------------------------------------------------------------------
    def session(self, session_id: str) -> Session:
        found = self.sessions.get(session_id)
        if found is None:
            raise RiverbeamError(ErrorCode.SESSION_NOT_FOUND, session_id=session_id)
        return found

    def interaction(self, interaction_id: str) -> Interaction:
        found = self.interactions.get(interaction_id)
        if found is None:
            raise RiverbeamError(ErrorCode.INTERACTION_NOT_FOUND, interaction_id=interaction_id)
        return found

    def run(self, run_id: str) -> Run:
        found = self.runs.get(run_id)
        if found is None:
            raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
        return found

    def action(self, action_id: str) -> Action:
        found = self.actions.get(action_id)
        if found is None:
            raise RiverbeamError(ErrorCode.ACTION_NOT_FOUND, action_id=action_id)
        return found

    def busy(self, session_id: str, now: datetime) -> bool:
        """Whether a run of the session is running under a live lease."""
        return self.busy_run(session_id, now) is not None

    def busy_run(self, session_id: str, now: datetime) -> Run | None:
        """The run of the session running under a live lease, if any."""
        for r in self.runs.running_in(session_id):
            if r.lease_expires_at is not None and r.lease_expires_at > now:
                return r
        return None

    def check_owner(
        self, session_id: str, require_owner: str | None, require_org: str | None = None
    ) -> None:
        """An existing session must be require_owner's, in require_org when both have an org
        (BEM-025, as if it did not exist)."""
        old = self.sessions.get(session_id)
        if require_owner is None or old is None:
            return
        other_org = require_org is not None and old.org_id is not None and old.org_id != require_org
        if old.user_id != require_owner or other_org:
            raise RiverbeamError(ErrorCode.SESSION_NOT_FOUND, session_id=session_id)

    def answered(self, action_id: str, interaction_id: str, now: datetime) -> Action:
        """The action a response answers, checked: exists, belongs here, still pending and
        not expired."""
        action = self.action(action_id)
        if action.interaction_id != interaction_id:
            raise RiverbeamError(
                ErrorCode.ACTION_WRONG_INTERACTION,
                action_id=action_id,
                interaction_id=interaction_id,
            )
        expired = action.expires_at is not None and action.expires_at <= now
        if action.status == "expired" or (action.status == "pending" and expired):
            raise RiverbeamError(ErrorCode.ACTION_EXPIRED, action_id=action_id)
        if action.status != "pending":
            raise RiverbeamError(
                ErrorCode.ACTION_NOT_PENDING, action_id=action_id, status=action.status
            )
        if expired:
            raise RiverbeamError(ErrorCode.ACTION_EXPIRED, action_id=action_id)
        return action

    # ---- building records (nothing stored yet) -------------------------------------------------
    def upserted_session(
        self,
        session_id: str,
        user_id: str | None,
        profile_id: str | None,
        org_id: str | None,
        now: datetime,
    ) -> Session:
        """The session after a run begins in it: created, or touched (first owner ids stick)."""
        old = self.sessions.get(session_id)
        if old is None:
            return Session(
                session_id=session_id,
                user_id=user_id,
                profile_id=profile_id,
                org_id=org_id,
                created_at=now,
                last_active_at=now,
            )
        return updated_copy(
            old,
            {
                "user_id": user_id if old.user_id is None else old.user_id,
                "profile_id": profile_id if old.profile_id is None else old.profile_id,
                "org_id": org_id if old.org_id is None else old.org_id,
                "last_active_at": now,
            },
        )

    def opened_interaction(
        self,
        session_id: str,
        agent_name: str,
        interaction_id: str | None,
        resume: bool,
        now: datetime,
        agent_version: str | None = None,
    ) -> Interaction:
        """The interaction a run starts in: reused (in progress again) or created."""
        existing = self.interactions.get(interaction_id) if interaction_id is not None else None
        if existing is not None and existing.session_id == session_id:
            return updated_copy(existing, {"status": "in_progress", "updated_at": now})
        if resume or existing is not None:
            raise RiverbeamError(
                ErrorCode.INTERACTION_NOT_RESUMABLE,
                interaction_id=interaction_id,
                session_id=session_id,
            )
        return Interaction(
            interaction_id=interaction_id or new_id(),
            session_id=session_id,
            agent_name=agent_name,
            status="in_progress",
            created_at=now,
            updated_at=now,
            agent_version=agent_version,
        )

    def check_new_ids(self, messages: list[NewMessage], actions: list[NewAction]) -> None:
        """New message and action ids are unused (Postgres: the primary keys)."""
        message_ids = [m.message_id for m in messages]
        if len(set(message_ids)) != len(message_ids) or self.message_ids.intersection(message_ids):
            raise RiverbeamError(ErrorCode.STORE_CONFLICT, "message_id already used")
        action_ids = [a.action_id for a in actions]
        if len(set(action_ids)) != len(action_ids) or any(a in self.actions for a in action_ids):
            raise RiverbeamError(ErrorCode.STORE_CONFLICT, "action_id already used")

    # ---- writes --------------------------------------------------------------------------------
    def save_messages(
        self,
        session_id: str,
        new: list[NewMessage],
        interaction_id: str | None,
        run_id: str | None,
        now: datetime,
    ) -> list[Message]:
        """Store messages with the session's next sequence numbers."""
        session = self.sessions[session_id]
        first = session.last_seq + 1
        # The record shares the caller's content, args and metadata: copied (deep_copy, not
        # model_copy(deep=True), without deepcopy's memo and reduce machinery) unless the
        # caller gave them to the store (records_lent(given=True)).
        keep = kept(deep_copy)
        saved = [
            keep(
                Message(
                    message_id=m.message_id,
                    session_id=session_id,
                    interaction_id=interaction_id,
                    run_id=run_id,
                    seq=first + i,
                    role=m.role,
                    type=m.type,
                    content=m.content,
                    tool_call_id=m.tool_call_id,
                    tool_name=m.tool_name,
                    tool_args=m.tool_args,
                    tool_result=m.tool_result,
                    metadata=m.metadata,
                    created_at=now,
                )
            )
            for i, m in enumerate(new)
        ]
        if saved:
            self.sessions[session_id] = updated_copy(session, {"last_seq": saved[-1].seq})
            self.messages.setdefault(session_id, []).extend(saved)
            self.message_ids.update(m.message_id for m in saved)
        return saved

    def save_pending(
        self,
        run: Run,
        new: list[NewAction],
        user_id: str | None,
        now: datetime,
        expiry: timedelta | None = None,
    ) -> None:
        keep = kept(deep_copy)
        for action in new:
            self.actions[action.action_id] = keep(
                Action(
                    action_id=action.action_id,
                    session_id=run.session_id,
                    interaction_id=run.interaction_id,
                    run_id=run.run_id,
                    kind=action.kind,
                    tool=action.tool,
                    args=dict(action.args),
                    tool_call_id=action.tool_call_id,
                    status="pending",
                    created_at=now,
                    agent_name=run.agent_name,
                    user_id=user_id,
                    expires_at=None if expiry is None else now + expiry,
                    preview=action.preview,
                    child=action.child,
                )
            )
            self.action_pos[action.action_id] = next(self.positions)

    def purge(self, session_ids: set[str]) -> None:
        """Delete sessions and everything under them."""
        for session_id in session_ids:
            self.sessions.pop(session_id, None)
            for message in self.messages.pop(session_id, []):
                self.message_ids.discard(message.message_id)
        self.interactions = {
            k: v for k, v in self.interactions.items() if v.session_id not in session_ids
        }
        for run_id in [k for k, v in self.runs.items() if v.session_id in session_ids]:
            del self.runs[run_id]
        self.run_by_request = {k: v for k, v in self.run_by_request.items() if v in self.runs}
        self.actions = {k: v for k, v in self.actions.items() if v.session_id not in session_ids}
        self.action_pos = {k: v for k, v in self.action_pos.items() if k in self.actions}
        self.ledger.purge(session_ids)
