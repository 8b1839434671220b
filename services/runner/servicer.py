"""RunnerService: protobuf in, RiverBeam call, protobuf out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from riverbeam.runtime import Grant, ModelConfigs, RiverBeam
from riverbeam.types import AgentResult, InvokeRequest, ModelConfig, ResumePayload, StreamAck
from riverbeam.v1 import runner_service_pb2 as pb
from riverbeam.v1 import runner_service_pb2_grpc as pb_grpc

CancelElsewhere = Callable[[str, str | None], Awaitable[None]]


def _grant(message: pb.CallerGrant) -> Grant:
    return Grant(
        may_confirm=message.may_confirm,
        subject=message.subject or None,
        require_owner=message.require_owner if message.HasField("require_owner") else None,
        require_org=message.require_org if message.HasField("require_org") else None,
        session_config_narrows_only=message.session_config_narrows_only,
    )


class RunnerServicer(pb_grpc.RunnerServiceServicer):
    def __init__(self, beam: RiverBeam, *, cancel_elsewhere: CancelElsewhere | None = None) -> None:
        self._beam = beam
        self._cancel_elsewhere = cancel_elsewhere
        self._models = ModelConfigs()

    def _model(self, request: Any) -> ModelConfig | None:
        return self._models.from_proto(request.model) if request.HasField("model") else None

    async def RunInvoke(self, request: pb.RunInvokeRequest, context: Any) -> pb.RunInvokeResponse:
        outcome, sent = await self._beam.invoke_sent(
            InvokeRequest.from_proto(request.request),
            model=self._model(request),
            grant=_grant(request.grant),
        )
        # Made in the reply's field (to_proto_in), not apart and then copied in.
        reply = pb.RunInvokeResponse()
        if isinstance(outcome, StreamAck):
            outcome.to_proto_in(reply.ack)
            return reply
        assert isinstance(outcome, AgentResult)
        if sent is not None:
            # The finish step sent the store this very result: its message is copied, not
            # made again (~43k instructions a result, against ~10k for the copy).
            reply.result.CopyFrom(sent)
        else:
            outcome.to_proto_in(reply.result)
        return reply

    async def RunResume(self, request: pb.RunResumeRequest, context: Any) -> pb.RunResumeResponse:
        ack = await self._beam.resume(
            ResumePayload.from_proto(request.request),
            model=self._model(request),
            grant=_grant(request.grant),
        )
        return pb.RunResumeResponse(ack=ack.to_proto())

    async def CancelRun(self, request: pb.CancelRunRequest, context: Any) -> pb.CancelRunResponse:
        reason = request.reason or None
        cancelled = await self._beam.cancel(request.request_id, reason)
        if not cancelled and self._cancel_elsewhere is not None:
            # Another replica may hold the run: tell every runner over the control subject.
            await self._cancel_elsewhere(request.request_id, reason)
            cancelled = True
        return pb.CancelRunResponse(cancelled=cancelled)

    async def ListRegisteredAgents(
        self, request: pb.ListRegisteredAgentsRequest, context: Any
    ) -> pb.ListRegisteredAgentsResponse:
        return pb.ListRegisteredAgentsResponse(
            agents=[a.to_proto() for a in self._beam.list_agents()]
        )
