"""gRPC plumbing shared by the four services: server lifecycle, errors on the wire, metrics."""

from riverbeam.server._grpc_server import CHANNEL_OPTIONS, GrpcServer, ServiceBinding, open_channel
from riverbeam.server._interceptor import ErrorInterceptor, abort_with
from riverbeam.server._status import (
    DOMAIN,
    error_from_rpc,
    rich_status,
    translate_rpc_errors,
    translate_rpc_errors_sync,
)

__all__ = [
    "CHANNEL_OPTIONS",
    "DOMAIN",
    "ErrorInterceptor",
    "GrpcServer",
    "ServiceBinding",
    "abort_with",
    "error_from_rpc",
    "open_channel",
    "rich_status",
    "translate_rpc_errors",
    "translate_rpc_errors_sync",
]
