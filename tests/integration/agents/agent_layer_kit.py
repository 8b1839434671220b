"""A stack for the agent layer over the public gRPC API: Postgres store, real NATS.

store   PgBeamStore (a schema of its own) served by the store service
runner  RiverBeam(StoreClient, JetStreamSinks) with deployment agent-layer defaults
router  Gateway + RiverbeamServicer (the router_kit's test tokens and wiring)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from riverbeam.agents import AgentLayerConfig, RigAgentRunner, RigOptions, ScriptedClient
from riverbeam.client import RiverbeamClient
from riverbeam.routing import ModelList
from riverbeam.runtime import JetStreamSinks, PipelineOptions, RiverBeam
from riverbeam.server import GrpcServer, ServiceBinding
from riverbeam.store import PgBeamStore, StoreClient
from riverbeam.stream import NatsConnection, StreamConfig, ensure_stream
from riverbeam.types import ModelConfig
from riverbeam.v1 import runner_service_pb2_grpc as runner_grpc
from services.runner.servicer import RunnerServicer
from services.store.app import binding as store_binding
from tests.integration.router.router_kit import TOKENS, open_router
from tests.unit.runtime.runtime_kit import CountingTool

JSON_MODELS = ModelList(
    [
        ModelConfig(
            name="json-model",
            provider="openai",
            capabilities=["tools", "structured_output"],
            cost_per_1k_tokens=0.1,
        )
    ],
    source="<agent layer tests>",
)


@dataclass
class LayerStack:
    store: PgBeamStore
    router_address: str
    scripts: dict[str, ScriptedClient]
    tools: dict[str, CountingTool]
    _clients: list[RiverbeamClient] = field(default_factory=list)

    def client(self, who: str) -> RiverbeamClient:
        client = RiverbeamClient(self.router_address, token=TOKENS[who], timeout_s=30.0)
        self._clients.append(client)
        return client

    async def close(self) -> None:
        for client in self._clients:
            await client.close()


@contextlib.asynccontextmanager
async def open_layer_stack(
    nats_url: str,
    pg_url: str,
    schema: str,
    agents: dict[str, RigOptions],
    *,
    layer: AgentLayerConfig | None = None,
) -> AsyncIterator[LayerStack]:
    """One RigAgentRunner per entry of `agents` (each with its own ScriptedClient)."""
    config = StreamConfig()
    async with contextlib.AsyncExitStack() as stack:
        store = await PgBeamStore.connect(pg_url, schema=schema, min_size=1, max_size=5)
        stack.push_async_callback(store.aclose)
        store_server = await stack.enter_async_context(
            GrpcServer([store_binding(store)], listen="127.0.0.1:0", grace_s=0.2)
        )
        runner_store = StoreClient(store_server.address)
        stack.push_async_callback(runner_store.aclose)
        nats = await stack.enter_async_context(
            NatsConnection(nats_url, name="agent-layer-runner", initial_connect_timeout_s=10)
        )
        await ensure_stream(nats.js, config)
        beam = RiverBeam(
            store=runner_store,
            sinks=JetStreamSinks(nats.js, config),
            options=PipelineOptions(agent_layer=layer),
        )
        scripts: dict[str, ScriptedClient] = {}
        tools = {
            "note": CountingTool("note"),
            "git_push": CountingTool("git_push"),
            "slow": CountingTool("slow", delay_s=30.0),
        }
        for name, options in agents.items():
            scripts[name] = ScriptedClient([])
            beam.register_agent(
                RigAgentRunner.new(name, scripts[name], list(tools.values()), options=options)
            )
        servicer = RunnerServicer(beam)
        binding = ServiceBinding(
            "riverbeam.v1.RunnerService",
            lambda server: runner_grpc.add_RunnerServiceServicer_to_server(servicer, server),  # type: ignore[no-untyped-call]
        )
        runner_server = await stack.enter_async_context(
            GrpcServer([binding], listen="127.0.0.1:0", grace_s=0.2)
        )

        async def stop_runs() -> None:
            await beam.aclose(grace_s=2.0)

        stack.push_async_callback(stop_runs)
        router_address = await stack.enter_async_context(
            open_router(
                store_address=store_server.address,
                runner_address=runner_server.address,
                nats_url=nats_url,
                models=JSON_MODELS,
                stream_config=config,
            )
        )
        result = LayerStack(store, router_address, scripts, tools)
        stack.push_async_callback(result.close)
        yield result


def option(**fields: Any) -> RigOptions:
    return RigOptions(**fields)
