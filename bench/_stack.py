"""What the gRPC benchmarks call: bare echo servers and the router -> runner -> store stack.

Everything runs in the benchmark's process and event loop, but every hop is a real gRPC call
over a loopback TCP channel, as between the deployed services. The stack is the services'
wiring minus NATS: a non-streaming invoke never touches NATS (the runner's JetStreamSinks hand
out an in-memory sink when `stream` is false), so `NonStreamingSinks` does exactly that.
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc

from riverbeam.auth import DevAuthenticator
from riverbeam.core.errors import RiverbeamError
from riverbeam.gateway import Gateway
from riverbeam.routing import ModelList
from riverbeam.runtime import CollectingSink, FrameSink, PipelineOptions, RiverBeam, RunnerClient
from riverbeam.server import GrpcServer, ServiceBinding
from riverbeam.store import BeamStore, InMemoryStore, StoreClient
from riverbeam.telemetry._metrics import RPC_TOTAL
from riverbeam.v1 import riverbeam_service_pb2_grpc as router_grpc
from riverbeam.v1 import runner_service_pb2 as runner_pb
from riverbeam.v1 import runner_service_pb2_grpc as runner_grpc
from riverbeam.v1 import types_pb2
from services.router.servicer import RiverbeamServicer
from services.runner.servicer import RunnerServicer
from services.store.app import binding as store_binding

__all__ = [
    "AGENT",
    "ECHO_METHOD",
    "USER_TEXT",
    "NonStreamingSinks",
    "Stack",
    "bare_channel",
    "bare_echo_server",
    "count_rpcs",
    "invoke_request",
    "riverbeam_echo_server",
    "router_stack",
    "rpc_delta",
    "run_invoke_request",
]

ECHO_METHOD = "/bench.Echo/Echo"
AGENT = "assistant"
USER_TEXT = "Summarise the release notes of the last sprint in three bullet points, please."


def _echo_handler() -> grpc.GenericRpcHandler[Any]:
    async def echo(request: bytes, context: Any) -> bytes:
        return request

    return grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )


@contextlib.asynccontextmanager
async def bare_echo_server() -> AsyncIterator[str]:
    """A plain grpc.aio server (no interceptor, no health, default options) echoing bytes."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((_echo_handler(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


@contextlib.asynccontextmanager
async def riverbeam_echo_server() -> AsyncIterator[str]:
    """The same echo handler served by our GrpcServer (ErrorInterceptor, metrics, health)."""
    echo = ServiceBinding("bench.Echo", lambda s: s.add_generic_rpc_handlers((_echo_handler(),)))
    async with GrpcServer([echo], grace_s=0.5) as server:
        yield server.address


def bare_channel(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address)


class NonStreamingSinks:
    """The runner's JetStreamSinks for `stream: false` requests: frames stay in memory."""

    async def open(self, request_id: str, *, stream: bool) -> FrameSink:
        return CollectingSink()

    async def publish_terminal_error(self, request_id: str, error: RiverbeamError) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Stack:
    router: str
    runner: str
    store: str
    beam: RiverBeam


@contextlib.asynccontextmanager
async def router_stack(backing: BeamStore | None = None) -> AsyncIterator[Stack]:
    """store service (InMemoryStore) <- runner service (echo agent) <- router service."""
    memory = backing if backing is not None else InMemoryStore()
    async with GrpcServer([store_binding(memory)], grace_s=0.5) as store_server:
        runner_store = StoreClient(store_server.address)
        beam = RiverBeam(
            store=runner_store,
            sinks=NonStreamingSinks(),
            options=PipelineOptions(runner_id="bench-runner"),
        )
        beam.register_echo_agent(AGENT)
        runner_servicer = RunnerServicer(beam)
        runner_binding = ServiceBinding(
            "riverbeam.v1.RunnerService",
            lambda s: runner_grpc.add_RunnerServiceServicer_to_server(runner_servicer, s),  # type: ignore[no-untyped-call]
        )
        try:
            async with GrpcServer([runner_binding], grace_s=0.5) as runner_server:
                runner = RunnerClient(runner_server.address)
                router_store = StoreClient(store_server.address)
                gateway = Gateway(
                    authenticator=DevAuthenticator(),
                    runner=runner,
                    store=router_store,
                    models=ModelList.default(),
                )
                router_servicer = RiverbeamServicer(gateway)
                router_binding = ServiceBinding(
                    "riverbeam.v1.RiverbeamService",
                    lambda s: router_grpc.add_RiverbeamServiceServicer_to_server(  # type: ignore[no-untyped-call]
                        router_servicer, s
                    ),
                )
                try:
                    async with GrpcServer([router_binding], grace_s=0.5) as router_server:
                        yield Stack(
                            router=router_server.address,
                            runner=runner_server.address,
                            store=store_server.address,
                            beam=beam,
                        )
                finally:
                    await runner.aclose()
                    await router_store.aclose()
                await beam.aclose(grace_s=1.0)
        finally:
            await runner_store.aclose()


def _content() -> types_pb2.ContentPart:
    return types_pb2.ContentPart(type="text", text=USER_TEXT)


def invoke_request(session_id: str | None = None) -> types_pb2.InvokeRequest:
    """A public, non-streaming Invoke of the echo agent (a fresh session unless given)."""
    message = types_pb2.InvokeRequest(
        agent_name=AGENT, content=[_content()], session_id=session_id or str(uuid.uuid4())
    )
    message.metadata.update({"client": "bench", "locale": "en-GB"})
    return message


def run_invoke_request(session_id: str | None = None) -> runner_pb.RunInvokeRequest:
    """What the router sends the runner for the same invoke (model and grant filled in)."""
    request = invoke_request(session_id)
    request.auth_context.user_id = "dev"
    request.request_id = str(uuid.uuid4())
    return runner_pb.RunInvokeRequest(
        request=request, model=_default_model(), grant=runner_pb.CallerGrant(subject="dev")
    )


@functools.cache
def _default_model() -> types_pb2.ModelConfig:
    """Built once, so the client side of RunInvoke costs no conversion."""
    model: types_pb2.ModelConfig = ModelList.default().models[0].to_proto()
    return model


def count_rpcs() -> dict[str, float]:
    """Server-side RPCs handled so far, per 'service/method' (from the interceptor's metric)."""
    out: dict[str, float] = {}
    for metric in RPC_TOTAL.collect():
        for sample in metric.samples:
            if not sample.name.endswith("_total"):
                continue
            key = f"{sample.labels['service'].rsplit('.', 1)[-1]}/{sample.labels['method']}"
            out[key] = out.get(key, 0.0) + sample.value
    return out


def rpc_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before.get(k, 0.0) for k in after if after[k] - before.get(k, 0.0) > 0}
