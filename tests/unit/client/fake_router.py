"""An in-process fake of the public API (RiverbeamService) over the canned world of fake_world.

Served by the real `GrpcServer`, so errors travel with ErrorInfo exactly as in production:

    async with serve_fake(FakeRiverbeam()) as address: ...      # in the test's event loop
    with FakeRouterThread() as server: server.address           # for CLI tests (asyncio.run)

Agent "missing" is not registered; the others replay the scripts of fake_world.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer, ServiceBinding
from riverbeam.types import (
    Action,
    AgentMetadata,
    Interaction,
    InvokeRequest,
    Message,
    ModelConfig,
    ResumePayload,
    Run,
    Session,
    StreamAck,
    StreamChunk,
    ToolExecution,
)
from riverbeam.v1 import ledger_pb2, types_pb2
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import riverbeam_service_pb2_grpc as pb_grpc
from tests.unit.client.fake_world import (
    ACTION_OTHER,
    ACTION_PENDING,
    ACTION_RAN,
    INTERACTION_DONE,
    INTERACTION_WAITING,
    OTHER_SESSION,
    RUN_DONE,
    RUN_WAITING,
    RUN_WROTE,
    SESSION,
    STREAM,
    at,
    canned_actions,
    canned_interactions,
    canned_messages,
    canned_runs,
    canned_tool_executions,
    resume_script,
    script_for,
)

__all__ = [
    "ACTION_OTHER",
    "ACTION_PENDING",
    "ACTION_RAN",
    "INTERACTION_DONE",
    "INTERACTION_WAITING",
    "OTHER_SESSION",
    "RUN_DONE",
    "RUN_WAITING",
    "RUN_WROTE",
    "SESSION",
    "FakeRiverbeam",
    "FakeRouterThread",
    "canned_actions",
    "serve_fake",
]


@dataclass
class FakeRiverbeam(pb_grpc.RiverbeamServiceServicer):  # type: ignore[misc]
    """The servicer. Records what it received; `token` makes it require that bearer token."""

    token: str | None = None
    page_limit: int = 2  # the most items per page, whatever the client asks: forces pagination
    gap_at: int | None = None  # skip this frame seq in FollowStream (to test gap detection)
    repeat_frames: bool = False  # send every frame twice (to test duplicate dropping)
    older: bool = False  # answer InvokeStream and ResumeStream as a router without them
    calls: list[tuple[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    pages_served: dict[str, int] = field(default_factory=dict)
    invokes: list[InvokeRequest] = field(default_factory=list)
    resumes: list[ResumePayload] = field(default_factory=list)
    scripts: dict[str, list[StreamChunk]] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=canned_actions)
    messages: list[Message] = field(default_factory=canned_messages)
    runs: dict[str, Run] = field(default_factory=canned_runs)
    interactions: dict[str, Interaction] = field(default_factory=canned_interactions)
    tool_executions: list[ToolExecution] = field(default_factory=canned_tool_executions)

    def _enter(self, name: str, request: Any, context: Any) -> None:
        auth = dict(context.invocation_metadata() or ()).get("authorization")
        self.calls.append((name, request))
        self.authorizations.append(auth)
        if self.token is not None and auth != f"Bearer {self.token}":
            raise RiverbeamError(ErrorCode.UNAUTHENTICATED, "missing or invalid bearer token")

    def _page(self, name: str, items: list[Any], size: int, token: str) -> tuple[list[Any], str]:
        self.pages_served[name] = self.pages_served.get(name, 0) + 1
        start = int(token or 0)
        size = min(size or self.page_limit, self.page_limit)
        end = start + size
        return items[start:end], (str(end) if end < len(items) else "")

    def _ack(
        self,
        agent: str,
        session_id: str,
        interaction_id: str,
        frames: list[StreamChunk],
        request_id: str,
    ) -> StreamAck:
        self.scripts[request_id] = frames
        return StreamAck(
            request_id=request_id,
            interaction_id=interaction_id,
            session_id=session_id,
            subject=f"riverbeam.stream.{request_id}",
            stream_name=STREAM,
        )

    async def Invoke(self, request: Any, context: Any) -> pb.InvokeResponse:
        self._enter("Invoke", request, context)
        return self._invoked(request)

    def _invoked(self, request: Any) -> pb.InvokeResponse:
        """The answer to an InvokeRequest message (Invoke's, or the one in an InvokeStream)."""
        req = InvokeRequest.from_proto(request)
        self.invokes.append(req)
        if req.agent_name == "missing":
            raise RiverbeamError(
                ErrorCode.AGENT_NOT_REGISTERED,
                "agent 'missing' is not registered",
                agent=req.agent_name,
            )
        request_id = req.request_id or str(uuid.uuid4())
        interaction_id = INTERACTION_WAITING if req.agent_name == "author" else str(uuid.uuid4())
        frames = script_for(req.agent_name, request_id, req.session_id, interaction_id)
        if req.stream:
            ack = self._ack(req.agent_name, req.session_id, interaction_id, frames, request_id)
            return pb.InvokeResponse(ack=ack.to_proto())
        last = frames[-1]
        if last.type == "error":
            raise RiverbeamError(ErrorCode.AGENT_ERROR_FRAME, last.error or "error")
        assert last.result is not None
        return pb.InvokeResponse(result=last.result.to_proto())

    async def Resume(self, request: Any, context: Any) -> pb.ResumeResponse:
        self._enter("Resume", request, context)
        payload = ResumePayload.from_proto(request)
        self.resumes.append(payload)
        request_id = payload.request_id or str(uuid.uuid4())
        frames = resume_script(payload.agent_name, request_id, payload)
        ack = self._ack(
            payload.agent_name, payload.session_id, payload.interaction_id, frames, request_id
        )
        return pb.ResumeResponse(ack=ack.to_proto())

    async def ResumeStream(
        self, request: Any, context: Any
    ) -> AsyncIterator[pb.ResumeStreamResponse]:
        """As the router: the resume, its ack, then its frames; as a router older than
        ResumeStream (UNIMPLEMENTED, no ErrorInfo) with `older`."""
        self._enter("ResumeStream", request, context)
        if self.older:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
        wire = request.request
        if not wire.request_id:
            wire.request_id = str(uuid.uuid4())
        reply = await self.Resume(wire, context)
        self.calls.pop()  # the Resume above is this call's, not another one
        self.authorizations.pop()
        yield pb.ResumeStreamResponse(ack=reply.ack)
        async for frame in self._relayed(reply.ack.request_id, 0):
            yield pb.ResumeStreamResponse(chunk=frame)

    async def Cancel(self, request: Any, context: Any) -> pb.CancelResponse:
        self._enter("Cancel", request, context)
        return pb.CancelResponse(cancelled=request.request_id in self.scripts)

    async def ListAgents(self, request: Any, context: Any) -> pb.ListAgentsResponse:
        self._enter("ListAgents", request, context)
        agents = [
            AgentMetadata(
                name="assistant", description="A helpful assistant", tags=["chat"], version="1"
            ),
            AgentMetadata(
                name="author",
                description="Writes docs in a git workspace",
                supported_modalities=["text", "image"],
            ),
        ]
        return pb.ListAgentsResponse(agents=[a.to_proto() for a in agents])

    async def GetAgent(self, request: Any, context: Any) -> pb.GetAgentResponse:
        self._enter("GetAgent", request, context)
        if request.name != "assistant":
            raise RiverbeamError(
                ErrorCode.AGENT_NOT_REGISTERED,
                f"agent {request.name!r} is not registered",
                agent=request.name,
            )
        return pb.GetAgentResponse(agent=AgentMetadata(name="assistant").to_proto())

    async def GetUsage(self, request: Any, context: Any) -> pb.GetUsageResponse:
        self._enter("GetUsage", request, context)
        if request.group_by not in ("run", "session", "user", "org"):
            raise RiverbeamError(ErrorCode.USAGE_RANGE_INVALID, "bad group_by", field="group_by")
        rows = [
            types_pb2.UsageRow(
                key="alice",
                model="gpt-vision",
                runs=2,
                prompt_tokens=1500,
                completion_tokens=500,
                total_tokens=2000,
                cost=1.0,
            ),
            types_pb2.UsageRow(key="bob", model="echo-1", runs=1, prompt_tokens=3, total_tokens=3),
        ]
        total = types_pb2.UsageRow(
            runs=3, prompt_tokens=1503, completion_tokens=500, total_tokens=2003, cost=1.0
        )
        return pb.GetUsageResponse(rows=rows, total=total)

    async def ListModels(self, request: Any, context: Any) -> pb.ListModelsResponse:
        self._enter("ListModels", request, context)
        models = [
            ModelConfig(name="echo-1", provider="custom", capabilities=["tools"]),
            ModelConfig(
                name="gpt-vision",
                provider="openai",
                modalities=["text", "image"],
                cost_per_1k_tokens=0.5,
                max_tokens=128000,
            ),
        ]
        return pb.ListModelsResponse(models=[m.to_proto() for m in models])

    async def GetSession(self, request: Any, context: Any) -> pb.GetSessionResponse:
        self._enter("GetSession", request, context)
        if request.session_id != SESSION:
            raise RiverbeamError(
                ErrorCode.SESSION_NOT_FOUND, f"session {request.session_id} not found"
            )
        session = Session(
            session_id=SESSION, user_id="u1", created_at=at(1), last_active_at=at(6), last_seq=6
        )
        return pb.GetSessionResponse(session=session.to_proto())

    async def ListMessages(self, request: Any, context: Any) -> pb.ListMessagesResponse:
        self._enter("ListMessages", request, context)
        items = [m for m in self.messages if m.session_id == request.session_id]
        page, token = self._page("ListMessages", items, request.page_size, request.page_token)
        return pb.ListMessagesResponse(messages=[m.to_proto() for m in page], next_page_token=token)

    async def GetInteraction(self, request: Any, context: Any) -> pb.GetInteractionResponse:
        self._enter("GetInteraction", request, context)
        found = self.interactions.get(request.interaction_id)
        if found is None:
            raise RiverbeamError(ErrorCode.INTERACTION_NOT_FOUND, "interaction not found")
        return pb.GetInteractionResponse(interaction=found.to_proto())

    async def GetRun(self, request: Any, context: Any) -> pb.GetRunResponse:
        self._enter("GetRun", request, context)
        found = self.runs.get(request.run_id)
        if found is None:
            raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, "run not found")
        return pb.GetRunResponse(run=found.to_proto())

    async def ListToolExecutions(
        self, request: Any, context: Any
    ) -> ledger_pb2.ListToolExecutionsResponse:
        self._enter("ListToolExecutions", request, context)
        if request.run_id:
            if request.run_id not in self.runs:
                raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, "run not found")
            items = [e for e in self.tool_executions if e.run_id == request.run_id]
        else:
            if request.interaction_id not in self.interactions:
                raise RiverbeamError(ErrorCode.INTERACTION_NOT_FOUND, "interaction not found")
            items = [e for e in self.tool_executions if e.interaction_id == request.interaction_id]
        page, token = self._page("ListToolExecutions", items, request.page_size, request.page_token)
        return ledger_pb2.ListToolExecutionsResponse(
            entries=[e.to_proto() for e in page], next_page_token=token
        )

    async def GetAction(self, request: Any, context: Any) -> pb.GetActionResponse:
        self._enter("GetAction", request, context)
        for action in self.actions:
            if action.action_id == request.action_id:
                return pb.GetActionResponse(action=action.to_proto())
        raise RiverbeamError(ErrorCode.ACTION_NOT_FOUND, f"action {request.action_id} not found")

    async def ListPendingActions(self, request: Any, context: Any) -> pb.ListPendingActionsResponse:
        self._enter("ListPendingActions", request, context)
        items = [
            a
            for a in self.actions
            if a.status == "pending"
            and (not request.HasField("session_id") or a.session_id == request.session_id)
        ]
        page, token = self._page("ListPendingActions", items, request.page_size, request.page_token)
        return pb.ListPendingActionsResponse(
            actions=[a.to_proto() for a in page], next_page_token=token
        )

    async def FollowStream(
        self, request: Any, context: Any
    ) -> AsyncIterator[pb.FollowStreamResponse]:
        self._enter("FollowStream", request, context)
        async for frame in self._relayed(request.request_id, request.after_seq):
            yield pb.FollowStreamResponse(chunk=frame)

    async def InvokeStream(
        self, request: Any, context: Any
    ) -> AsyncIterator[pb.InvokeStreamResponse]:
        """As the router: the invoke run with stream = true, its ack, then its frames; as a
        router older than InvokeStream (UNIMPLEMENTED, no ErrorInfo) with `older`."""
        self._enter("InvokeStream", request, context)
        if self.older:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
        wire = request.request
        wire.stream = True
        if not wire.request_id:
            wire.request_id = str(uuid.uuid4())
        reply = self._invoked(wire)
        yield pb.InvokeStreamResponse(ack=reply.ack)
        async for frame in self._relayed(reply.ack.request_id, 0):
            yield pb.InvokeStreamResponse(chunk=frame)

    async def _relayed(self, request_id: str, after_seq: int) -> AsyncIterator[Any]:
        frames = self.scripts.get(request_id)
        if frames is None:
            raise RiverbeamError(ErrorCode.STREAM_NOT_FOUND, f"no frames for request {request_id}")
        for frame in frames:
            if (frame.seq or 0) <= after_seq or frame.seq == self.gap_at:
                continue
            for _ in range(2 if self.repeat_frames else 1):
                yield frame.to_proto()
            await asyncio.sleep(0)


def _binding(fake: FakeRiverbeam) -> ServiceBinding:
    return ServiceBinding(
        "riverbeam.v1.RiverbeamService",
        lambda server: pb_grpc.add_RiverbeamServiceServicer_to_server(fake, server),
    )


@contextlib.asynccontextmanager
async def serve_fake(fake: FakeRiverbeam) -> AsyncIterator[str]:
    """Serve `fake` on 127.0.0.1:0 in the running loop; yields its address."""
    async with GrpcServer([_binding(fake)], listen="127.0.0.1:0", grace_s=0) as server:
        yield server.address


class FakeRouterThread:
    """The fake served from a thread with its own event loop, for code that runs asyncio.run."""

    def __init__(self, fake: FakeRiverbeam | None = None) -> None:
        self.fake = fake or FakeRiverbeam()
        self.address = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-router", daemon=True)
        self._error: BaseException | None = None

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            async with serve_fake(self.fake) as address:
                self.address = address
                self._ready.set()
                await self._stop.wait()

        try:
            asyncio.run(main())
        except BaseException as exc:  # surfaced by __enter__
            self._error = exc
            self._ready.set()

    def __enter__(self) -> FakeRouterThread:
        self._thread.start()
        self._ready.wait(timeout=10)
        if self._error is not None or not self.address:
            raise RuntimeError(f"fake router did not start: {self._error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)
