"""RiverbeamService: protobuf in, Gateway call, protobuf out."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from riverbeam.auth import Principal
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway import Gateway, stream_request
from riverbeam.runtime import RunnerReply
from riverbeam.store import usage_row_to_proto
from riverbeam.types import AgentResult, InvokeRequest, ResumePayload, StreamAck, StreamChunk
from riverbeam.v1 import ledger_pb2
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import riverbeam_service_pb2_grpc as pb_grpc


def _authorization(context: Any) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            return str(value)
    return None


def _remaining(context: Any) -> float | None:
    remaining = context.time_remaining()
    return None if remaining is None else max(remaining, 0.001)


class RiverbeamServicer(pb_grpc.RiverbeamServiceServicer):
    def __init__(self, gateway: Gateway) -> None:
        self._gw = gateway

    def _principal(self, context: Any) -> Principal:
        return self._gw.authenticate(_authorization(context))

    async def Invoke(self, request: Any, context: Any) -> pb.InvokeResponse:
        principal = self._principal(context)
        outcome = await self._gw.invoke_relayed(
            principal,
            InvokeRequest.from_proto(request),
            timeout_s=_remaining(context),
            wire=request,
        )
        if isinstance(outcome, RunnerReply):
            # The runner's answer, handed on unconverted (the same AgentResult / StreamAck).
            message = outcome.message
            if type(message) is pb.InvokeResponse:  # RunnerClient's: already the answer
                return message
            ack = outcome.ack
            if ack is not None:
                return pb.InvokeResponse(ack=ack)
            return pb.InvokeResponse(result=outcome.message.result)
        if isinstance(outcome, StreamAck):
            return pb.InvokeResponse(ack=outcome.to_proto())
        assert isinstance(outcome, AgentResult)
        return pb.InvokeResponse(result=outcome.to_proto())

    async def Resume(self, request: pb.ResumeRequest, context: Any) -> pb.ResumeResponse:
        principal = self._principal(context)
        ack = await self._gw.resume(
            principal, ResumePayload.from_proto(request), timeout_s=_remaining(context)
        )
        return pb.ResumeResponse(ack=ack.to_proto())

    async def Cancel(self, request: pb.CancelRequest, context: Any) -> pb.CancelResponse:
        principal = self._principal(context)
        cancelled = await self._gw.cancel(
            principal, _uuid(request.request_id, "request_id"), request.reason or None
        )
        return pb.CancelResponse(cancelled=cancelled)

    async def ListAgents(
        self, request: pb.ListAgentsRequest, context: Any
    ) -> pb.ListAgentsResponse:
        agents = await self._gw.list_agents(self._principal(context))
        return pb.ListAgentsResponse(agents=[a.to_proto() for a in agents])

    async def GetAgent(self, request: pb.GetAgentRequest, context: Any) -> pb.GetAgentResponse:
        agent = await self._gw.get_agent(self._principal(context), request.name)
        return pb.GetAgentResponse(agent=agent.to_proto())

    async def ListModels(
        self, request: pb.ListModelsRequest, context: Any
    ) -> pb.ListModelsResponse:
        models = self._gw.list_models(self._principal(context))
        return pb.ListModelsResponse(models=[m.to_proto() for m in models])

    async def GetSession(
        self, request: pb.GetSessionRequest, context: Any
    ) -> pb.GetSessionResponse:
        session = await self._gw.get_session(
            self._principal(context), _uuid(request.session_id, "session_id")
        )
        return pb.GetSessionResponse(session=session.to_proto())

    async def ListMessages(
        self, request: pb.ListMessagesRequest, context: Any
    ) -> pb.ListMessagesResponse:
        messages, token = await self._gw.list_messages(
            self._principal(context),
            _uuid(request.session_id, "session_id"),
            page_size=request.page_size,
            page_token=request.page_token,
        )
        return pb.ListMessagesResponse(
            messages=[m.to_proto() for m in messages], next_page_token=token or ""
        )

    async def GetInteraction(
        self, request: pb.GetInteractionRequest, context: Any
    ) -> pb.GetInteractionResponse:
        interaction = await self._gw.get_interaction(
            self._principal(context), _uuid(request.interaction_id, "interaction_id")
        )
        return pb.GetInteractionResponse(interaction=interaction.to_proto())

    async def GetRun(self, request: pb.GetRunRequest, context: Any) -> pb.GetRunResponse:
        run = await self._gw.get_run(self._principal(context), _uuid(request.run_id, "run_id"))
        return pb.GetRunResponse(run=run.to_proto())

    async def GetAction(self, request: pb.GetActionRequest, context: Any) -> pb.GetActionResponse:
        action = await self._gw.get_action(
            self._principal(context), _uuid(request.action_id, "action_id")
        )
        return pb.GetActionResponse(action=action.to_proto())

    async def ListPendingActions(
        self, request: pb.ListPendingActionsRequest, context: Any
    ) -> pb.ListPendingActionsResponse:
        session_id = (
            request.session_id if request.HasField("session_id") and request.session_id else None
        )
        actions, token = await self._gw.list_pending_actions(
            self._principal(context),
            session_id=_uuid(session_id, "session_id") if session_id else None,
            page_size=request.page_size,
            page_token=request.page_token,
        )
        return pb.ListPendingActionsResponse(
            actions=[a.to_proto() for a in actions], next_page_token=token or ""
        )

    async def GetUsage(self, request: pb.GetUsageRequest, context: Any) -> pb.GetUsageResponse:
        rows, total = await self._gw.usage(
            self._principal(context),
            group_by=request.group_by,
            start=_time(request, "start_time"),
            end=_time(request, "end_time"),
            user_id=request.user_id if request.HasField("user_id") else None,
            org_id=request.org_id if request.HasField("org_id") else None,
            session_id=request.session_id if request.HasField("session_id") else None,
        )
        return pb.GetUsageResponse(
            rows=[usage_row_to_proto(r) for r in rows], total=usage_row_to_proto(total)
        )

    async def ListToolExecutions(
        self, request: ledger_pb2.ListToolExecutionsRequest, context: Any
    ) -> ledger_pb2.ListToolExecutionsResponse:
        run_id = request.run_id if request.HasField("run_id") and request.run_id else None
        interaction_id = (
            request.interaction_id
            if request.HasField("interaction_id") and request.interaction_id
            else None
        )
        entries, token = await self._gw.list_tool_executions(
            self._principal(context),
            run_id=_uuid(run_id, "run_id") if run_id else None,
            interaction_id=_uuid(interaction_id, "interaction_id") if interaction_id else None,
            page_size=request.page_size,
            page_token=request.page_token,
        )
        return ledger_pb2.ListToolExecutionsResponse(
            entries=[e.to_proto() for e in entries], next_page_token=token or ""
        )

    async def InvokeStream(
        self, request: pb.InvokeStreamRequest, context: Any
    ) -> AsyncIterator[pb.InvokeStreamResponse]:
        principal = self._principal(context)
        wire = stream_request(request.request)
        events = self._gw.invoke_stream(
            principal,
            InvokeRequest.from_proto(wire),
            timeout_s=_remaining(context),
            wire=wire,
        )
        async for event in events:
            if isinstance(event, StreamChunk):
                yield pb.InvokeStreamResponse(chunk=event.to_proto())
            elif isinstance(event, StreamAck):
                yield pb.InvokeStreamResponse(ack=event.to_proto())
            else:  # the runner's StreamAck message, handed on as it came
                yield pb.InvokeStreamResponse(ack=event)

    async def ResumeStream(
        self, request: pb.ResumeStreamRequest, context: Any
    ) -> AsyncIterator[pb.ResumeStreamResponse]:
        principal = self._principal(context)
        events = self._gw.resume_stream(
            principal, ResumePayload.from_proto(request.request), timeout_s=_remaining(context)
        )
        async for event in events:
            if isinstance(event, StreamChunk):
                yield pb.ResumeStreamResponse(chunk=event.to_proto())
            else:
                yield pb.ResumeStreamResponse(ack=event.to_proto())

    async def FollowStream(
        self, request: pb.FollowStreamRequest, context: Any
    ) -> AsyncIterator[pb.FollowStreamResponse]:
        principal = self._principal(context)
        frames = self._gw.follow(
            principal, _uuid(request.request_id, "request_id"), after_seq=request.after_seq
        )
        async for frame in frames:
            yield pb.FollowStreamResponse(chunk=frame.to_proto())


def _time(request: Any, field: str) -> datetime | None:
    if not request.HasField(field):
        return None
    stamp: datetime = getattr(request, field).ToDatetime(tzinfo=UTC)
    return stamp


def _uuid(value: str, field: str) -> str:
    """A canonical UUID, or BEM-063 (action ids) / BEM-010 (other ids)."""
    try:
        parsed = uuid.UUID(value)
        if len(value) != 36:
            raise ValueError(value)
    except ValueError:
        code = ErrorCode.ACTION_ID_NOT_UUID if field == "action_id" else ErrorCode.INVALID_UUID
        raise RiverbeamError(code, f"{field} is not a UUID", field=field) from None
    return str(parsed)
