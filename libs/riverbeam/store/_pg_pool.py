"""A pool connection for one statement's step, its database errors translated.

`async with PooledConnection(pool, timeout) as conn` does what
`with translate_pg_errors(): async with pool.acquire(timeout=timeout) as conn` does (the
connection released whatever happens, then an asyncpg or connection error raised as the
catalog's RiverbeamError, anything else unchanged) without the two generator-based context
managers per step that contextlib builds: the begin and finish steps of every invoke go
through it.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

from riverbeam.store._pg_errors import reraise_translated

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    Pool = asyncpg.Pool[asyncpg.Record]
    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = ["PooledConnection"]


class PooledConnection:
    """One acquisition of a pool connection; use it once, in `async with`."""

    __slots__ = ("_acquire",)

    def __init__(self, pool: Pool, timeout: float) -> None:
        self._acquire: Any = pool.acquire(timeout=timeout)

    async def __aenter__(self) -> Connection:
        try:
            conn: Connection = await self._acquire.__aenter__()
        except Exception as exc:
            reraise_translated(exc)
        return conn

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self._acquire.__aexit__(exc_type, exc, tb)
        except Exception as err:
            reraise_translated(err)
        if isinstance(exc, Exception):
            reraise_translated(exc)
