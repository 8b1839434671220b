"""Fixtures of the store suite: one `store` fixture over every BeamStore implementation.

- memory:   InMemoryStore
- postgres: PgBeamStore on a fresh schema (dropped afterwards)
- grpc:     StoreClient -> store service (in-process gRPC server on 127.0.0.1:0) -> PgBeamStore,
            its begin and finish steps on RunSteps step lanes (as a runner sends them)
- grpc_unary: the same with every step a unary BeginRun / FinishRun call

The session `pg_url` fixture (tests/conftest.py) fails in CI without PostgreSQL and skips
elsewhere; each test gets its own schema, so tests never see each other's rows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import asyncpg
import pytest
from store_kit import AgeSessions, PgStoreFactory, age_pg_sessions, new_schema_name

from riverbeam.server import GrpcServer
from riverbeam.store import BeamStore, InMemoryStore, PgBeamStore, StepHook, StoreClient
from services.store.app import binding


@pytest.fixture
async def pg_schema(pg_url: str) -> AsyncIterator[str]:
    """A schema name no other test uses; dropped (with everything in it) afterwards."""
    name = new_schema_name()
    yield name
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    finally:
        await conn.close()


@pytest.fixture
async def admin(pg_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection for looking behind the store's back (and killing its connections)."""
    conn = await asyncpg.connect(pg_url)
    try:
        yield conn
    finally:
        await conn.close()


@pytest.fixture
async def make_pg_store(pg_url: str, pg_schema: str) -> AsyncIterator[PgStoreFactory]:
    """Build PgBeamStores on the test's schema; all are closed afterwards."""
    opened: list[PgBeamStore] = []

    async def make(*, before_commit: StepHook | None = None, max_size: int = 10) -> PgBeamStore:
        store = await PgBeamStore.connect(
            pg_url, schema=pg_schema, min_size=1, max_size=max_size, before_commit=before_commit
        )
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.aclose()


@pytest.fixture
async def pg_store(make_pg_store: PgStoreFactory) -> PgBeamStore:
    return await make_pg_store()


@pytest.fixture(
    params=[
        "memory",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("grpc", marks=pytest.mark.postgres),
        pytest.param("grpc_unary", marks=pytest.mark.postgres),
    ]
)
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
async def memory_store() -> AsyncIterator[InMemoryStore]:
    async with InMemoryStore() as memory:
        yield memory


@pytest.fixture
async def grpc_store(pg_store: PgBeamStore, store_kind: str) -> AsyncIterator[StoreClient]:
    """A StoreClient of a store service serving pg_store, in this process: on step lanes, or
    with unary steps for the kind grpc_unary."""
    lanes = 0 if store_kind == "grpc_unary" else 2
    async with GrpcServer([binding(pg_store)], listen="127.0.0.1:0", grace_s=1.0) as server:
        client = StoreClient(f"127.0.0.1:{server.port}", timeout_s=30.0, step_lanes=lanes)
        try:
            yield client
        finally:
            await client.aclose()


@pytest.fixture
def store(store_kind: str, request: pytest.FixtureRequest) -> BeamStore:
    """The implementation under test; the conformance suite runs once per kind."""
    names = {"memory": "memory_store", "postgres": "pg_store", "grpc": "grpc_store"}
    name = names.get(store_kind, "grpc_store")
    chosen: BeamStore = request.getfixturevalue(name)
    return chosen


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.postgres)])
def direct_store(request: pytest.FixtureRequest) -> BeamStore:
    """The in-process implementations only, for load tests where gRPC would only add time."""
    name = {"memory": "memory_store", "postgres": "pg_store"}[request.param]
    chosen: BeamStore = request.getfixturevalue(name)
    return chosen


@pytest.fixture
def age_sessions(store_kind: str, request: pytest.FixtureRequest) -> AgeSessions:
    """Make the `store` fixture's sessions look idle for longer than they have been: the
    stores refuse an idle window under an hour, which a retention test cannot wait out. Only
    last_active_at moves; leases stay as they are."""
    if store_kind == "memory":
        memory: InMemoryStore = request.getfixturevalue("memory_store")

        async def age_in_memory(by: timedelta) -> None:
            sessions = memory._t.sessions
            for session_id, session in list(sessions.items()):
                moved = {"last_active_at": session.last_active_at - by}
                sessions[session_id] = session.model_copy(update=moved)

        return age_in_memory
    pg_url: str = request.getfixturevalue("pg_url")
    schema: str = request.getfixturevalue("pg_schema")

    async def age_in_postgres(by: timedelta) -> None:
        await age_pg_sessions(pg_url, schema, by)

    return age_in_postgres
