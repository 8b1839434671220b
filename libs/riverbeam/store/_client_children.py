"""The child-run and handoff steps of StoreClient (riverbeam.v1.StoreService)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from riverbeam.store import _checks
from riverbeam.store._types import FinishStatus
from riverbeam.types import AgentResult, Interaction, Run, TokenUsage
from riverbeam.v1 import store_service_pb2 as pb

__all__ = ["ChildRunsClient"]


class ChildRunsClient:
    """A mixin of StoreClient: `_stub` and `_call` are the client's."""

    _stub: Any
    _call: Callable[..., Awaitable[Any]]

    async def begin_child_run(
        self,
        *,
        parent_run_id: str,
        run_id: str,
        agent_name: str,
        lease_owner: str,
        lease_epoch: int,
        agent_version: str | None = None,
    ) -> Run:
        request = pb.BeginChildRunRequest(
            parent_run_id=parent_run_id,
            run_id=run_id,
            agent_name=agent_name,
            lease_owner=lease_owner,
            lease_epoch=lease_epoch,
            agent_version=agent_version,
        )
        resp = await self._call(self._stub.BeginChildRun, request)
        return Run.from_proto(resp.run)

    async def finish_child_run(
        self,
        *,
        run_id: str,
        parent_run_id: str,
        lease_owner: str,
        lease_epoch: int,
        status: FinishStatus,
        error_code: str | None = None,
        error_message: str | None = None,
        token_usage: TokenUsage | None = None,
        model_used: str | None = None,
        result: AgentResult | None = None,
    ) -> Run:
        final = _checks.finish_status(status)
        request = pb.FinishChildRunRequest(
            run_id=run_id,
            parent_run_id=parent_run_id,
            lease_owner=lease_owner,
            lease_epoch=lease_epoch,
            status=f"RUN_STATUS_{final.upper()}",
            error_code=error_code,
            error_message=error_message,
            token_usage=None if token_usage is None else token_usage.to_proto(),
            model_used=model_used,
            result=None if result is None else result.to_proto(),
        )
        resp = await self._call(self._stub.FinishChildRun, request)
        return Run.from_proto(resp.run)

    async def record_handoff(
        self,
        *,
        run_id: str,
        lease_owner: str,
        lease_epoch: int,
        agent_name: str,
        agent_version: str | None = None,
    ) -> Interaction:
        request = pb.RecordHandoffRequest(
            run_id=run_id,
            lease_owner=lease_owner,
            lease_epoch=lease_epoch,
            agent_name=agent_name,
            agent_version=agent_version,
        )
        resp = await self._call(self._stub.RecordHandoff, request)
        return Interaction.from_proto(resp.interaction)
