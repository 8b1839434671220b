"""The router's test stack in one process: store, runner and router, each behind real gRPC.

    store   InMemoryStore served by the store service            (GrpcServer on 127.0.0.1:0)
    runner  RiverBeam(StoreClient, JetStreamSinks on real NATS)  served by RunnerServicer
    router  Gateway(TokenAuthenticator, RunnerClient, StoreClient, JetStreamFrames)
            served by RiverbeamServicer                          (GrpcServer on 127.0.0.1:0)

Tests talk to the router with the SDK (`RiverbeamClient`) or raw stubs, and look at what was
recorded in the InMemoryStore directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from riverbeam.agents import (
    AgentContext,
    AgentInput,
    EchoAgent,
    FrameFactory,
    PendingToolCall,
    RememberTool,
    RigAgentRunner,
    ScriptedClient,
    ToolCalls,
)
from riverbeam.auth import TokenAuthenticator, hash_token
from riverbeam.client import RiverbeamClient
from riverbeam.gateway import Gateway
from riverbeam.routing import ModelList
from riverbeam.runtime import JetStreamFrames, JetStreamSinks, RiverBeam, RunnerClient
from riverbeam.server import GrpcServer, ServiceBinding, open_channel
from riverbeam.store import InMemoryStore, StoreClient
from riverbeam.stream import NatsConnection, StreamConfig, ensure_stream
from riverbeam.types import (
    AgentMetadata,
    AgentResult,
    ContentPart,
    Modality,
    ModelConfig,
    Run,
    StreamChunk,
)
from riverbeam.v1 import riverbeam_service_pb2_grpc as pb_grpc
from riverbeam.v1 import runner_service_pb2_grpc as runner_grpc
from services.router.servicer import RiverbeamServicer
from services.runner.servicer import RunnerServicer
from services.store.app import binding as store_binding
from tests.unit.runtime.runtime_kit import CountingTool

GUARD_S = 20.0  # a hang guard for waits, never a timing assertion

# ---- principals ---------------------------------------------------------------------------------
TOKENS = {
    "alice": "tok-alice-0123456789abcdef",
    "bob": "tok-bob-0123456789abcdef",
    "carol": "tok-carol-0123456789abcdef",
    "backend": "tok-backend-0123456789abcdef",
    "backend2": "tok-backend2-0123456789abcdef",
    "approver": "tok-approver-0123456789abcdef",
    "admin": "tok-admin-0123456789abcdef",
}
_PRINCIPALS: dict[str, dict[str, Any]] = {
    "alice": {"subject": "alice", "org_id": "o1", "roles": ["user"]},
    "bob": {"subject": "bob", "org_id": "o1", "roles": ["user"]},
    "carol": {"subject": "carol", "org_id": "o2", "roles": ["user"]},
    "backend": {"subject": "backend-svc", "org_id": "o1", "roles": ["backend"]},
    "backend2": {"subject": "backend-svc-2", "org_id": "o2", "roles": ["backend"]},
    "approver": {"subject": "approver", "org_id": "o1", "roles": ["approver"]},
    "admin": {"subject": "admin", "roles": ["admin"]},
}


def authenticator() -> TokenAuthenticator:
    return TokenAuthenticator.from_data(
        {
            "tokens": [
                {"token_sha256": hash_token(TOKENS[who]), **entry}
                for who, entry in _PRINCIPALS.items()
            ]
        },
        source="<router tests>",
    )


# ---- models ------------------------------------------------------------------------------------
def routing_models() -> ModelList:
    """Three text models (two tie on cost) and one vision model."""
    return ModelList(
        [
            ModelConfig(
                name="small", provider="openai", capabilities=["tools"], cost_per_1k_tokens=0.1
            ),
            ModelConfig(
                name="coder",
                provider="anthropic",
                capabilities=["tools", "code"],
                cost_per_1k_tokens=3.0,
                provider_config={"base_url": "http://coder.invalid/v1"},
            ),
            ModelConfig(name="local", provider="ollama", cost_per_1k_tokens=0.1),
            ModelConfig(
                name="vision",
                provider="openai",
                modalities=["text", "image"],
                capabilities=["vision"],
                cost_per_1k_tokens=2.5,
            ),
        ],
        source="<router tests>",
    )


def text_only_models() -> ModelList:
    return ModelList(
        [ModelConfig(name="plain", provider="custom", cost_per_1k_tokens=0.0)], source="<text only>"
    )


# ---- agents ------------------------------------------------------------------------------------
class InspectAgent:
    """Replies with JSON of what reached it: the resolved model, metadata, auth and confirm."""

    def __init__(
        self, name: str, *, modalities: list[Modality] | None = None, tags: list[str] | None = None
    ) -> None:
        self.name = name
        self.modalities: list[Modality] = modalities or ["text"]
        self.tags = tags or []

    def metadata(self) -> AgentMetadata:
        return AgentMetadata(name=self.name, supported_modalities=self.modalities, tags=self.tags)

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[Any]:
        frames = FrameFactory.for_input(self.name, input)
        model = context.model_config_resolved
        seen = {
            "model": model.name if model else None,
            "metadata": input.metadata,
            "auth": input.auth_context.to_json_dict() if input.auth_context else None,
            "confirm_allowed": input.confirm_allowed,
            "memory": [e.content for e in context.memory],
        }
        text = json.dumps(seen, sort_keys=True)
        yield frames.chunk(text)
        yield frames.done(AgentResult(content=[ContentPart.of_text(text)], agent_name=self.name))

    async def health_check(self) -> bool:
        return True


class GateAgent:
    """Streams `parts` chunks; before chunk i it waits on gates[i] (when the test set one up).

    `reached[i]` is set when the agent is about to wait on gate i, so a test knows where it is.
    A gate that never opens makes a slow agent (the deadline tests).
    """

    def __init__(self, name: str, parts: int = 3) -> None:
        self.name = name
        self.parts = parts
        self.gates: dict[int, asyncio.Event] = {}
        self.reached: dict[int, asyncio.Event] = {}

    def gate(self, index: int) -> asyncio.Event:
        self.reached[index] = asyncio.Event()
        self.gates[index] = asyncio.Event()
        return self.gates[index]

    def metadata(self) -> AgentMetadata:
        return AgentMetadata(name=self.name)

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[Any]:
        frames = FrameFactory.for_input(self.name, input)
        text = []
        for index in range(self.parts):
            if index in self.gates:
                self.reached[index].set()
                await self.gates[index].wait()
            piece = f"part {index} "
            text.append(piece)
            yield frames.chunk(piece)
        yield frames.done(
            AgentResult(content=[ContentPart.of_text("".join(text))], agent_name=self.name)
        )

    async def health_check(self) -> bool:
        return True


# ---- the stack ---------------------------------------------------------------------------------
@dataclass
class Stack:
    store: InMemoryStore
    beam: RiverBeam
    store_address: str
    runner_address: str
    router_address: str
    nats: NatsConnection
    stream_config: StreamConfig
    script: ScriptedClient
    tools: dict[str, CountingTool]
    gate: GateAgent
    _clients: list[RiverbeamClient] = field(default_factory=list)
    _channels: list[grpc.aio.Channel] = field(default_factory=list)

    def client(self, who: str | None, *, timeout_s: float | None = 30.0) -> RiverbeamClient:
        """An SDK client with `who`'s token (None: no token)."""
        client = RiverbeamClient(
            self.router_address, token=TOKENS[who] if who else None, timeout_s=timeout_s
        )
        self._clients.append(client)
        return client

    def stub(self) -> Any:
        """A raw RiverbeamService stub (pass `metadata=auth(who)` yourself)."""
        channel = open_channel(self.router_address)
        self._channels.append(channel)
        return pb_grpc.RiverbeamServiceStub(channel)  # type: ignore[no-untyped-call]

    async def close_clients(self) -> None:
        for client in self._clients:
            await client.close()
        for channel in self._channels:
            await channel.close(None)

    def records(self) -> dict[str, Any]:
        """Everything the store holds (records are replaced, never changed in place, so a
        shallow copy compares equal exactly when nothing was written)."""
        t = self.store._t
        return {
            "sessions": dict(t.sessions),
            "interactions": dict(t.interactions),
            "runs": dict(t.runs),
            "messages": {k: list(v) for k, v in t.messages.items()},
            "actions": dict(t.actions),
            "memory": list(t.memory),
        }

    async def run_of(self, request_id: str) -> Run:
        run = await self.store.get_run_by_request(request_id=request_id)
        assert run is not None, f"no run for request {request_id}"
        return run

    async def wait_run(self, request_id: str, *, status: str | None = None) -> Run:
        """The run of a request once it is no longer running (or has `status`)."""

        async def finished() -> Run | None:
            run = await self.store.get_run_by_request(request_id=request_id)
            if run is None:
                return None
            done = run.status == status if status else run.status != "running"
            return run if done else None

        run: Run = await eventually(finished)
        return run


async def eventually(probe: Callable[[], Awaitable[Any]], *, timeout_s: float = GUARD_S) -> Any:
    """Poll `probe` until it returns something truthy (a wait with a generous guard)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = await probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached within the guard")
        await asyncio.sleep(0.02)


def author_agent(script: ScriptedClient, tools: dict[str, CountingTool]) -> RigAgentRunner:
    return RigAgentRunner.new("author", script, list(tools.values()), None)


@contextlib.asynccontextmanager
async def open_router(
    *,
    store_address: str,
    runner_address: str,
    nats_url: str,
    models: ModelList,
    stream_config: StreamConfig,
) -> AsyncIterator[str]:
    """A router (as services/router/app.py wires it, with test tokens) on 127.0.0.1:0."""
    runner = RunnerClient(runner_address)
    store = StoreClient(store_address)
    try:
        async with NatsConnection(nats_url, name="router-tests-router") as nats:
            gateway = Gateway(
                authenticator=authenticator(),
                runner=runner,
                store=store,
                models=models,
                frames=JetStreamFrames(nats.js, stream_config, wait_for_start_s=5.0),
            )
            servicer = RiverbeamServicer(gateway)
            binding = ServiceBinding(
                "riverbeam.v1.RiverbeamService",
                lambda server: pb_grpc.add_RiverbeamServiceServicer_to_server(servicer, server),  # type: ignore[no-untyped-call]
            )
            async with GrpcServer([binding], listen="127.0.0.1:0", grace_s=0.2) as server:
                yield server.address
    finally:
        await runner.aclose()
        await store.aclose()


@contextlib.asynccontextmanager
async def open_stack(
    nats_url: str,
    *,
    models: ModelList | None = None,
    stream_config: StreamConfig | None = None,
) -> AsyncIterator[Stack]:
    stream_config = stream_config or StreamConfig()
    store = InMemoryStore()
    async with contextlib.AsyncExitStack() as stack:
        store_server = await stack.enter_async_context(
            GrpcServer([store_binding(store)], listen="127.0.0.1:0", grace_s=0.2)
        )
        runner_store = StoreClient(store_server.address)
        stack.push_async_callback(runner_store.aclose)
        runner_nats = await stack.enter_async_context(
            NatsConnection(nats_url, name="router-tests-runner", initial_connect_timeout_s=10)
        )
        await ensure_stream(runner_nats.js, stream_config)
        beam = RiverBeam(store=runner_store, sinks=JetStreamSinks(runner_nats.js, stream_config))
        beam.register_echo_agent("assistant")
        script = ScriptedClient([])
        tools = {"note": CountingTool("note"), "push": CountingTool("push", confirm=True)}
        beam.register_agent(author_agent(script, tools))
        beam.register_agent(RigAgentRunner.new("memo", script, [RememberTool()], None))
        beam.register_agent(InspectAgent("inspect"))
        beam.register_agent(InspectAgent("seer", modalities=["text", "image"]))
        beam.register_agent(InspectAgent("coding", tags=["code"]))
        gate = GateAgent("gated")
        beam.register_agent(gate)
        beam.register_agent(EchoAgent("echo"))
        runner_servicer = RunnerServicer(beam)
        runner_binding = ServiceBinding(
            "riverbeam.v1.RunnerService",
            lambda server: runner_grpc.add_RunnerServiceServicer_to_server(runner_servicer, server),  # type: ignore[no-untyped-call]
        )
        runner_server = await stack.enter_async_context(
            GrpcServer([runner_binding], listen="127.0.0.1:0", grace_s=0.2)
        )

        async def stop_runs() -> None:
            # Release whatever a test left waiting, then let the runner finish its runs.
            for event in gate.gates.values():
                event.set()
            await beam.aclose(grace_s=2.0)

        stack.push_async_callback(stop_runs)
        router_address = await stack.enter_async_context(
            open_router(
                store_address=store_server.address,
                runner_address=runner_server.address,
                nats_url=nats_url,
                models=models or routing_models(),
                stream_config=stream_config,
            )
        )
        test_nats = await stack.enter_async_context(
            NatsConnection(nats_url, name="router-tests-follower", initial_connect_timeout_s=10)
        )
        result = Stack(
            store=store,
            beam=beam,
            store_address=store_server.address,
            runner_address=runner_server.address,
            router_address=router_address,
            nats=test_nats,
            stream_config=stream_config,
            script=script,
            tools=tools,
            gate=gate,
        )
        stack.push_async_callback(result.close_clients)
        yield result


# ---- errors on the wire ------------------------------------------------------------------------
@dataclass(frozen=True)
class WireError:
    """What a caller sees of a failed call: status code, message and the ErrorInfo detail."""

    code: grpc.StatusCode
    message: str
    reason: str
    domain: str
    metadata: dict[str, str]

    @property
    def bem(self) -> str:
        return self.reason


def wire_error(exc: grpc.aio.AioRpcError) -> WireError:
    reason, domain, metadata = "", "", {}
    trailing: Any = exc.trailing_metadata() or ()
    for key, value in trailing:
        if key == "grpc-status-details-bin":
            status = status_pb2.Status()
            status.ParseFromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
    return WireError(exc.code(), exc.details() or "", reason, domain, metadata)


async def refused(call: Awaitable[Any]) -> WireError:
    """The error of a raw-stub call that must fail."""
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return wire_error(exc)
    raise AssertionError("the call succeeded")


async def refused_stream(call: Any) -> WireError:
    """The error of a raw server-streaming call that must fail before yielding a frame."""
    try:
        async for _ in call:
            raise AssertionError("the stream yielded a frame")
    except grpc.aio.AioRpcError as exc:
        return wire_error(exc)
    raise AssertionError("the stream ended without an error")


def auth(who: str | None) -> tuple[tuple[str, str], ...]:
    """gRPC metadata carrying `who`'s bearer token."""
    return (("authorization", f"Bearer {TOKENS[who]}"),) if who else ()


# ---- conversations -----------------------------------------------------------------------------
async def pause_author(
    stack: Stack, client: RiverbeamClient, *, session_id: str | None = None, **extra: Any
) -> AgentResult:
    """Run `author` until it holds its confirm_required `push` call for approval."""
    stack.script.push(ToolCalls((PendingToolCall("push", {"v": "main"}),)))
    result: AgentResult = await client.invoke("author", "push it", session_id=session_id, **extra)
    assert result.interrupted, result
    return result


async def collect(frames: AsyncIterator[StreamChunk]) -> list[StreamChunk]:
    """Every frame up to the terminal one (under the hang guard)."""
    out: list[StreamChunk] = []
    async with asyncio.timeout(GUARD_S):
        async for frame in frames:
            out.append(frame)
    return out
