"""Agent memory on PostgreSQL: remember an entry, recall the latest entries of some scopes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from riverbeam.core.ids import new_id
from riverbeam.store import _checks, _rows
from riverbeam.store._nul import nul_safe
from riverbeam.store._pg_access import PgAccess
from riverbeam.types import MemoryEntry

__all__ = ["PgMemory"]


class PgMemory:
    """The memory methods of PgBeamStore (a mixin; `self` is the store)."""

    @nul_safe
    async def remember(
        self: PgAccess,
        *,
        scope_name: str,
        scope_id: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        org_id: str | None = None,
    ) -> MemoryEntry:
        _checks.memory_scope(scope_name, scope_id)
        org = _checks.memory_org(org_id)
        async with self._connection() as conn:
            row = await conn.fetchrow(
                self._sql.remember,
                new_id(),
                scope_name,
                scope_id,
                content,
                _rows.dump(metadata),
                org,
            )
        assert row is not None
        return _rows.memory_of(row)

    @nul_safe
    async def recall(
        self: PgAccess,
        *,
        scopes: Sequence[tuple[str, str]],
        limit: int = 20,
        org_id: str | None = None,
    ) -> list[MemoryEntry]:
        for name, scope_id in scopes:
            _checks.memory_scope(name, scope_id)
        org = _checks.memory_org(org_id)
        size = _checks.positive_limit(limit, _checks.DEFAULT_RECALL_LIMIT)
        if not scopes:
            return []
        async with self._connection() as conn:
            rows = await conn.fetch(
                self._sql.recall, [n for n, _ in scopes], [i for _, i in scopes], size, org
            )
        return [_rows.memory_of(r) for r in rows]
