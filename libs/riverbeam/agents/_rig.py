"""RigAgentRunner: Riverbeam's own tool loop over a CompletionClient.

One run goes: placeholder and thinking frames; then model calls, each streamed as `chunk`
frames; tool calls run between them, each announced by a `tool` frame before it runs (role
ai, type action) and answered by one after (role tool, type tool_result). The run ends with a
`done` frame (the reply, or interrupted: true with action_required when a tool needs a
person's approval) or an `error` frame carrying the BEM code. Cancellation always propagates.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from riverbeam import __version__
from riverbeam.agents._chat import assistant_message, build_messages, resume_call_id, tool_message
from riverbeam.agents._completion import (
    ChatMessage,
    CompletionClient,
    PendingToolCall,
    Text,
    TextDelta,
    ToolCalls,
    closing_events,
)
from riverbeam.agents._frames import FrameFactory
from riverbeam.agents._io import AgentContext, AgentInput, ResumedAction
from riverbeam.agents._skills import Skill, skill_by_name
from riverbeam.agents._tool import Tool, ToolCallContext, ToolSpec
from riverbeam.agents._toolcall import BoundTool, ToolOutcome, error_result
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.routing import token_cost
from riverbeam.telemetry import model_span, tool_span
from riverbeam.telemetry._metrics import MODEL_COST, MODEL_LATENCY, MODEL_TOKENS, TOOL_CALLS
from riverbeam.types import (
    ActionRequired,
    AgentMetadata,
    AgentResult,
    ContentPart,
    Modality,
    StreamChunk,
    TokenUsage,
    ToolCallRecord,
)

__all__ = ["RigAgentRunner", "RigOptions", "ToolErrorPolicy"]

log = logging.getLogger(__name__)

ToolErrorPolicy = Literal["fatal", "model"]
"""What a failing tool does: end the run with an error frame, or show the model the error."""


@dataclass(frozen=True, slots=True)
class RigOptions:
    """How a RigAgentRunner behaves.

    Attributes:
        max_rounds: Tool rounds allowed per run; the model asking for one more is BEM-088.
        tool_errors: "fatal" (the seed's behaviour): a tool error ends the run with an error
            frame carrying the tool's BEM code. "model": the model gets {"error": {...}} as the
            call's result and carries on; an unknown tool (BEM-089) is then shown too. Invalid
            arguments (BEM-090) are always shown to the model, never fatal.
        tool_timeout_s: Time limit of a tool call (BEM-091) when its spec sets none; None for
            no limit.
        resume_returns_tool_output: On resume, return the approved tools' output as the
            result instead of letting the model finish its answer (the seed's behaviour).
    """

    max_rounds: int = 8
    tool_errors: ToolErrorPolicy = "fatal"
    tool_timeout_s: float | None = 60.0
    resume_returns_tool_output: bool = False

    def __post_init__(self) -> None:
        if self.max_rounds < 0:
            raise ValueError("max_rounds must be >= 0")


class RigAgentRunner:
    """The built-in tool-loop agent.

    Args:
        name: The agent's name.
        client: The model.
        tools: The tools the model may call (all of them).
        skill: Supplies the system prompt (and the description); None for neither.
        options: Loop behaviour; see RigOptions.
        description: The metadata description (defaults to the skill's).
        supported_modalities: Input modalities the agent accepts.

    Raises:
        RiverbeamError: BEM-094 for a bad tool name, BEM-002 for two tools with one name or a
            tool whose parameters are not a valid JSON Schema.
    """

    def __init__(
        self,
        name: str,
        client: CompletionClient,
        tools: Iterable[Tool],
        *,
        skill: Skill | None = None,
        options: RigOptions | None = None,
        description: str | None = None,
        supported_modalities: Sequence[Modality] = ("text",),
    ) -> None:
        self.name = name
        self.client = client
        self.skill = skill
        self.options = options or RigOptions()
        self._description = description
        self._modalities: list[Modality] = list(supported_modalities)
        self._tools: dict[str, BoundTool] = {}
        for tool in tools:
            bound = BoundTool(tool)
            if bound.name in self._tools:
                raise RiverbeamError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"two tools are named {bound.name!r}",
                    tool=bound.name,
                )
            self._tools[bound.name] = bound

    @classmethod
    def for_skill(
        cls,
        skill_name: str,
        client: CompletionClient,
        tools: Iterable[Tool],
        *,
        options: RigOptions | None = None,
        description: str | None = None,
        supported_modalities: Sequence[Modality] = ("text",),
    ) -> RigAgentRunner:
        """An agent named after a built-in skill, with the passed tools its allowlist names.

        An unknown skill name gets an empty system prompt and all the tools.
        """
        skill = skill_by_name(skill_name)
        chosen = list(tools) if skill is None else [t for t in tools if skill.allows(t.spec().name)]
        return cls(
            skill_name,
            client,
            chosen,
            skill=skill,
            options=options,
            description=description,
            supported_modalities=supported_modalities,
        )

    @classmethod
    def new(
        cls,
        name: str,
        client: CompletionClient,
        tools: Iterable[Tool],
        skill: Skill | str | None = None,
        *,
        options: RigOptions | None = None,
        description: str | None = None,
        supported_modalities: Sequence[Modality] = ("text",),
    ) -> RigAgentRunner:
        """An agent with all the passed tools; the skill (or skill name) supplies only the prompt."""
        resolved = skill_by_name(skill) if isinstance(skill, str) else skill
        return cls(
            name,
            client,
            tools,
            skill=resolved,
            options=options,
            description=description,
            supported_modalities=supported_modalities,
        )

    @property
    def tool_specs(self) -> list[ToolSpec]:
        """The specs the model is shown, in the order the tools were given."""
        return [bound.spec for bound in self._tools.values()]

    @property
    def system_prompt(self) -> str:
        return self.skill.system_prompt if self.skill else ""

    def tool(self, name: str) -> BoundTool | None:
        """The tool called `name`, if the agent has it."""
        return self._tools.get(name)

    def metadata(self) -> AgentMetadata:
        """Name, description (the skill's), modalities, tags ("rig", "skill:<name>") and version."""
        tags = ["rig"] + ([f"skill:{self.skill.name}"] if self.skill else [])
        return AgentMetadata(
            name=self.name,
            description=self._description
            or (self.skill.description if self.skill else "Tool-using agent"),
            supported_modalities=self._modalities,
            output_modalities=["text"],
            tags=tags,
            version=__version__,
            default_model=_client_default_model(self.client),
        )

    async def health_check(self) -> bool:
        """Always healthy: a model outage shows up per request, as an error frame."""
        return True

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        """Run the loop for one request; see the module docstring for the frames."""
        run = _Run(self, input, context)
        try:
            async with closing_events(run.frames()) as frames:
                async for frame in frames:
                    yield frame
        except RiverbeamError as error:
            yield run.factory.error(error)
        except Exception as exc:
            log.exception("agent %s failed", self.name)
            yield run.factory.error(
                RiverbeamError(
                    ErrorCode.INTERNAL, f"agent {self.name} failed: {type(exc).__name__}"
                )
            )


def _declined(action: ResumedAction) -> dict[str, Any]:
    status = action.response.status
    return {
        "declined": True,
        "status": status,
        "message": f"The person declined this call ({status}); it was not run. Do not call it again "
        "unless they ask.",
    }


def _skipped(held: str) -> dict[str, Any]:
    return {
        "skipped": True,
        "message": f"Not run: it came after {held}, which is waiting for a person's approval. "
        "Call it again if it is still needed.",
    }


def _render(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class _Run:
    """The state of one run of a RigAgentRunner."""

    def __init__(self, runner: RigAgentRunner, input: AgentInput, context: AgentContext) -> None:
        self.runner = runner
        self.options = runner.options
        self.input = input
        self.context = context
        self.factory = FrameFactory.for_input(runner.name, input)
        self.started = time.monotonic()
        self.records: list[ToolCallRecord] = []
        self.usage = TokenUsage()
        self.resolved = (
            context.model_config_resolved.name if context.model_config_resolved else None
        )
        self.model_used: str | None = None
        self.messages: list[ChatMessage] = []

    async def frames(self) -> AsyncIterator[StreamChunk]:
        yield self.factory.placeholder()
        yield self.factory.thinking()
        answers: dict[str, Any] = {}
        resumed: list[PendingToolCall] = []
        if self.input.actions:
            async with closing_events(self._resume(answers, resumed)) as frames:
                async for frame in frames:
                    yield frame
            if self.options.resume_returns_tool_output:
                text = "\n".join(_render(answers[call.id]) for call in resumed)
                yield self.factory.done(self._result(text))
                return
        self.messages = build_messages(
            system_prompt=self.runner.system_prompt,
            memory=self.context.memory,
            history=self.context.history,
            input=self.input,
            answers=answers,
            resumed_calls=resumed,
        )
        async with closing_events(self._loop()) as frames:
            async for frame in frames:
                yield frame

    # ---- resume ------------------------------------------------------------------------------
    async def _resume(
        self, answers: dict[str, Any], resumed: list[PendingToolCall]
    ) -> AsyncIterator[StreamChunk]:
        """Run each approved action's stored call once; report declined ones."""
        for action in self.input.actions:
            call = PendingToolCall(
                name=action.tool,
                args=dict(action.args),
                id=action.tool_call_id or resume_call_id(action.action_id),
            )
            resumed.append(call)
            if not action.approved:
                result = _declined(action)
                yield self.factory.tool_result(
                    tool_call_id=call.id, tool_name=call.name, tool_result=result
                )
                self._record(call, result, 0.0)
                answers[call.id] = result
                continue
            async with closing_events(self._run_call(call, "", answers)) as frames:
                async for frame in frames:
                    yield frame

    # ---- the loop ----------------------------------------------------------------------------
    async def _loop(self) -> AsyncIterator[StreamChunk]:
        specs = self.runner.tool_specs
        rounds = 0
        while True:
            completion: Text | ToolCalls | None = None
            stream = self.runner.client.stream(self.messages, specs, model=self.resolved)
            label = self._requested_model()
            started = time.perf_counter()
            async with model_span(label, self._provider()) as span:
                async with closing_events(stream) as events:
                    async for event in events:
                        if isinstance(event, TextDelta):
                            if event.text:
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
            served = completion.model if completion is not None and completion.model else label
            _observe_model(
                served, time.perf_counter() - started, completion, self._cost(completion)
            )
            if completion is None:
                raise RiverbeamError(
                    ErrorCode.MODEL_BAD_RESPONSE, "the model client returned no completion"
                )
            self._account(completion)
            if isinstance(completion, Text):
                yield self.factory.done(self._result(completion.text))
                return
            if rounds >= self.options.max_rounds:
                raise RiverbeamError(
                    ErrorCode.TOO_MANY_TOOL_ROUNDS,
                    f"the model still wanted tools after {rounds} rounds",
                    max_rounds=self.options.max_rounds,
                )
            rounds += 1
            self.messages.append(assistant_message(completion.text, completion.calls))
            held: list[PendingToolCall] = []
            async with closing_events(self._calls(completion, held)) as frames:
                async for frame in frames:
                    yield frame
            if held:
                yield self.factory.done(self._interrupted(completion.text, held))
                return

    async def _calls(
        self, completion: ToolCalls, held: list[PendingToolCall]
    ) -> AsyncIterator[StreamChunk]:
        """Run one round's calls in order; hold confirm_required ones for approval.

        Ordinary calls after the first held one are not run (they might depend on it): the
        model is told so and may call them again after the approval.
        """
        text = completion.text
        for call in completion.calls:
            shown, text = text, ""  # the model's words go with its first call
            bound = self.runner.tool(call.name)
            needs_approval = (
                bound is not None and bound.spec.confirm_required and not self.input.confirmed
            )
            if (
                needs_approval
                and bound is not None
                and bound.check_args(call.args, args_error=call.args_error) is None
            ):
                held.append(call)
                yield self._call_frame(call, shown)
                continue
            if held and not needs_approval:
                result = _skipped(held[0].name)
                yield self._call_frame(call, shown)
                yield self.factory.tool_result(
                    tool_call_id=call.id, tool_name=call.name, tool_result=result
                )
                self._record(call, result, 0.0)
                self.messages.append(tool_message(call.id, result))
                continue
            results: dict[str, Any] = {}
            async with closing_events(self._run_call(call, shown, results)) as frames:
                async for frame in frames:
                    yield frame
            self.messages.append(tool_message(call.id, results[call.id]))

    async def _run_call(
        self, call: PendingToolCall, text: str, results: dict[str, Any]
    ) -> AsyncIterator[StreamChunk]:
        """Run one call between its two frames and store its result in `results`.

        The call frame goes out before the tool runs, so a run cancelled mid-call leaves a call
        without an answer, which the pipeline can close. A fatal error is raised after the
        result frame, so the recorded conversation stays whole.
        """
        yield self._call_frame(call, text)
        bound = self.runner.tool(call.name)
        if bound is None:
            unknown = RiverbeamError(
                ErrorCode.UNKNOWN_TOOL,
                f"the model called {call.name!r}, a tool this agent does not have",
                tool=call.name,
            )
            outcome = ToolOutcome(error_result(unknown), unknown, 0.0)
        else:
            async with tool_span(call.name, call.id):
                outcome = await bound.run(
                    call.args,
                    ToolCallContext(self.input, self.context, self.runner.name, call.id),
                    default_timeout_s=self.options.tool_timeout_s,
                    args_error=call.args_error,
                )
        TOOL_CALLS.labels(call.name, "error" if outcome.error is not None else "ok").inc()
        yield self.factory.tool_result(
            tool_call_id=call.id, tool_name=call.name, tool_result=outcome.result
        )
        self._record(call, outcome.result, outcome.latency_ms)
        results[call.id] = outcome.result
        error = outcome.error
        if (
            error is not None
            and self.options.tool_errors == "fatal"
            and error.code is not ErrorCode.INVALID_TOOL_ARGS
        ):
            raise error

    # ---- bookkeeping -------------------------------------------------------------------------
    def _call_frame(self, call: PendingToolCall, text: str) -> StreamChunk:
        return self.factory.tool_call(
            tool_call_id=call.id, tool_name=call.name, tool_args=call.args, text=text
        )

    def _record(self, call: PendingToolCall, result: Any, latency_ms: float) -> None:
        self.records.append(
            ToolCallRecord(
                tool_name=call.name,
                args=call.args,
                tool_call_id=call.id,
                result=result,
                latency_ms=latency_ms,
            )
        )

    def _cost(self, completion: Text | ToolCalls | None) -> float:
        """What the call cost at the routed model's list price (0 for the placeholder)."""
        resolved = self.context.model_config_resolved
        if resolved is None or completion is None or completion.usage is None:
            return 0.0
        return token_cost(
            resolved,
            prompt_tokens=completion.usage.prompt_tokens,
            completion_tokens=completion.usage.completion_tokens,
        )

    def _requested_model(self) -> str:
        """The model this call asks for: the router's choice, else the client's own default."""
        pinned = getattr(self.runner.client, "pin_model", False)
        default = getattr(self.runner.client, "default_model", None)
        if pinned and isinstance(default, str):
            return default
        return (
            self.resolved
            or self.model_used
            or (default if isinstance(default, str) else None)
            or "unknown"
        )

    def _provider(self) -> str | None:
        resolved = self.context.model_config_resolved
        if resolved is not None:
            return resolved.provider
        name = getattr(self.runner.client, "provider_name", None)
        return name if isinstance(name, str) else None

    def _account(self, completion: Text | ToolCalls) -> None:
        if completion.usage is not None:
            self.usage = self.usage + completion.usage
            self.context.usage.add(completion.usage)
        self.model_used = completion.model or self._requested_model()
        self.context.usage.model = self.model_used

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
            **fields,
        )

    def _interrupted(self, text: str, held: list[PendingToolCall]) -> AgentResult:
        names = ", ".join(call.name for call in held)
        return self._result(
            text or f"Waiting for approval to run: {names}.",
            interrupted=True,
            action_required=[
                ActionRequired(
                    action_id=new_id(),
                    kind="confirmation",
                    tool=call.name,
                    args=call.args,
                    tool_call_id=call.id,
                )
                for call in held
            ],
        )


def _client_default_model(client: object) -> str | None:
    default = getattr(client, "default_model", None)
    return default if isinstance(default, str) else None


def _observe_model(
    model: str, seconds: float, completion: Text | ToolCalls | None, cost: float = 0.0
) -> None:
    """Model latency, tokens and cost, for Prometheus."""
    MODEL_LATENCY.labels(model).observe(seconds)
    if cost:
        MODEL_COST.labels(model).inc(cost)
    if completion is not None and completion.usage is not None:
        MODEL_TOKENS.labels(model, "input").inc(completion.usage.prompt_tokens)
        MODEL_TOKENS.labels(model, "output").inc(completion.usage.completion_tokens)
