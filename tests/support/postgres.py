"""Find a PostgreSQL for the tests: env, the local server, or testcontainers when Docker runs."""

from __future__ import annotations

import asyncio
import os

import asyncpg

LOCAL_URL = "postgresql://postgres@127.0.0.1:5432/test"


async def _can_connect(url: str) -> bool:
    try:
        conn = await asyncpg.connect(url, timeout=3)
    except (TimeoutError, OSError, asyncpg.PostgresError):
        return False
    await conn.close()
    return True


def _docker_running() -> bool:
    try:
        import docker

        docker.from_env().ping()
    except Exception:
        return False
    return True


def find_postgres() -> tuple[str | None, object | None, str]:
    """(url, container_to_stop, how) — url None when nothing was found."""
    explicit = os.environ.get("RIVERBEAM_TEST_DATABASE_URL")
    if explicit:
        ok = asyncio.run(_can_connect(explicit))
        return (explicit if ok else None), None, f"RIVERBEAM_TEST_DATABASE_URL={explicit}"
    if asyncio.run(_can_connect(LOCAL_URL)):
        return LOCAL_URL, None, "local PostgreSQL on 127.0.0.1:5432"
    if _docker_running():
        from testcontainers.postgres import PostgresContainer

        container = PostgresContainer("postgres:16-alpine", driver=None)
        container.start()
        return container.get_connection_url(), container, "testcontainers"
    return None, None, "no RIVERBEAM_TEST_DATABASE_URL, no local PostgreSQL, no Docker"
