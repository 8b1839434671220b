"""RunnerService: protobuf in, RiverBeam call, protobuf out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import Grant, ModelConfigs, RiverBeam
from riverbeam.runtime._invoke_steps import RUNNER_INVOKES, RUNS_IN_FLIGHT
from riverbeam.server._step_serving import StepServing
from riverbeam.types import AgentResult, InvokeRequest, ModelConfig, ResumePayload, StreamAck
from riverbeam.v1 import riverbeam_service_pb2 as service_pb
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
        self._stopping = False
        self._invokes = StepServing(
            RUNNER_INVOKES, {"run_invoke": self._invoke_step}, max_in_flight=RUNS_IN_FLIGHT
        )

    def stopping(self) -> None:
        """The runner is stopping (called as it starts to drain, and again by the server):
        RunInvokes streams read no more invokes and hand the rest back, and a new RunInvoke
        or RunResume is refused with BEM-426 before anything is begun, so that the router
        sends it to another replica. What was begun runs to its end."""
        self._stopping = True
        self._invokes.drain()

    def _refuse_when_stopping(self) -> None:
        if self._stopping:
            raise RiverbeamError(
                ErrorCode.RUNNER_STOPPING, "this runner is stopping; nothing was begun"
            )

    def _model(self, request: Any) -> ModelConfig | None:
        return self._models.from_proto(request.model) if request.HasField("model") else None

    async def RunInvoke(self, request: pb.RunInvokeRequest, context: Any) -> pb.RunInvokeResponse:
        self._refuse_when_stopping()
        reply = pb.RunInvokeResponse()
        await self._invoke_into(request, reply)
        return reply

    async def RunInvokes(self, request_iterator: Any, context: Any) -> None:
        await self._invokes.serve(context)

    async def _invoke_step(self, request: pb.RunInvokeRequest) -> service_pb.InvokeResponse:
        # A step's answer is an InvokeResponse: RunInvokeResponse's fields and numbers.
        reply = service_pb.InvokeResponse()
        await self._invoke_into(request, reply)
        return reply

    async def _invoke_into(self, request: pb.RunInvokeRequest, reply: Any) -> None:
        """Run the invoke; its outcome is written into `reply` (a RunInvokeResponse or an
        InvokeResponse: the same `result` and `ack` fields)."""
        outcome, sent = await self._beam.invoke_sent(
            InvokeRequest.from_proto(request.request),
            model=self._model(request),
            grant=_grant(request.grant),
        )
        # Made in the reply's field (to_proto_in), not apart and then copied in.
        if isinstance(outcome, StreamAck):
            outcome.to_proto_in(reply.ack)
            return
        assert isinstance(outcome, AgentResult)
        if sent is not None:
            # The finish step sent the store this very result: its message is copied, not
            # made again (~43k instructions a result, against ~10k for the copy).
            reply.result.CopyFrom(sent)
        else:
            outcome.to_proto_in(reply.result)

    async def RunResume(self, request: pb.RunResumeRequest, context: Any) -> pb.RunResumeResponse:
        self._refuse_when_stopping()
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
