"""A pool connection for one statement's step, its database errors translated.

`async with PooledConnection(pool, timeout) as conn` does what
`with translate_pg_errors(): async with pool.acquire(timeout=timeout) as conn` does (the
connection released whatever happens, then an asyncpg or connection error raised as the
catalog's RiverbeamError, anything else unchanged) without the two generator-based context
managers per step that contextlib builds: the begin and finish steps of every invoke go
through it.

The acquire timeout is an `asyncio.timeout` around `pool.acquire()` rather than
`pool.acquire(timeout=...)`, which runs the acquisition in a task of its own (asyncio.wait_for
on Python 3.11): the same TimeoutError when no connection comes in time, and on cancellation
the pool takes the waiting back as it does for that task, without a task per step. (It also
cannot lose a connection that wait_for on 3.11 drops when the caller is cancelled just as the
acquisition completes.) The release keeps asyncpg's own: shielded, with the acquire timeout
as its budget, as pool.acquire(timeout=...) gives it.

With `KeptConnections` (a store on a pool of its own) a step that ended without an error on a
connection that is open and outside a transaction leaves it acquired, kept for the next step,
instead of releasing it: asyncpg's release (a shielded task, an asyncio.timeout, the
inactivity timer) and the next acquisition (an asyncio.timeout) cost ~440k instructions a
BeginRun + FinishRun pair (callgrind), a fifth of the store's CPU. Anything else (an error, a
cancellation, a connection in a transaction or closed) is released as before; neither taking
nor keeping awaits, so a cancellation cannot land between them.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import TYPE_CHECKING

import asyncpg

from riverbeam.store._pg_errors import reraise_translated

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Pool = asyncpg.Pool[asyncpg.Record]
    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = ["KeptConnections", "PooledConnection"]

IDLE_S = 10.0
"""A kept connection no step took for this long goes back to the pool, whose own inactivity
timeout (max_inactive_connection_lifetime) then applies to it as to any idle connection."""

RELEASE_EVERY = 1000
"""Every this many steps one connection goes back to the pool after all, so that the pool's
max_queries still retires connections that are never idle."""


def _usable(conn: Connection) -> bool:
    """Open, outside a transaction, and still this proxy's (not taken back by the pool when
    its connection was lost)."""
    try:
        return not conn.is_closed() and not conn.is_in_transaction()
    except asyncpg.InterfaceError:  # detached: the pool has its holder back already
        return False


class KeptConnections:
    """The connections a store keeps acquired between its steps (see the module docstring).

    Last kept, first taken: those below the lowest the stack went during IDLE_S were idle that
    long and are released then. `aclose()` releases them all and keeps no more; call it before
    closing the pool (pool.close() waits for every acquired connection).
    """

    __slots__ = ("_closed", "_free", "_low", "_pool", "_releases", "_steps", "_timer", "waiting")

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._free: list[Connection] = []
        self._low = 0
        self._steps = 0
        self._closed = False
        self._timer: asyncio.TimerHandle | None = None
        self._releases: set[asyncio.Task[None]] = set()
        self.waiting = 0
        """Steps waiting for the pool (none was kept when they came): while there are any,
        no connection is kept, each goes back to the pool and so to them in turn."""

    def __len__(self) -> int:
        return len(self._free)

    def take(self) -> Connection | None:
        """A kept connection (the last kept), or None when none is kept."""
        free = self._free
        if not free:
            return None
        conn = free.pop()
        if len(free) < self._low:
            self._low = len(free)
        return conn

    def keep(self, conn: Connection) -> bool:
        """Keep `conn` for a next step; False (the caller releases it) when closed, every
        RELEASE_EVERY-th step, while steps wait for the pool, or when the connection is not
        fit for another step."""
        self._steps += 1
        if self._closed or self.waiting or self._steps % RELEASE_EVERY == 0 or not _usable(conn):
            return False
        free = self._free
        if self._timer is None:
            self._low = len(free)
            self._timer = asyncio.get_running_loop().call_later(IDLE_S, self._release_idle)
        free.append(conn)
        return True

    def _release_idle(self) -> None:
        free = self._free
        idle, self._free = free[: self._low], free[self._low :]
        for conn in idle:
            task = asyncio.get_running_loop().create_task(self._release(conn))
            self._releases.add(task)
            task.add_done_callback(self._releases.discard)
        self._low = len(self._free)
        self._timer = None
        if self._free:
            self._timer = asyncio.get_running_loop().call_later(IDLE_S, self._release_idle)

    async def _release(self, conn: Connection) -> None:
        with contextlib.suppress(Exception):  # then asyncpg terminated it: the pool's again
            await self._pool.release(conn)

    async def aclose(self) -> None:
        """Release every kept connection and keep none from now on. Idempotent."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        free, self._free = self._free, []
        await asyncio.gather(
            *(self._release(c) for c in free), *self._releases, return_exceptions=True
        )


class PooledConnection:
    """One acquisition of a pool connection; use it once, in `async with`."""

    __slots__ = ("_conn", "_kept", "_pool", "_timeout")

    def __init__(self, pool: Pool, timeout: float, kept: KeptConnections | None = None) -> None:
        self._pool = pool
        self._timeout = timeout
        self._kept = kept
        self._conn: Connection | None = None

    async def __aenter__(self) -> Connection:
        kept = self._kept
        while kept is not None and (held := kept.take()) is not None:
            if _usable(held):
                self._conn = held
                return held
            with contextlib.suppress(Exception):  # lost while kept, or closed: the pool's
                await self._pool.release(held, timeout=self._timeout)
        if kept is not None:
            kept.waiting += 1
        try:
            async with asyncio.timeout(self._timeout):
                conn: Connection = await self._pool.acquire()
        except Exception as exc:
            reraise_translated(exc)
        finally:
            if kept is not None:
                kept.waiting -= 1
        self._conn = conn
        return conn

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn, self._conn = self._conn, None
        kept = self._kept
        if conn is not None and (exc is not None or kept is None or not kept.keep(conn)):
            await self._release(conn)
        if isinstance(exc, Exception):
            reraise_translated(exc)

    async def _release(self, conn: Connection) -> None:
        try:
            await self._pool.release(conn, timeout=self._timeout)
        except Exception as err:
            reraise_translated(err)
