"""StoreService: protobuf in, BeamStore call, protobuf out. Errors map in the interceptor."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.server._step_serving import StepServing
from riverbeam.store import (
    BeamStore,
    NewAction,
    NewMessage,
    checkpoint_state,
    checkpoint_to_proto,
    usage_row_to_proto,
)
from riverbeam.store._finish_reply import finish_response
from riverbeam.store._lending import records_lent
from riverbeam.store._step_wire import STORE_STEPS
from riverbeam.types import (
    ActionResponseEnvelope,
    AgentResult,
    ContentPart,
    RunOptions,
    TokenUsage,
    ToolExecution,
    TurnConfig,
)
from riverbeam.v1 import ledger_pb2, records_pb2
from riverbeam.v1 import store_service_pb2 as pb
from riverbeam.v1 import store_service_pb2_grpc as pb_grpc
from services.store._convert import (
    enum_name,
    optional,
    struct_or_none,
    timestamp_or_none,
    value_or_none,
)

__all__ = ["StoreServicer"]


def _new_message(message: pb.NewMessage) -> NewMessage:
    new = NewMessage.from_proto(message)
    # Callers in other languages may leave the id to the store.
    return new if new.message_id else new.model_copy(update={"message_id": new_id()})


def _epoch(request: Any) -> int | None:
    return int(request.lease_epoch) if request.HasField("lease_epoch") else None


class StoreServicer(pb_grpc.StoreServiceServicer):
    def __init__(self, store: BeamStore) -> None:
        self._store = store
        self._steps = StepServing(
            STORE_STEPS,
            {
                "begin_run": lambda request: self.BeginRun(request, None),
                "finish_run": lambda request: self.FinishRun(request, None),
            },
        )

    def stopping(self) -> None:
        """The server is stopping: RunSteps streams answer what they read and end."""
        self._steps.drain()

    # ---- reads ---------------------------------------------------------------------------------
    async def FetchSession(
        self, request: pb.FetchSessionRequest, context: Any
    ) -> pb.FetchSessionResponse:
        session = await self._store.get_session(session_id=request.session_id)
        return pb.FetchSessionResponse(session=session.to_proto())

    async def FetchInteraction(
        self, request: pb.FetchInteractionRequest, context: Any
    ) -> pb.FetchInteractionResponse:
        interaction = await self._store.get_interaction(interaction_id=request.interaction_id)
        return pb.FetchInteractionResponse(interaction=interaction.to_proto())

    async def FetchRun(self, request: pb.FetchRunRequest, context: Any) -> pb.FetchRunResponse:
        run = await self._store.get_run(run_id=request.run_id)
        return pb.FetchRunResponse(run=run.to_proto())

    async def FetchAction(
        self, request: pb.FetchActionRequest, context: Any
    ) -> pb.FetchActionResponse:
        action = await self._store.get_action(action_id=request.action_id)
        return pb.FetchActionResponse(action=action.to_proto())

    async def FetchRunByRequest(
        self, request: pb.FetchRunByRequestRequest, context: Any
    ) -> pb.FetchRunByRequestResponse:
        run = await self._store.get_run_by_request(request_id=request.request_id)
        if run is None:
            return pb.FetchRunByRequestResponse()
        session = None
        if request.with_session:
            try:
                session = (await self._store.get_session(session_id=run.session_id)).to_proto()
            except RiverbeamError as err:
                if err.code is not ErrorCode.SESSION_NOT_FOUND:
                    raise
        return pb.FetchRunByRequestResponse(run=run.to_proto(), session=session)

    async def FetchRuns(self, request: pb.FetchRunsRequest, context: Any) -> pb.FetchRunsResponse:
        runs = await self._store.list_runs(interaction_id=request.interaction_id)
        return pb.FetchRunsResponse(runs=[r.to_proto() for r in runs])

    async def FetchMessages(
        self, request: pb.FetchMessagesRequest, context: Any
    ) -> pb.FetchMessagesResponse:
        messages, token = await self._store.list_messages(
            session_id=request.session_id,
            page_size=request.page_size,
            page_token=request.page_token or None,
        )
        return pb.FetchMessagesResponse(
            messages=[m.to_proto() for m in messages], next_page_token=token or ""
        )

    async def FetchPendingActions(
        self, request: pb.FetchPendingActionsRequest, context: Any
    ) -> pb.FetchPendingActionsResponse:
        actions, token = await self._store.list_pending_actions(
            session_id=optional(request, "session_id"),
            user_id=optional(request, "user_id"),
            page_size=request.page_size,
            page_token=request.page_token or None,
        )
        return pb.FetchPendingActionsResponse(
            actions=[a.to_proto() for a in actions], next_page_token=token or ""
        )

    # ---- pipeline steps ------------------------------------------------------------------------
    async def BeginRun(self, request: pb.BeginRunRequest, context: Any) -> pb.BeginRunResponse:
        # The records are only serialised, before the next await, and those given to the step
        # are built here from the request and dropped after it: no copies either way.
        with records_lent(given=True):
            return await self._begin_run(request)

    async def _begin_run(self, request: pb.BeginRunRequest) -> pb.BeginRunResponse:
        begun = await self._store.begin_run(
            session_id=request.session_id,
            user_id=optional(request, "user_id"),
            profile_id=optional(request, "profile_id"),
            org_id=optional(request, "org_id"),
            agent_name=request.agent_name,
            interaction_id=optional(request, "interaction_id"),
            run_id=request.run_id,
            request_id=optional(request, "request_id"),
            human_content=[ContentPart.from_proto(p) for p in request.human_content],
            message_metadata=struct_or_none(request, "message_metadata"),
            lease_owner=request.lease_owner,
            lease_ttl_s=request.lease_ttl_s,
            exclusive=request.exclusive,
            action_responses=[
                ActionResponseEnvelope.from_proto(r) for r in request.action_responses
            ],
            history_limit=request.history_limit,
            require_owner=optional(request, "require_owner"),
            require_org=optional(request, "require_org"),
            agent_version=optional(request, "agent_version"),
            version_policy=optional(request, "version_policy"),
            session_config=(
                TurnConfig.from_proto(request.session_config)
                if request.HasField("session_config")
                else None
            ),
            run_options=(
                RunOptions.from_proto(request.run_options)
                if request.HasField("run_options")
                else None
            ),
            session_config_narrows=request.session_config_narrows,
            history_after=request.history_after,
            history_after_id=optional(request, "history_after_id"),
        )
        # Each record's message is made in the reply (to_proto_in), not apart and copied in.
        resp = pb.BeginRunResponse(history_after=begun.history_after)
        begun.session.to_proto_in(resp.session)
        begun.interaction.to_proto_in(resp.interaction)
        begun.run.to_proto_in(resp.run)
        if begun.human_message is not None:
            begun.human_message.to_proto_in(resp.human_message)
        for action in begun.resolved_actions:
            action.to_proto_in(resp.resolved_actions.add())
        for message in begun.action_messages:
            message.to_proto_in(resp.action_messages.add())
        for message in begun.history:
            message.to_proto_in(resp.history.add())
        return resp

    async def FinishRun(self, request: pb.FinishRunRequest, context: Any) -> pb.FinishRunResponse:
        with records_lent(given=True):
            return await self._finish_run(request)

    async def RunSteps(self, request_iterator: Any, context: Any) -> None:
        await self._steps.serve(context)

    async def _finish_run(self, request: pb.FinishRunRequest) -> pb.FinishRunResponse:
        interaction_status = None
        if request.interaction_status != records_pb2.INTERACTION_STATUS_UNSPECIFIED:
            interaction_status = enum_name(
                records_pb2.InteractionStatus, request.interaction_status, "INTERACTION_STATUS_"
            )
        token_usage = (
            TokenUsage.from_proto(request.token_usage) if request.HasField("token_usage") else None
        )
        result = AgentResult.from_proto(request.result) if request.HasField("result") else None
        run = await self._store.finish_run(
            run_id=request.run_id,
            lease_owner=request.lease_owner,
            status=enum_name(records_pb2.RunStatus, request.status, "RUN_STATUS_"),  # type: ignore[arg-type]
            messages=[_new_message(m) for m in request.messages],
            pending_actions=[NewAction.from_proto(a) for a in request.pending_actions],
            interaction_status=interaction_status,  # type: ignore[arg-type]
            error_code=optional(request, "error_code"),
            error_message=optional(request, "error_message"),
            token_usage=token_usage,
            model_used=optional(request, "model_used"),
            result=result,
            lease_epoch=_epoch(request),
            action_ttl_s=(request.action_ttl_s if request.HasField("action_ttl_s") else None),
            tool_executions=[ToolExecution.from_proto(e) for e in request.tool_executions],
        )
        return finish_response(run, brief=request.brief, result=result, token_usage=token_usage)

    # ---- the tool-execution ledger -------------------------------------------------------------
    async def RecordToolExecutions(
        self, request: ledger_pb2.RecordToolExecutionsRequest, context: Any
    ) -> ledger_pb2.RecordToolExecutionsResponse:
        entries = await self._store.record_tool_executions(
            run_id=request.run_id,
            lease_epoch=_epoch(request),
            entries=[ToolExecution.from_proto(e) for e in request.entries],
        )
        return ledger_pb2.RecordToolExecutionsResponse(entries=[e.to_proto() for e in entries])

    async def FetchToolExecutions(
        self, request: ledger_pb2.FetchToolExecutionsRequest, context: Any
    ) -> ledger_pb2.FetchToolExecutionsResponse:
        entries, token = await self._store.list_tool_executions(
            run_id=optional(request, "run_id"),
            interaction_id=optional(request, "interaction_id"),
            page_size=request.page_size,
            page_token=request.page_token or None,
        )
        return ledger_pb2.FetchToolExecutionsResponse(
            entries=[e.to_proto() for e in entries], next_page_token=token or ""
        )

    async def BeginChildRun(
        self, request: pb.BeginChildRunRequest, context: Any
    ) -> pb.BeginChildRunResponse:
        run = await self._store.begin_child_run(
            parent_run_id=request.parent_run_id,
            run_id=request.run_id,
            agent_name=request.agent_name,
            lease_owner=request.lease_owner,
            lease_epoch=int(request.lease_epoch),
            agent_version=optional(request, "agent_version"),
        )
        return pb.BeginChildRunResponse(run=run.to_proto())

    async def FinishChildRun(
        self, request: pb.FinishChildRunRequest, context: Any
    ) -> pb.FinishChildRunResponse:
        run = await self._store.finish_child_run(
            run_id=request.run_id,
            parent_run_id=request.parent_run_id,
            lease_owner=request.lease_owner,
            lease_epoch=int(request.lease_epoch),
            status=enum_name(records_pb2.RunStatus, request.status, "RUN_STATUS_"),  # type: ignore[arg-type]
            error_code=optional(request, "error_code"),
            error_message=optional(request, "error_message"),
            token_usage=(
                TokenUsage.from_proto(request.token_usage)
                if request.HasField("token_usage")
                else None
            ),
            model_used=optional(request, "model_used"),
            result=AgentResult.from_proto(request.result) if request.HasField("result") else None,
        )
        return pb.FinishChildRunResponse(run=run.to_proto())

    async def RecordHandoff(
        self, request: pb.RecordHandoffRequest, context: Any
    ) -> pb.RecordHandoffResponse:
        interaction = await self._store.record_handoff(
            run_id=request.run_id,
            lease_owner=request.lease_owner,
            lease_epoch=int(request.lease_epoch),
            agent_name=request.agent_name,
            agent_version=optional(request, "agent_version"),
        )
        return pb.RecordHandoffResponse(interaction=interaction.to_proto())

    async def RecordActionOutcome(
        self, request: pb.RecordActionOutcomeRequest, context: Any
    ) -> pb.RecordActionOutcomeResponse:
        action = await self._store.record_action_outcome(
            action_id=request.action_id,
            outcome=enum_name(records_pb2.ActionOutcome, request.outcome, "ACTION_OUTCOME_"),  # type: ignore[arg-type]
            result=value_or_none(request, "result"),
            error=optional(request, "error"),
            run_id=optional(request, "run_id"),
            lease_epoch=_epoch(request),
        )
        return pb.RecordActionOutcomeResponse(action=action.to_proto())

    async def AppendMessage(
        self, request: pb.AppendMessageRequest, context: Any
    ) -> pb.AppendMessageResponse:
        new = _new_message(request.message)
        message = await self._store.append_message(
            session_id=request.session_id,
            role=new.role,
            type=new.type,
            content=new.content,
            interaction_id=optional(request, "interaction_id"),
            run_id=optional(request, "run_id"),
            message_id=new.message_id,
            tool_call_id=new.tool_call_id,
            tool_name=new.tool_name,
            tool_args=new.tool_args,
            tool_result=new.tool_result,
            metadata=new.metadata,
            lease_epoch=_epoch(request),
        )
        return pb.AppendMessageResponse(message=message.to_proto())

    # ---- leases --------------------------------------------------------------------------------
    async def RenewLease(
        self, request: pb.RenewLeaseRequest, context: Any
    ) -> pb.RenewLeaseResponse:
        renewed = await self._store.renew_lease(
            run_id=request.run_id,
            lease_owner=request.lease_owner,
            ttl_s=request.ttl_s,
            lease_epoch=_epoch(request),
        )
        return pb.RenewLeaseResponse(renewed=renewed)

    async def ReapExpiredRuns(
        self, request: pb.ReapExpiredRunsRequest, context: Any
    ) -> pb.ReapExpiredRunsResponse:
        now = request.now.ToDatetime(tzinfo=UTC) if request.HasField("now") else None
        runs = await self._store.reap_expired_runs(now=now, limit=request.limit)
        return pb.ReapExpiredRunsResponse(runs=[r.to_proto() for r in runs])

    async def ExpirePendingActions(
        self, request: pb.ExpirePendingActionsRequest, context: Any
    ) -> pb.ExpirePendingActionsResponse:
        now = request.now.ToDatetime(tzinfo=UTC) if request.HasField("now") else None
        marked = await self._store.expire_pending_actions(now=now, limit=request.limit)
        return pb.ExpirePendingActionsResponse(actions=[a.to_proto() for a in marked])

    async def TakeOverExpiredRuns(
        self, request: pb.TakeOverExpiredRunsRequest, context: Any
    ) -> pb.TakeOverExpiredRunsResponse:
        now = request.now.ToDatetime(tzinfo=UTC) if request.HasField("now") else None
        taken = await self._store.take_over_expired_runs(
            new_owner=request.new_owner,
            lease_ttl_s=request.lease_ttl_s,
            now=now,
            limit=request.limit,
            exclude_run_ids=list(request.exclude_run_ids),
        )
        return pb.TakeOverExpiredRunsResponse(
            runs=[
                pb.TakenOverRun(run=t.run.to_proto(), previous_owner=t.previous_owner)
                for t in taken
            ]
        )

    # ---- checkpoints ---------------------------------------------------------------------------
    async def SaveRunCheckpoint(
        self, request: pb.SaveRunCheckpointRequest, context: Any
    ) -> pb.SaveRunCheckpointResponse:
        saved = await self._store.save_run_checkpoint(
            run_id=request.run_id,
            lease_epoch=request.lease_epoch,
            step=request.step,
            state=checkpoint_state(request.state_json),
        )
        return pb.SaveRunCheckpointResponse(checkpoint=checkpoint_to_proto(saved))

    async def FetchRunCheckpoint(
        self, request: pb.FetchRunCheckpointRequest, context: Any
    ) -> pb.FetchRunCheckpointResponse:
        found = await self._store.get_run_checkpoint(run_id=request.run_id)
        if found is None:
            return pb.FetchRunCheckpointResponse()
        return pb.FetchRunCheckpointResponse(checkpoint=checkpoint_to_proto(found))

    # ---- memory --------------------------------------------------------------------------------
    async def Remember(self, request: pb.RememberRequest, context: Any) -> pb.RememberResponse:
        entry = await self._store.remember(
            scope_name=request.scope_name,
            scope_id=request.scope_id,
            content=request.content,
            metadata=struct_or_none(request, "metadata"),
            org_id=request.org_id if request.HasField("org_id") else None,
        )
        return pb.RememberResponse(entry=entry.to_proto())

    async def Recall(self, request: pb.RecallRequest, context: Any) -> pb.RecallResponse:
        entries = await self._store.recall(
            scopes=[(s.name, s.id) for s in request.scopes],
            limit=request.limit,
            org_id=request.org_id if request.HasField("org_id") else None,
        )
        return pb.RecallResponse(entries=[e.to_proto() for e in entries])

    # ---- retention -----------------------------------------------------------------------------
    async def DeleteIdleSessions(
        self, request: pb.DeleteIdleSessionsRequest, context: Any
    ) -> pb.DeleteIdleSessionsResponse:
        deleted = await self._store.delete_idle_sessions(
            older_than=request.older_than.ToTimedelta()
        )
        return pb.DeleteIdleSessionsResponse(deleted=deleted)

    async def SummarizeUsage(
        self, request: pb.SummarizeUsageRequest, context: Any
    ) -> pb.SummarizeUsageResponse:
        rows = await self._store.summarize_usage(
            group_by=request.group_by,
            start=timestamp_or_none(request, "start_time"),
            end=timestamp_or_none(request, "end_time"),
            user_id=optional(request, "user_id"),
            org_id=optional(request, "org_id"),
            session_id=optional(request, "session_id"),
        )
        return pb.SummarizeUsageResponse(rows=[usage_row_to_proto(r) for r in rows])
