"""GrpcServer adds a generated service's generic handlers only, not its registered method
handlers (each registered method costs grpc.aio a future waited on at every call), and every
method of the service is still served. With no interceptor but its own, the error mapping is
in the handlers and gRPC runs no interceptor per call."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer, ServiceBinding, open_channel, translate_rpc_errors
from riverbeam.server._grpc_server import _GenericHandlersOnly
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import riverbeam_service_pb2_grpc as pb_grpc
from riverbeam.v1 import types_pb2


class _Models(pb_grpc.RiverbeamServiceServicer):
    async def ListModels(self, request: Any, context: Any) -> pb.ListModelsResponse:
        return pb.ListModelsResponse(models=[types_pb2.ModelConfig(name="m1")])

    async def GetAgent(self, request: Any, context: Any) -> pb.GetAgentResponse:
        return pb.GetAgentResponse(agent=types_pb2.AgentMetadata(name=request.name))


class _Recording:
    def __init__(self) -> None:
        self.generic: list[Any] = []
        self.registered: list[str] = []
        self.ports: list[str] = []

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self.generic.extend(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None:
        self.registered.append(service)

    def add_insecure_port(self, address: str) -> int:
        self.ports.append(address)
        return 1


def test_generated_registration_adds_generic_handlers_only() -> None:
    recording = _Recording()
    server: Any = _GenericHandlersOnly(recording)  # type: ignore[arg-type]
    pb_grpc.add_RiverbeamServiceServicer_to_server(_Models(), server)  # type: ignore[no-untyped-call]
    assert recording.registered == []
    assert len(recording.generic) == 1
    details: Any = type("D", (), {"method": "/riverbeam.v1.RiverbeamService/ListModels"})()
    assert recording.generic[0].service(details) is not None
    # Anything else a registration asks of the server reaches it.
    assert server.add_insecure_port("127.0.0.1:0") == 1
    assert recording.ports == ["127.0.0.1:0"]


async def test_each_method_of_a_generated_service_is_served() -> None:
    servicer = _Models()
    binding = ServiceBinding(
        "riverbeam.v1.RiverbeamService",
        lambda server: pb_grpc.add_RiverbeamServiceServicer_to_server(servicer, server),  # type: ignore[no-untyped-call]
    )
    async with GrpcServer([binding]) as srv, open_channel(srv.address) as channel:
        stub: Any = pb_grpc.RiverbeamServiceStub(channel)  # type: ignore[no-untyped-call]
        models = await stub.ListModels(pb.ListModelsRequest())
        assert [m.name for m in models.models] == ["m1"]
        agent = await stub.GetAgent(pb.GetAgentRequest(name="a1"))
        assert agent.agent.name == "a1"
        # A method the server does not know is still gRPC's own refusal.
        untyped: Any = channel
        try:
            await untyped.unary_unary("/riverbeam.v1.RiverbeamService/Nope")(b"")
        except grpc.aio.AioRpcError as exc:
            assert exc.code() is grpc.StatusCode.UNIMPLEMENTED
        else:
            raise AssertionError("an unknown method was answered")


async def _fail(request: bytes, context: Any) -> bytes:
    raise RiverbeamError(ErrorCode.ACTION_NOT_PENDING, "action a1 was resolved", action_id="a1")


async def _echo(request: bytes, context: Any) -> bytes:
    return request


def _register(server: grpc.aio.Server) -> None:
    handlers = {
        "Fail": grpc.unary_unary_rpc_method_handler(_fail),
        "Echo": grpc.unary_unary_rpc_method_handler(_echo),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("mapped.Svc", handlers),))


class _Seeing(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    def __init__(self) -> None:
        self.methods: list[str] = []

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        self.methods.append(details.method)
        return await continuation(details)


async def _calls(address: str) -> None:
    async with open_channel(address) as channel:
        untyped: Any = channel
        for _ in range(3):
            assert await untyped.unary_unary("/mapped.Svc/Echo")(b"hi") == b"hi"
            with pytest.raises(RiverbeamError) as info:
                async with translate_rpc_errors():
                    await untyped.unary_unary("/mapped.Svc/Fail")(b"x")
            assert info.value.code is ErrorCode.ACTION_NOT_PENDING
            assert info.value.details["action_id"] == "a1"


async def test_with_no_other_interceptor_the_handlers_map_errors_and_grpc_runs_none() -> None:
    async with GrpcServer([ServiceBinding("mapped.Svc", _register)]) as srv:
        await _calls(srv.address)
        assert srv._interceptors == []
        # Built once per method, on its first call, as the interceptor built them.
        assert srv._errors.handlers_built == 2


async def test_with_another_interceptor_errors_are_mapped_around_it() -> None:
    seeing = _Seeing()
    async with GrpcServer([ServiceBinding("mapped.Svc", _register)], interceptors=[seeing]) as srv:
        await _calls(srv.address)
        assert srv._interceptors == [srv._errors, seeing]
        assert srv._errors.handlers_built == 2
    assert seeing.methods.count("/mapped.Svc/Fail") == 3
