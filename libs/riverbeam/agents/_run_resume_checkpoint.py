"""Checkpoints of a resume's approved calls (durable runs, docs/durability.md).

A resume runs the approved actions' stored calls before it builds the conversation, so before
the run's first ordinary checkpoint. These calls are checkpointed as a round of their own (a
"resume round": `round["resume"]` is true), with the resume's answers so far:

- once before the first call, so a run whose runner dies during a rerun-safe call is
  continued (the call is made again);
- before an approved call that is not rerun-safe starts, the round with that call marked
  `started` (the same mark the tool loop writes; the call does not start unless it is stored);
- after each approved call's answer.

Continuing a resume round (`ResumeCheckpointing._resume_recovered`): the answers given so far
stay; a `started` call of a tool that is not rerun-safe has an unknown outcome, so the run
pauses with an `outcome_unknown` action for it, and the actions after it are not run (each
answered with BEM-271, which the model sees and the action's outcome records as
`approved_failed`). Otherwise the resume goes on with the actions not answered yet, then the
run as usual. Nothing with a side effect runs twice without a person.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from riverbeam.agents._chat import resume_call_id
from riverbeam.agents._completion import PendingToolCall, closing_events
from riverbeam.agents._io import AgentInput, ResumedAction
from riverbeam.agents._ledger import ToolLedger
from riverbeam.agents._toolcall import BoundTool, error_result
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentResult, ToolDecision

if TYPE_CHECKING:
    from riverbeam.agents._frames import FrameFactory

__all__ = ["ResumeCheckpointing", "declined", "resumed_call"]


def resumed_call(action: ResumedAction) -> PendingToolCall:
    """The stored call an answered action resumes."""
    return PendingToolCall(
        name=action.tool,
        args=dict(action.args),
        id=action.tool_call_id or resume_call_id(action.action_id),
    )


def declined(action: ResumedAction) -> dict[str, Any]:
    """What the model is told for a call a person declined."""
    status = action.response.status
    return {
        "declined": True,
        "status": status,
        "message": f"The person declined this call ({status}); it was not run. Do not call it "
        "again unless they ask.",
    }


def _call_json(call: PendingToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "args": dict(call.args)}


class ResumeCheckpointing:
    """The resume half of a RigRun's checkpoints (a mixin: RigRun sets the attributes)."""

    round: dict[str, Any] | None
    input: AgentInput
    factory: FrameFactory
    tools: dict[str, BoundTool]
    ledger: ToolLedger
    _build: dict[str, Any]
    _checkpoint: Callable[[], Any]
    _call_frame: Callable[[PendingToolCall, str], Any]
    _record: Callable[..., None]
    _rerun_safe: Callable[[str], bool]
    _ledger_request: Callable[..., Any]
    _outcome_unknown: Callable[[str, PendingToolCall], AgentResult]
    _turn: Callable[[dict[str, Any], list[PendingToolCall]], AsyncIterator[Any]]

    async def _resume_round(self, answers: dict[str, Any], resumed: list[PendingToolCall]) -> None:
        """The resume's approved calls are about to run: checkpoint them as a round."""
        # The snapshot reads the answers and calls so far from here (the same objects).
        self._build = {"answers": answers, "resumed_calls": resumed}
        self.round = {
            "text": "",
            "calls": [_call_json(resumed_call(a)) for a in self.input.actions],
            "answered": list(answers),
            "started": None,
            "resume": True,
        }
        await self._checkpoint()

    def _resume_round_done(self) -> None:
        self.round = None

    async def _resume_recovered(self) -> AsyncIterator[Any]:
        """Continue a run whose runner died while its resume ran the approved calls."""
        round = self.round
        assert round is not None
        answers: dict[str, Any] = dict(self._build.get("answers") or {})
        resumed = [c for c in self._build.get("resumed_calls") or [] if c.id in answers]
        started = round.get("started")
        if started and started["id"] not in answers and not self._rerun_safe(started["name"]):
            first = PendingToolCall(
                name=str(started["name"]), args=dict(started.get("args") or {}), id=started["id"]
            )
            async with closing_events(self._unknown_in_resume(first, answers)) as frames:
                async for frame in frames:
                    yield frame
            return
        self.round = None
        async with closing_events(self._turn(answers, resumed)) as frames:
            async for frame in frames:
                yield frame

    async def _unknown_in_resume(
        self, started: PendingToolCall, answers: dict[str, Any]
    ) -> AsyncIterator[Any]:
        """Pause on an approved call whose outcome is unknown; later actions are not run."""
        for action in self.input.actions:
            call = resumed_call(action)
            if call.id in answers or call.id == started.id:
                continue
            err = RiverbeamError(
                ErrorCode.RESUME_CALL_NOT_RUN,
                f"not run: it came after {started.name}, whose outcome is unknown because its "
                "runner stopped; ask for it again if it is still needed",
                tool=call.name,
            )
            result = error_result(err)
            entry = self._ledger_request(call, self.tools.get(call.name), action.action_id)
            self.ledger.finish(entry, "cancelled", error=err, message=err.message)
            yield self._call_frame(call, "")
            yield self.factory.tool_result(
                tool_call_id=call.id, tool_name=call.name, tool_result=result
            )
            self._record(call, result, 0.0, [ToolDecision(policy="recovery", action="not_run")])
            answers[call.id] = result
        yield self.factory.done(self._outcome_unknown("", started))
