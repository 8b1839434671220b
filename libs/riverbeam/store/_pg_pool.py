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
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import TYPE_CHECKING

from riverbeam.store._pg_errors import reraise_translated

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    Pool = asyncpg.Pool[asyncpg.Record]
    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = ["PooledConnection"]


class PooledConnection:
    """One acquisition of a pool connection; use it once, in `async with`."""

    __slots__ = ("_conn", "_pool", "_timeout")

    def __init__(self, pool: Pool, timeout: float) -> None:
        self._pool = pool
        self._timeout = timeout
        self._conn: Connection | None = None

    async def __aenter__(self) -> Connection:
        try:
            async with asyncio.timeout(self._timeout):
                conn: Connection = await self._pool.acquire()
        except Exception as exc:
            reraise_translated(exc)
        self._conn = conn
        return conn

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                await self._pool.release(conn, timeout=self._timeout)
        except Exception as err:
            reraise_translated(err)
        if isinstance(exc, Exception):
            reraise_translated(exc)
