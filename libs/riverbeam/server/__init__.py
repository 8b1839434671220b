"""gRPC plumbing shared by the four services: server lifecycle, errors on the wire, metrics."""

from riverbeam.server._grpc_server import (
    CHANNEL_OPTIONS,
    GrpcServer,
    ServiceBinding,
    health_follows,
    open_channel,
)
from riverbeam.server._interceptor import ErrorInterceptor, abort_with
from riverbeam.server._lifecycle import ServiceApp, listen_host, run_service, start_metrics
from riverbeam.server._logging import JsonFormatter, LogContextFilter, configure_logging
from riverbeam.server._loop import EventLoopChoice, loop_factory, run_on_loop
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
    "EventLoopChoice",
    "GrpcServer",
    "JsonFormatter",
    "LogContextFilter",
    "ServiceApp",
    "ServiceBinding",
    "abort_with",
    "configure_logging",
    "error_from_rpc",
    "health_follows",
    "listen_host",
    "loop_factory",
    "open_channel",
    "rich_status",
    "run_on_loop",
    "run_service",
    "start_metrics",
    "translate_rpc_errors",
    "translate_rpc_errors_sync",
]
