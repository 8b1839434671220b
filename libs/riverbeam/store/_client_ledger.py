"""The tool-execution ledger methods of StoreClient (riverbeam.v1.StoreService)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from riverbeam.store import _checks
from riverbeam.types import ToolExecution
from riverbeam.v1 import ledger_pb2

__all__ = ["LedgerClient"]


class LedgerClient:
    """A mixin of StoreClient: `_stub` and `_call` are the client's."""

    _stub: Any
    _call: Callable[..., Awaitable[Any]]

    async def record_tool_executions(
        self,
        *,
        run_id: str,
        entries: Sequence[ToolExecution],
        lease_epoch: int | None = None,
    ) -> list[ToolExecution]:
        request = ledger_pb2.RecordToolExecutionsRequest(
            run_id=run_id,
            lease_epoch=_checks.lease_epoch(lease_epoch),
            entries=[e.to_proto() for e in entries],
        )
        resp = await self._call(self._stub.RecordToolExecutions, request)
        return [ToolExecution.from_proto(e) for e in resp.entries]

    async def list_tool_executions(
        self,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> tuple[list[ToolExecution], str | None]:
        request = ledger_pb2.FetchToolExecutionsRequest(
            run_id=run_id or None,
            interaction_id=interaction_id or None,
            page_size=page_size,
            page_token=page_token or "",
        )
        resp = await self._call(self._stub.FetchToolExecutions, request)
        return [ToolExecution.from_proto(e) for e in resp.entries], resp.next_page_token or None
