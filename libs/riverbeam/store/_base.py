"""The BeamStore protocol: the execution records and memory, as the pipeline uses them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from riverbeam.store._checkpoints import RunCheckpoint
from riverbeam.store._types import (
    BeginRunResult,
    FinishStatus,
    MessageKind,
    NewAction,
    NewMessage,
    RecordedOutcome,
    TakenOverRun,
)
from riverbeam.store._usage import UsageRow
from riverbeam.types import (
    Action,
    ActionResponseEnvelope,
    AgentResult,
    ContentPart,
    Interaction,
    InteractionStatus,
    MemoryEntry,
    Message,
    MessageRole,
    Run,
    RunOptions,
    Session,
    TokenUsage,
    ToolExecution,
    TurnConfig,
)

__all__ = ["BeamStore"]


@runtime_checkable
class BeamStore(Protocol):
    """Where sessions, interactions, runs, messages, actions and memory live.

    Reads are fine-grained; writes are coarse: each write method is one pipeline step and one
    transaction, so a crash leaves the whole step or nothing. Every failure is a
    RiverbeamError with a catalog code; nothing from the database or the network leaks out.
    """

    # ---- reads ---------------------------------------------------------------------------------
    async def get_session(self, *, session_id: str) -> Session:
        """The session, or BEM-025."""
        ...

    async def get_interaction(self, *, interaction_id: str) -> Interaction:
        """The interaction, or BEM-026."""
        ...

    async def get_run(self, *, run_id: str) -> Run:
        """The run, or BEM-028."""
        ...

    async def get_action(self, *, action_id: str) -> Action:
        """The action, or BEM-027."""
        ...

    async def get_run_by_request(self, *, request_id: str) -> Run | None:
        """The run started for a request id, or None."""
        ...

    async def list_runs(self, *, interaction_id: str) -> list[Run]:
        """The runs of an interaction, oldest first (BEM-026 for an unknown interaction)."""
        ...

    async def list_messages(
        self, *, session_id: str, page_size: int = 100, page_token: str | None = None
    ) -> tuple[list[Message], str | None]:
        """One page of a session's messages in sequence order, and the next page's token.

        BEM-025 for an unknown session, BEM-015 for a token this store did not issue.
        """
        ...

    async def list_pending_actions(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> tuple[list[Action], str | None]:
        """The approval inbox: pending, unexpired actions, oldest first, optionally of one
        session/user."""
        ...

    # ---- pipeline steps ------------------------------------------------------------------------
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
        """Start a run, in one transaction.

        Upserts the session (the first user/profile/org ids given are kept), creates or reuses
        the interaction, resolves answered actions (a resume) by compare-and-set from
        `pending`, inserts the run as `running` under a lease, and saves one action_result
        message per resolved action and then the human message.

        With `history_limit` > 0 the result's `history` holds the session's newest
        `history_limit` messages saved before this step (at most 1000), oldest first. With
        `require_owner`, an existing session whose user_id is not that value (or is unset) is
        refused as if it did not exist, checked under the session's row lock, so two users
        creating one new session at once cannot both get it. `require_org` adds the session's
        organisation to that check (a session or caller without an org id does not constrain).

        `history_after` (with `history_after_id`) says the caller already holds the session's
        messages up to that seq, the one at that seq having that message_id. When the stored
        message at that seq has that id, `history` leaves out the messages numbered up to it
        (the rest of the same window) and the result's `history_after` is that seq; otherwise
        (another id, no such message: the session was deleted and made again, or never had
        it) the whole window comes back and `history_after` is 0. Stored messages never
        change, so a matching id means the caller's copies are the stored messages.

        `agent_version` is recorded on the run and on a new interaction (its pin). A resume
        of an interaction pinned to another version follows `version_policy` (`refuse`, the
        default: BEM-260 naming both versions; `major`: accepted when the major versions
        match; `any`), checked inside the step, so nothing is written on refusal.

        `session_config`, when given, replaces the session's configuration (`Session.config`;
        an empty one clears it) inside the step, or with `session_config_narrows` narrows it
        (`stored.then(session_config)`, under the session's lock; an empty one changes
        nothing); `run_options` are recorded on the run
        (`Run.options`; empty ones are not). The result's session and run show both.

        Errors: BEM-031 request_id already used; BEM-260 version pin; BEM-261 an answered
        action expired; BEM-030 names the running run (`run_id`, `request_id` details); BEM-025 the session is not require_owner's;
        BEM-030 another run of the session holds a live lease (exclusive only); BEM-065 the
        interaction belongs to another session, or is missing on resume; BEM-063/068/027/
        064/066 for bad action responses; BEM-002 a negative history_limit.
        """
        ...

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
        """Close a run held by lease_owner, in one transaction.

        Saves the messages (next sequence numbers) and pending actions, sets the run and
        interaction status (by default the interaction follows the run; an interrupted run
        leaves it in progress) and touches the session. BEM-028 for an unknown run; BEM-121,
        writing nothing, when the run is no longer `running` under this owner (e.g. reaped).

        With `lease_epoch` (the fencing token the caller holds): BEM-035, writing nothing,
        when the run is at another epoch (taken over); and the step is idempotent per
        (run_id, epoch): when this owner already finished the run at this epoch (a retry
        whose first answer was lost), the stored run comes back and nothing is written again.

        With `action_ttl_s`, the pending actions expire that long after the step (the store's
        clock): then they cannot be answered (BEM-261) and the inbox no longer lists them.

        `tool_executions` are ledger entries of the run, written in the same transaction with
        record_tool_executions' rules (a refused entry refuses the whole step).
        """
        ...

    # ---- the tool-execution ledger -------------------------------------------------------------
    async def record_tool_executions(
        self,
        *,
        run_id: str,
        entries: Sequence[ToolExecution],
        lease_epoch: int | None = None,
    ) -> list[ToolExecution]:
        """Write ledger entries of a running run, in one transaction; returns them as stored.

        Each entry is a compare-and-set against the stored one: new entries are inserted; an
        unfinished one moves forward (requested -> started -> a final status); a final one
        never changes (the same final state again is a no-op, BEM-263 otherwise), nor does
        the call it records. BEM-264 for an entry of another run or a bad field; BEM-035 when
        the run is not running at `lease_epoch` (taken over, finished); BEM-121 when it is not
        running and no epoch is given; BEM-028 for an unknown run. A refused batch writes
        nothing.
        """
        ...

    async def list_tool_executions(
        self,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> tuple[list[ToolExecution], str | None]:
        """One page of a run's or an interaction's ledger, in call order, and the next token.

        Exactly one of run_id and interaction_id (BEM-265); BEM-028 / BEM-026 when unknown;
        BEM-015 for a token this store did not issue.
        """
        ...

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
        """Record what the tool of an approved action did: approved_ran or approved_failed.

        Only an action resolved as approved_unknown takes an outcome, once (BEM-121 after
        that); BEM-027 for an unknown action. With `run_id` and `lease_epoch` (the run that
        ran the tool and the epoch it holds), BEM-035 once that run was taken over.
        """
        ...

    async def begin_child_run(
        self,
        *,
        parent_run_id: str,
        run_id: str,
        agent_name: str,
        lease_owner: str,
        lease_epoch: int,
        agent_version: str | None = None,
    ) -> Run:
        """Start a child run (an agent called by the run parent_run_id), in one transaction.

        The child is `running` in the parent's session and interaction, with the parent's
        lease owner and epoch and no lease expiry of its own (it is never busy, reaped or
        taken over by itself); it writes no message. Idempotent per run_id: a repeat returns
        the stored child. BEM-028 for an unknown parent; BEM-035 when the parent is at another
        epoch; BEM-121 when it is not running under lease_owner; BEM-237 when run_id is taken
        by a run that is not this parent's child.
        """
        ...

    async def finish_child_run(
        self,
        *,
        run_id: str,
        parent_run_id: str,
        lease_owner: str,
        lease_epoch: int,
        status: FinishStatus,
        error_code: str | None = None,
        error_message: str | None = None,
        token_usage: TokenUsage | None = None,
        model_used: str | None = None,
        result: AgentResult | None = None,
    ) -> Run:
        """Close a child run, fenced like begin_child_run, in one transaction.

        A repeat of a finish this owner committed at this epoch returns the stored run.
        BEM-028 unknown run; BEM-237 not a child of parent_run_id; BEM-121 already finished
        by another, or the parent is not running under lease_owner; BEM-035 stale epoch.
        """
        ...

    async def record_handoff(
        self,
        *,
        run_id: str,
        lease_owner: str,
        lease_epoch: int,
        agent_name: str,
        agent_version: str | None = None,
    ) -> Interaction:
        """A handoff, in one transaction: the interaction of run_id is given to agent_name.

        The interaction's agent and version pin become the target's (so a resume of the
        interaction names, and is checked against, the target). Fenced by the run: BEM-028
        unknown run; BEM-035 at another epoch; BEM-121 not running under lease_owner.
        """
        ...

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
        """Save one message with the session's next sequence number (BEM-025 if no session).

        With `run_id` and `lease_epoch`, the run must still be running at that epoch, checked
        in the same transaction (BEM-035 otherwise, BEM-028 for an unknown run).
        """
        ...

    # ---- leases --------------------------------------------------------------------------------
    async def renew_lease(
        self, *, run_id: str, lease_owner: str, ttl_s: float, lease_epoch: int | None = None
    ) -> bool:
        """Extend the lease; False when the run is no longer running under this owner (or,
        with `lease_epoch`, no longer at that epoch)."""
        ...

    async def reap_expired_runs(
        self, *, now: datetime | None = None, limit: int = 100
    ) -> list[Run]:
        """Fail running runs whose lease expired before `now` (BEM-034) and their interactions.

        Returns the runs reaped, so the caller can publish their final error frames. Concurrent
        reapers never return the same run. Each reaped run's epoch is bumped, so its old
        holder's fenced writes are refused. The runs' unfinished ledger entries are settled
        in the same transaction: a started call becomes `unknown`, a requested one
        `cancelled`.
        """
        ...

    async def take_over_expired_runs(
        self,
        *,
        new_owner: str,
        lease_ttl_s: float,
        now: datetime | None = None,
        limit: int = 100,
        exclude_run_ids: Sequence[str] = (),
    ) -> list[TakenOverRun]:
        """Take over running runs whose lease expired before `now`, in one transaction.

        Each run's epoch is bumped by compare-and-set and its lease given to `new_owner` for
        `lease_ttl_s`; the run stays `running`. From then on the old holder's fenced writes
        (finish, renew, append at the old epoch) are refused with BEM-035. Concurrent callers
        never take the same run. Runs in `exclude_run_ids` are left alone. The runs'
        unfinished ledger entries are settled in the same transaction (a started call becomes
        `unknown`, a requested one `cancelled`): what the old holder was doing is on record
        as such before anyone continues the run.
        """
        ...

    async def expire_pending_actions(
        self, *, now: datetime | None = None, limit: int = 100
    ) -> list[Action]:
        """Mark pending actions whose `expires_at` is before `now` as `expired` (the sweeper).

        Returns the actions marked, oldest first. Concurrent sweepers never mark one action
        twice; an answer to a marked action is refused with BEM-261.
        """
        ...

    # ---- checkpoints (durable runs) ------------------------------------------------------------
    async def save_run_checkpoint(
        self, *, run_id: str, lease_epoch: int, step: int, state: dict[str, Any]
    ) -> RunCheckpoint:
        """Save a run's checkpoint (replacing its earlier one), in one transaction.

        The run must be `running` at `lease_epoch`, checked in the same transaction: BEM-035
        otherwise (BEM-028 for an unknown run), and nothing is written. `step` (1, 2, ...)
        may repeat the stored one (a retry) but not go below it (BEM-121). `state` is a JSON
        object (BEM-002 otherwise), returned as stored.
        """
        ...

    async def get_run_checkpoint(self, *, run_id: str) -> RunCheckpoint | None:
        """The run's newest checkpoint, or None when it has none."""
        ...

    # ---- memory --------------------------------------------------------------------------------
    async def remember(
        self,
        *,
        scope_name: str,
        scope_id: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        org_id: str | None = None,
    ) -> MemoryEntry:
        """Save an entry in the scope (scope_name, scope_id) of organisation org_id.

        Memory is keyed by organisation as well as scope: None (or "") is the unscoped
        organisation of single-tenant deployments, an organisation of its own. BEM-100 for
        a bad scope or org id.
        """
        ...

    async def recall(
        self, *, scopes: Sequence[tuple[str, str]], limit: int = 20, org_id: str | None = None
    ) -> list[MemoryEntry]:
        """The newest `limit` entries of org_id across the given scopes, newest first.

        Only entries written for the same organisation (None: unscoped entries) are read.
        """
        ...

    # ---- retention -----------------------------------------------------------------------------
    async def delete_idle_sessions(self, *, older_than: timedelta) -> int:
        """Delete sessions idle for longer than older_than, with everything under them.

        A session with a run still holding a live lease is kept. Returns how many were deleted.
        A window shorter than an hour (the retention setting's minimum) is BEM-002.
        """
        ...

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
        """Token usage of the runs started in [start, end), per group and model, in one read.

        `group_by` is run, session, user or org (BEM-425 otherwise, or for end <= start); the
        user, org and session filters narrow the runs. Rows are ordered by key then model;
        their cost is 0 (the router prices them).
        """
        ...

    async def aclose(self) -> None:
        """Release what the store holds. Idempotent."""
        ...
