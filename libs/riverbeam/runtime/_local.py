"""The runner port served in process by a RiverBeam (tests, `riverbeam up --single-process`)."""

from __future__ import annotations

from riverbeam.runtime._facade import RiverBeam
from riverbeam.runtime._pipeline import Grant
from riverbeam.types import (
    AgentMetadata,
    AgentResult,
    InvokeRequest,
    ModelConfig,
    ResumePayload,
    StreamAck,
)

__all__ = ["LocalRunner"]


class LocalRunner:
    def __init__(self, beam: RiverBeam) -> None:
        self.beam = beam

    async def run_invoke(
        self,
        request: InvokeRequest,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
    ) -> AgentResult | StreamAck:
        return await self.beam.invoke(request, model=model, grant=grant)

    async def run_resume(
        self,
        request: ResumePayload,
        *,
        model: ModelConfig,
        grant: Grant,
        timeout_s: float | None = None,
    ) -> StreamAck:
        return await self.beam.resume(request, model=model, grant=grant)

    async def cancel_run(self, request_id: str, *, reason: str | None = None) -> bool:
        return await self.beam.cancel(request_id, reason)

    async def list_agents(self) -> list[AgentMetadata]:
        return self.beam.list_agents()
