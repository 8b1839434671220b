"""gRPC server reflection under both names: grpc.reflection.v1 and v1alpha.

grpcio-reflection (1.85) ships only the v1alpha service; grpcurl, Postman and other newer tools
ask for v1 first. The two protos are wire-identical (same messages, fields and numbers; only
the package differs), so one servicer answers both, registered under each service name.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

__all__ = ["REFLECTION_V1", "REFLECTION_V1ALPHA", "enable_reflection"]

REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
REFLECTION_V1ALPHA: str = reflection.SERVICE_NAME


def enable_reflection(service_names: Sequence[str], server: grpc.aio.Server) -> None:
    """Serve reflection for `service_names` (plus both reflection services) on `server`."""
    names = [*service_names, REFLECTION_V1, REFLECTION_V1ALPHA]
    servicer = ReflectionServicer(names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    for service in (REFLECTION_V1, REFLECTION_V1ALPHA):
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(service, {"ServerReflectionInfo": handler}),)
        )
