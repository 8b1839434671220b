"""PooledConnection, the begin and finish steps' connection, behaves as the composition it
replaced: `with translate_pg_errors(): async with pool.acquire(timeout=...)`: the same errors
come out (translated or not, with the same cause), and the connection goes back to the pool
whatever happened, cancellation included."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import asyncpg
import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store._pg_errors import translate_pg_errors
from riverbeam.store._pg_pool import PooledConnection

pytestmark = pytest.mark.postgres


@contextlib.asynccontextmanager
async def reference(pool: asyncpg.Pool, wait_s: float) -> AsyncIterator[Any]:
    """What PgBeamStore._connection was before."""
    with translate_pg_errors():
        async with pool.acquire(timeout=wait_s) as conn:
            yield conn


Way = Callable[[asyncpg.Pool, float], contextlib.AbstractAsyncContextManager[Any]]
WAYS: list[Way] = [reference, PooledConnection]


@pytest.fixture
async def pool(pg_url: str) -> AsyncIterator[asyncpg.Pool]:
    async with asyncpg.create_pool(pg_url, min_size=1, max_size=1) as p:
        yield p


async def _outcome(way: Way, pool: asyncpg.Pool, body: Callable[[Any], Any]) -> BaseException:
    with pytest.raises(BaseException) as info:
        async with way(pool, 5.0) as conn:
            await body(conn)
    assert pool.get_idle_size() == 1  # released
    return info.value


async def _sql_error(conn: Any) -> None:
    await conn.execute("SELECT 1/0")


async def _unique_violation(conn: Any) -> None:
    await conn.execute("CREATE TEMP TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (1)")


async def _catalog_error(conn: Any) -> None:
    raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id="r")


async def _other_error(conn: Any) -> None:
    raise KeyError("not a database error")


async def _timeout(conn: Any) -> None:
    raise TimeoutError


@pytest.mark.parametrize(
    "body", [_sql_error, _unique_violation, _catalog_error, _other_error, _timeout]
)
async def test_errors_come_out_as_before(pool: asyncpg.Pool, body: Callable[[Any], Any]) -> None:
    old, new = [await _outcome(way, pool, body) for way in WAYS]
    assert type(new) is type(old)
    assert str(new) == str(old)
    if isinstance(old, RiverbeamError):
        assert isinstance(new, RiverbeamError)
        assert (new.code, new.details) == (old.code, old.details)
    assert type(new.__cause__) is type(old.__cause__)


async def test_a_catalog_error_passes_through_itself(pool: asyncpg.Pool) -> None:
    err = RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id="r")

    async def body(conn: Any) -> None:
        raise err

    assert await _outcome(PooledConnection, pool, body) is err


async def test_a_database_error_is_translated_with_it_as_cause(pool: asyncpg.Pool) -> None:
    new = await _outcome(PooledConnection, pool, _sql_error)
    assert isinstance(new, RiverbeamError)
    assert new.code is ErrorCode.INTERNAL
    assert isinstance(new.__cause__, asyncpg.DivisionByZeroError)


async def test_cancellation_propagates_and_releases(pool: asyncpg.Pool) -> None:
    for way in WAYS:
        entered = asyncio.Event()

        async def step(way: Way = way, entered: asyncio.Event = entered) -> None:
            async with way(pool, 5.0) as conn:
                entered.set()
                await conn.execute("SELECT pg_sleep(10)")

        task = asyncio.create_task(step())
        await entered.wait()
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert pool.get_idle_size() == 1


async def test_an_exhausted_pool_is_store_unavailable_after_the_timeout(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire():
        for way in WAYS:
            with pytest.raises(RiverbeamError) as info:
                async with way(pool, 0.05):
                    pass
            assert info.value.code is ErrorCode.STORE_UNAVAILABLE


async def test_the_body_gets_a_working_connection(pool: asyncpg.Pool) -> None:
    async with PooledConnection(pool, 5.0) as conn:
        assert await conn.fetchval("SELECT 41 + 1") == 42
    assert pool.get_idle_size() == 1


async def test_a_step_cancelled_while_it_waits_for_a_connection_leaves_the_pool_whole(
    pool: asyncpg.Pool,
) -> None:
    async def step(way: Way) -> None:
        async with way(pool, 5.0):
            raise AssertionError("the pool had no connection to give")

    async with pool.acquire():  # the pool's one connection is taken
        for way in WAYS:
            task = asyncio.create_task(step(way))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    assert pool.get_idle_size() == 1
    async with PooledConnection(pool, 1.0) as conn:  # and the next step gets it
        assert await conn.fetchval("SELECT 1") == 1
