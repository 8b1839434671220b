"""Fixtures of the runtime suite: real NATS (JetStream) and both stores.

`store` runs each test twice: on the InMemoryStore and on a PgBeamStore in a schema of its own
(dropped afterwards). The session `nats_url` and `pg_url` fixtures are in tests/conftest.py.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from riverbeam.store import BeamStore, InMemoryStore, PgBeamStore
from riverbeam.stream import NatsConnection, StreamConfig, ensure_stream


@pytest.fixture
async def nats(nats_url: str) -> AsyncIterator[NatsConnection]:
    """A connection with the frames stream in place (the default one, as the runner uses)."""
    async with NatsConnection(nats_url, name="riverbeam-tests", initial_connect_timeout_s=10) as c:
        await ensure_stream(c.js, StreamConfig())
        yield c


@pytest.fixture
async def pg_schema(pg_url: str) -> AsyncIterator[str]:
    """A schema no other test uses; dropped with everything in it afterwards."""
    name = f"t_runtime_{uuid.uuid4().hex[:16]}"
    yield name
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    finally:
        await conn.close()


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
def pg_target(store_kind: str, request: pytest.FixtureRequest) -> tuple[str, str] | None:
    """(url, schema) for the postgres kind; None for memory. Resolved outside the event loop."""
    if store_kind != "postgres":
        return None
    url: str = request.getfixturevalue("pg_url")
    schema: str = request.getfixturevalue("pg_schema")
    return url, schema


@pytest.fixture
async def store(pg_target: tuple[str, str] | None) -> AsyncIterator[BeamStore]:
    """The store under test: in memory, or Postgres on a fresh schema."""
    chosen: BeamStore
    if pg_target is None:
        chosen = InMemoryStore()
    else:
        url, schema = pg_target
        chosen = await PgBeamStore.connect(url, schema=schema, min_size=1, max_size=10)
    try:
        yield chosen
    finally:
        await chosen.aclose()
