"""Serving the console: uvicorn on RIVERBEAM_LISTEN until SIGTERM (riverbeam.console holds it all)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable

import uvicorn

from riverbeam.console import create_app
from riverbeam.core.settings import ConsoleSettings
from riverbeam.server import configure_logging
from riverbeam.telemetry import configure_tracing, shutdown_tracing

__all__ = ["bind", "run_console"]

log = logging.getLogger("riverbeam.console")


def bind(listen: str) -> socket.socket:
    """A listening TCP socket for `host:port` (`[::]:8080`, port 0 for a free one)."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.bind((host, int(port)))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _address(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def run_console(
    settings: ConsoleSettings, *, ready: Callable[[str], None] | None = None
) -> None:
    """Serve the console until SIGTERM/SIGINT, letting open requests finish within the grace."""
    configure_logging(level=settings.log_level, fmt=settings.log_format)
    if settings.metrics_port is not None:
        from prometheus_client import start_http_server

        start_http_server(settings.metrics_port)
    configure_tracing(
        "riverbeam-console",
        enabled=settings.otel_enabled or bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")),
    )
    sock = bind(settings.listen)
    config = uvicorn.Config(
        create_app(settings),
        log_config=None,  # our logging (configure_logging): no headers, no bodies
        access_log=True,
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=max(int(settings.shutdown_grace_s), 1),
        lifespan="on",
    )
    server = uvicorn.Server(config)

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.02)
        address = _address(sock)
        log.info("console on http://%s (router %s)", address, settings.router_url)
        if ready is not None:
            ready(address)

    announcer = asyncio.ensure_future(announce())
    try:
        await server.serve(sockets=[sock])
    finally:
        announcer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await announcer
        sock.close()
        await asyncio.to_thread(shutdown_tracing)
