"""Watching the frames stream: create it again when NATS lost it, and say whether it is usable.

A NATS server restarted without its data comes back without the stream; publishes then fail
(no stream answers) and followers are told the stream does not exist, although the
connection is fine. The guard checks the stream every `interval_s` and right after each
reconnection, creates it again when it is missing, and reports each change of usability
(the services turn it into their gRPC health).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import nats.errors
import nats.js.errors

from riverbeam.core.errors import RiverbeamError
from riverbeam.stream._config import StreamConfig
from riverbeam.stream._connection import NatsConnection
from riverbeam.stream._ensure import ensure_stream

__all__ = ["StreamGuard"]

log = logging.getLogger("riverbeam.stream")

OnChange = Callable[[bool], Awaitable[None]]


class StreamGuard:
    """Keeps the frames stream of `config` in place on `conn`, and knows if it is usable.

    Args:
        conn: The service's NATS connection (its reconnections trigger a check).
        config: The stream.
        interval_s: Pause between checks.
        check_timeout_s: Longest wait for one check (NATS down: the check fails).
    """

    def __init__(
        self,
        conn: NatsConnection,
        config: StreamConfig,
        *,
        interval_s: float = 2.0,
        check_timeout_s: float = 2.0,
    ) -> None:
        self._conn = conn
        self._config = config
        self._interval_s = interval_s
        self._check_timeout_s = check_timeout_s
        self._usable: bool | None = None
        self._poke = asyncio.Event()
        conn.add_reconnect_hook(self._poke.set)

    @property
    def usable(self) -> bool:
        """Whether the last check found the stream usable (True before the first check)."""
        return self._usable is not False

    async def check(self) -> bool:
        """Look at the stream now; create it when missing. Never raises (but cancellation)."""
        try:
            async with asyncio.timeout(self._check_timeout_s):
                try:
                    await self._conn.js.stream_info(self._config.name)
                except nats.js.errors.NotFoundError:
                    log.warning("JetStream stream %s is missing; creating it", self._config.name)
                    await ensure_stream(self._conn.js, self._config)
            return True
        except (TimeoutError, nats.errors.Error, OSError, RiverbeamError, RuntimeError) as exc:
            log.warning("JetStream stream %s not usable: %r", self._config.name, exc)
            return False

    async def run(self, on_change: OnChange) -> None:
        """Check forever; call on_change(usable) on the first result and on every change."""
        while True:
            usable = await self.check()
            if usable != self._usable:
                self._usable = usable
                try:
                    await on_change(usable)
                except Exception:
                    log.exception("stream health callback failed")
            self._poke.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._interval_s):
                    await self._poke.wait()
