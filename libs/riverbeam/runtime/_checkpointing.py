"""Durable runs in the pipeline (docs/durability.md, "Checkpoints" and "Recovery").

RunCheckpointer writes a run's checkpoints: the agent's state after each completed step
(see riverbeam.agents._run_checkpoint) together with what the pipeline knows (the request
with its effective options, the routed model, the grant, the resumed actions, the next frame
seq), fenced by the run's lease epoch. prepare_recovery turns a run taken over by this
replica and its last checkpoint back into a PreparedRun whose stream continues on the same
subject after the last frame stored there.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from riverbeam.agents import Agent
from riverbeam.agents._io import AgentContext, ResumedAction
from riverbeam.agents._ledger import ToolLedger
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._frames import stamp
from riverbeam.runtime._pipeline_types import Grant, PreparedRun
from riverbeam.runtime._sinks import FrameSink, SinkFactory, confirm_frames
from riverbeam.runtime._steps import TRANSIENT_STORE_CODES
from riverbeam.store import BeamStore, BeginRunResult, RunCheckpoint, TakenOverRun
from riverbeam.store._checks import version_pin, version_policy
from riverbeam.types import (
    ActionResponseEnvelope,
    AgentMessage,
    AgentResult,
    ContentPart,
    InvokeRequest,
    Message,
    ModelConfig,
    StreamChunk,
)

__all__ = [
    "CHECKPOINT_VERSION",
    "Recovery",
    "RunCheckpointer",
    "attach_checkpoints",
    "prepare_recovery",
    "run_recovered",
]

if TYPE_CHECKING:
    from riverbeam.runtime._pipeline import Pipeline

log = logging.getLogger("riverbeam.recovery")

CHECKPOINT_VERSION = 1
"""The layout of the pipeline's part of a checkpoint."""


@dataclass(frozen=True, slots=True)
class Recovery:
    """What a run continued by this replica carries into execute()."""

    sink: FrameSink
    agent_state: dict[str, Any]
    step: int
    after_seq: int


def _sink_seq(sink: FrameSink) -> int:
    last = getattr(sink, "last_seq", None)
    return last if isinstance(last, int) else 0


class RunCheckpointer:
    """Saves one run's checkpoints, numbered after `first_step`, at the run's epoch.

    A store that is unreachable is retried for `retry_s` (the run holds its lease meanwhile);
    then, or on any other refusal (BEM-035: the run was taken over), the error is raised into
    the agent, which ends the run: a tool that is not rerun-safe never starts without its
    `started` mark stored.
    """

    def __init__(
        self,
        store: BeamStore,
        prepared: PreparedRun,
        sink: FrameSink,
        *,
        retry_s: float,
        first_step: int = 0,
    ) -> None:
        self._store = store
        self._prepared = prepared
        self._sink = sink
        self._retry_s = retry_s
        self._step = first_step
        # Built at the first save: most runs never save one, and it serialises the request.
        self._fixed: dict[str, Any] | None = None

    @property
    def step(self) -> int:
        """The number of the latest checkpoint saved (or continued from)."""
        return self._step

    async def save(self, agent_state: dict[str, Any]) -> None:
        step = self._step + 1
        if self._fixed is None:
            self._fixed = _fixed_part(self._prepared)
        state = {
            **self._fixed,
            "next_seq": _sink_seq(self._sink) + 1,
            "agent": agent_state,
        }
        # The checkpoint covers the frames published before it: they are stored first.
        await confirm_frames(self._sink)
        deadline = time.monotonic() + self._retry_s
        delay = 0.1
        while True:
            try:
                await self._store.save_run_checkpoint(
                    run_id=self._prepared.run_id,
                    lease_epoch=self._prepared.epoch,
                    step=step,
                    state=state,
                )
                break
            except RiverbeamError as err:
                if err.code not in TRANSIENT_STORE_CODES or time.monotonic() + delay > deadline:
                    raise
                log.warning(
                    "checkpoint %d of %s not saved (%s); retrying",
                    step,
                    self._prepared.run_id,
                    err.bem,
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
        self._step = step


def attach_checkpoints(
    context: AgentContext,
    store: BeamStore,
    prepared: PreparedRun,
    sink: FrameSink,
    *,
    retry_s: float,
) -> None:
    """Give the agent its checkpoint writer; a run continued here starts from its state."""
    recovery = prepared.recovery
    context.checkpoint = RunCheckpointer(
        store,
        prepared,
        sink,
        retry_s=retry_s,
        first_step=recovery.step if recovery is not None else 0,
    ).save
    context.recovered = recovery.agent_state if recovery is not None else None


async def run_recovered(
    execute: Callable[[PreparedRun], Awaitable[AgentResult]], prepared: PreparedRun
) -> None:
    """Execute a recovered run in the background; its end is recorded with the run."""
    log.warning(
        "run_recovered",
        extra={
            "request_id": prepared.request_id,
            "run_id": prepared.run_id,
            "holders": prepared.begun.run.holders,
            "checkpoint_step": prepared.recovery.step if prepared.recovery else None,
        },
    )
    try:
        await execute(prepared)
    except RiverbeamError as err:
        # Recorded with the run (and on its stream); nobody waits for this task.
        log.info("recovered run %s ended with %s", prepared.run_id, err.bem)
    except Exception:
        log.exception("recovered run %s crashed", prepared.run_id)


def _fixed_part(prepared: PreparedRun) -> dict[str, Any]:
    """What every checkpoint of a run repeats: the request and what the pipeline decided."""
    return {
        "version": CHECKPOINT_VERSION,
        "request": prepared.request.to_json_dict(),
        "model": prepared.model.to_json_dict(),
        "grant": asdict(prepared.grant),
        "resumed": [
            {
                "action_id": a.action_id,
                "tool": a.tool,
                "args": a.args,
                "tool_call_id": a.tool_call_id,
                "kind": a.kind,
                "response": a.response.to_json_dict(),
            }
            for a in prepared.resumed
        ],
    }


def _unrecoverable(run_id: str, why: str) -> RiverbeamError:
    return RiverbeamError(
        ErrorCode.RECOVERY_FAILED, f"{ErrorCode.RECOVERY_FAILED.spec.title}: {why}", run_id=run_id
    )


async def prepare_recovery(
    pipeline: Pipeline, taken: TakenOverRun, checkpoint: RunCheckpoint
) -> PreparedRun:
    """The PreparedRun that continues `taken` from `checkpoint` on this replica.

    Publishes the stream's `recovered` step frame (numbered after the last frame stored on
    the request's subject) before it returns.

    Raises:
        RiverbeamError: BEM-268 when the checkpoint cannot be continued here (another layout,
            an agent this replica does not serve, a lease not held by this replica); BEM-260
            when the agent's version differs from the interaction's pin and its policy refuses.
    """
    store, registry = pipeline.store, pipeline.registry
    runner_id = pipeline.options.runner_id
    run = taken.run
    state = checkpoint.state
    if run.lease_owner != runner_id:
        raise _unrecoverable(run.run_id, f"the run is held by {run.lease_owner!r}")
    if state.get("version") != CHECKPOINT_VERSION or not isinstance(state.get("agent"), dict):
        raise _unrecoverable(run.run_id, "unknown checkpoint layout")
    try:
        request = InvokeRequest.model_validate(state["request"])
        model = ModelConfig.model_validate(state["model"])
        grant = Grant(**state.get("grant") or {})
        resumed = [
            ResumedAction(
                action_id=a["action_id"],
                tool=a["tool"],
                args=dict(a.get("args") or {}),
                tool_call_id=a.get("tool_call_id"),
                response=ActionResponseEnvelope.model_validate(a["response"]),
                kind=a.get("kind") or "confirmation",
            )
            for a in state.get("resumed") or []
        ]
    except (KeyError, TypeError, ValidationError, RiverbeamError) as exc:
        raise _unrecoverable(run.run_id, f"unreadable checkpoint ({type(exc).__name__})") from None
    try:
        agent: Agent = registry.get(request.agent_name)
    except RiverbeamError:
        raise _unrecoverable(
            run.run_id, f"agent {request.agent_name!r} is not served here"
        ) from None
    session = await store.get_session(session_id=run.session_id)
    interaction = await store.get_interaction(interaction_id=run.interaction_id)
    meta = agent.metadata()
    # Recovery by another version of the agent follows its policy, as a resume does.
    version_pin(interaction, meta.version, version_policy(meta.version_policy))
    history = await _history_before(
        store, run.session_id, run.run_id, pipeline.options.max_history_messages
    )
    request_id = request.request_id or run.request_id or ""
    prepared = PreparedRun(
        request=request,
        request_id=request_id,
        interaction_id=run.interaction_id,
        run_id=run.run_id,
        agent=agent,
        model=model,
        grant=grant,
        begun=BeginRunResult(session=session, interaction=interaction, run=run, history=history),
        resumed=resumed,
        metadata=meta,
        # The ledger goes on after the calls the dead runner put on record (the takeover
        # settled its open ones as unknown), at the epoch this replica holds.
        ledger=ToolLedger(
            run_id=run.run_id,
            interaction_id=run.interaction_id,
            session_id=run.session_id,
            writer=store,
            runner_id=runner_id,
            lease_epoch=run.lease_epoch or 1,
            first_seq=await _next_ledger_seq(store, run.run_id),
        ),
    )
    sink, after = await _continue_stream(pipeline.sinks, prepared, runner_id, checkpoint)
    prepared.recovery = Recovery(sink, dict(state["agent"]), checkpoint.step, after)
    return prepared


async def _next_ledger_seq(store: BeamStore, run_id: str) -> int:
    """The seq after the run's last tool-execution entry on record."""
    last = 0
    token: str | None = None
    while True:
        page, token = await store.list_tool_executions(
            run_id=run_id, page_size=500, page_token=token
        )
        last = max([last, *(entry.seq for entry in page)])
        if not token:
            return last + 1


async def _history_before(
    store: BeamStore, session_id: str, run_id: str, limit: int
) -> list[Message]:
    """The session's newest `limit` messages before the run's own (what begin-run returned)."""
    before: list[Message] = []
    token: str | None = None
    while True:
        page, token = await store.list_messages(
            session_id=session_id, page_size=500, page_token=token
        )
        for message in page:
            if message.run_id == run_id:
                return before[-limit:] if limit > 0 else []
            before.append(message)
        if token is None:
            return before[-limit:] if limit > 0 else []


async def _continue_stream(
    sinks: SinkFactory, prepared: PreparedRun, runner_id: str, checkpoint: RunCheckpoint
) -> tuple[FrameSink, int]:
    """A sink numbering after the request's last stored frame, and the `recovered` frame on it.

    A stalled old holder may publish under the same number meanwhile (its frame is fenced by
    subject sequence, ours by number): JetStream then drops ours as a duplicate (BEM-031), and
    the stream is read again.
    """
    run = prepared.begun.run
    for attempt in range(5):
        sink, after = await sinks.continue_stream(
            prepared.request_id, stream=prepared.request.stream
        )
        frame = stamp(
            StreamChunk(
                type="thinking",
                data=AgentMessage(
                    role="ai",
                    type="step",
                    phase="recovered",
                    content=[
                        ContentPart.of_text(
                            f"continued by {runner_id} after its runner stopped"
                            f" (takeover {run.takeovers}, checkpoint step {checkpoint.step},"
                            f" after frame {after})"
                        )
                    ],
                    run_id=run.run_id,
                    session_id=run.session_id,
                    interaction_id=run.interaction_id,
                    agent_name=run.agent_name,
                ),
            ),
            **prepared.ids,
        )
        try:
            await sink.publish(frame)
            return sink, after
        except RiverbeamError as err:
            if err.code is not ErrorCode.REQUEST_ID_REUSED or attempt == 4:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
