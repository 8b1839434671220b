"""The invoke and resume pipeline (DESIGN.md, "Pipeline").

prepare() does everything that can refuse a request, up to and including the store's
begin-run step, so a caller sees BEM-025/030/031/063/064/065/066 synchronously; that step also
brings back the run's history (the newest max_history_messages before it). execute() runs
the agent, publishes frames as they come, writes the finish-run step, and only then
publishes the terminal frame, so a client that sees `done` reads committed records.

Fencing (docs/failure-model.md): everything a run does carries its lease epoch. The store
refuses a finish, renewal or append at a stale epoch (BEM-035); the agent's sandbox calls
carry the run's Fence (BEM-340 once revoked); the terminal frame is published only by
whoever won the run record's transition to a terminal state (this runner's finish step, or
the reaper's), so a request's stream ends exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from riverbeam.agents import AgentRegistry, check_modalities
from riverbeam.agents._io import AgentInput, ResumedAction, UsageMeter
from riverbeam.agents._ledger import ToolLedger
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.fencing import fenced
from riverbeam.core.ids import new_id
from riverbeam.runtime._agent_context import agent_context, org_of
from riverbeam.runtime._begin_step import begin_with_policy
from riverbeam.runtime._checkpointing import (
    attach_checkpoints,
    prepare_recovery,
    run_recovered,
)
from riverbeam.runtime._child_runs import child_runs_of
from riverbeam.runtime._context import memory_scopes
from riverbeam.runtime._frames import FrameTracker, stamp
from riverbeam.runtime._handoff import route_after_handoff
from riverbeam.runtime._input_guard import guard_before_storing
from riverbeam.runtime._lease_keeper import LeaseKeeper
from riverbeam.runtime._live import LiveRun, raise_if_cancel_was_swallowed
from riverbeam.runtime._outcomes import Outcome, cancelled_outcome, done_outcome, failed_outcome
from riverbeam.runtime._pipeline_types import (
    DEFAULT_MODEL,
    BusySessionPolicy,
    Grant,
    PipelineOptions,
    PreparedRun,
)
from riverbeam.runtime._records import agent_options, finish_messages, pending_actions
from riverbeam.runtime._run_options import apply_options, run_options_for
from riverbeam.runtime._sinks import (
    CountingSink,
    FrameSink,
    SinkFactory,
    close_sink,
    confirm_frames,
    confirm_frames_before_finish,
)
from riverbeam.runtime._steps import (
    CancelElsewhere,
    close_abandoned,
    finish_as_failed,
    finish_step,
    finish_with_retry,
    record_outcomes,
    shielded_step,
)
from riverbeam.store import BeamStore, BeginRunResult, RunCheckpoint, TakenOverRun
from riverbeam.store._finish_reply import sent_result
from riverbeam.telemetry import log_context, run_span
from riverbeam.telemetry._metrics import RUNS_TOTAL, child_of
from riverbeam.types import (
    AgentResult,
    InvokeRequest,
    ModelConfig,
    StreamChunk,
)
from riverbeam.types._copying import updated_copy

__all__ = [
    "DEFAULT_MODEL",
    "BusySessionPolicy",
    "CancelElsewhere",
    "Grant",
    "Pipeline",
    "PipelineOptions",
    "PreparedRun",
]


log = logging.getLogger("riverbeam.pipeline")


class Pipeline:
    """Runs agents for requests and records every step through a BeamStore."""

    def __init__(
        self,
        *,
        registry: AgentRegistry,
        store: BeamStore,
        sinks: SinkFactory,
        options: PipelineOptions | None = None,
        cancel_elsewhere: CancelElsewhere | None = None,
    ) -> None:
        self.registry = registry
        self.store = store
        self.sinks = sinks
        self.options = options or PipelineOptions()
        # Busy-session `interrupt`: how a run held by another replica is cancelled (NATS
        # control subject); None cancels only runs this replica holds.
        self.cancel_elsewhere = cancel_elsewhere
        self._live: dict[str, LiveRun] = {}
        # Runs this replica holds (begun, not yet finished): its reaper leaves them alone.
        self._held: set[str] = set()
        # Runs continued here from another runner's checkpoint (durable runs).
        self._recovering: set[asyncio.Task[None]] = set()

    # ---- prepare ------------------------------------------------------------------------------
    async def prepare(
        self,
        request: InvokeRequest,
        *,
        model: ModelConfig | None = None,
        grant: Grant | None = None,
    ) -> PreparedRun:
        """Validate the request and write the begin-run step. Nothing is written on refusal."""
        # After a handoff the interaction's later turns go to the agent it was handed to.
        request = await route_after_handoff(self.store, self.registry, request)
        agent = self.registry.get(request.agent_name)
        # Read once: an agent builds its metadata afresh on every call.
        metadata = agent.metadata()
        check_modalities(metadata, request.content)
        # Refuse a malformed scope (or one of another organisation) before anything is written.
        memory_scopes(request.metadata, org_id=org_of(request))
        resuming = bool(request.actions)
        if resuming and not request.interaction_id:
            raise RiverbeamError(ErrorCode.MISSING_INTERACTION_ID, "resume needs interaction_id")
        request_id = request.request_id or new_id()
        interaction_id = request.interaction_id or new_id()
        run_id = new_id()
        auth = request.auth_context
        # Recorded on the run; a resume inherits the interrupted run's (docs/agents.md).
        options = await run_options_for(self.store, request)
        request = apply_options(request, options)
        # A redaction changes the stored human message too: guarded before it is stored.
        request, guarded = await guard_before_storing(agent, request, self.options.agent_layer)

        async def on_abandoned(begun: BeginRunResult) -> None:
            await close_abandoned(
                self.store, self.sinks, self.options.runner_id, request, request_id, begun
            )

        # Held from before the step: this replica's reaper never takes a run whose begin step
        # is still on its way back. Shielded: a caller that goes away (deadline, disconnect)
        # while the store commits the step would otherwise leave the run `running` with
        # nobody holding it.
        self._held.add(run_id)
        try:
            begun = await shielded_step(
                begin_with_policy(
                    self.store,
                    self.options,
                    request=request,
                    cancel_here=self.cancel,
                    cancel_elsewhere=self.cancel_elsewhere,
                    # The interaction is pinned to this version; a resume by another version
                    # follows the agent's policy (BEM-260 by default), checked in the step.
                    agent_version=metadata.version,
                    version_policy=metadata.version_policy,
                    request_id=request_id,
                    interaction_id=interaction_id,
                    run_id=run_id,
                    user_id=auth.user_id if auth else None,
                    profile_id=auth.profile_id if auth else None,
                    org_id=auth.org_id if auth else None,
                    require_owner=grant.require_owner if grant else None,
                    require_org=grant.require_org if grant else None,
                    session_config=request.session_config,
                    session_config_narrows=bool(grant and grant.session_config_narrows_only),
                    run_options=options,
                ),
                on_abandoned,
            )
        except BaseException:
            self._held.discard(run_id)
            raise
        by_id = {a.action_id: a for a in request.actions}
        resumed = [
            ResumedAction(
                action_id=action.action_id,
                tool=action.tool,
                args=dict(action.args),
                tool_call_id=action.tool_call_id,
                response=action.response or by_id[action.action_id],
                kind=action.kind,
            )
            for action in begun.resolved_actions
        ]
        if resumed:
            log.info(
                "agent_resumed",
                extra={
                    "request_id": request_id,
                    "session_id": request.session_id,
                    "run_id": run_id,
                    "actions": [a.action_id for a in resumed],
                },
            )
        # From here on the run is this replica's: a cancel before execute() starts is kept.
        self._live[request_id] = LiveRun()
        prepared = PreparedRun(
            request=updated_copy(
                request, {"request_id": request_id, "interaction_id": interaction_id}
            ),
            request_id=request_id,
            interaction_id=interaction_id,
            run_id=run_id,
            agent=agent,
            model=model or DEFAULT_MODEL,
            grant=grant or Grant(),
            begun=begun,
            resumed=resumed,
            guarded_input=guarded,
            metadata=metadata,
        )
        # The ledger writes at the epoch the run is held at, read once (PreparedRun.epoch).
        prepared.ledger = ToolLedger(
            run_id=run_id,
            interaction_id=interaction_id,
            session_id=request.session_id,
            writer=self.store,
            runner_id=self.options.runner_id,
            lease_epoch=prepared.epoch,
        )
        return prepared

    # ---- execute ------------------------------------------------------------------------------
    async def execute(self, prepared: PreparedRun) -> AgentResult:
        """Run the agent to its end and record it. Raises the run's error for non-streaming use.

        Every log line of the run carries its ids, and with tracing on the run is one
        `invoke_agent` span whose children are the model and tool spans.
        """
        result, _ = await self.execute_sent(prepared)
        return result

    async def execute_sent(self, prepared: PreparedRun) -> tuple[AgentResult, Any]:
        """execute(), and the protobuf message of the result that its finish step sent (see
        Outcome.result_message; None when the store sent none): a reply of the result copies
        it instead of converting the result a second time."""
        request = prepared.request
        with log_context(
            request_id=prepared.request_id,
            session_id=request.session_id,
            interaction_id=prepared.interaction_id,
            run_id=prepared.run_id,
            agent=request.agent_name,
        ):
            async with run_span(
                request.agent_name, prepared.run_id, request.session_id, prepared.request_id
            ):
                return await self._execute(prepared)

    async def _execute(self, prepared: PreparedRun) -> tuple[AgentResult, Any]:
        # prepare() registered the run, so a cancel that came in meanwhile is honoured here.
        live = self._live.setdefault(prepared.request_id, LiveRun())
        tracker = FrameTracker()
        usage = UsageMeter()
        started = time.perf_counter()
        abandoned = False
        sink: FrameSink | None = None
        # The lease is kept until the finish step is written (or given up), not just while
        # the agent runs: a finish retried through a store outage still holds the run.
        live.lease = lease = LeaseKeeper(
            self.store,
            run_id=prepared.run_id,
            owner=self.options.runner_id,
            ttl_s=self.options.lease_ttl_s,
            epoch=prepared.epoch,
            live=live,
        )
        try:
            drive: asyncio.Task[Outcome] | None = None
            try:
                sink = (
                    prepared.recovery.sink
                    if prepared.recovery is not None
                    else await self.sinks.open(prepared.request_id, stream=prepared.request.stream)
                )
                # The agent acts for the run at its epoch: its sandbox calls carry the fence.
                with fenced(prepared.fence):
                    drive = asyncio.create_task(self._drive(prepared, sink, tracker, usage))
                live.task = drive
                if live.cancel_requested:
                    drive.cancel()
                outcome = await drive
            except asyncio.CancelledError:
                current = asyncio.current_task()
                abandoned = current is not None and current.cancelling() > 0
                if abandoned:
                    # The caller went away (deadline, disconnect, shutdown): stop the agent too.
                    if drive is not None:
                        drive.cancel()
                    live.cancel_reason = live.cancel_reason or "caller cancelled the request"
                outcome = cancelled_outcome(prepared, tracker, usage, live.cancel_reason)
            # The outcome's own result (see Outcome): set in place, not copied again.
            outcome.result.latency_ms = round((time.perf_counter() - started) * 1000, 3)
            if outcome.terminal.type == "done" and not isinstance(sink, CountingSink):
                # The done frame carries exactly the result that is recorded (to a sink that
                # keeps it: a counting sink only numbers it).
                outcome.terminal = updated_copy(outcome.terminal, {"result": outcome.result})
            completion = asyncio.ensure_future(self._complete(prepared, outcome, tracker, sink))
            # The finish step runs to its end even when this task is cancelled meanwhile (the
            # caller gave up while the run was being recorded): cut short, it would leave the
            # run `running` with nobody holding it. Then the cancellation goes on.
            while not completion.done():
                try:
                    await asyncio.shield(completion)
                except asyncio.CancelledError:
                    abandoned = True
            if abandoned:
                raise asyncio.CancelledError
            completion.result()
        finally:
            lease.stop()
            live.lease = None  # the keeper refers to the run: no cycle left for the collector
            self._live.pop(prepared.request_id, None)
            self._held.discard(prepared.run_id)
            if sink is not None:
                await close_sink(sink)
        if outcome.error is not None and not prepared.request.stream:
            raise outcome.error
        return outcome.result, outcome.result_message

    async def _complete(
        self,
        prepared: PreparedRun,
        outcome: Outcome,
        tracker: FrameTracker,
        sink: FrameSink | None,
    ) -> None:
        """Write the finish-run step, then publish the terminal frame (always the last one).

        The terminal frame is published only after this runner's finish step won the run's
        transition to a terminal state. When the run was taken over (BEM-035/121) its new
        holder ends the stream; when the store stayed unreachable for the whole retry budget
        (BEM-036) nothing is published and the reaper ends the run once the lease expires.
        """
        agent = prepared.request.agent_name
        if sink is not None:
            await confirm_frames_before_finish(sink, prepared.run_id)
        try:
            await finish_with_retry(
                lambda: self._finish(prepared, outcome, tracker),
                budget_s=self.options.finish_retry_s,
            )
        except RiverbeamError as err:
            if err.code in (ErrorCode.STORE_CONFLICT, ErrorCode.STALE_EPOCH):
                log.error(
                    "run %s was taken over before it finished; its result is dropped",
                    prepared.run_id,
                )
                RUNS_TOTAL.labels(agent, "lost").inc()
                outcome.error = RiverbeamError(
                    ErrorCode.RUN_LOST, "the run was taken over", run_id=prepared.run_id
                )
                return
            if err.code is ErrorCode.FINISH_NOT_CONFIRMED:
                log.error(
                    "finish-run of %s not written; left to the reaper: %s", prepared.run_id, err
                )
                RUNS_TOTAL.labels(agent, "lost").inc()
                outcome.error = err
                return
            log.error("finish-run of %s failed: %s", prepared.run_id, err)
            if not await finish_as_failed(
                self.store,
                self.options.runner_id,
                prepared.fence,
                err,
                budget_s=self.options.finish_retry_s,
                tool_executions=prepared.ledger.unwritten() if prepared.ledger else (),
            ):
                outcome.error = err
                return
            outcome.error = err
            outcome.status = "failed"
            outcome.terminal = stamp(
                StreamChunk(type="error", error=err.message, error_code=err.bem),
                **prepared.ids,
            )
        child_of(RUNS_TOTAL, agent, outcome.status).inc()
        log.info(
            "run_finished",
            extra={
                "request_id": prepared.request.request_id,
                "run_id": prepared.run_id,
                "status": outcome.status,
                "model": outcome.result.model_used,
            },
        )
        if sink is None:
            return
        try:
            await sink.publish(outcome.terminal)
        except RiverbeamError as err:
            # The record is final; a follower of this request sees the stream end in error.
            log.error("terminal frame of %s not published: %s", prepared.run_id, err)

    async def _drive(
        self,
        prepared: PreparedRun,
        sink: FrameSink,
        tracker: FrameTracker,
        usage: UsageMeter,
    ) -> Outcome:
        ids = prepared.ids
        agent_input = AgentInput(
            content=list(prepared.request.content),
            session_id=prepared.request.session_id,
            run_id=prepared.run_id,
            agent_name=prepared.request.agent_name,
            interaction_id=prepared.interaction_id,
            request_id=prepared.request_id,
            metadata=dict(prepared.request.metadata or {}),
            auth_context=prepared.request.auth_context,
            actions=prepared.resumed,
            confirm_allowed=prepared.grant.may_confirm,
            guarded_input=prepared.guarded_input,
            **agent_options(prepared.request, prepared.begun.session),
        )
        try:
            # Inside the try: a store failure while loading memory ends the run as failed
            # (with its error frame) instead of leaving it running until it is reaped.
            context = await agent_context(prepared, self.store, self.options, usage)
            if self.options.checkpoints:
                # Durable runs: the agent saves each completed step (docs/durability.md).
                attach_checkpoints(
                    context, self.store, prepared, sink, retry_s=self.options.finish_retry_s
                )
            context.child_runs = child_runs_of(prepared, self.store, sink, self.options)
            frames = prepared.agent.stream(agent_input, context)
            # A sink that keeps no frame (a non-streaming request's) is given its frames as
            # the agent made them: the ids stamped on would be read by nobody. The tracker
            # reads a frame's timestamp, so a frame without one is stamped all the same.
            unkept = isinstance(sink, CountingSink)
            try:
                async for raw in frames:
                    raise_if_cancel_was_swallowed()
                    if unkept and raw.timestamp is not None and not raw.is_terminal:
                        frame = raw
                    else:
                        frame = stamp(raw, **ids)
                    tracker.observe(frame)
                    if frame.is_terminal:
                        await confirm_frames(sink)  # a lost frame fails the run, as before
                    if frame.type == "done":
                        return done_outcome(prepared, frame, usage)
                    if frame.type == "error":
                        agent_code = frame.error_code or ErrorCode.AGENT_ERROR_FRAME.code
                        err = RiverbeamError(
                            ErrorCode.AGENT_ERROR_FRAME,
                            frame.error or "agent reported an error",
                            agent_error_code=agent_code,
                        )
                        return failed_outcome(prepared, usage, err, frame, tracker, code=agent_code)
                    await sink.publish(frame)
                    raise_if_cancel_was_swallowed()
            finally:
                aclose = getattr(frames, "aclose", None)
                if aclose is not None:
                    await aclose()
            err = RiverbeamError(
                ErrorCode.STREAM_WITHOUT_DONE, "agent stream ended without a done frame"
            )
        except asyncio.CancelledError:
            raise
        except RiverbeamError as exc:
            err = exc
        except Exception as exc:
            log.exception("agent %s crashed", prepared.request.agent_name)
            err = RiverbeamError(ErrorCode.INTERNAL, f"agent failed: {type(exc).__name__}")
        return failed_outcome(prepared, usage, err, None, tracker, code=err.bem)

    # ---- finish -------------------------------------------------------------------------------
    async def _finish(self, prepared: PreparedRun, outcome: Outcome, tracker: FrameTracker) -> None:
        result = outcome.result
        error: dict[str, Any] | None = None
        if outcome.error is not None:
            error = {"code": outcome.terminal.error_code, "message": outcome.error.message}
        messages = finish_messages(
            result,
            unanswered=tracker.open_calls.values() if outcome.status == "cancelled" else (),
            error=error,
        )
        ledger = prepared.ledger
        if ledger is not None:
            ledger.settle_open(f"the run ended ({outcome.status}) while the call was open")
        batch = ledger.unwritten() if ledger is not None else []
        sent = await finish_step(self.store)(
            run_id=prepared.run_id,
            lease_owner=self.options.runner_id,
            status=outcome.status,
            messages=messages,
            pending_actions=pending_actions(result),
            error_code=outcome.terminal.error_code if outcome.error else None,
            error_message=outcome.error.message if outcome.error else None,
            token_usage=result.token_usage,
            model_used=result.model_used,
            result=result,
            lease_epoch=prepared.epoch,
            action_ttl_s=prepared.metadata.approval_ttl_s or self.options.approval_ttl_s,
            tool_executions=batch,
        )
        if ledger is not None:
            ledger.written(batch)
        outcome.result_message = sent_result(sent)
        if not prepared.resumed:
            return  # no approved action whose outcome to record
        await record_outcomes(
            self.store,
            prepared.fence,
            prepared.resumed,
            outcome.result,
            failure=(
                f"{outcome.terminal.error_code}: {outcome.error.message}"
                if outcome.status == "failed" and outcome.error is not None
                else None
            ),
        )

    # ---- recovery -----------------------------------------------------------------------------
    async def recover(self, taken: TakenOverRun, checkpoint: RunCheckpoint) -> None:
        """Continue, in the background, a run this replica's reaper took over (see
        prepare_recovery for what it raises when the run cannot be continued here)."""
        run_id = taken.run.run_id
        self._held.add(run_id)
        try:
            prepared = await prepare_recovery(self, taken, checkpoint)
        except BaseException:
            self._held.discard(run_id)
            raise
        self._live[prepared.request_id] = LiveRun()
        task = asyncio.create_task(run_recovered(self.execute, prepared))
        self._recovering.add(task)
        task.add_done_callback(self._recovering.discard)

    # ---- cancellation and leases --------------------------------------------------------------
    def cancel(self, request_id: str, reason: str | None = None) -> bool:
        """Stop a run held by this replica. True when there was one."""
        live = self._live.get(request_id)
        return live is not None and live.cancel(reason)

    @property
    def live_requests(self) -> list[str]:
        return list(self._live)

    @property
    def held_run_ids(self) -> list[str]:
        """The runs this replica holds right now (begun and not yet finished)."""
        return list(self._held)

    async def drain(self, timeout_s: float) -> None:
        """Wait for live runs to end; cancel those still running after timeout_s."""
        tasks = [live.task for live in self._live.values() if live.task is not None]
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=timeout_s)
        for task in pending:
            task.cancel()
