"""Versioned SQL migrations of the Postgres store, tracked in <schema>.schema_migrations.

Migrations are the files migrations/NNNN_<name>.sql, applied in version order, each once.
They run by an explicit call (PgBeamStore.connect or PgBeamStore.migrate), never at import.
All pending migrations apply in one transaction that first takes a transaction-level
advisory lock keyed by the schema, so replicas starting together apply them once: the others
wait, then find nothing left to do.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

import asyncpg

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store._pg_errors import translate_pg_errors

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

__all__ = ["Migration", "apply_migrations", "load_migrations", "quote_schema"]

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def quote_schema(schema: str) -> str:
    """The schema as a quoted identifier; only lowercase identifiers are accepted."""
    if not _SCHEMA.match(schema):
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "schema must match [a-z_][a-z0-9_]{0,62}", field="schema"
        )
    return f'"{schema}"'


def load_migrations() -> list[Migration]:
    """The packaged migrations in version order; versions must run 1, 2, 3 ... without gaps."""
    found: list[Migration] = []
    for entry in resources.files("riverbeam.store").joinpath("migrations").iterdir():
        match = _FILE.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise RiverbeamError(ErrorCode.STORE_MIGRATION, "migration versions are not 1..n")
    return found


def _lock_key(schema: str) -> int:
    digest = hashlib.blake2b(f"riverbeam.store:{schema}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def apply_migrations(conn: PoolConnectionProxy[asyncpg.Record], schema: str) -> list[int]:
    """Bring `schema` up to date; returns the versions this call applied."""
    q = quote_schema(schema)
    migrations = load_migrations()
    applied_now: list[int] = []
    with translate_pg_errors():
        async with conn.transaction():
            # Before anything else: CREATE SCHEMA IF NOT EXISTS itself races without it.
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _lock_key(schema))
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {q}")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {q}.schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            rows = await conn.fetch(f"SELECT version, checksum FROM {q}.schema_migrations")
            done = {int(r["version"]): str(r["checksum"]) for r in rows}
            for migration in migrations:
                if migration.version in done:
                    if done[migration.version] != migration.checksum:
                        raise RiverbeamError(
                            ErrorCode.STORE_MIGRATION,
                            f"migration {migration.version:04d}_{migration.name} changed after it was applied",
                            schema=schema,
                            version=migration.version,
                        )
                    continue
                await conn.execute(f"SET LOCAL search_path TO {q}")
                try:
                    await conn.execute(migration.sql)
                except asyncpg.PostgresError as exc:
                    if isinstance(exc, asyncpg.PostgresConnectionError):
                        raise
                    raise RiverbeamError(
                        ErrorCode.STORE_MIGRATION,
                        f"migration {migration.version:04d}_{migration.name} failed: {exc}",
                        schema=schema,
                        version=migration.version,
                        sqlstate=exc.sqlstate,
                    ) from exc
                await conn.execute(
                    f"INSERT INTO {q}.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    migration.version,
                    migration.name,
                    migration.checksum,
                )
                applied_now.append(migration.version)
    # A database newer than this code (versions we do not know) is accepted: rolling deploys
    # run old and new replicas side by side, and migrations only ever add.
    return applied_now
