"""Multi-agent composition: an agent as another's tool (AgentTool) and crews (Crew).

    helper = AgentTool(registry, "summarize")          # offered to the model as ask_summarize
    RigAgentRunner.new("lead", client, [helper], "author")

The called agent runs inside the caller's tool call as a child run (run_agent, _run_child.py):
it gets the task as its user turn and the caller's session, model, memory and auth context;
in the pipeline it has a run record of its own linked to the caller's (parent_run_id), its
frames go out on the caller's stream marked with its agent and run, and its tokens are
recorded on it and added to the caller's. Its answer is the tool's result. A Crew runs
agents the same way, sequentially, in parallel with a join, or routed. Handoff is in
_handoff.py. A called agent that pauses for approval pauses its caller (_child_hold.py,
_child_resume.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from riverbeam import __version__
from riverbeam.agents._child_hold import ChildHeld, ChildHold, group_child_actions
from riverbeam.agents._child_resume import answered_calls
from riverbeam.agents._frames import FrameFactory
from riverbeam.agents._io import AgentContext, AgentInput, ResumedAction
from riverbeam.agents._registry import AgentRegistry
from riverbeam.agents._run_child import MAX_AGENT_DEPTH, run_agent
from riverbeam.agents._tool import TOOL_NAME_PATTERN, ToolCallContext, ToolSpec, json_params
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentMetadata, AgentResult, ContentPart, StreamChunk, ToolCallRecord

__all__ = [
    "MAX_AGENT_DEPTH",
    "AgentTool",
    "Crew",
    "CrewKind",
    "CrewPaused",
    "CrewProgress",
    "run_agent",
]


class AgentTool:
    """Another registered agent, offered to a model as a tool taking a `task`.

    Args:
        registry: Where the agent is looked up, at each call (BEM-020 when it is gone).
        agent: The agent's name.
        name: The tool's name (default `ask_<agent>`, made a valid tool name).
        description: What the model is told (default: the agent's description).
    """

    def __init__(
        self,
        registry: AgentRegistry,
        agent: str,
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        self._registry = registry
        self.agent = agent
        default = "ask_" + "".join(c if TOOL_NAME_PATTERN.fullmatch(c) else "_" for c in agent)
        self._name = name or default[:64]
        self._description = description

    def spec(self) -> ToolSpec:
        description = self._description
        if description is None:
            with contextlib.suppress(RiverbeamError):
                description = self._registry.get_metadata(self.agent).description
        return ToolSpec(
            name=self._name,
            description=f"Ask the {self.agent} agent: {description or 'another agent'}. "
            "Give it the whole task; it answers with text.",
            parameters=json_params({"task": {"type": "string"}}, ["task"]),
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        return await self.invoke_in_context(
            args, ToolCallContext(input, AgentContext(), input.agent_name)
        )

    async def invoke_in_context(self, args: dict[str, Any], call: ToolCallContext) -> Any:
        """Run the agent on the task; its answer, tool calls and usage.

        Raises:
            RiverbeamError: BEM-020 when the agent is not registered, BEM-087 when it failed
                (its code in the details), BEM-234 when the calls nest deeper than
                MAX_AGENT_DEPTH.
            ChildHeld: it paused for a person's approval (the caller's run pauses too).
        """
        result = await run_agent(
            self._registry, self.agent, str(args.get("task", "")), call.input, call.context
        )
        return self._answer(result)

    async def resume_child(
        self, hold: ChildHold, actions: Sequence[ResumedAction], call: ToolCallContext
    ) -> tuple[Any, AgentResult]:
        """Continue the agent that paused with the answered actions (see _child_resume.py)."""
        result = await run_agent(
            self._registry,
            hold.agent,
            hold.task,
            call.input,
            call.context,
            content=[],
            history=hold.messages(call.input.session_id or "local"),
            actions=actions,
        )
        return self._answer(result), result

    def _answer(self, result: AgentResult) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "answer": result.text,
            "tool_calls": [c.tool_name for c in result.tool_calls],
        }


CrewKind = Literal["sequential", "parallel", "route"]


class Crew:
    """Agents composed into one agent.

    - sequential: each agent gets the previous one's answer (the first gets the request).
    - parallel: every agent gets the request at once; the answers are joined under
      `## <agent>` headings, and handed to the `join` agent when there is one.
    - route: the `router` agent's answer names one of `routes` (case-insensitive, the first
      key it mentions); that agent answers the original request. No match: `fallback`, or
      BEM-231.

    Each step is recorded in the result's tool_calls (tool_name = the agent, args = its
    task, result = its answer); tokens of every step count in the crew's run.

    Args:
        name: The crew's name (what callers invoke).
        kind: How the agents are composed.
        registry: Where the agents are looked up at each run.
        agents: The agents (sequential, parallel).
        join: parallel: the agent that merges the answers.
        router: route: the agent that picks.
        routes: route: key -> agent.
        fallback: route: the agent when no key matches.
        description: The metadata description.
    """

    def __init__(
        self,
        name: str,
        kind: CrewKind,
        registry: AgentRegistry,
        *,
        agents: Sequence[str] = (),
        join: str | None = None,
        router: str | None = None,
        routes: Mapping[str, str] | None = None,
        fallback: str | None = None,
        description: str | None = None,
        tags: Sequence[str] = (),
        version: str | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self._registry = registry
        self.agents = list(agents)
        self.join = join
        self.router = router
        self.routes = dict(routes or {})
        self.fallback = fallback
        self._description = description
        self._tags = list(tags)
        self._version = version

    def members(self) -> list[str]:
        """Every agent the crew may run."""
        names = [*self.agents, *([self.join] if self.join else [])]
        names += [*([self.router] if self.router else []), *self.routes.values()]
        names += [self.fallback] if self.fallback else []
        return list(dict.fromkeys(names))

    def metadata(self) -> AgentMetadata:
        return AgentMetadata(
            name=self.name,
            description=self._description or f"{self.kind} crew of {', '.join(self.members())}",
            tags=["crew", f"crew:{self.kind}", *self._tags],
            version=self._version or __version__,
        )

    async def health_check(self) -> bool:
        return True

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        factory = FrameFactory.for_input(self.name, input)
        started = time.monotonic()
        yield factory.placeholder()
        yield factory.thinking()
        steps: list[ToolCallRecord] = []
        try:
            progress = CrewProgress.of(self.name, input, context)
            text = await self._run(input, context, steps, progress)
        except CrewPaused as paused:
            # A member waits for approval: so does the crew (docs/agents.md).
            state = progress.as_state()
            holds = [h.linked(h.parent_tool, h.parent_tool_call_id, state) for h in paused.holds]
            waiting = ", ".join(
                f"{h.agent} ({', '.join(a.tool for a in h.actions)})" for h in holds
            )
            yield factory.done(
                self._result(
                    input,
                    context,
                    f"Waiting for approval: {waiting}.",
                    steps,
                    started,
                    interrupted=True,
                    action_required=[a for hold in holds for a in hold.parent_actions()],
                )
            )
            return
        except RiverbeamError as error:
            yield factory.error(error)
            return
        if text:
            yield factory.chunk(text)
        metadata = {"agent_layer": {"child_calls": progress.child_calls}}
        yield factory.done(
            self._result(
                input,
                context,
                text,
                steps,
                started,
                metadata=metadata if progress.child_calls else None,
            )
        )

    def _result(
        self,
        input: AgentInput,
        context: AgentContext,
        text: str,
        steps: list[ToolCallRecord],
        started: float,
        **fields: Any,
    ) -> AgentResult:
        return AgentResult(
            content=[ContentPart.of_text(text)] if text else [],
            agent_name=self.name,
            session_id=input.session_id or None,
            request_id=input.request_id,
            interaction_id=input.interaction_id,
            run_id=input.run_id or None,
            token_usage=context.usage.snapshot(),
            tool_calls=steps,
            latency_ms=(time.monotonic() - started) * 1000,
            **fields,
        )

    async def _step(
        self,
        key: str,
        name: str,
        task: str,
        input: AgentInput,
        context: AgentContext,
        steps: list[ToolCallRecord],
        progress: CrewProgress,
    ) -> str:
        """One member's answer: recorded before a pause, continued, or run now."""
        if key in progress.answers:  # it finished before the crew paused
            return progress.answers[key]
        began = time.monotonic()
        resume = progress.resumes.get(key)
        try:
            if resume is not None:
                hold, actions = resume
                result = await run_agent(
                    self._registry,
                    hold.agent,
                    hold.task,
                    input,
                    context,
                    content=[],
                    history=hold.messages(input.session_id or "local"),
                    actions=actions,
                )
                ids = {a.tool_call_id for a in actions if a.tool_call_id}
                progress.child_calls += answered_calls(result, ids)
            else:
                result = await run_agent(self._registry, name, task, input, context)
        except ChildHeld as held:
            raise CrewPaused([held.hold.linked(name, key)]) from None
        steps.append(
            ToolCallRecord(
                tool_name=name,
                args={"task": task},
                tool_call_id=key,
                result=result.text,
                latency_ms=(time.monotonic() - began) * 1000,
            )
        )
        progress.answers[key] = result.text
        return result.text

    async def _run(
        self,
        input: AgentInput,
        context: AgentContext,
        steps: list[ToolCallRecord],
        progress: CrewProgress,
    ) -> str:
        request = progress.request

        async def step(key: str, name: str, task: str, into: list[ToolCallRecord]) -> str:
            return await self._step(key, name, task, input, context, into, progress)

        if self.kind == "sequential":
            text = request
            for i, name in enumerate(self.agents):
                text = await step(f"crew-{i + 1}", name, text, steps)
            return text
        if self.kind == "parallel":
            records: list[list[ToolCallRecord]] = [[] for _ in self.agents]

            async def settle(i: int, name: str) -> str | CrewPaused:
                try:
                    return await step(f"crew-{i + 1}", name, request, records[i])
                except CrewPaused as paused:  # the others go on: all pauses are asked at once
                    return paused

            try:
                async with asyncio.TaskGroup() as group:
                    tasks = [
                        group.create_task(settle(i, name)) for i, name in enumerate(self.agents)
                    ]
            except ExceptionGroup as group_error:  # one failed: the others were cancelled
                first = group_error.exceptions[0]
                if isinstance(first, RiverbeamError):
                    raise first from None
                raise
            for record in records:
                steps.extend(record)
            answers = [task.result() for task in tasks]
            paused = [a for a in answers if isinstance(a, CrewPaused)]
            if paused:
                raise CrewPaused([hold for p in paused for hold in p.holds])
            merged = "\n\n".join(
                f"## {name}\n{answer}" for name, answer in zip(self.agents, answers, strict=True)
            )
            if self.join is None:
                return merged
            task = f"Request: {request}\n\nAnswers:\n\n{merged}"
            return await step(f"crew-{len(self.agents) + 1}", self.join, task, steps)
        assert self.router is not None
        choice = await step("crew-1", self.router, request, steps)
        chosen = _pick(choice, self.routes) or self.fallback
        if chosen is None:
            raise RiverbeamError(
                ErrorCode.CONFIG_UNKNOWN_NAME,
                f"the router {self.router} answered {choice[:80]!r}, which names none of "
                f"{sorted(self.routes)}, and the crew has no fallback",
                crew=self.name,
            )
        return await step("crew-2", chosen, request, steps)


class CrewPaused(Exception):
    """Members of a crew paused for approval (the crew's run pauses with them)."""

    def __init__(self, holds: list[ChildHold]) -> None:
        super().__init__(", ".join(hold.agent for hold in holds))
        self.holds = holds


@dataclass(slots=True)
class CrewProgress:
    """Where a crew's run is: its request, the steps' answers, the paused steps to continue.

    A crew that paused stores its request and the answers of the steps that had finished
    in each hold's state; its resume takes those answers instead of running the steps
    again, continues each paused step with its answered actions, and runs the rest.
    """

    request: str
    answers: dict[str, str] = field(default_factory=dict)
    resumes: dict[str, tuple[ChildHold, list[ResumedAction]]] = field(default_factory=dict)
    # The answered actions' calls as the members ran them (metadata.agent_layer.child_calls).
    child_calls: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, crew: str, input: AgentInput, context: AgentContext) -> CrewProgress:
        if not input.actions:
            return cls(input.text)
        groups = group_child_actions(input.actions, context.history)
        if not groups or sum(len(g) for _, g in groups.values()) != len(input.actions):
            raise RiverbeamError(
                ErrorCode.CHILD_RESUME_INVALID,
                f"crew {crew} has no paused member these actions belong to",
                crew=crew,
                actions=[a.action_id for a in input.actions],
            )
        progress = cls("")
        for hold, actions in groups.values():
            state = hold.state or {}
            progress.request = str(state.get("request", progress.request))
            answers = state.get("answers")
            if isinstance(answers, dict):
                progress.answers.update({str(k): str(v) for k, v in answers.items()})
            progress.resumes[hold.parent_tool_call_id] = (hold, actions)
        for key in progress.resumes:
            progress.answers.pop(key, None)
        return progress

    def as_state(self) -> dict[str, Any]:
        return {"request": self.request, "answers": dict(self.answers)}


def _pick(answer: str, routes: Mapping[str, str]) -> str | None:
    """The agent of the route key that appears first in the answer (whole word, any case)."""
    best: tuple[int, str] | None = None
    for key, agent in routes.items():
        match = re.search(rf"\b{re.escape(key)}\b", answer, re.IGNORECASE)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), agent)
    return best[1] if best else None
