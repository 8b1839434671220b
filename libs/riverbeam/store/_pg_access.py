"""What the PgBeamStore mixins need from the store: its statements and a pooled connection."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

from riverbeam.store._sql import Statements

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = ["PgAccess"]


class PgAccess(Protocol):
    """The self type of the PgBeamStore mixins (`_pg_leases`, `_pg_memory`)."""

    _sql: Statements
    _schema: str

    def _connection(self) -> AbstractAsyncContextManager[Connection]: ...
