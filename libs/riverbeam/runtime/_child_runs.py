"""The pipeline's ChildRunHost: child runs recorded in the store, frames on the caller's stream.

Each step is fenced by the top-level run's lease owner and epoch (the store checks the parent
at that epoch in the step's transaction), so a runner that lost the run can no longer record
its children; finishing is retried through a store outage like the run's own finish step.
Child frames carry the child's agent_name and run_id, the parent's run id in parent_run_id,
and the request's ids; they are never terminal (the caller's done frame stays the last).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from riverbeam.agents._child_runs import ChildRunHost, ChildStatus
from riverbeam.core.errors import RiverbeamError
from riverbeam.runtime._frames import stamp
from riverbeam.runtime._pipeline_types import PipelineOptions, PreparedRun
from riverbeam.runtime._sinks import FrameSink
from riverbeam.runtime._steps import finish_with_retry
from riverbeam.store import BeamStore
from riverbeam.types import AgentResult, StreamChunk, TokenUsage

__all__ = ["PipelineChildRuns", "child_runs_of"]


@dataclass(frozen=True, slots=True)
class PipelineChildRuns:
    """Records the children of `parent_run_id` for one request.

    Attributes:
        store: Where the child runs are written.
        sink: The request's frame sink (the caller's stream).
        parent_run_id: The run the children are linked to.
        lease_owner: The top-level run's lease owner (this replica).
        lease_epoch: The epoch this replica holds the top-level run at.
        request_id, session_id, interaction_id: The request's correlation ids.
        finish_retry_s: How long a finish is retried while the store is unreachable.
    """

    store: BeamStore
    sink: FrameSink
    parent_run_id: str
    lease_owner: str
    lease_epoch: int
    request_id: str
    session_id: str
    interaction_id: str
    finish_retry_s: float = 60.0
    # One lock per request: frames of children running side by side (a parallel crew) go
    # out one at a time.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def nested(self, run_id: str) -> ChildRunHost:
        return replace(self, parent_run_id=run_id)

    async def begin(self, *, run_id: str, agent_name: str, agent_version: str | None) -> None:
        await self.store.begin_child_run(
            parent_run_id=self.parent_run_id,
            run_id=run_id,
            agent_name=agent_name,
            lease_owner=self.lease_owner,
            lease_epoch=self.lease_epoch,
            agent_version=agent_version,
        )

    async def hand_off(self, *, agent_name: str, agent_version: str | None) -> None:
        await self.store.record_handoff(
            run_id=self.parent_run_id,
            lease_owner=self.lease_owner,
            lease_epoch=self.lease_epoch,
            agent_name=agent_name,
            agent_version=agent_version,
        )

    async def publish(self, frame: StreamChunk) -> None:
        if frame.is_terminal:
            return
        stamped = stamp(
            frame.model_copy(update={"parent_run_id": self.parent_run_id}),
            agent_name=frame.agent_name or "",
            session_id=self.session_id,
            interaction_id=self.interaction_id,
            run_id=frame.run_id or "",
            request_id=self.request_id,
        )
        async with self.lock:
            await self.sink.publish(stamped)

    async def finish(
        self,
        *,
        run_id: str,
        status: ChildStatus,
        usage: TokenUsage,
        result: AgentResult | None = None,
        error: RiverbeamError | None = None,
    ) -> None:
        async def step() -> None:
            await self.store.finish_child_run(
                run_id=run_id,
                parent_run_id=self.parent_run_id,
                lease_owner=self.lease_owner,
                lease_epoch=self.lease_epoch,
                status=status,
                error_code=error.bem if error is not None else None,
                error_message=error.message if error is not None else None,
                token_usage=usage,
                model_used=result.model_used if result is not None else None,
                result=result,
            )

        await finish_with_retry(step, budget_s=self.finish_retry_s)


def child_runs_of(
    prepared: PreparedRun, store: BeamStore, sink: FrameSink, options: PipelineOptions
) -> PipelineChildRuns:
    """The host of a prepared run's children."""
    return PipelineChildRuns(
        store=store,
        sink=sink,
        parent_run_id=prepared.run_id,
        lease_owner=options.runner_id,
        lease_epoch=prepared.epoch,
        request_id=prepared.request_id,
        session_id=prepared.request.session_id,
        interaction_id=prepared.interaction_id,
        finish_retry_s=options.finish_retry_s,
    )
