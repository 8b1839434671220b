"""Every foreign key of the Postgres store has an index leading with its columns.

A foreign key without one makes each delete of a referenced row (a session deleted by retention
cascades to its interactions, runs, messages and actions) scan the whole referencing table:
the cost of deleting one session then grows with every run stored. Checked on the migrated
schema, from the catalog; and the cascade's own plan uses the new index.
"""

from __future__ import annotations

import asyncpg

from riverbeam.store import PgBeamStore


async def test_every_foreign_key_is_backed_by_an_index(
    pg_url: str, pg_schema: str, admin: asyncpg.Connection
) -> None:
    store = await PgBeamStore.connect(pg_url, schema=pg_schema, max_size=1)
    await store.aclose()
    keys = await admin.fetch(
        """
        SELECT c.conname, c.conrelid::regclass::text AS tbl, c.conkey
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE c.contype = 'f' AND n.nspname = $1
        """,
        pg_schema,
    )
    assert len(keys) >= 8  # interactions, runs, messages and actions reference sessions, ...
    unbacked = []
    for key in keys:
        backed = await admin.fetchval(
            """
            SELECT EXISTS (
                SELECT 1 FROM pg_index i
                WHERE i.indrelid = $1::regclass AND i.indpred IS NULL
                  AND (i.indkey::int2[])[0:cardinality($2::int2[]) - 1] = $2::int2[]
            )
            """,
            key["tbl"],
            key["conkey"],
        )
        if not backed:
            unbacked.append(key["conname"])
    assert unbacked == []


async def test_deleting_a_session_finds_its_runs_by_index(
    pg_url: str, pg_schema: str, admin: asyncpg.Connection
) -> None:
    store = await PgBeamStore.connect(pg_url, schema=pg_schema, max_size=1)
    await store.aclose()
    async with admin.transaction():
        await admin.execute("SET LOCAL enable_seqscan = off")  # a tiny table: ask for the index
        plan = await admin.fetchval(
            f'EXPLAIN (FORMAT JSON) DELETE FROM "{pg_schema}".runs WHERE session_id = $1', "s"
        )
    assert "runs_session_idx" in str(plan)
