"""Running one service process: logging, metrics, the gRPC server, signals and draining."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import logging
import signal
from collections.abc import Awaitable, Callable
from wsgiref.simple_server import WSGIServer

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import CommonSettings
from riverbeam.server._grpc_server import GrpcServer, ServiceBinding
from riverbeam.server._heap import return_free_heap
from riverbeam.server._logging import configure_logging
from riverbeam.telemetry import configure_tracing, shutdown_tracing, tracing_requested

__all__ = ["ServiceApp", "listen_host", "run_service", "start_metrics"]

log = logging.getLogger("riverbeam.service")

# Allocations (less deallocations) between two young-generation collections while serving.
YOUNG_GC_THRESHOLD = 10_000


class ServiceApp:
    """What a service contributes: its bindings, plus hooks around serving."""

    def __init__(
        self,
        bindings: list[ServiceBinding],
        *,
        on_started: Callable[[GrpcServer], Awaitable[None]] | None = None,
        drain: Callable[[float], Awaitable[None]] | None = None,
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.bindings = bindings
        self.on_started = on_started
        self.drain = drain
        self.close = close


async def run_service(
    settings: CommonSettings,
    build: Callable[[], contextlib.AbstractAsyncContextManager[ServiceApp]],
    *,
    ready: Callable[[str], None] | None = None,
    service_name: str = "riverbeam",
) -> None:
    """Serve until SIGTERM/SIGINT, then stop taking work, drain, and exit."""
    configure_logging(level=settings.log_level, fmt=settings.log_format)
    metrics = None
    if settings.metrics_port is not None:
        host = settings.metrics_host or listen_host(settings.listen)
        metrics = start_metrics(settings.metrics_port, host)
    try:
        configure_tracing(service_name, enabled=tracing_requested(settings.otel_enabled))
        await _serve(settings, build, ready)
    finally:
        if metrics is not None:
            metrics.shutdown()
            metrics.server_close()
    await asyncio.to_thread(shutdown_tracing)


def listen_host(listen: str) -> str:
    """The host part of a `host:port` listen address (`[::1]:50051` gives `::1`)."""
    host = listen.rsplit(":", 1)[0].strip("[]")
    return host or "127.0.0.1"


def start_metrics(port: int, host: str) -> WSGIServer:
    """Serve Prometheus text at http://host:port/metrics (in a thread); BEM-421 if it cannot."""
    from prometheus_client import start_http_server

    try:
        try:
            server, _thread = start_http_server(port, addr=host)
        except OSError as exc:
            if host != "::" or exc.errno in (errno.EADDRINUSE, errno.EACCES):
                raise
            # "[::]" as gRPC takes it (any address), on a host without IPv6: any IPv4 one.
            host = "0.0.0.0"
            server, _thread = start_http_server(port, addr=host)
    except OSError as exc:
        raise RiverbeamError(
            ErrorCode.METRICS_LISTEN_FAILED,
            f"cannot serve metrics on {host}:{port}: {exc.strerror or exc}",
            host=host,
            port=str(port),
        ) from None
    log.info("metrics on http://%s:%d/metrics", host, server.server_port)
    return server


async def _serve(
    settings: CommonSettings,
    build: Callable[[], contextlib.AbstractAsyncContextManager[ServiceApp]],
    ready: Callable[[str], None] | None,
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with build() as app:
        server = GrpcServer(
            app.bindings,
            listen=settings.listen,
            grace_s=settings.shutdown_grace_s,
            max_connection_age_s=settings.max_connection_age_s,
            max_connection_age_grace_s=settings.max_connection_age_grace_s,
        )
        await server.start()
        if app.on_started is not None:
            await app.on_started(server)
        # What start-up built (modules, conversion plans, the service's wiring) lives as long
        # as the process: frozen, the cyclic collector's full passes skip it and walk only what
        # serving allocates (a wired runner: ~60,000 objects, 115 ms a full pass, ~0 frozen).
        gc.freeze()
        # A turn holds its copies of the session's history (200 messages: ~1,200 containers)
        # until it ends: at the default 700 each turn ran ~2 young collections that walked
        # them and moved them on to be walked again (~1 us a history message a turn).
        gc.set_threshold(YOUNG_GC_THRESHOLD, *gc.get_threshold()[1:])
        return_free_heap()
        if ready is not None:
            ready(server.address)
        await stop.wait()
        # One budget for the whole shutdown, so the pod's terminationGracePeriodSeconds only
        # has to exceed shutdown_grace_s: draining work and stopping the server share it.
        deadline = loop.time() + settings.shutdown_grace_s
        log.info("stopping: draining for up to %.0fs", settings.shutdown_grace_s)
        await server.health.enter_graceful_shutdown()
        if app.drain is not None:
            await app.drain(settings.shutdown_grace_s)
        await server.stop(max(deadline - loop.time(), 0.0))
        if app.close is not None:
            await app.close()
