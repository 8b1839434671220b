"""What RPC spans have in common: names, attributes, and how a gRPC status is recorded."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from riverbeam.telemetry._attributes import (
    ERROR_TYPE,
    RIVERBEAM_ERROR_CODE,
    RPC_GRPC_STATUS_CODE,
    RPC_METHOD,
    RPC_SERVICE,
    RPC_SYSTEM,
)

__all__ = [
    "bem_from_trailers",
    "is_server_fault",
    "is_traced",
    "record_status",
    "rpc_attributes",
    "split_method",
]

# The same values as riverbeam.server._status (not imported: riverbeam.server uses this package).
_STATUS_DETAILS_KEY = "grpc-status-details-bin"
_DOMAIN = "riverbeam"

# Codes that are the server's fault (OpenTelemetry gRPC conventions). Any other code leaves a
# SERVER span's status unset: the server did its job by refusing. A CLIENT span is failed by
# every code but OK.
_SERVER_FAULTS = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)


def split_method(method: str | bytes) -> tuple[str, str]:
    """'/riverbeam.v1.StoreService/BeginRun' -> ('riverbeam.v1.StoreService', 'BeginRun')."""
    text = method.decode() if isinstance(method, bytes) else method
    service, _, name = text.lstrip("/").partition("/")
    return service, name


def is_server_fault(code: grpc.StatusCode) -> bool:
    return code in _SERVER_FAULTS


def is_traced(service: str, name: str) -> bool:
    """Health checks and reflection (grpc.*) are left out: they are noise, and frequent."""
    return bool(name) and not service.startswith("grpc.")


def rpc_attributes(service: str, name: str) -> dict[str, AttributeValue]:
    return {RPC_SYSTEM: "grpc", RPC_SERVICE: service, RPC_METHOD: name}


def record_status(
    span: Span,
    code: grpc.StatusCode,
    *,
    server: bool,
    bem: str | None = None,
    error_type: str | None = None,
    details: str | None = None,
) -> None:
    """rpc.grpc.status_code always; on failure error.type, the BEM code, and maybe ERROR."""
    span.set_attribute(RPC_GRPC_STATUS_CODE, code.value[0])
    if code is grpc.StatusCode.OK:
        return
    if bem is not None:
        span.set_attribute(RIVERBEAM_ERROR_CODE, bem)
    span.set_attribute(ERROR_TYPE, error_type or bem or code.name)
    if server and not is_server_fault(code):
        return
    label = bem or code.name
    span.set_status(Status(StatusCode.ERROR, f"{label}: {details}" if details else label))


def bem_from_trailers(metadata: Iterable[Any] | None) -> str | None:
    """The BEM code in trailing metadata ((key, value) pairs), from its google.rpc.ErrorInfo."""
    for key, value in metadata or ():
        if key != _STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except DecodeError:  # a malformed detail from a proxy: nothing to report
            return None
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Is(info.DESCRIPTOR) and detail.Unpack(info) and info.domain == _DOMAIN:
                return str(info.reason)
    return None
