"""A NATS connection (with its JetStream context) as an async context manager."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import ssl
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self

import nats.errors
from nats.aio.client import Client as NATS
from nats.js.client import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["NatsConnection"]

log = logging.getLogger("riverbeam.stream")


def _bind_websocket_transport(servers: Sequence[str]) -> None:
    """Give nats-py's websocket transport aiohttp when a URL needs it and it was imported without.

    A service's entry point imports nats-py with aiohttp hidden (riverbeam.server._lean_nats):
    the transport module then holds None, which nats-py reports as aiohttp not installed.
    """
    if not any(url.lower().startswith(("ws://", "wss://")) for url in servers):
        return
    from nats.aio import transport

    if getattr(transport, "aiohttp", None) is None:
        with contextlib.suppress(ImportError):  # nats-py then says what to install
            setattr(transport, "aiohttp", importlib.import_module("aiohttp"))  # noqa: B010


class NatsConnection:
    """`async with NatsConnection("nats://127.0.0.1:4222") as conn: conn.js.publish(...)`.

    Once connected, the client reconnects forever (`max_reconnect_attempts=-1`) and buffers
    what is published meanwhile. The first connection is bounded by `initial_connect_timeout_s`
    so a service started without NATS fails with a clear error instead of hanging. close() is
    idempotent: it drains (subscriptions finish what they hold, publishes are flushed), then
    closes.

    Args:
        servers: One NATS URL or several of one cluster.
        name: The connection name shown in NATS monitoring.
        initial_connect_timeout_s: Longest wait for the first connection; None waits forever.
        connect_timeout_s: Timeout of one connection attempt.
        reconnect_time_wait_s: Pause between reconnection attempts to the same server.
        max_reconnect_attempts: -1 to reconnect forever.
        drain_timeout_s: Longest drain on close before the connection is simply closed.
        js_timeout_s: Default timeout of JetStream API calls and publish acknowledgements.
        user, password, token, user_credentials, tls: Authentication, passed to nats-py.
    """

    def __init__(
        self,
        servers: str | Sequence[str] = "nats://127.0.0.1:4222",
        *,
        name: str = "riverbeam",
        initial_connect_timeout_s: float | None = 30.0,
        connect_timeout_s: float = 2.0,
        reconnect_time_wait_s: float = 1.0,
        max_reconnect_attempts: int = -1,
        drain_timeout_s: float = 5.0,
        js_timeout_s: float = 5.0,
        user: str | None = None,
        password: str | None = None,
        token: str | None = None,
        user_credentials: str | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self._servers = [servers] if isinstance(servers, str) else list(servers)
        if not self._servers:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "no NATS server given", field="servers"
            )
        self._initial_timeout_s = initial_connect_timeout_s
        self._drain_timeout_s = drain_timeout_s
        self._js_timeout_s = js_timeout_s
        # Passed as a dict: nats-py annotates some of these as int though it takes seconds as float.
        self._options: dict[str, Any] = {
            "name": name,
            "allow_reconnect": True,
            "connect_timeout": connect_timeout_s,
            "reconnect_time_wait": reconnect_time_wait_s,
            "max_reconnect_attempts": max_reconnect_attempts,
            "drain_timeout": drain_timeout_s,
            "error_cb": self._on_error,
            "disconnected_cb": self._on_disconnected,
            "reconnected_cb": self._on_reconnected,
        }
        for key, value in (
            ("user", user),
            ("password", password),
            ("token", token),
            ("user_credentials", user_credentials),
            ("tls", tls),
        ):
            if value is not None:
                self._options[key] = value
        self._nc: NATS | None = None
        self._js: JetStreamContext | None = None
        self._closed = False
        self._lock = asyncio.Lock()
        self._reconnect_hooks: list[Callable[[], None]] = []

    @property
    def servers(self) -> list[str]:
        return list(self._servers)

    @property
    def nc(self) -> NATS:
        """The core NATS client (for core subjects such as cancel control)."""
        if self._nc is None or self._closed:
            raise RuntimeError("NatsConnection is not connected")
        return self._nc

    @property
    def js(self) -> JetStreamContext:
        """The JetStream context (for frames)."""
        if self._js is None or self._closed:
            raise RuntimeError("NatsConnection is not connected")
        return self._js

    def add_reconnect_hook(self, hook: Callable[[], None]) -> None:
        """Call hook() (synchronously, on the loop) after each reconnection."""
        self._reconnect_hooks.append(hook)

    @property
    def is_connected(self) -> bool:
        return self._nc is not None and self._nc.is_connected

    async def connect(self) -> None:
        """Connect, unless already connected.

        Raises:
            RiverbeamError: INTERNAL when no server answers within `initial_connect_timeout_s`
                or the server refuses the connection (e.g. bad credentials).
        """
        async with self._lock:
            if self._closed:
                raise RuntimeError("NatsConnection was closed")
            if self._nc is not None:
                return
            _bind_websocket_transport(self._servers)
            nc = NATS()
            try:
                async with asyncio.timeout(self._initial_timeout_s):
                    await nc.connect(self._servers, **self._options)
            except (TimeoutError, nats.errors.Error, OSError) as exc:
                await nc.close()
                raise RiverbeamError(
                    ErrorCode.STREAM_UNAVAILABLE,
                    f"cannot connect to NATS at {', '.join(self._servers)}: {exc!r}",
                    servers=",".join(self._servers),
                ) from exc
            except BaseException:
                await nc.close()
                raise
            self._nc = nc
            self._js = nc.jetstream(timeout=self._js_timeout_s)

    async def close(self) -> None:
        """Drain and close; safe to call more than once."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            nc, self._nc, self._js = self._nc, None, None
            if nc is None or nc.is_closed:
                return
            try:
                async with asyncio.timeout(self._drain_timeout_s + 1.0):
                    await nc.drain()
            except (TimeoutError, nats.errors.Error, OSError) as exc:
                log.warning("NATS drain did not complete, closing: %r", exc)
            finally:
                if not nc.is_closed:
                    await nc.close()

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @staticmethod
    async def _on_error(exc: Exception) -> None:
        log.warning("NATS: %r", exc)

    @staticmethod
    async def _on_disconnected() -> None:
        log.warning("NATS disconnected; reconnecting")

    async def _on_reconnected(self) -> None:
        log.info("NATS reconnected")
        for hook in self._reconnect_hooks:
            try:
                hook()
            except Exception:
                log.exception("NATS reconnect hook failed")
