"""Checkpoints of a RigRun (durable runs, docs/durability.md): what a run saves after each
completed step, and how a run that lost its runner continues from the last one.

The run saves (through `context.checkpoint`, when the pipeline gives one) at the loop's
start (the messages built), after each model turn that asked for tools (the round's calls,
none answered yet), after each repair request, after each tool result, and, before a tool
that is not rerun-safe starts, the round with that call marked `started`. A resume's
approved calls, which run before the loop, are a round of their own
(riverbeam.agents._run_resume_checkpoint).

Continuing (`context.recovered`): the state is restored; the round's unanswered calls are
made, except a `started` call of a tool that is not rerun-safe (`ToolSpec.rerun_safe`): its
outcome is unknown, so the run pauses with an `outcome_unknown` action and the calls after
it are not run (as after a call held for approval). Then the loop goes on: a model call that
was in flight is simply made again. A person answers the action with `retry` (the call runs,
once), `skip` (the model is told it did not run) or `done` (told it ran, with the result the
person gives).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from riverbeam.agents._chat import tool_message
from riverbeam.agents._completion import ChatMessage, PendingToolCall, ToolCalls, closing_events
from riverbeam.agents._guardrails import GuardrailEvent
from riverbeam.agents._io import AgentContext, AgentInput, ResumedAction
from riverbeam.agents._limits import Deadline, RunLimits
from riverbeam.agents._run_tools import skipped
from riverbeam.agents._toolcall import BoundTool
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.types import (
    ActionRequired,
    AgentResult,
    ContentPart,
    TokenUsage,
    ToolCallRecord,
    ToolDecision,
)

if TYPE_CHECKING:
    from riverbeam.agents._frames import FrameFactory

__all__ = ["OUTCOME_UNKNOWN", "STATE_VERSION", "Checkpointing", "unknown_outcome_answer"]

STATE_VERSION = 1
"""The layout of the agent state in a checkpoint; another one is not continued (BEM-268)."""

OUTCOME_UNKNOWN = "outcome_unknown"
"""The kind of the action a recovered run pauses on when a side-effecting call was in flight."""


def _call_json(call: PendingToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "args": dict(call.args)}


def _call_of(raw: dict[str, Any]) -> PendingToolCall:
    return PendingToolCall(name=str(raw["name"]), args=dict(raw.get("args") or {}), id=raw["id"])


def unknown_outcome_answer(action: ResumedAction) -> dict[str, Any] | None:
    """What the model is told for an answered `outcome_unknown` action; None for `retry`
    (the call runs again). A declined action, or one without a valid decision, is `skip`:
    nothing runs twice unless a person says so."""
    payload = action.response.payload or {} if action.approved else {}
    decision = payload.get("decision")
    if decision == "retry":
        return None
    if decision == "done":
        return {
            "outcome_unknown": True,
            "decision": "done",
            "message": "Its runner stopped while this call ran; a person says it did run. "
            "Do not call it again for the same purpose.",
            "result": payload.get("result"),
        }
    return {
        "outcome_unknown": True,
        "decision": "skip",
        "message": "Its runner stopped while this call ran; a person says it did not run, "
        "and it was not run again. Call it again if it is still needed.",
    }


class Checkpointing:
    """The checkpoint half of a RigRun (a mixin: RigRun sets the attributes it uses)."""

    # What RigRun has (annotations only: nothing here shadows RigRun's own).
    round: dict[str, Any] | None
    context: AgentContext
    input: AgentInput
    factory: FrameFactory
    messages: list[ChatMessage]
    loop_start: int
    records: list[ToolCallRecord]
    usage: TokenUsage
    rounds: int
    calls_made: int
    repairs: int
    streamed: list[str]
    model_used: str | None
    layer: dict[str, Any]
    events: list[GuardrailEvent]
    tools: dict[str, BoundTool]
    deadline: Deadline | None
    limits: RunLimits
    _build: dict[str, Any]
    setup: Callable[[], None]
    _system_prompt: Callable[[], str]
    _calls: Callable[[ToolCalls, list[PendingToolCall]], AsyncIterator[Any]]
    _loop: Callable[[], AsyncIterator[Any]]
    _interrupted: Callable[[str, list[PendingToolCall]], AgentResult]
    _call_frame: Callable[[PendingToolCall, str], Any]
    _record: Callable[..., None]
    _record_held: Callable[[PendingToolCall, list[ToolDecision]], None]
    _result: Callable[..., AgentResult]
    _resume_recovered: Callable[[], AsyncIterator[Any]]

    # ---- saving -------------------------------------------------------------------------------
    async def _checkpoint(self) -> None:
        """Save the run's progress, when the pipeline checkpoints this run."""
        save = self.context.checkpoint
        if save is not None:
            await save(self._snapshot())

    def _snapshot(self) -> dict[str, Any]:
        build = self._build
        built_input = build.get("input")
        return {
            "version": STATE_VERSION,
            "messages": list(self.messages),
            "loop_start": self.loop_start,
            "content": (
                [p.to_json_dict() for p in built_input.content] if built_input is not None else None
            ),
            "answers": dict(build.get("answers") or {}),
            "resumed_calls": [_call_json(c) for c in build.get("resumed_calls") or []],
            "records": [r.to_json_dict() for r in self.records],
            "usage": self.usage.to_json_dict(),
            "rounds": self.rounds,
            "calls_made": self.calls_made,
            "repairs": self.repairs,
            "streamed": list(self.streamed),
            "model_used": self.model_used,
            "layer": self.layer,
            "events": [e.as_json() for e in self.events],
            "round": self.round,
            # The time limit goes on from here when the run is continued (not from zero).
            "elapsed_s": self.deadline.elapsed_s() if self.deadline is not None else 0.0,
        }

    async def _round_started(self, text: str, calls: tuple[PendingToolCall, ...]) -> None:
        """A model turn asked for these calls (its assistant message is in self.messages)."""
        self.round = {
            "text": text,
            "calls": [_call_json(c) for c in calls],
            "answered": [],
            "started": None,
        }
        await self._checkpoint()

    async def _checkpoint_call_starting(
        self, call: PendingToolCall, bound: BoundTool | None
    ) -> None:
        """A tool is about to run: when it may not simply be run again, say so first."""
        if self.round is None or bound is None or bound.spec.rerun_safe:
            return
        self.round["started"] = _call_json(call)
        await self._checkpoint()

    async def _checkpoint_call_answered(self, call_id: str) -> None:
        """A call's answer is in self.messages."""
        if self.round is None:
            return
        self.round["answered"].append(call_id)
        self.round["started"] = None
        await self._checkpoint()

    # ---- continuing ---------------------------------------------------------------------------
    def _restore(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise RiverbeamError(
                ErrorCode.RECOVERY_FAILED,
                f"checkpoint state version {state.get('version')!r} is not {STATE_VERSION}",
            )
        self.messages = list(state["messages"])
        self.loop_start = int(state["loop_start"])
        self.deadline = Deadline(
            self.limits.time_limit_s, elapsed_before_s=float(state.get("elapsed_s") or 0.0)
        )
        self.records = [ToolCallRecord.model_validate(r) for r in state.get("records") or []]
        self.usage = TokenUsage.model_validate(state.get("usage") or {})
        self.context.usage.add(self.usage)
        self.rounds = int(state.get("rounds") or 0)
        self.calls_made = int(state.get("calls_made") or 0)
        self.repairs = int(state.get("repairs") or 0)
        self.streamed = list(state.get("streamed") or [])
        self.model_used = state.get("model_used")
        if self.model_used:
            self.context.usage.model = self.model_used
        self.layer = dict(state.get("layer") or self.layer)
        self.events = [GuardrailEvent(**e) for e in state.get("events") or []]
        self.round = state.get("round")
        raw_content = state.get("content")
        content = (
            [ContentPart.model_validate(p) for p in raw_content]
            if raw_content is not None
            else list(self.input.content)
        )
        self._build = {
            "system_prompt": self._system_prompt(),
            "memory": self.context.memory,
            "input": replace(self.input, content=content),
            "answers": dict(state.get("answers") or {}),
            "resumed_calls": [_call_of(c) for c in state.get("resumed_calls") or []],
        }

    def _rerun_safe(self, name: str) -> bool:
        bound = self.tools.get(name)
        return bound is None or bound.spec.rerun_safe

    async def _recovered(self, state: dict[str, Any]) -> AsyncIterator[Any]:
        """Continue from a checkpoint: the round's unanswered calls, then the loop."""
        self.setup()
        self._restore(state)
        round = self.round
        if round is not None and round.get("resume"):
            # It died while its resume ran the approved calls (_run_resume_checkpoint.py).
            async with closing_events(self._resume_recovered()) as frames:
                async for frame in frames:
                    yield frame
            return
        if round is not None:
            answered = set(round.get("answered") or [])
            calls = [_call_of(c) for c in round["calls"] if c["id"] not in answered]
            started = round.get("started")
            if calls and started and started["id"] == calls[0].id:
                first = _call_of(started)  # with the arguments it was started with
                if not self._rerun_safe(first.name):
                    async with closing_events(self._unknown(round["text"], first, calls)) as out:
                        async for frame in out:
                            yield frame
                    return
            if calls:
                if started:
                    self.calls_made = max(self.calls_made - 1, 0)  # it is made again now
                held: list[PendingToolCall] = []
                completion = ToolCalls(calls=tuple(calls), text="")
                async with closing_events(self._calls(completion, held)) as frames:
                    async for frame in frames:
                        yield frame
                if held:
                    yield self.factory.done(self._interrupted(round["text"], held))
                    return
        self.round = None
        async with closing_events(self._loop()) as frames:
            async for frame in frames:
                yield frame

    async def _unknown(
        self, text: str, started: PendingToolCall, calls: list[PendingToolCall]
    ) -> AsyncIterator[Any]:
        """Pause on a call whose outcome is unknown; the calls after it are not run."""
        for later in calls[1:]:
            result = skipped(started.name)
            yield self._call_frame(later, "")
            yield self.factory.tool_result(
                tool_call_id=later.id, tool_name=later.name, tool_result=result
            )
            self._record(later, result, 0.0, [])
            self.messages.append(tool_message(later.id, result))
        yield self.factory.done(self._outcome_unknown(text, started))

    def _outcome_unknown(self, text: str, call: PendingToolCall) -> AgentResult:
        self._record_held(call, [])
        return self._result(
            text or f"{call.name} was running when its runner stopped: did it run?",
            interrupted=True,
            action_required=[
                ActionRequired(
                    action_id=new_id(),
                    kind=OUTCOME_UNKNOWN,
                    tool=call.name,
                    args=call.args,
                    tool_call_id=call.id,
                )
            ],
        )
