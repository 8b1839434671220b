"""Memory entries of the InMemoryStore: remember and recall, keyed by organisation and scope."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from riverbeam.core.ids import new_id
from riverbeam.store import _checks
from riverbeam.store._memory_tables import Tables
from riverbeam.store._nul import nul_safe
from riverbeam.types import MemoryEntry, deep_copy

__all__ = ["MemoryScopes"]


class MemoryScopes:
    """The memory methods of InMemoryStore (a mixin; the store sets these attributes)."""

    _clock: Callable[[], datetime]
    _lock: asyncio.Lock
    _t: Tables

    # ---- memory --------------------------------------------------------------------------------
    @nul_safe
    async def remember(
        self,
        *,
        scope_name: str,
        scope_id: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        org_id: str | None = None,
    ) -> MemoryEntry:
        _checks.memory_scope(scope_name, scope_id)
        org = _checks.memory_org(org_id)
        async with self._lock:
            entry = MemoryEntry(
                scope_name=scope_name,
                scope_id=scope_id,
                entry_id=new_id(),
                content=content,
                metadata=metadata,
                created_at=self._clock(),
                org_id=org or None,
            )
            entry = deep_copy(entry)
            self._t.memory.append(entry)
            return deep_copy(entry)

    @nul_safe
    async def recall(
        self, *, scopes: Sequence[tuple[str, str]], limit: int = 20, org_id: str | None = None
    ) -> list[MemoryEntry]:
        for name, scope_id in scopes:
            _checks.memory_scope(name, scope_id)
        org = _checks.memory_org(org_id)
        size = _checks.positive_limit(limit, _checks.DEFAULT_RECALL_LIMIT)
        wanted = {(org, name, scope_id) for name, scope_id in scopes}
        async with self._lock:
            found = (
                e
                for e in reversed(self._t.memory)
                if (e.org_id or "", e.scope_name, e.scope_id) in wanted
            )
            return [deep_copy(e) for _, e in zip(range(size), found, strict=False)]
