"""`RiverBeam`: the whole runtime in one process (seeds 000 and 002)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from riverbeam.agents import Agent, AgentRegistry, EchoAgent
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.runtime._pipeline import CancelElsewhere, Grant, Pipeline, PipelineOptions
from riverbeam.runtime._sinks import CollectingSink, FrameSink, SinkFactory
from riverbeam.store import BeamStore
from riverbeam.stream import StreamConfig, subject_for
from riverbeam.types import (
    Action,
    AgentMetadata,
    AgentResult,
    Interaction,
    InvokeRequest,
    MemoryEntry,
    Message,
    ModelConfig,
    ResumePayload,
    Run,
    Session,
    StreamAck,
    StreamChunk,
)

__all__ = ["MemorySinks", "RiverBeam"]

_log = logging.getLogger("riverbeam.runtime")


class MemorySinks:
    """Keeps every request's frames in memory (the default when there is no NATS)."""

    def __init__(self) -> None:
        self.sinks: dict[str, CollectingSink] = {}

    @property
    def stream(self) -> StreamConfig:
        return StreamConfig()

    async def open(self, request_id: str, *, stream: bool) -> FrameSink:
        return self.sinks.setdefault(request_id, CollectingSink())

    async def continue_stream(self, request_id: str, *, stream: bool) -> tuple[FrameSink, int]:
        sink = self.sinks.setdefault(request_id, CollectingSink())
        return sink, sink.last_seq

    async def publish_terminal_error(self, request_id: str, error: RiverbeamError) -> None:
        sink = self.sinks.setdefault(request_id, CollectingSink())
        await sink.publish(
            StreamChunk(
                type="error", error=error.message, error_code=error.bem, request_id=request_id
            )
        )

    def frames(self, request_id: str) -> list[StreamChunk]:
        sink = self.sinks.get(request_id)
        return list(sink.frames) if sink else []


class RiverBeam:
    """Register agents, invoke and resume them, read the records back."""

    def __init__(
        self,
        *,
        store: BeamStore | None = None,
        sinks: SinkFactory | None = None,
        options: PipelineOptions | None = None,
        cancel_elsewhere: CancelElsewhere | None = None,
    ) -> None:
        self._registry = AgentRegistry()
        self._cancel_elsewhere = cancel_elsewhere
        if store is None:  # a runner with a store service never loads the in-memory one
            from riverbeam.store._memory import InMemoryStore

            store = InMemoryStore()
        self._store: BeamStore = store
        self._sinks: SinkFactory = sinks or MemorySinks()
        self._options = options or PipelineOptions()
        self._background: set[asyncio.Task[Any]] = set()
        self._pipeline = self._build()

    def _build(self) -> Pipeline:
        return Pipeline(
            registry=self._registry,
            store=self._store,
            sinks=self._sinks,
            options=self._options,
            cancel_elsewhere=self._cancel_elsewhere,
        )

    # ---- agents -------------------------------------------------------------------------------
    def registry(self) -> AgentRegistry:
        return self._registry

    def register_agent(self, agent: Agent) -> None:
        self._registry.register(agent)

    def register_echo_agent(self, name: str = "assistant") -> None:
        self._registry.register(EchoAgent(name))

    def list_agents(self) -> list[AgentMetadata]:
        return self._registry.list()

    # ---- store --------------------------------------------------------------------------------
    @property
    def store(self) -> BeamStore:
        return self._store

    @property
    def sinks(self) -> SinkFactory:
        return self._sinks

    @property
    def pipeline(self) -> Pipeline:
        return self._pipeline

    def set_store(self, store: BeamStore) -> None:
        if self._pipeline.live_requests:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "cannot change the store while runs are live"
            )
        self._store = store
        self._pipeline = self._build()

    async def memory_remember(
        self,
        *,
        scope_name: str,
        scope_id: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        org_id: str | None = None,
    ) -> MemoryEntry:
        return await self._store.remember(
            scope_name=scope_name,
            scope_id=scope_id,
            content=content,
            metadata=metadata,
            org_id=org_id,
        )

    # ---- invoke / resume / cancel -------------------------------------------------------------
    async def invoke(
        self,
        request: InvokeRequest | dict[str, Any],
        *,
        model: ModelConfig | None = None,
        grant: Grant | None = None,
    ) -> AgentResult | StreamAck:
        """Run an agent. Streaming requests return a StreamAck at once and run in the background."""
        outcome, _ = await self.invoke_sent(request, model=model, grant=grant)
        return outcome

    async def invoke_sent(
        self,
        request: InvokeRequest | dict[str, Any],
        *,
        model: ModelConfig | None = None,
        grant: Grant | None = None,
    ) -> tuple[AgentResult | StreamAck, Any]:
        """invoke(), and for a result the protobuf message of it that the finish step sent
        (Pipeline.execute_sent; None for an ack, or when the store sent none)."""
        req = request if isinstance(request, InvokeRequest) else InvokeRequest.parse(request)
        prepared = await self._pipeline.prepare(req, model=model, grant=grant)
        if not req.stream:
            return await self._pipeline.execute_sent(prepared)
        task = asyncio.create_task(self._pipeline.execute(prepared))
        self._background.add(task)
        task.add_done_callback(self._settled)
        ack = StreamAck(
            request_id=prepared.request_id,
            interaction_id=prepared.interaction_id,
            session_id=req.session_id,
            subject=subject_for(prepared.request_id, prefix=self._sinks.stream.subject_prefix),
            stream_name=self._sinks.stream.name,
            run_id=prepared.run_id,
        )
        return ack, None

    def _settled(self, task: asyncio.Task[Any]) -> None:
        """A background run ended: its outcome is in the records and the stream; an error that
        escaped is logged here, never left as "Task exception was never retrieved"."""
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("streaming run ended with an error: %r", task.exception())

    async def resume(
        self,
        payload: ResumePayload | dict[str, Any],
        *,
        model: ModelConfig | None = None,
        grant: Grant | None = None,
    ) -> StreamAck:
        """Answer pending actions; always streams."""
        body = payload if isinstance(payload, ResumePayload) else ResumePayload.parse(payload)
        if not body.actions:
            raise RiverbeamError(
                ErrorCode.RESUME_WITHOUT_ACTIONS, "resume needs at least one action"
            )
        if body.agent_name is None:
            # Left out: the interaction's own agent (the store refuses any other, BEM-069).
            try:
                interaction = await self._store.get_interaction(interaction_id=body.interaction_id)
            except RiverbeamError as err:
                if err.code is not ErrorCode.INTERACTION_NOT_FOUND:
                    raise
                raise RiverbeamError(
                    ErrorCode.INTERACTION_NOT_RESUMABLE, interaction_id=body.interaction_id
                ) from None
            body = body.with_agent_of(interaction.agent_name)
        request = body.as_invoke_request(request_id=body.request_id or new_id())
        ack = await self.invoke(request, model=model, grant=grant)
        assert isinstance(ack, StreamAck)
        return ack

    async def cancel(self, request_id: str, reason: str | None = None) -> bool:
        return self._pipeline.cancel(request_id, reason)

    async def wait_idle(self) -> None:
        """Wait for every background (streaming) run to finish."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    async def aclose(self, *, grace_s: float = 10.0) -> None:
        await self._pipeline.drain(grace_s)
        await self.wait_idle()

    # ---- reads --------------------------------------------------------------------------------
    async def get_session(self, session_id: str) -> Session:
        return await self._store.get_session(session_id=session_id)

    async def get_interaction(self, interaction_id: str) -> Interaction:
        return await self._store.get_interaction(interaction_id=interaction_id)

    async def get_run(self, run_id: str) -> Run:
        return await self._store.get_run(run_id=run_id)

    async def get_action(self, action_id: str) -> Action:
        return await self._store.get_action(action_id=action_id)

    async def list_messages(self, session_id: str) -> list[Message]:
        out: list[Message] = []
        token: str | None = None
        while True:
            page, token = await self._store.list_messages(
                session_id=session_id, page_size=500, page_token=token
            )
            out.extend(page)
            if not token:
                return out
