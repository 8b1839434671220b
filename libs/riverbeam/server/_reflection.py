"""gRPC server reflection under both names: grpc.reflection.v1 and v1alpha.

grpcio-reflection (1.85) ships only the v1alpha service; grpcurl, Postman and other newer tools
ask for v1 first. The two protos are wire-identical (same messages, fields and numbers; only
the package differs), so one servicer answers both, registered under each service name.

The servicer (and the descriptor_pb2 module it reads) is built on the first reflection call,
not at start-up: most processes are never asked (issue 16: idle RSS).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

import grpc
from grpc_reflection.v1alpha import reflection_pb2

if TYPE_CHECKING:
    from grpc_reflection.v1alpha._async import ReflectionServicer

__all__ = ["REFLECTION_V1", "REFLECTION_V1ALPHA", "enable_reflection"]

REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
REFLECTION_V1ALPHA: str = reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"].full_name


class _LazyReflection:
    """Answers ServerReflectionInfo with a ReflectionServicer made on the first call."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = list(names)
        self._servicer: ReflectionServicer | None = None

    def _get(self) -> ReflectionServicer:
        if self._servicer is None:
            from grpc_reflection.v1alpha._async import ReflectionServicer

            self._servicer = ReflectionServicer(self._names)
        return self._servicer

    async def info(
        self, requests: AsyncIterator[reflection_pb2.ServerReflectionRequest], context: Any
    ) -> AsyncIterator[reflection_pb2.ServerReflectionResponse]:
        async for response in self._get().ServerReflectionInfo(requests, context):
            yield response


def enable_reflection(service_names: Sequence[str], server: grpc.aio.Server) -> None:
    """Serve reflection for `service_names` (plus both reflection services) on `server`."""
    names = [*service_names, REFLECTION_V1, REFLECTION_V1ALPHA]
    handler = grpc.stream_stream_rpc_method_handler(
        _LazyReflection(names).info,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    for service in (REFLECTION_V1, REFLECTION_V1ALPHA):
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(service, {"ServerReflectionInfo": handler}),)
        )
