"""KeptConnections, the connections a store on its own pool keeps acquired between steps:
only a clean connection after a step without error is kept (never one in a transaction, never
after a cancellation or an error), waiting steps get connections in turn, idle ones go back to
the pool, and aclose() gives every one back so that the pool closes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import pytest
from store_kit import PgStoreFactory, begin, uid

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import PgBeamStore, _pg_pool
from riverbeam.store._pg_pool import KeptConnections, PooledConnection

pytestmark = pytest.mark.postgres


@pytest.fixture
async def pool(pg_url: str) -> AsyncIterator[asyncpg.Pool]:
    async with asyncpg.create_pool(pg_url, min_size=1, max_size=2) as p:
        yield p


@pytest.fixture
async def kept(pool: asyncpg.Pool) -> AsyncIterator[KeptConnections]:
    k = KeptConnections(pool)
    yield k
    await k.aclose()


def step(pool: asyncpg.Pool, kept: KeptConnections, wait_s: float = 5.0) -> PooledConnection:
    return PooledConnection(pool, wait_s, kept)


async def test_a_clean_step_keeps_its_connection_for_the_next(
    pool: asyncpg.Pool, kept: KeptConnections
) -> None:
    async with step(pool, kept) as first:
        assert await first.fetchval("SELECT 1") == 1
        backend = await first.fetchval("SELECT pg_backend_pid()")
    assert len(kept) == 1
    assert pool.get_idle_size() == 0  # still acquired
    async with step(pool, kept) as second:
        assert second is first
        assert await second.fetchval("SELECT pg_backend_pid()") == backend
    await kept.aclose()
    assert len(kept) == 0
    assert pool.get_idle_size() == 1


async def test_a_connection_left_in_a_transaction_is_released_and_rolled_back(
    pool: asyncpg.Pool, kept: KeptConnections
) -> None:
    async with step(pool, kept) as conn:
        await conn.execute("CREATE TEMP TABLE IF NOT EXISTS kept_t (x int)")
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO kept_t VALUES (1)")
    assert len(kept) == 0
    async with step(pool, kept) as conn:
        assert not conn.is_in_transaction()
        assert await conn.fetchval("SELECT count(*) FROM kept_t") == 0


async def _sql_error(conn: Any) -> None:
    await conn.execute("SELECT 1/0")


async def _other_error(conn: Any) -> None:
    raise KeyError("not a database error")


@pytest.mark.parametrize("body", [_sql_error, _other_error])
async def test_an_error_releases_instead_of_keeping(
    pool: asyncpg.Pool, kept: KeptConnections, body: Callable[[Any], Awaitable[None]]
) -> None:
    with pytest.raises((RiverbeamError, KeyError)):
        async with step(pool, kept) as conn:
            await body(conn)
    assert len(kept) == 0
    assert pool.get_idle_size() == 1


async def test_a_catalog_error_releases_too(pool: asyncpg.Pool, kept: KeptConnections) -> None:
    err = RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id="r")
    with pytest.raises(RiverbeamError) as info:
        async with step(pool, kept) as conn:
            await conn.execute("SELECT 1")
            raise err
    assert info.value is err
    assert (len(kept), pool.get_idle_size()) == (0, 1)


@pytest.mark.parametrize("in_transaction", [False, True])
async def test_a_step_cancelled_mid_statement_releases_and_the_next_is_clean(
    pool: asyncpg.Pool, kept: KeptConnections, in_transaction: bool
) -> None:
    async with step(pool, kept):
        pass  # one kept: the cancelled step takes it
    assert len(kept) == 1
    entered = asyncio.Event()

    async def cancelled() -> None:
        async with step(pool, kept) as conn:
            if in_transaction:
                await conn.execute("BEGIN")
            entered.set()
            await conn.execute("SELECT pg_sleep(10)")

    task = asyncio.create_task(cancelled())
    await entered.wait()
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(kept) == 0
    assert pool.get_idle_size() == 1  # back in the pool, not leaked
    async with step(pool, kept) as conn:
        assert not conn.is_in_transaction()
        assert await conn.fetchval("SELECT 1") == 1


async def test_a_connection_lost_while_kept_is_not_handed_out(
    pool: asyncpg.Pool, kept: KeptConnections, pg_url: str
) -> None:
    async with step(pool, kept) as conn:
        backend = await conn.fetchval("SELECT pg_backend_pid()")
    admin = await asyncpg.connect(pg_url)
    try:
        await admin.execute("SELECT pg_terminate_backend($1)", backend)
    finally:
        await admin.close()
    for _ in range(100):  # until the loop has seen the connection go
        if conn._con is None or conn.is_closed():
            break
        await asyncio.sleep(0.01)
    async with step(pool, kept) as fresh:
        assert await fresh.fetchval("SELECT pg_backend_pid()") != backend


async def test_waiting_steps_get_connections_in_turn(pool: asyncpg.Pool) -> None:
    """More steps than connections, each looping: a step that ends with others waiting gives
    its connection back to the pool rather than to its own next step, so none starves."""
    kept = KeptConnections(pool)
    try:

        async def loop() -> int:
            done = 0
            for _ in range(20):
                async with step(pool, kept, wait_s=2.0) as conn:
                    await conn.execute("SELECT pg_sleep(0.002)")
                done += 1
            return done

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(loop()) for _ in range(8)]
        assert [t.result() for t in tasks] == [20] * 8
        assert kept.waiting == 0
    finally:
        await kept.aclose()
    assert pool.get_idle_size() == pool.get_size()


async def test_idle_kept_connections_go_back_to_the_pool(
    pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pg_pool, "IDLE_S", 0.05)
    kept = KeptConnections(pool)
    try:
        async with step(pool, kept) as a, step(pool, kept) as b:
            assert a is not b
        assert len(kept) == 2
        for _ in range(10):  # one of the two in use the whole time: only the other goes back
            async with step(pool, kept):
                await asyncio.sleep(0.02)
        assert len(kept) == 1
        assert pool.get_idle_size() == 1
        for _ in range(200):  # and then the last one too
            if len(kept) == 0 and pool.get_idle_size() == 2:
                break
            await asyncio.sleep(0.01)
        assert len(kept) == 0
        assert pool.get_idle_size() == 2
    finally:
        await kept.aclose()


async def test_every_release_every_th_step_goes_back_to_the_pool(
    pool: asyncpg.Pool, kept: KeptConnections, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pg_pool, "RELEASE_EVERY", 3)
    held = []
    for _ in range(6):
        async with step(pool, kept):
            pass
        held.append(len(kept))
    assert held == [1, 1, 0, 1, 1, 0]


async def test_nothing_is_kept_after_aclose(pool: asyncpg.Pool, kept: KeptConnections) -> None:
    await kept.aclose()
    async with step(pool, kept):
        pass
    assert (len(kept), pool.get_idle_size()) == (0, 1)


async def test_a_store_on_its_own_pool_closes_with_connections_kept(
    pg_url: str, pg_schema: str
) -> None:
    store = await PgBeamStore.connect(pg_url, schema=pg_schema, min_size=1, max_size=4)
    pool: Any = store._pool

    for _ in range(3):
        await asyncio.gather(*(store.get_run_by_request(request_id=f"r{i}") for i in range(4)))
    assert store._kept is not None and len(store._kept) > 0
    await asyncio.wait_for(store.aclose(), 5)  # pool.close() would wait for a kept one
    assert pool._closed


async def test_a_store_on_a_pool_it_was_given_keeps_none(pg_url: str, pg_schema: str) -> None:
    owner = await PgBeamStore.connect(pg_url, schema=pg_schema)  # the schema, migrated
    try:
        async with asyncpg.create_pool(pg_url, min_size=1, max_size=2) as pool:
            store = PgBeamStore.new(pool, schema=pg_schema)
            assert await store.get_run_by_request(request_id="r") is None
            assert store._kept is None
            assert pool.get_idle_size() == pool.get_size()
    finally:
        await owner.aclose()


@pytest.mark.parametrize("hooked", [False, True])
async def test_a_store_step_cancelled_leaves_nothing_and_leaks_no_connection(
    make_pg_store: PgStoreFactory, hooked: bool
) -> None:
    """A begin step cancelled in its statement (or, with a before_commit hook, inside its
    transaction just before the commit): nothing of it is stored, the connection goes back to
    the pool (not kept, not in a transaction) and the store's next steps run as usual."""
    entered, armed = asyncio.Event(), asyncio.Event()

    async def stall(step: str, conn: Any) -> None:
        if armed.is_set():
            entered.set()
            await conn.execute("SELECT pg_sleep(10)")

    store = await make_pg_store(before_commit=stall if hooked else None, max_size=2)
    await begin(store)  # a connection kept: the cancelled step takes it
    pool: Any = store._pool
    assert store._kept is not None and len(store._kept) == 1
    run_id, session_id = uid(), uid()
    if not hooked:  # the session row locked elsewhere: the statement waits for it
        blocker = await pool.acquire()
        await blocker.execute("BEGIN")
        await blocker.execute(
            f"INSERT INTO {store.schema}.sessions (session_id) VALUES ($1)", session_id
        )
        entered.set()
    armed.set()
    task = asyncio.create_task(begin(store, run_id=run_id, session_id=session_id))
    await entered.wait()
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    if not hooked:
        await blocker.execute("ROLLBACK")
        await pool.release(blocker)
    assert len(store._kept) == 0
    assert pool.get_idle_size() == pool.get_size()
    with pytest.raises(RiverbeamError) as info:
        await store.get_run(run_id=run_id)
    assert info.value.code is ErrorCode.RUN_NOT_FOUND
    armed.clear()
    begun = await begin(store, session_id=session_id)
    assert begun.run.lease_epoch == 1
