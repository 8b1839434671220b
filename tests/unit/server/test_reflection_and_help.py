"""Reflection answers under grpc.reflection.v1 and v1alpha; the rich status carries title and hint."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_reflection.v1alpha import reflection_pb2

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer, ServiceBinding, error_from_rpc, open_channel
from riverbeam.v1 import store_service_pb2


async def _fail(request: bytes, context: Any) -> bytes:
    raise RiverbeamError(ErrorCode.SESSION_BUSY, "session s1 is busy", session_id="s1")


def _register(server: grpc.aio.Server) -> None:
    handlers = {"Fail": grpc.unary_unary_rpc_method_handler(_fail)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Svc", handlers),))


@pytest.fixture
async def server() -> AsyncIterator[GrpcServer]:
    store = store_service_pb2.DESCRIPTOR.services_by_name["StoreService"].full_name
    bindings = [ServiceBinding("test.Svc", _register), ServiceBinding(store, lambda s: None)]
    async with GrpcServer(bindings) as srv:
        yield srv


async def _reflect(channel: grpc.aio.Channel, service: str, request: Any) -> Any:
    call = channel.stream_stream(
        f"/{service}/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )([request])
    [response] = [r async for r in call]
    return response


@pytest.mark.parametrize(
    "service", ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]
)
async def test_reflection_under_both_names(server: GrpcServer, service: str) -> None:
    async with open_channel(server.address) as channel:
        listed = await _reflect(
            channel, service, reflection_pb2.ServerReflectionRequest(list_services="")
        )
        names = {s.name for s in listed.list_services_response.service}
        assert {
            "riverbeam.v1.StoreService",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
            "grpc.health.v1.Health",
        } <= names
        found = await _reflect(
            channel,
            service,
            reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="riverbeam.v1.StoreService"
            ),
        )
        files = [
            descriptor_pb2.FileDescriptorProto.FromString(raw)
            for raw in found.file_descriptor_response.file_descriptor_proto
        ]
        assert "riverbeam/v1/store_service.proto" in {f.name for f in files}


async def test_the_rich_status_carries_title_and_hint(server: GrpcServer) -> None:
    async with open_channel(server.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await channel.unary_unary("/test.Svc/Fail")(b"")
    trailers = dict(info.value.trailing_metadata() or ())
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    kinds = {}
    for detail in status.details:
        for cls in (
            error_details_pb2.ErrorInfo,
            error_details_pb2.LocalizedMessage,
            error_details_pb2.Help,
        ):
            message = cls()
            if detail.Is(message.DESCRIPTOR):
                detail.Unpack(message)
                kinds[cls.__name__] = message
    assert kinds["ErrorInfo"].reason == "BEM-030" and kinds["ErrorInfo"].domain == "riverbeam"
    assert kinds["LocalizedMessage"].locale == "en-US"
    assert kinds["LocalizedMessage"].message == ErrorCode.SESSION_BUSY.spec.title
    [link] = kinds["Help"].links
    assert link.description == ErrorCode.SESSION_BUSY.spec.hint
    assert link.url == "docs/errors.md#bem-030"
    err = error_from_rpc(info.value)
    assert err.code is ErrorCode.SESSION_BUSY and err.details == {"session_id": "s1"}


def test_an_unknown_code_keeps_the_servers_title_and_hint() -> None:
    from google.protobuf import any_pb2

    details = []
    for message in (
        error_details_pb2.ErrorInfo(reason="BEM-999", domain="riverbeam", metadata={"k": "v"}),
        error_details_pb2.LocalizedMessage(locale="en-US", message="a newer failure"),
        error_details_pb2.Help(links=[error_details_pb2.Help.Link(description="do this", url="u")]),
    ):
        packed = any_pb2.Any()
        packed.Pack(message)
        details.append(packed)
    raw = status_pb2.Status(code=9, message="it broke", details=details).SerializeToString()

    class _Rpc(grpc.RpcError):
        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.FAILED_PRECONDITION

        def details(self) -> str:
            return "it broke"

        def trailing_metadata(self) -> Any:
            return (("grpc-status-details-bin", raw),)

    err = error_from_rpc(_Rpc())
    assert err.code is ErrorCode.INTERNAL and err.message == "it broke"
    assert err.details == {
        "k": "v",
        "remote_code": "BEM-999",
        "remote_title": "a newer failure",
        "remote_hint": "do this",
    }
