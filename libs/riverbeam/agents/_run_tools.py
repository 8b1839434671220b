"""The tool rounds of a RigRun: each call through the policy chain, then the guardrails.

For each call of a round: the `before` policies in order (rewrites go on, any other decision
ends the chain), then either a hold for approval, a refusal the model sees, a fatal refusal
(BEM-210, raised after the call is answered), a short-circuit result, or the tool itself
(within the run's deadline); then the `after` policies and the tool-result guardrails.
Every decision is recorded with the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from riverbeam.agents._chat import tool_message
from riverbeam.agents._child_hold import ChildHeld, ChildHold
from riverbeam.agents._completion import ChatMessage, PendingToolCall, ToolCalls, closing_events
from riverbeam.agents._frames import FrameFactory
from riverbeam.agents._guardrails import Guardrail, GuardrailEvent, guard_json
from riverbeam.agents._io import AgentContext, AgentInput
from riverbeam.agents._ledger import ToolLedger
from riverbeam.agents._policies import (
    Before,
    Deny,
    DenyFatal,
    PolicyCall,
    RequireApproval,
    RewriteArgs,
    ShortCircuit,
    ToolPolicy,
    decision_action,
    decision_message,
)
from riverbeam.agents._tool import ApprovalTool, PreviewTool, ToolCallContext
from riverbeam.agents._toolcall import BoundTool, ToolOutcome, error_result
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.telemetry import tool_span
from riverbeam.telemetry._metrics import TOOL_CALLS, TOOL_DECISIONS
from riverbeam.types import ToolCallRecord, ToolDecision

__all__ = ["ToolRound", "skipped"]


def skipped(held: str) -> dict[str, Any]:
    return {
        "skipped": True,
        "message": f"Not run: it came after {held}, which is waiting for a person's approval. "
        "Call it again if it is still needed.",
    }


def denied(policy: str, message: str) -> dict[str, Any]:
    return {"denied": True, "policy": policy, "message": message}


class ToolRound:
    """The tool-call half of a RigRun (a mixin: RigRun sets these attributes)."""

    input: AgentInput
    context: AgentContext
    factory: FrameFactory
    tools: dict[str, BoundTool]
    policies: list[ToolPolicy]
    guardrails: list[Guardrail]
    events: list[GuardrailEvent]
    records: list[ToolCallRecord]
    messages: list[ChatMessage]
    held_decisions: dict[str, list[ToolDecision]]
    # Calls of called agents that paused for approval, by call id (_child_hold.py).
    child_holds: dict[str, ChildHold]
    calls_made: int
    agent_name: str
    tool_timeout_s: float | None
    fatal_tool_errors: bool
    ledger: ToolLedger

    async def _within(self, step: Any) -> Any:
        raise NotImplementedError

    async def _call_starting(self, call: PendingToolCall, bound: BoundTool | None) -> None:
        """Checkpoint hook: the tool of `call` is about to run."""
        raise NotImplementedError

    async def _call_answered(self, call_id: str) -> None:
        """Checkpoint hook: the call's answer is in self.messages."""
        raise NotImplementedError

    # ---- tool calls ---------------------------------------------------------------------------
    async def _calls(
        self, completion: ToolCalls, held: list[PendingToolCall]
    ) -> AsyncIterator[Any]:
        """Run one round's calls in order through the policy chain; hold those needing approval.

        Ordinary calls after the first held one are not run (they might depend on it): the
        model is told so and may call them again after the approval.
        """
        text = completion.text
        for call in completion.calls:
            shown, text = text, ""  # the model's words go with its first call
            bound = self.tools.get(call.name)
            decisions: list[ToolDecision] = []
            decision, call = await self._before(call, bound, decisions)
            approval = (
                isinstance(decision, RequireApproval)
                and bound is not None
                and bound.check_args(call.args, args_error=call.args_error) is None
            )
            if approval and bound is not None:
                stated = await self._approval_call(bound, call)
                if isinstance(stated, ToolOutcome):
                    # The tool could not say what the approval would cover: the call fails.
                    entry = self._ledger_request(call, bound)
                    self.ledger.finish(entry, "failed", error=stated.error)
                    yield self._call_frame(call, shown)
                    yield self.factory.tool_result(
                        tool_call_id=call.id, tool_name=call.name, tool_result=stated.result
                    )
                    self._record(call, stated.result, 0.0, decisions)
                    self.messages.append(tool_message(call.id, stated.result))
                    await self._call_answered(call.id)
                    TOOL_CALLS.labels(call.name, "error").inc()
                    if stated.error is not None and self.fatal_tool_errors:
                        raise stated.error
                    continue
                held.append(stated)
                self.held_decisions[stated.id] = decisions
                # `held` once the action exists (RigRun._interrupted names it).
                self._ledger_request(stated, bound)
                yield self._call_frame(stated, shown)
                continue
            if held:
                result = skipped(held[0].name)
                entry = self._ledger_request(call, bound)
                self.ledger.finish(entry, "cancelled", message=result["message"])
                yield self._call_frame(call, shown)
                yield self.factory.tool_result(
                    tool_call_id=call.id, tool_name=call.name, tool_result=result
                )
                self._record(call, result, 0.0, decisions)
                self.messages.append(tool_message(call.id, result))
                await self._call_answered(call.id)
                continue
            results: dict[str, Any] = {}
            async with closing_events(
                self._run_call(call, shown, results, decisions, decision)
            ) as frames:
                async for frame in frames:
                    yield frame
            if call.id in self.child_holds:  # a called agent paused: this call waits too
                held.append(call)
                continue
            self.messages.append(tool_message(call.id, results[call.id]))
            await self._call_answered(call.id)

    async def _approval_call(
        self, bound: BoundTool, call: PendingToolCall
    ) -> PendingToolCall | ToolOutcome:
        """The call to hold, with the arguments its approval covers (see ApprovalTool)."""
        if not isinstance(bound.tool, ApprovalTool):
            return call
        limit = bound.spec.timeout_s or self.tool_timeout_s
        preview: dict[str, Any] | None = None
        try:
            async with asyncio.timeout(limit):
                args = await bound.tool.approval_args(dict(call.args), self.input)
                if isinstance(bound.tool, PreviewTool):
                    # What approving would do, and the state approval is bound to (BEM-275).
                    args, preview = await bound.tool.approval_preview(args, self.input)
        except TimeoutError:
            error = RiverbeamError(
                ErrorCode.TOOL_TIMEOUT,
                f"{call.name} could not be prepared for approval within {limit:g}s",
                tool=call.name,
            )
            return ToolOutcome(error_result(error), error, 0.0)
        except RiverbeamError as error:
            error = (
                error.with_details({"tool": call.name}) if "tool" not in error.details else error
            )
            return ToolOutcome(error_result(error), error, 0.0)
        return replace(call, args=args, raw_args=None, args_error=None, preview=preview)

    def _policy_call(self, call: PendingToolCall, bound: BoundTool | None) -> PolicyCall:
        return PolicyCall(
            tool=call.name,
            args=call.args,
            spec=bound.spec if bound is not None else None,
            calls_before=self.calls_made,
            confirmed=self.input.confirmed,
        )

    async def _before(
        self, call: PendingToolCall, bound: BoundTool | None, decisions: list[ToolDecision]
    ) -> tuple[Before | None, PendingToolCall]:
        """Ask each policy in order; rewrites go on, anything else ends the chain."""
        for policy in self.policies:
            decision = await self._within(policy.before(self._policy_call(call, bound)))
            if decision is None:
                continue
            self._decide(decisions, policy.name, decision)
            if isinstance(decision, RewriteArgs):
                call = replace(call, args=dict(decision.args), raw_args=None, args_error=None)
                continue
            return decision, call
        return None, call

    def _decide(self, decisions: list[ToolDecision], policy: str, decision: Any) -> None:
        action = decision_action(decision)
        decisions.append(
            ToolDecision(policy=policy, action=action, message=decision_message(decision) or None)
        )
        TOOL_DECISIONS.labels(policy, action).inc()

    async def _run_call(
        self,
        call: PendingToolCall,
        text: str,
        results: dict[str, Any],
        decisions: list[ToolDecision],
        decision: Before | None = None,
        *,
        action_id: str | None = None,
        moved: list[PendingToolCall] | None = None,
    ) -> AsyncIterator[Any]:
        """Run one call between its two frames and store its result in `results`.

        The call frame goes out before the tool runs, so a run cancelled mid-call leaves a call
        without an answer, which the pipeline can close. A fatal error is raised after the
        result frame, so the recorded conversation stays whole. With `moved` (an approved call
        on resume), a refusal because the previewed state moved (BEM-275) is never fatal: the
        call is added to `moved`, to be held again with a fresh preview.
        """
        yield self._call_frame(call, text)
        self.calls_made += 1
        bound = self.tools.get(call.name)
        entry = self._ledger_request(call, bound, action_id)
        fatal: RiverbeamError | None = None
        if isinstance(decision, Deny | DenyFatal):
            policy = decisions[-1].policy if decisions else "policy"
            outcome = ToolOutcome(denied(policy, decision.message), None, 0.0)
            if isinstance(decision, DenyFatal):
                fatal = RiverbeamError(
                    ErrorCode.TOOL_CALL_DENIED,
                    f"policy {policy!r} denied {call.name}: {decision.message}",
                    tool=call.name,
                    policy=policy,
                )
            self.ledger.finish(
                entry, "denied", error=fatal, message=f"policy {policy!r}: {decision.message}"
            )
        elif isinstance(decision, ShortCircuit):
            outcome = ToolOutcome(decision.result, None, 0.0)
            self.ledger.finish(entry, "succeeded", result=decision.result)
        elif bound is None:
            unknown = RiverbeamError(
                ErrorCode.UNKNOWN_TOOL,
                f"the model called {call.name!r}, a tool this agent does not have",
                tool=call.name,
            )
            outcome = ToolOutcome(error_result(unknown), unknown, 0.0)
            self.ledger.finish(entry, "failed", error=unknown)
        elif (invalid := bound.check_args(call.args, args_error=call.args_error)) is not None:
            outcome = ToolOutcome(error_result(invalid), invalid, 0.0)
            self.ledger.finish(entry, "failed", error=invalid)
        else:
            await self._call_starting(call, bound)
            # A side-effecting call is on record as started before it runs (or not at all).
            await self.ledger.start(entry)
            try:
                async with tool_span(call.name, call.id):
                    outcome = await self._within(
                        bound.run(
                            call.args,
                            ToolCallContext(self.input, self.context, self.agent_name, call.id),
                            default_timeout_s=self.tool_timeout_s,
                            args_error=call.args_error,
                        )
                    )
            except ChildHeld as paused:
                # No result: the call is held, its ledger entry too (RigRun._interrupted).
                self.child_holds[call.id] = paused.hold.linked(call.name, call.id)
                return
            if outcome.error is None:
                self.ledger.finish(entry, "succeeded", result=outcome.result)
            else:
                self.ledger.finish(entry, "failed", error=outcome.error)
        result = outcome.result
        if outcome.error is None and fatal is None:
            try:
                result = await self._after(call, bound, result, decisions)
            except RiverbeamError as err:
                result, fatal = error_result(err), err
        TOOL_CALLS.labels(call.name, "error" if outcome.error is not None else "ok").inc()
        yield self.factory.tool_result(
            tool_call_id=call.id, tool_name=call.name, tool_result=result
        )
        self._record(call, result, outcome.latency_ms, decisions)
        results[call.id] = result
        if fatal is not None:
            raise fatal
        error = outcome.error
        if moved is not None and error is not None and error.code is ErrorCode.ACTION_STATE_MOVED:
            moved.append(call)
            return
        if (
            error is not None
            and self.fatal_tool_errors
            and error.code is not ErrorCode.INVALID_TOOL_ARGS
        ):
            raise error

    async def _after(
        self,
        call: PendingToolCall,
        bound: BoundTool | None,
        result: Any,
        decisions: list[ToolDecision],
    ) -> Any:
        """After policies in order, then the tool_result guardrails (BEM-207 when one blocks)."""
        for policy in self.policies:
            rewrite = await self._within(policy.after(self._policy_call(call, bound), result))
            if rewrite is not None:
                self._decide(decisions, policy.name, rewrite)
                result = rewrite.result
        return await self._within(guard_json(self.guardrails, result, self.events))

    def _ledger_request(
        self, call: PendingToolCall, bound: BoundTool | None, action_id: str | None = None
    ) -> str:
        return self.ledger.request(
            tool=call.name,
            args=call.args,
            tool_call_id=call.id,
            spec=bound.spec if bound is not None else None,
            action_id=action_id,
        )

    def _ledger_declined(self, call: PendingToolCall, action_id: str, status: str) -> None:
        entry = self._ledger_request(call, self.tools.get(call.name), action_id)
        self.ledger.finish(entry, "denied", message=f"declined by a person ({status})")

    def _call_frame(self, call: PendingToolCall, text: str) -> Any:
        return self.factory.tool_call(
            tool_call_id=call.id,
            tool_name=call.name,
            tool_args=call.args,
            text=text,
            preview=call.preview,
        )

    def _record(
        self,
        call: PendingToolCall,
        result: Any,
        latency_ms: float,
        decisions: list[ToolDecision] | None = None,
    ) -> None:
        self.records.append(
            ToolCallRecord(
                tool_name=call.name,
                args=call.args,
                tool_call_id=call.id,
                result=result,
                latency_ms=latency_ms,
                decisions=list(decisions or []),
            )
        )
