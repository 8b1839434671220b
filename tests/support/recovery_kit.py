"""Two runner pipelines in one process on one store and one frames stream, for the recovery
tests (tests/unit/runtime on memory, tests/integration/runtime on Postgres and NATS).

Runner A "dies": from `kill_a()` on, every store call and frame publish it makes waits
forever (as a killed process makes none), until `bury_a()` makes them fail, so its task can
end. With the InMemoryStore on the test's clock, advancing it expires A's lease without
waiting; on a real store A's lease (1 s) runs out. Runner B's reaper pass then takes the run
over and continues it (`Pipeline.recover`).
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from riverbeam.agents import (
    AgentInput,
    AgentRegistry,
    RigAgentRunner,
    ScriptedClient,
    ToolSpec,
    json_params,
)
from riverbeam.agents._completion import CompletionEvent
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import MemorySinks, Pipeline, PipelineOptions, reap_once
from riverbeam.runtime._sinks import FrameSink, SinkFactory
from riverbeam.store import BeamStore, InMemoryStore
from riverbeam.stream import NatsConnection, RequestPublisher
from riverbeam.types import InvokeRequest, Run, StreamChunk

GUARD_S = 10.0
A_LEASE_S = 1.0


def _default(call: Any, name: str) -> float:
    value: float = inspect.signature(call).parameters[name].default
    return value


def _frame_budget_s() -> float:
    """How long a JetStream publisher keeps at one frame before it gives up (its attempts,
    each waiting out its ack timeout, and the pauses between them)."""
    attempts = int(_default(RequestPublisher, "attempts"))
    timeout_s = _default(RequestPublisher, "publish_timeout_s")
    backoff_s = _default(RequestPublisher, "backoff_s")
    return attempts * timeout_s + sum(backoff_s * 2**i for i in range(attempts - 1))


# A reaper pass on JetStream looks up the request's last frame (one API call) and publishes
# the terminal frame, retrying a lost or late ack as the publisher does; the hang guard of a
# pass outlasts that, so a loaded machine's slow ack is waited for, as the reaper would.
REAP_GUARD_S = GUARD_S + _default(NatsConnection, "js_timeout_s") + _frame_budget_s()


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class Grave:
    """Shared by a dying runner's store and sinks."""

    def __init__(self) -> None:
        self.dead = False
        self._buried: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def wait_if_dead(self) -> None:
        if self.dead:
            await asyncio.shield(self._buried)

    def bury(self) -> None:
        if not self._buried.done():
            self._buried.set_exception(RiverbeamError(ErrorCode.STALE_EPOCH, "a dead runner"))


class DyingStore:
    def __init__(self, inner: InMemoryStore, grave: Grave) -> None:
        self._inner = inner
        self._grave = grave

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not asyncio.iscoroutinefunction(attr):
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            await self._grave.wait_if_dead()
            return await attr(*args, **kwargs)

        return call


class DyingSink:
    def __init__(self, inner: FrameSink, grave: Grave) -> None:
        self._inner = inner
        self._grave = grave

    @property
    def last_seq(self) -> int:
        return int(getattr(self._inner, "last_seq", 0))

    async def publish(self, chunk: StreamChunk) -> None:
        await self._grave.wait_if_dead()
        await self._inner.publish(chunk)


class DyingSinks:
    def __init__(self, inner: SinkFactory, grave: Grave) -> None:
        self._inner = inner
        self._grave = grave
        self.stream = inner.stream

    async def open(self, request_id: str, *, stream: bool) -> FrameSink:
        return DyingSink(await self._inner.open(request_id, stream=stream), self._grave)

    async def continue_stream(self, request_id: str, *, stream: bool) -> tuple[FrameSink, int]:
        sink, after = await self._inner.continue_stream(request_id, stream=stream)
        return DyingSink(sink, self._grave), after

    async def publish_terminal_error(self, request_id: str, error: RiverbeamError) -> None:
        await self._grave.wait_if_dead()
        await self._inner.publish_terminal_error(request_id, error)


class GatedClient(ScriptedClient):
    """A ScriptedClient whose call number `hold_at` (0-based) waits for `release` first."""

    def __init__(self, steps: Sequence[Any]) -> None:
        super().__init__(steps)
        self.hold_at: int | None = None
        self.waiting = asyncio.Event()
        self.release = asyncio.Event()
        self.started = 0

    async def stream_structured(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        response_format: Mapping[str, Any] | None,
    ) -> AsyncIterator[CompletionEvent]:
        index = self.started
        self.started += 1
        if index == self.hold_at:
            self.waiting.set()
            await self.release.wait()
        async for event in super().stream_structured(
            messages, tools, model=model, response_format=response_format
        ):
            yield event


class EffectTool:
    """Counts its calls as they start; may hold a call (its runner dies meanwhile)."""

    def __init__(self, name: str, *, read_only: bool = False, idempotent: bool = False) -> None:
        self.name = name
        self.read_only = read_only
        self.idempotent = idempotent
        self.calls: list[dict[str, Any]] = []
        self.hold_first = False
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=f"test tool {self.name}",
            parameters=json_params({"v": {"type": "string"}}, ["v"]),
            read_only=self.read_only,
            idempotent=self.idempotent,
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        self.calls.append(dict(args))
        if self.hold_first and len(self.calls) == 1:
            self.started.set()
            await self.release.wait()
        return {"tool": self.name, "did": args["v"]}


class Replicas:
    """Runner A (the one that dies) and runner B (the one whose reaper takes over)."""

    def __init__(
        self,
        client: GatedClient,
        tools: Sequence[Any],
        *,
        store: BeamStore | None = None,
        sinks: SinkFactory | None = None,
    ) -> None:
        self.clock: Clock | None = None
        if store is None:
            self.clock = Clock()
            store = InMemoryStore(clock=self.clock)
        self.store = store
        self.sinks = sinks or MemorySinks()
        self.grave = Grave()
        self.client = client
        agent = RigAgentRunner("worker", client, tools)
        self.a = self._pipeline(
            "runner-a",
            A_LEASE_S if self.clock is None else 30.0,
            DyingStore(self.store, self.grave),
            DyingSinks(self.sinks, self.grave),
            agent,
        )
        self.b = self._pipeline("runner-b", 30.0, self.store, self.sinks, agent)
        self.task: asyncio.Task[Any] | None = None

    @staticmethod
    def _pipeline(
        runner_id: str, lease_s: float, store: Any, sinks: Any, agent: RigAgentRunner
    ) -> Pipeline:
        registry = AgentRegistry()
        registry.register(agent)
        return Pipeline(
            registry=registry,
            store=store,
            sinks=sinks,
            options=PipelineOptions(
                runner_id=runner_id, lease_ttl_s=lease_s, finish_retry_s=0.2, checkpoints=True
            ),
        )

    async def start(self, text: str, **extra: Any) -> tuple[str, str]:
        """Runner A begins a streaming run; (request_id, run_id)."""
        request = InvokeRequest.model_validate(
            {
                "agent_name": "worker",
                "content": [{"type": "text", "text": text}],
                "session_id": str(uuid.uuid4()),
                "stream": True,
                **extra,
            }
        )
        prepared = await self.a.prepare(request)
        self.task = asyncio.create_task(self.a.execute(prepared))
        return prepared.request_id, prepared.run_id

    async def kill_a(self, **reap: Any) -> int:
        """A dies; its lease expires; B's reaper takes its runs over."""
        self.grave.dead = True
        if self.clock is not None:
            self.clock.advance(3600)
        else:
            await asyncio.sleep(A_LEASE_S)  # its last renewal was at most this long ago
        async with asyncio.timeout(REAP_GUARD_S):
            while True:
                taken = await reap_once(
                    self.store, self.sinks, owner="runner-b", lease_ttl_s=30.0, **reap
                )
                if taken:
                    return taken
                await asyncio.sleep(0.1)

    async def settled(self, run_id: str) -> Run:
        """The run once it is no longer running (B finished it)."""
        async with asyncio.timeout(GUARD_S):
            while True:
                run = await self.store.get_run(run_id=run_id)
                if run.status != "running" and run_id not in self.b.held_run_ids:
                    return run
                await asyncio.sleep(0.01)

    async def bury_a(self) -> None:
        """Let the dead runner's task end (everything it does now fails)."""
        self.grave.bury()
        self.client.release.set()
        if self.task is not None:
            async with asyncio.timeout(GUARD_S):
                await asyncio.gather(self.task, return_exceptions=True)

    def frames(self, request_id: str) -> list[StreamChunk]:
        """The request's frames (MemorySinks only)."""
        assert isinstance(self.sinks, MemorySinks)
        return self.sinks.frames(request_id)
