"""One run of a RigAgentRunner: the one place that orders the agent layer.

The order, for one request:

1. limits (agent, deployment, request: the smallest wins), the turn configuration (session's,
   then request's: tools narrowed, instructions added), the response schema (agent's plus
   request's) and the guardrails and policy chain (deployment's first, then the agent's);
2. resume: the approved actions' stored calls run once (no `before` policy is asked again;
   `after` policies and tool-result guardrails still apply);
3. input guardrails on the user's turn (block: BEM-205; rewrite: the model sees the new text);
4. the loop: model call (native response format or a prompt instruction), tool calls through
   the policy chain (then tool-result guardrails), the answer validated and repaired against
   the schema, then output guardrails; only then is the final text streamed and `done` sent.

Every decision lands in the result's metadata under "agent_layer" (and each tool decision in
ToolCallRecord.decisions); a run that fails sends its error frame with a partial result the
pipeline records.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from riverbeam.agents._chat import assistant_message
from riverbeam.agents._child_hold import ChildHold, group_child_actions, held_actions
from riverbeam.agents._child_resume import child_action, paused_again_text, resume_child
from riverbeam.agents._compaction import (
    CompactionOptions,
    Summary,
    history_after_summary,
)
from riverbeam.agents._completion import (
    ChatMessage,
    CompletionEvent,
    PendingToolCall,
    StructuredOutputClient,
    Text,
    TextDelta,
    ToolCalls,
    closing_events,
)
from riverbeam.agents._frames import FrameFactory
from riverbeam.agents._guardrails import (
    Guardrail,
    GuardrailEvent,
    build_guardrails,
    run_guardrails,
)
from riverbeam.agents._handoff import hand_off
from riverbeam.agents._input_guard import GuardedInput
from riverbeam.agents._io import AgentContext, AgentInput
from riverbeam.agents._layer_config import AgentLayerConfig
from riverbeam.agents._ledger import ToolLedger
from riverbeam.agents._limits import Deadline, RunLimits, smallest
from riverbeam.agents._output import ResponseSchema, capability_native, parse_json_answer
from riverbeam.agents._policies import (
    ToolPolicy,
    with_confirm_required,
)
from riverbeam.agents._run_accounting import ModelAccounting, observe_model
from riverbeam.agents._run_checkpoint import Checkpointing, unknown_outcome_answer
from riverbeam.agents._run_context import ContextFit
from riverbeam.agents._run_resume_checkpoint import ResumeCheckpointing, declined, resumed_call
from riverbeam.agents._run_tools import ToolRound
from riverbeam.agents._tool import ToolSpec
from riverbeam.agents._toolcall import BoundTool
from riverbeam.agents._turn_config import EffectiveTurn, effective_turn
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.telemetry import model_span
from riverbeam.telemetry._metrics import (
    RUN_LIMITS_HIT,
)
from riverbeam.types import (
    AgentResult,
    ContentPart,
    Message,
    TokenUsage,
    ToolCallRecord,
    ToolDecision,
)

if TYPE_CHECKING:
    from riverbeam.agents._rig import RigAgentRunner

__all__ = ["RigRun"]

log = logging.getLogger("riverbeam.agents.rig")

_LIMIT_CODES = {
    ErrorCode.RUN_TIME_LIMIT: "time",
    ErrorCode.TOKEN_BUDGET_EXCEEDED: "tokens",
    ErrorCode.TOO_MANY_TOOL_ROUNDS: "rounds",
}


def _render(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class RigRun(ToolRound, ContextFit, Checkpointing, ResumeCheckpointing, ModelAccounting):
    """The state of one run of a RigAgentRunner."""

    def __init__(self, runner: RigAgentRunner, input: AgentInput, context: AgentContext) -> None:
        self.runner = runner
        self.options = runner.options
        self.input = input
        self.context = context
        self.factory = FrameFactory.for_input(runner.name, input)
        self.agent_name = runner.name
        self.tool_timeout_s = self.options.tool_timeout_s
        self.fatal_tool_errors = self.options.tool_errors == "fatal"
        self.started = time.monotonic()
        self.records: list[ToolCallRecord] = []
        self.usage = TokenUsage()
        resolved = context.model_config_resolved
        self.resolved = resolved.name if resolved else None
        self.model_used: str | None = None
        self.messages: list[ChatMessage] = []
        self.events: list[GuardrailEvent] = []
        self.streamed: list[str] = []
        self.calls_made = 0
        self.repairs = 0
        # Tool rounds so far, and the current round's calls (for checkpoints, see
        # _run_checkpoint.py).
        self.rounds = 0
        self.round: dict[str, Any] | None = None
        self.layer: dict[str, Any] = {}
        self.deadline: Deadline | None = None
        # Filled by setup(), which may refuse the request (BEM-201/217/220).
        self.limits = RunLimits(None, None, self.options.max_rounds)
        self.tools: dict[str, BoundTool] = {}
        self.response: ResponseSchema | None = None
        self.native = False
        self.policies: list[ToolPolicy] = []
        self.guardrails: list[Guardrail] = []
        self.hold_text = False
        self.turn = EffectiveTurn(tuple(spec.name for spec in runner.tool_specs))
        self.held_decisions: dict[str, list[ToolDecision]] = {}
        self.child_holds: dict[str, ChildHold] = {}
        self.ledger = context.tool_ledger or ToolLedger.of_input(input)
        # Context compaction (see _compaction.py and _run_context.py).
        self.compaction = self.options.compaction or CompactionOptions()
        self.budget = self.compaction.budget(resolved.max_tokens if resolved else None)
        raw_history = context.full_history if context.full_history is not None else context.history
        self.history: list[Message] = history_after_summary(raw_history)
        self.summary: Summary | None = None
        self.loop_start = 0
        self.context_retried = False
        self._build: dict[str, Any] = {}
        self._completion: Text | ToolCalls | None = None

    # ---- setup --------------------------------------------------------------------------------
    def setup(self) -> None:
        """Work out the run's limits, tools, schema, guardrails and policies (may refuse)."""
        layer = self.context.agent_layer or AgentLayerConfig()
        options = self.options
        self.limits = RunLimits(
            time_limit_s=smallest(
                options.time_limit_s, layer.time_limit_s, self.input.time_limit_s
            ),
            token_budget=smallest(
                options.token_budget, layer.token_budget, self.input.token_budget
            ),
            max_rounds=smallest(options.max_rounds, layer.max_rounds),
        )
        self.deadline = Deadline(self.limits.time_limit_s)
        turn = effective_turn(
            [spec.name for spec in self.runner.tool_specs],
            ("session_config", self.input.session_config),
            ("turn_config", self.input.turn_config),
        )
        self.turn = turn
        self.tools = {name: bound for name in turn.tools if (bound := self.runner.tool(name))}
        self.response = ResponseSchema.combine(options.output, self.input.response_schema)
        resolved = self.context.model_config_resolved
        self.native = (
            self.response is not None
            and resolved is not None
            and capability_native(resolved.capabilities)
            and isinstance(self.runner.client, StructuredOutputClient)
        )
        self.guardrails = build_guardrails(
            [*layer.guardrails, *options.guardrails],
            judge=options.judge or self.runner.client,
        )
        self.policies = with_confirm_required([*layer.tool_policies, *options.policies])
        self.hold_text = self.response is not None or any(
            g.applies_to("output") for g in self.guardrails
        )
        self.layer = {"limits": self.limits.as_json()}
        if turn_json := turn.as_json():
            self.layer["turn"] = turn_json
        if self.response is not None:
            self.layer["output"] = {"mode": "native" if self.native else "prompt", "repairs": 0}

    async def _call_starting(self, call: PendingToolCall, bound: BoundTool | None) -> None:
        await self._checkpoint_call_starting(call, bound)

    async def _call_answered(self, call_id: str) -> None:
        await self._checkpoint_call_answered(call_id)

    @property
    def tool_specs(self) -> list[ToolSpec]:
        return [bound.spec for bound in self.tools.values()]

    # ---- frames -------------------------------------------------------------------------------
    async def frames(self) -> AsyncIterator[Any]:
        if self.context.recovered is not None:
            # Another runner began this run and stopped: continue from its last checkpoint.
            async with closing_events(self._recovered(self.context.recovered)) as frames:
                async for frame in frames:
                    yield frame
            return
        yield self.factory.placeholder()
        yield self.factory.thinking()
        self.setup()
        async with closing_events(self._turn({}, [])) as frames:
            async for frame in frames:
                yield frame

    async def _turn(
        self, answers: dict[str, Any], resumed: list[PendingToolCall]
    ) -> AsyncIterator[Any]:
        """The resume's calls (those not answered yet), then the conversation and the loop."""
        reheld: list[PendingToolCall] = []
        if self.input.actions:
            async with closing_events(self._resume(answers, resumed, reheld)) as frames:
                async for frame in frames:
                    yield frame
            if reheld:
                text = paused_again_text(reheld, self.child_holds)
                yield self.factory.done(self._interrupted(text, reheld))
                return
            if self.options.resume_returns_tool_output:
                text = "\n".join(_render(answers[call.id]) for call in resumed)
                yield self.factory.done(self._result(text))
                return
        content = await self._guard_input()
        self._build = {
            "system_prompt": self._system_prompt(),
            "memory": self.context.memory,
            "input": replace(self.input, content=content),
            "answers": answers,
            "resumed_calls": resumed,
        }
        self.messages = []
        self._rebuild()
        await self._checkpoint()
        async with closing_events(self._loop()) as frames:
            async for frame in frames:
                yield frame

    def _system_prompt(self) -> str:
        prompt = self.turn.system_prompt(self.runner.system_prompt)
        if self.response is not None and not self.native:
            instruction = str(self.response.instruction()["content"])
            prompt = f"{prompt}\n\n{instruction}" if prompt else instruction
        return prompt

    async def _guard_input(self) -> list[ContentPart]:
        """Input guardrails over the turn's text; the content the model is shown."""
        guarded = self.input.guarded_input
        if isinstance(guarded, GuardedInput):  # run before the turn was stored
            self.events.extend(guarded.events)
            if guarded.error is not None:
                raise guarded.error
            return list(guarded.content)
        content = list(self.input.content)
        text = self.input.text
        if not text or not any(g.applies_to("input") for g in self.guardrails):
            return content
        guarded = await self._within(run_guardrails(self.guardrails, "input", text, self.events))
        if guarded == text:
            return content
        others = [p for p in content if p.type != "text"]
        return [ContentPart.of_text(guarded), *others]

    async def _within(self, step: Any) -> Any:
        assert self.deadline is not None
        return await self.deadline.run(step)

    # ---- resume -------------------------------------------------------------------------------
    async def _resume(
        self,
        answers: dict[str, Any],
        resumed: list[PendingToolCall],
        reheld: list[PendingToolCall],
    ) -> AsyncIterator[Any]:
        """Run each approved action's stored call once; report declined ones.

        An approved call refused because the state its preview showed moved (BEM-275: nothing
        was done) is prepared for approval again, with a fresh preview, and put in `reheld`:
        the run then pauses again instead of going on.
        """
        await self._resume_round(answers, resumed)  # checkpointed (_run_resume_checkpoint)
        children = group_child_actions(self.input.actions, self.history)
        for action in self.input.actions:
            if child_action(action, children):  # continued with its child (_child_resume.py)
                async with closing_events(
                    resume_child(self, action, children, answers, resumed, reheld)
                ) as frames:
                    async for frame in frames:
                        yield frame
                continue
            call = resumed_call(action)
            if call.id in answers:
                continue  # answered before its runner stopped
            resumed.append(call)
            if (
                action.kind == "outcome_unknown"
                and (told := unknown_outcome_answer(action)) is not None
            ):
                # A person says the call did (done) or did not (skip) run: it is not run.
                yield self.factory.tool_result(
                    tool_call_id=call.id, tool_name=call.name, tool_result=told
                )
                self._record(
                    call, told, 0.0, [ToolDecision(policy="person", action=told["decision"])]
                )
                answers[call.id] = told
                continue
            if not action.approved:
                result = declined(action)
                yield self.factory.tool_result(
                    tool_call_id=call.id, tool_name=call.name, tool_result=result
                )
                decision = ToolDecision(policy="person", action="declined")
                self._record(call, result, 0.0, [decision])
                self._ledger_declined(call, action.action_id, action.response.status)
                answers[call.id] = result
                continue
            approved = [ToolDecision(policy="person", action="approved")]
            moved: list[PendingToolCall] = []
            async with closing_events(
                self._run_call(call, "", answers, approved, action_id=action.action_id, moved=moved)
            ) as frames:
                async for frame in frames:
                    yield frame
            await self._call_answered(call.id)
            if moved:
                await self._hold_again(call, reheld)
            elif call.id in self.child_holds:  # an approved call of an agent that paused
                reheld.append(call)
        self._resume_round_done()

    async def _hold_again(self, call: PendingToolCall, reheld: list[PendingToolCall]) -> None:
        """Hold an approved call whose previewed state moved, with a fresh preview."""
        bound = self.tools.get(call.name)
        if bound is None:
            return
        stated = await self._approval_call(bound, call)
        if isinstance(stated, PendingToolCall):
            reheld.append(stated)
            self.held_decisions[stated.id] = [
                ToolDecision(policy="person", action="approved"),
                ToolDecision(
                    policy="preview",
                    action="require_approval",
                    message="the workspace changed since the preview; approve the fresh one",
                ),
            ]

    # ---- the loop -----------------------------------------------------------------------------
    async def _loop(self) -> AsyncIterator[Any]:
        specs = self.tool_specs
        while True:
            self.limits.check_tokens(self.usage)
            await self._fit(specs)
            held_text: list[str] = []
            streamed = len(self.streamed)
            try:
                async with closing_events(self._model_turn(specs, held_text)) as frames:
                    async for frame in frames:
                        yield frame
            except RiverbeamError as err:
                if (
                    err.code is not ErrorCode.MODEL_CONTEXT_LENGTH
                    or self.context_retried
                    or len(self.streamed) != streamed
                ):
                    raise
                # The provider counted more than we did: compact harder and retry once.
                self.context_retried = True
                self._compaction_note()["provider_context_error"] = True
                if not await self._fit(specs, halve=True):
                    raise  # nothing left to compact: the provider's error stands
                continue
            completion = self._completion
            if completion is None:
                raise RiverbeamError(
                    ErrorCode.MODEL_BAD_RESPONSE, "the model client returned no completion"
                )
            self._account(completion)
            self.limits.check_tokens(self.usage)
            if isinstance(completion, Text):
                final = await self._final(completion.text)
                if final is None:
                    await self._checkpoint()
                    continue  # sent back for repair
                text, output = final
                if self.hold_text and text:
                    self.streamed.append(text)
                    yield self.factory.chunk(text)
                yield self.factory.done(self._result(text, output=output))
                return
            for piece in held_text:  # words alongside tool calls are not the final answer
                self.streamed.append(piece)
                yield self.factory.chunk(piece)
            if self.rounds >= self.limits.max_rounds:
                raise RiverbeamError(
                    ErrorCode.TOO_MANY_TOOL_ROUNDS,
                    f"the model still wanted tools after {self.rounds} rounds",
                    max_rounds=self.limits.max_rounds,
                )
            self.rounds += 1
            self.messages.append(assistant_message(completion.text, completion.calls))
            await self._round_started(completion.text, completion.calls)
            held: list[PendingToolCall] = []
            async with closing_events(self._calls(completion, held)) as frames:
                async for frame in frames:
                    yield frame
            if held:
                yield self.factory.done(self._interrupted(completion.text, held))
                return
            if self.context.handoff is not None:  # a transfer_to_<agent> call (_handoff.py)
                async with closing_events(hand_off(self, self.context.handoff)) as frames:
                    async for frame in frames:
                        yield frame
                return

    async def _model_turn(self, specs: list[ToolSpec], held_text: list[str]) -> AsyncIterator[Any]:
        """One model call: text deltas streamed (or held), the completion in self._completion."""
        self._completion = None
        completion: Text | ToolCalls | None = None
        label = self._requested_model()
        started = time.perf_counter()
        estimated = self.runner.counter.count(self.messages, specs)
        async with model_span(label, self._provider()) as span:
            async with closing_events(self._model_stream(specs)) as events:
                while True:
                    event = await self._within(anext(events, None))
                    if event is None:
                        break
                    if isinstance(event, TextDelta):
                        if not event.text:
                            continue
                        if self.hold_text:
                            held_text.append(event.text)
                        else:
                            self.streamed.append(event.text)
                            yield self.factory.chunk(event.text)
                    else:
                        completion = event
            if completion is not None:
                usage = completion.usage
                span.record_usage(
                    usage.prompt_tokens if usage is not None else None,
                    usage.completion_tokens if usage is not None else None,
                    completion.model or label,
                )
                if usage is not None:
                    self.runner.counter.calibrate(estimated, usage.prompt_tokens)
        served = completion.model if completion is not None and completion.model else label
        observe_model(served, time.perf_counter() - started, completion, self._cost(completion))
        self._completion = completion

    def _model_stream(self, specs: list[ToolSpec]) -> AsyncIterator[CompletionEvent]:
        client = self.runner.client
        if self.native and self.response is not None and isinstance(client, StructuredOutputClient):
            return client.stream_structured(
                self.messages,
                specs,
                model=self.resolved,
                response_format=self.response.response_format(),
            )
        return client.stream(self.messages, specs, model=self.resolved)

    async def _final(self, text: str) -> tuple[str, Any] | None:
        """Validate (and repair) then guard the answer; None when it was sent back for repair."""
        output: Any = None
        if self.response is not None:
            check = self.response.check(text)
            if not check.ok:
                if self.repairs >= self.response.repair_attempts:
                    raise self.response.failure(check, self.repairs)
                self.repairs += 1
                self.layer["output"]["repairs"] = self.repairs
                self.layer["output"]["last_errors"] = list(check.errors)
                self.messages.append({"role": "assistant", "content": text})
                self.messages.append(self.response.repair_message(check))
                return None
            output = check.value
        guarded = await self._within(run_guardrails(self.guardrails, "output", text, self.events))
        if guarded != text and self.response is not None:
            try:
                output = parse_json_answer(guarded)
            except ValueError as exc:
                raise RiverbeamError(
                    ErrorCode.OUTPUT_INVALID,
                    f"an output guardrail's rewrite is no longer JSON: {exc}",
                    errors=[str(exc)],
                ) from None
        return guarded, output

    # ---- bookkeeping --------------------------------------------------------------------------
    def _metadata(self) -> dict[str, Any] | None:
        layer = dict(self.layer)
        if self.summary is not None:
            layer["summary"] = self.summary.as_json()
        if self.events:
            layer["guardrails"] = [event.as_json() for event in self.events]
        return {"agent_layer": layer} if layer else None

    def _result(self, text: str, **fields: Any) -> AgentResult:
        return AgentResult(
            content=[ContentPart.of_text(text)] if text else [],
            agent_name=self.runner.name,
            model_used=self.model_used,
            session_id=self.input.session_id or None,
            request_id=self.input.request_id,
            interaction_id=self.input.interaction_id,
            run_id=self.input.run_id or None,
            token_usage=self.usage,
            tool_calls=list(self.records),
            latency_ms=(time.monotonic() - self.started) * 1000,
            metadata=self._metadata(),
            **fields,
        )

    def partial(self, error: RiverbeamError) -> AgentResult:
        """What a failed run leaves: the text already streamed, its calls, usage, decisions."""
        limit = _LIMIT_CODES.get(error.code)
        if limit is not None:
            self.layer["limit_hit"] = limit
            RUN_LIMITS_HIT.labels(self.runner.name, limit).inc()
        return self._result("".join(self.streamed))

    def _interrupted(self, text: str, held: list[PendingToolCall]) -> AgentResult:
        for call in held:
            decisions = self.held_decisions.get(call.id, [])
            self._record_held(call, decisions)
        pairs = held_actions(held, self.child_holds)
        required = [action for _, action in pairs]
        names = ", ".join(action.tool for action in required)  # a called agent's: its calls
        for call_id, action in pairs:
            self.ledger.hold(call_id, action.action_id)
        return self._result(
            text or f"Waiting for approval to run: {names}.",
            interrupted=True,
            action_required=required,
        )

    def _record_held(self, call: PendingToolCall, decisions: list[ToolDecision]) -> None:
        """A held call's decisions go in the run's metadata (it has no result to record yet)."""
        entry: dict[str, Any] = {
            "tool": call.name,
            "tool_call_id": call.id,
            "decisions": [d.to_json_dict() for d in decisions],
        }
        self.layer.setdefault("held", []).append(entry)
