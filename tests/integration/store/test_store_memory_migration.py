"""Migration 0002: memory entries written before memory was keyed by organisation."""

from __future__ import annotations

import asyncpg
import pytest
from store_kit import uid

from riverbeam.store import PgBeamStore, load_migrations

pytestmark = pytest.mark.postgres


async def _schema_at_version_1(admin: asyncpg.Connection, schema: str) -> None:
    """The schema as a store of before 0002 left it (schema_migrations as apply_migrations keeps it)."""
    first = load_migrations()[0]
    assert (first.version, first.name) == (1, "init")
    async with admin.transaction():
        await admin.execute(f'CREATE SCHEMA "{schema}"')
        await admin.execute(f'SET LOCAL search_path TO "{schema}"')
        await admin.execute(first.sql)
        await admin.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,"
            " checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        await admin.execute(
            "INSERT INTO schema_migrations (version, name, checksum) VALUES (1, $1, $2)",
            first.name,
            first.checksum,
        )


async def test_existing_entries_get_the_org_they_provably_belong_to(
    pg_url: str, pg_schema: str, admin: asyncpg.Connection
) -> None:
    await _schema_at_version_1(admin, pg_schema)
    acme_session, loose_session = uid(), uid()
    sessions = [
        (acme_session, "alice", "acme"),
        (uid(), "alice", "other"),  # alice exists in two orgs: her user scope is ambiguous
        (uid(), "bob", "acme"),  # bob only in acme
        (loose_session, "dave", None),  # a single-tenant session
    ]
    entries = [
        ("session", acme_session, "acme session note"),
        ("session", loose_session, "loose session note"),
        ("user", "alice", "whose PIN?"),
        ("user", "bob", "bob's note"),
        ("org", "acme", "acme-wide note"),
        ("user", "nobody", "no sessions at all"),
    ]
    q = f'"{pg_schema}"'
    await admin.executemany(
        f"INSERT INTO {q}.sessions (session_id, user_id, org_id) VALUES ($1, $2, $3)", sessions
    )
    await admin.executemany(
        f"INSERT INTO {q}.memory_entries (entry_id, scope_name, scope_id, content)"
        " VALUES ($1, $2, $3, $4)",
        [(uid(), *e) for e in entries],
    )

    store = await PgBeamStore.connect(pg_url, schema=pg_schema, min_size=1, max_size=2)
    try:
        rows = await admin.fetch(f"SELECT content, org_id FROM {q}.memory_entries")
        assert {r["content"]: r["org_id"] for r in rows} == {
            "acme session note": "acme",
            "loose session note": "",
            "whose PIN?": "",  # neither acme nor other may read it
            "bob's note": "acme",
            "acme-wide note": "acme",
            "no sessions at all": "",
        }
        assert [
            e.content for e in await store.recall(scopes=[("user", "alice")], org_id="other")
        ] == []
        assert [
            e.content for e in await store.recall(scopes=[("user", "alice")], org_id="acme")
        ] == []
        assert [e.content for e in await store.recall(scopes=[("user", "bob")], org_id="acme")] == [
            "bob's note"
        ]
        assert [e.content for e in await store.recall(scopes=[("user", "alice")])] == ["whose PIN?"]
    finally:
        await store.aclose()
