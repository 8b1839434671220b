"""StoreClient: the BeamStore over gRPC, talking to the store service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
from google.protobuf import duration_pb2, json_format, struct_pb2, timestamp_pb2

from riverbeam.server import error_from_rpc, open_channel
from riverbeam.server._step_lanes import StepLanes
from riverbeam.store import _checks
from riverbeam.store._begin_reply import RepliedBeginRun, begin_reply, human_seq
from riverbeam.store._checkpoints import (
    RunCheckpoint,
    checkpoint_from_proto,
    checkpoint_step,
    json_state,
)
from riverbeam.store._client_children import ChildRunsClient
from riverbeam.store._client_ledger import LedgerClient
from riverbeam.store._finish_reply import finish_request, finished_run
from riverbeam.store._history_cache import MessageCache
from riverbeam.store._session_history import HeldWindow, SessionHistory
from riverbeam.store._step_wire import STORE_STEPS, store_error
from riverbeam.store._types import (
    BeginRunResult,
    FinishStatus,
    MessageKind,
    NewAction,
    NewMessage,
    RecordedOutcome,
    TakenOverRun,
)
from riverbeam.store._usage import UsageRow, check_usage_query, usage_row_from_proto
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
    deep_copy,
)
from riverbeam.v1 import store_service_pb2 as pb
from riverbeam.v1 import store_service_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from riverbeam.agents._io import MemoryWriter
    from riverbeam.store._base import BeamStore

__all__ = ["StoreClient"]

_Resp = TypeVar("_Resp")


def _struct(value: dict[str, Any] | None) -> struct_pb2.Struct | None:
    if value is None:
        return None
    out = struct_pb2.Struct()
    out.update(value)
    return out


def _value(value: Any) -> struct_pb2.Value | None:
    if value is None:
        return None
    return json_format.ParseDict(value, struct_pb2.Value())


def _copies(messages: Sequence[Message]) -> list[Message]:
    return [deep_copy(m) for m in messages]


class StoreClient(LedgerClient, ChildRunsClient):
    """A BeamStore backed by the store service (riverbeam.v1.StoreService).

    `StoreClient("store:50054")` opens (and on aclose, closes) its own channel; pass a
    grpc.aio.Channel to share one. Errors come back as the RiverbeamError the service raised;
    an unreachable service is BEM-120. With `step_lanes` > 0, begin_run and finish_run go on
    RunSteps streams (server/_step_lanes.py).
    """

    def __init__(
        self,
        target: str | grpc.aio.Channel,
        *,
        timeout_s: float | None = 30.0,
        wait_for_ready: bool = False,
        step_lanes: int = 0,
    ) -> None:
        if isinstance(target, str):
            self._channel = open_channel(target, round_robin=True)
            self._owns_channel = True
        else:
            self._channel = target
            self._owns_channel = False
        self._stub: Any = pb_grpc.StoreServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout_s = timeout_s
        self._wait_for_ready = wait_for_ready
        self._closed = False
        self._history = MessageCache()
        self._sessions = SessionHistory()
        self._steps = StepLanes(
            self._channel,
            STORE_STEPS,
            lanes=step_lanes,
            wait_for_ready=wait_for_ready,
            # The store's own timeout, as every store call has (the steps are sent it too).
            unary=lambda kind, request, _timeout_s: self._call(getattr(self._stub, kind), request),
        )

    async def __aenter__(self) -> StoreClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._steps.aclose()
        if self._owns_channel:
            await self._channel.close(None)

    async def _call(self, method: Callable[..., Awaitable[_Resp]], request: Any) -> _Resp:
        try:
            return await method(
                request, timeout=self._timeout_s, wait_for_ready=self._wait_for_ready
            )
        except grpc.RpcError as exc:
            raise store_error(error_from_rpc(exc, service="store"), exc.code()) from None

    # ---- reads ---------------------------------------------------------------------------------
    async def get_session(self, *, session_id: str) -> Session:
        resp = await self._call(
            self._stub.FetchSession, pb.FetchSessionRequest(session_id=session_id)
        )
        return Session.from_proto(resp.session)

    async def get_interaction(self, *, interaction_id: str) -> Interaction:
        resp = await self._call(
            self._stub.FetchInteraction, pb.FetchInteractionRequest(interaction_id=interaction_id)
        )
        return Interaction.from_proto(resp.interaction)

    async def get_run(self, *, run_id: str) -> Run:
        resp = await self._call(self._stub.FetchRun, pb.FetchRunRequest(run_id=run_id))
        return Run.from_proto(resp.run)

    async def get_action(self, *, action_id: str) -> Action:
        resp = await self._call(self._stub.FetchAction, pb.FetchActionRequest(action_id=action_id))
        return Action.from_proto(resp.action)

    async def get_run_by_request(self, *, request_id: str) -> Run | None:
        resp = await self._call(
            self._stub.FetchRunByRequest, pb.FetchRunByRequestRequest(request_id=request_id)
        )
        return Run.from_proto(resp.run) if resp.HasField("run") else None

    async def get_run_with_session(self, *, request_id: str) -> tuple[Run | None, Session | None]:
        """The run of a request and its session in one call; the session is None when the store
        has none (or predates the call's with_session): read it apart then."""
        resp = await self._call(
            self._stub.FetchRunByRequest,
            pb.FetchRunByRequestRequest(request_id=request_id, with_session=True),
        )
        run = Run.from_proto(resp.run) if resp.HasField("run") else None
        session = Session.from_proto(resp.session) if resp.HasField("session") else None
        return run, session

    async def list_runs(self, *, interaction_id: str) -> list[Run]:
        resp = await self._call(
            self._stub.FetchRuns, pb.FetchRunsRequest(interaction_id=interaction_id)
        )
        return [Run.from_proto(r) for r in resp.runs]

    async def list_messages(
        self, *, session_id: str, page_size: int = 100, page_token: str | None = None
    ) -> tuple[list[Message], str | None]:
        request = pb.FetchMessagesRequest(
            session_id=session_id, page_size=page_size, page_token=page_token or ""
        )
        resp = await self._call(self._stub.FetchMessages, request)
        return [Message.from_proto(m) for m in resp.messages], (resp.next_page_token or None)

    async def list_pending_actions(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> tuple[list[Action], str | None]:
        request = pb.FetchPendingActionsRequest(
            session_id=session_id, user_id=user_id, page_size=page_size, page_token=page_token or ""
        )
        resp = await self._call(self._stub.FetchPendingActions, request)
        return [Action.from_proto(a) for a in resp.actions], (resp.next_page_token or None)

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
        lend_history: bool = False,  # see begin_run_lending
    ) -> BeginRunResult:
        request = pb.BeginRunRequest(
            session_id=session_id,
            user_id=user_id,
            profile_id=profile_id,
            org_id=org_id,
            agent_name=agent_name,
            interaction_id=interaction_id,
            run_id=run_id,
            request_id=request_id,
            message_metadata=_struct(message_metadata),
            lease_owner=lease_owner,
            lease_ttl_s=lease_ttl_s,
            exclusive=exclusive,
            history_limit=history_limit,
            require_owner=require_owner,
            require_org=require_org,
            agent_version=agent_version,
            version_policy=version_policy,
            session_config=None if session_config is None else session_config.to_proto(),
            # Both stores record empty options as none: an empty message is not worth sending.
            run_options=None
            if run_options is None or run_options.is_empty
            else run_options.to_proto(),
            session_config_narrows=session_config_narrows,
        )
        # Made in their fields, not apart and copied in: ~9k instructions less a one-part turn.
        for part in human_content:
            part.to_proto_in(request.human_content.add())
        for response in action_responses:
            response.to_proto_in(request.action_responses.add())
        # The window this runner received last turn: the store sends only what follows it.
        # A caller naming its own history_after gets the store's answer as it is.
        own = history_after > 0 and history_after_id is not None
        held = None if own else self._sessions.anchor(session_id, history_limit)
        if own:
            request.history_after = history_after
            request.history_after_id = history_after_id  # type: ignore[assignment]
        elif held is not None and held.message_id is not None:
            request.history_after = held.seq
            request.history_after_id = held.message_id
        resp = await self._steps.run("BeginRun", request, self._timeout_s)
        lent = lend_history and not own
        parts = begin_reply(resp, lent=lent)
        if own:
            history = [Message.from_proto(m) for m in resp.history]  # the caller's own
            return BeginRunResult(**parts, history=history, history_after=resp.history_after)
        session: Session = parts["session"]
        saved = [m.seq for m in parts["action_messages"]] + human_seq(resp)
        window, kept = await self._history_window(session, held, resp, history_limit, saved)
        copies = kept.copies if kept is not None else partial(_copies, window)
        if lent:
            return RepliedBeginRun(**parts, history=window, copy_history=copies, reply=resp)
        return BeginRunResult(**parts, history=copies())

    async def begin_run_lending(self, **step: Any) -> BeginRunResult:
        """begin_run, its history lent (LentBeginRun) unless the caller names history_after."""
        return await self.begin_run(**step, lend_history=True)

    async def _history_window(
        self,
        session: Session,
        held: HeldWindow | None,
        resp: pb.BeginRunResponse,
        limit: int,
        saved_seqs: list[int],
    ) -> tuple[list[Message], HeldWindow | None]:
        """The step's whole history window, from the held window and what was sent, and the
        window now held for the session (None when none is): its messages are never handed
        out, only their copies."""
        sid = session.session_id
        if resp.history_after:
            delta = [Message.from_proto(m) for m in resp.history]
        else:
            delta = [self._history.convert(m) for m in resp.history]
        window = self._sessions.window(held, resp.history_after, session.created_at, delta, limit)
        if window is None:  # not joinable to what is held: read the window itself
            self._sessions.forget(sid)
            below = min(saved_seqs, default=session.last_seq + 1)
            window = await self._read_window(sid, below, limit)
        return window, self._sessions.keep(sid, session.created_at, limit, window)

    async def _read_window(self, session_id: str, below: int, limit: int) -> list[Message]:
        """The newest `limit` messages numbered below `below`, oldest first (FetchMessages)."""
        out: list[Message] = []
        token: str | None = _checks.encode_page_token(max(0, below - 1 - limit))
        while token is not None:
            page, token = await self.list_messages(
                session_id=session_id, page_size=max(limit, 1), page_token=token
            )
            out.extend(m for m in page if m.seq < below)
            if page and page[-1].seq >= below - 1:
                break
        return out[-limit:] if limit > 0 else []

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
        request = finish_request(
            run_id=run_id,
            lease_owner=lease_owner,
            status=status,
            messages=messages,
            pending_actions=pending_actions,
            interaction_status=interaction_status,
            error_code=error_code,
            error_message=error_message,
            token_usage=token_usage,
            model_used=model_used,
            result=result,
            lease_epoch=lease_epoch,
            action_ttl_s=action_ttl_s,
            tool_executions=tool_executions,
        )
        resp = await self._steps.run("FinishRun", request, self._timeout_s)
        return finished_run(resp, result=result, token_usage=token_usage)

    async def finish_run_unread(self, **step: Any) -> pb.FinishRunRequest | None:
        """finish_run(**step) for a caller that has no use for the finished run: its reply is
        not converted back (the step, its checks and its errors are finish_run's). Returns the
        request sent (see sent_result); None when a replaced finish_run took the step."""
        if "finish_run" in self.__dict__ or type(self).finish_run is not StoreClient.finish_run:
            await self.finish_run(**step)  # replaced or overridden: every finish goes through it
            return None
        request = finish_request(**step)
        await self._steps.run("FinishRun", request, self._timeout_s)
        return request

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
        request = pb.RecordActionOutcomeRequest(
            action_id=action_id,
            outcome=f"ACTION_OUTCOME_{recorded.upper()}",
            result=_value(result),
            error=error,
            run_id=run_id,
            lease_epoch=_checks.lease_epoch(lease_epoch),
        )
        resp = await self._call(self._stub.RecordActionOutcome, request)
        return Action.from_proto(resp.action)

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
        request = pb.AppendMessageRequest(
            session_id=session_id,
            message=new.to_proto(),
            interaction_id=interaction_id,
            run_id=run_id,
            lease_epoch=_checks.lease_epoch(lease_epoch),
        )
        resp = await self._call(self._stub.AppendMessage, request)
        return Message.from_proto(resp.message)

    # ---- leases --------------------------------------------------------------------------------
    async def renew_lease(
        self, *, run_id: str, lease_owner: str, ttl_s: float, lease_epoch: int | None = None
    ) -> bool:
        request = pb.RenewLeaseRequest(
            run_id=run_id,
            lease_owner=lease_owner,
            ttl_s=ttl_s,
            lease_epoch=_checks.lease_epoch(lease_epoch),
        )
        resp = await self._call(self._stub.RenewLease, request)
        return bool(resp.renewed)

    async def reap_expired_runs(
        self, *, now: datetime | None = None, limit: int = 100
    ) -> list[Run]:
        _checks.aware(now)
        stamp: timestamp_pb2.Timestamp | None = None
        if now is not None:
            stamp = timestamp_pb2.Timestamp()
            stamp.FromDatetime(now)
        request = pb.ReapExpiredRunsRequest(now=stamp, limit=limit)
        resp = await self._call(self._stub.ReapExpiredRuns, request)
        return [Run.from_proto(r) for r in resp.runs]

    async def expire_pending_actions(
        self, *, now: datetime | None = None, limit: int = 100
    ) -> list[Action]:
        _checks.aware(now)
        stamp: timestamp_pb2.Timestamp | None = None
        if now is not None:
            stamp = timestamp_pb2.Timestamp()
            stamp.FromDatetime(now)
        request = pb.ExpirePendingActionsRequest(now=stamp, limit=limit)
        resp = await self._call(self._stub.ExpirePendingActions, request)
        return [Action.from_proto(a) for a in resp.actions]

    async def take_over_expired_runs(
        self,
        *,
        new_owner: str,
        lease_ttl_s: float,
        now: datetime | None = None,
        limit: int = 100,
        exclude_run_ids: Sequence[str] = (),
    ) -> list[TakenOverRun]:
        _checks.aware(now)
        stamp: timestamp_pb2.Timestamp | None = None
        if now is not None:
            stamp = timestamp_pb2.Timestamp()
            stamp.FromDatetime(now)
        request = pb.TakeOverExpiredRunsRequest(
            new_owner=new_owner,
            lease_ttl_s=lease_ttl_s,
            limit=limit,
            exclude_run_ids=list(exclude_run_ids),
            now=stamp,
        )
        resp = await self._call(self._stub.TakeOverExpiredRuns, request)
        return [
            TakenOverRun(
                Run.from_proto(t.run),
                t.previous_owner if t.HasField("previous_owner") else None,
            )
            for t in resp.runs
        ]

    # ---- checkpoints ---------------------------------------------------------------------------
    async def save_run_checkpoint(
        self, *, run_id: str, lease_epoch: int, step: int, state: dict[str, Any]
    ) -> RunCheckpoint:
        checkpoint_step(step, state)
        request = pb.SaveRunCheckpointRequest(
            run_id=run_id, lease_epoch=lease_epoch, step=step, state_json=json_state(state)
        )
        resp = await self._call(self._stub.SaveRunCheckpoint, request)
        return checkpoint_from_proto(resp.checkpoint)

    async def get_run_checkpoint(self, *, run_id: str) -> RunCheckpoint | None:
        request = pb.FetchRunCheckpointRequest(run_id=run_id)
        resp = await self._call(self._stub.FetchRunCheckpoint, request)
        return checkpoint_from_proto(resp.checkpoint) if resp.HasField("checkpoint") else None

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
        request = pb.RememberRequest(
            scope_name=scope_name,
            scope_id=scope_id,
            content=content,
            metadata=_struct(metadata),
            org_id=org_id or None,
        )
        resp = await self._call(self._stub.Remember, request)
        return MemoryEntry.from_proto(resp.entry)

    async def recall(
        self, *, scopes: Sequence[tuple[str, str]], limit: int = 20, org_id: str | None = None
    ) -> list[MemoryEntry]:
        request = pb.RecallRequest(
            scopes=[pb.MemoryScope(name=n, id=i) for n, i in scopes],
            limit=limit,
            org_id=org_id or None,
        )
        resp = await self._call(self._stub.Recall, request)
        return [MemoryEntry.from_proto(e) for e in resp.entries]

    # ---- retention -----------------------------------------------------------------------------
    async def delete_idle_sessions(self, *, older_than: timedelta) -> int:
        _checks.idle_cutoff(older_than)
        duration = duration_pb2.Duration()
        duration.FromTimedelta(older_than)
        resp = await self._call(
            self._stub.DeleteIdleSessions, pb.DeleteIdleSessionsRequest(older_than=duration)
        )
        return int(resp.deleted)

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
        check_usage_query(group_by, start, end)
        request = pb.SummarizeUsageRequest(
            group_by=group_by, user_id=user_id, org_id=org_id, session_id=session_id
        )
        if start is not None:
            request.start_time.FromDatetime(start)
        if end is not None:
            request.end_time.FromDatetime(end)
        resp = await self._call(self._stub.SummarizeUsage, request)
        return [usage_row_from_proto(r) for r in resp.rows]


if TYPE_CHECKING:  # mypy proves the implementation satisfies both protocols

    def _is_beam_store(store: StoreClient) -> BeamStore:
        return store

    def _is_memory_writer(store: StoreClient) -> MemoryWriter:
        return store
