"""RunnerClient: the runner port over gRPC (used by the router)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._invoke_steps import RUNNER_INVOKES
from riverbeam.runtime._pipeline_types import Grant
from riverbeam.server import error_from_rpc, open_channel, translate_rpc_errors
from riverbeam.server._step_lanes import StepLanes
from riverbeam.types import (
    AgentMetadata,
    AgentResult,
    InvokeAuthContext,
    InvokeRequest,
    ModelConfig,
    ResumePayload,
    StreamAck,
    deep_copy,
)
from riverbeam.v1 import riverbeam_service_pb2 as service_pb
from riverbeam.v1 import runner_service_pb2 as pb
from riverbeam.v1 import runner_service_pb2_grpc as pb_grpc

__all__ = ["RunnerClient", "RunnerReply"]

# Model messages a client keeps (a router's model list is a handful of models).
_MODELS_HELD = 64
# RunInvokeRequest templates a client keeps (a few models times the callers' identities).
_TEMPLATES_HELD = 1024


@dataclass(frozen=True, slots=True)
class RunnerReply:
    """The runner's answer to RunInvoke as it came off the wire.

    RunnerClient reads the answer as an InvokeResponse: a RunInvokeResponse has the same
    fields (the same oneof of the same AgentResult and StreamAck, the same numbers), so its
    bytes are an InvokeResponse's, and the router hands the message to its caller as it is,
    neither converted to the wire types and back nor copied into a new response. `message`
    may also be a RunInvokeResponse (what another port gives); `outcome()` converts either
    for whoever reads it.
    """

    message: Any

    @property
    def ack(self) -> Any | None:
        """The StreamAck message of a streaming request's answer; None for an AgentResult."""
        return self.message.ack if self.message.WhichOneof("outcome") == "ack" else None

    def outcome(self) -> AgentResult | StreamAck:
        """The answer as a wire type (one conversion, on each call)."""
        ack = self.ack
        if ack is not None:
            return StreamAck.from_proto(ack)
        return AgentResult.from_proto(self.message.result)


def _grant(grant: Grant) -> pb.CallerGrant:
    out = pb.CallerGrant(
        may_confirm=grant.may_confirm,
        session_config_narrows_only=grant.session_config_narrows_only,
    )
    if grant.subject is not None:
        out.subject = grant.subject
    if grant.require_owner is not None:
        out.require_owner = grant.require_owner
    if grant.require_org is not None:
        out.require_org = grant.require_org
    return out


# The fields the router's cleaning of an invoke changes that are written over the caller's
# message here; a request with any other field changed is converted whole.
_WRITTEN_OVER = frozenset({"auth_context", "request_id"})


def _fill_request(
    target: Any, request: InvokeRequest, wire: Any | None, replaced: frozenset[str]
) -> None:
    """Set `target` (a RunInvokeRequest's request) to `request`.

    `request` was read from the caller's message `wire` and then only its identity
    (auth_context) and id set: the message, less unknown fields, with those two written over,
    reads back as `request` and costs a copy instead of a conversion (~4 us an invoke). Without
    a message, or with more changed (metadata or instructions stripped), `request` is
    converted.
    """
    if wire is None or not replaced <= _WRITTEN_OVER:
        target.CopyFrom(request.to_proto())
        return
    target.CopyFrom(wire)
    target.DiscardUnknownFields()
    if "request_id" in replaced:
        target.ClearField("request_id")
        if request.request_id is not None:
            target.request_id = request.request_id
    if "auth_context" in replaced:
        target.ClearField("auth_context")
        if request.auth_context is not None:
            _fill_auth_context(target.auth_context, request.auth_context)


_AUTH_CONTEXT_FIELDS = ("user_id", "profile_id", "org_id", "mcp_token")


def _fill_auth_context(target: Any, auth: InvokeAuthContext) -> None:
    """`target.CopyFrom(auth.to_proto())` for the four optional strings of an identity, set
    directly (the conversion's plan and message cost ~12,000 instructions an invoke)."""
    target.SetInParent()
    values = auth.__dict__
    for name in _AUTH_CONTEXT_FIELDS:
        value = values[name]
        if value is not None:
            setattr(target, name, value)


# A stopping replica refuses what it has not begun (BEM-426) while its runs end; the call goes
# again, after a pause doubling from the first to the last, to the next replica.
_REFUSED_TRIES = 8
_FIRST_PAUSE_S = 0.005
_LAST_PAUSE_S = 0.2

T = TypeVar("T")


async def _sent_on_past_stopping(
    call: Callable[[float | None], Awaitable[T]], timeout_s: float | None
) -> T:
    """`call(timeout_s)`, sent again while a stopping replica refuses it (BEM-426): after a
    pause doubling from the first to the last, within the caller's time (each try gets what
    is left of it), `_REFUSED_TRIES` at most. Nothing was begun by a refused try, so sending
    it again is safe."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout_s is None else loop.time() + timeout_s
    pause = _FIRST_PAUSE_S
    for attempt in range(1, _REFUSED_TRIES + 1):
        try:
            return await call(None if deadline is None else max(deadline - loop.time(), 0.0))
        except RiverbeamError as err:
            out_of_time = deadline is not None and loop.time() + pause >= deadline
            if (
                err.code is not ErrorCode.RUNNER_STOPPING
                or attempt == _REFUSED_TRIES
                or out_of_time
            ):
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, _LAST_PAUSE_S)
    raise AssertionError("unreachable: the last try returns or raises")


class RunnerClient:
    """Calls a runner service, by default round-robin over every address of the target
    (`ipv4:a,b` as `riverbeam up` gives with several replicas, `dns:///runner...`); an address
    that is down is skipped until it is back, so a replica is also the others' failover.
    `round_robin=False` sends every call to the first address that answers (pick_first).

    With `invoke_lanes` > 0, RunInvoke calls travel as messages on that many long-lived
    RunInvokes streams in turn (runtime/_invoke_steps.py): each stream goes to one replica for
    its 20 s, so invokes spread over as many replicas as there are lanes. 0: unary calls.
    """

    def __init__(self, target: str, *, round_robin: bool = True, invoke_lanes: int = 4) -> None:
        self._channel = open_channel(target, round_robin=round_robin)
        self._stub: Any = pb_grpc.RunnerServiceStub(self._channel)  # type: ignore[no-untyped-call]
        # RunInvoke with its answer read as the router's InvokeResponse (see RunnerReply),
        # registered with the channel as the generated stub's methods are.
        channel: Any = self._channel
        self._stub.RunInvoke = channel.unary_unary(
            "/riverbeam.v1.RunnerService/RunInvoke",
            request_serializer=pb.RunInvokeRequest.SerializeToString,
            response_deserializer=service_pb.InvokeResponse.FromString,
            _registered_method=True,
        )
        self._invokes = StepLanes(
            self._channel,
            RUNNER_INVOKES,
            lanes=invoke_lanes,
            wait_for_ready=False,
            unary=lambda _kind, request, timeout_s: self._unary_invoke(request, timeout_s),
        )
        # The message of each model last sent, by name, with a copy of the model it was made
        # from: the router sends copies of the same few listed models on every call.
        self._models: dict[str, tuple[ModelConfig, Any]] = {}
        # RunInvokeRequest templates (model and grant set) by model name and grant values, with
        # the model message each was made from: another message of the name makes a new one.
        self._templates: dict[tuple[Any, ...], tuple[Any, Any]] = {}

    def _model_message(self, model: ModelConfig) -> Any:
        """`model.to_proto()`, converted again only when the model differs from the last one
        of its name (the caller's message gets a copy of it)."""
        held = self._models.get(model.name)
        # The message is made from the model's values alone: equal values, the same message.
        if held is not None and type(held[0]) is type(model) and held[0].__dict__ == model.__dict__:
            return held[1]
        message = model.to_proto()
        if len(self._models) >= _MODELS_HELD:
            self._models.clear()
        self._models[model.name] = (deep_copy(model), message)
        return message

    def _request_template(self, model: ModelConfig, grant: Grant) -> Any:
        """`RunInvokeRequest(model=model.to_proto(), grant=_grant(grant))`, made once per model
        message and grant values: one copy of it costs less than the two copies and the grant
        message that making it takes (~13,000 instructions an invoke)."""
        model_message = self._model_message(model)
        # A Grant is a frozen dataclass of what _grant reads: equal grants, the same message.
        key = (model.name, grant)
        held = self._templates.get(key)
        if held is not None and held[0] is model_message:
            return held[1]
        template = pb.RunInvokeRequest(model=model_message, grant=_grant(grant))
        if len(self._templates) >= _TEMPLATES_HELD:
            self._templates.clear()
        self._templates[key] = (model_message, template)
        return template

    async def run_invoke(
        self,
        request: InvokeRequest,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
    ) -> AgentResult | StreamAck:
        reply = await self.run_invoke_reply(request, model=model, grant=grant, timeout_s=timeout_s)
        return reply.outcome()

    async def run_invoke_reply(
        self,
        request: InvokeRequest,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
        wire: Any | None = None,
        replaced: frozenset[str] = frozenset(),
    ) -> RunnerReply:
        """As run_invoke, the answer left as it came (the router relays it unconverted).

        `wire`: the caller's InvokeRequest message `request` was read from; `replaced`: the
        fields of `request` changed since (see `_fill_request`).
        """
        message = pb.RunInvokeRequest()
        message.CopyFrom(self._request_template(model, grant))
        _fill_request(message.request, request, wire, replaced)
        return RunnerReply(await self._invokes.run("RunInvoke", message, timeout_s))

    async def _unary_invoke(self, message: Any, timeout_s: float | None) -> Any:
        """A RunInvoke call (sent again while a stopping replica refuses it, see
        `_sent_on_past_stopping`); its answer read as an InvokeResponse."""
        return await _sent_on_past_stopping(
            lambda left_s: self._run_invoke_once(message, left_s), timeout_s
        )

    async def _run_invoke_once(self, message: Any, timeout_s: float | None) -> Any:
        # translate_rpc_errors, spelled out: its context manager costs ~2 us an invoke.
        try:
            return await self._stub.RunInvoke(message, timeout=timeout_s)
        except grpc.RpcError as exc:
            raise error_from_rpc(exc, service="runner") from None

    async def run_resume(
        self,
        request: ResumePayload,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
    ) -> StreamAck:
        message = pb.RunResumeRequest(
            request=request.to_proto(), model=self._model_message(model), grant=_grant(grant)
        )

        async def resume_once(left_s: float | None) -> Any:
            async with translate_rpc_errors(service="runner"):
                return await self._stub.RunResume(message, timeout=left_s)

        reply = await _sent_on_past_stopping(resume_once, timeout_s)
        return StreamAck.from_proto(reply.ack)

    async def cancel_run(self, request_id: str, *, reason: str | None = None) -> bool:
        message = pb.CancelRunRequest(request_id=request_id)
        if reason:
            message.reason = reason
        async with translate_rpc_errors(service="runner"):
            reply = await self._stub.CancelRun(message, timeout=10)
        return bool(reply.cancelled)

    async def list_agents(self) -> list[AgentMetadata]:
        async with translate_rpc_errors(service="runner"):
            reply = await self._stub.ListRegisteredAgents(
                pb.ListRegisteredAgentsRequest(), timeout=10
            )
        return [AgentMetadata.from_proto(a) for a in reply.agents]

    async def aclose(self) -> None:
        await self._invokes.aclose()
        await self._channel.close(None)
