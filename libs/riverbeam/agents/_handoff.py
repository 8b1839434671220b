"""Handoff: an agent transfers the conversation to another agent for the rest of the interaction.

    billing = HandoffTool(registry, "billing")       # offered to the model as transfer_to_billing
    RigAgentRunner.new("triage", client, [billing], "assistant")

or in riverbeam.yaml: `handoffs: [billing]` on the agent. When the model calls the tool, the
agent's run stops after that tool round and the target answers the user's turn in its place,
as a child run (its own record, its frames on the stream marked with its agent) that sees the
session's conversation. The run's result names the target (AgentResult.handoff_to, and
metadata.handoff), and the pipeline sends every later turn of the interaction to the target
(runtime/_handoff.py). A handoff from inside a child run, to the agent itself, or to an agent
that is not registered is refused (BEM-236).

When the target stops for a person's approval in the handed turn, the run that handed off
ends `interrupted` with the target's held calls as its pending actions (tool, args,
tool_call_id and preview as the target stated them, and no child link: they are the
target's own calls, not a called agent's), its child run recorded `interrupted`. The
interaction is already the target's (record_handoff), so the person's answer is an ordinary
resume of the target: the begin-run step resolves the actions once (BEM-066 for a second
answer) and checks the resume against the target (BEM-069), and the resumed target runs
each approved stored call once, or is told it was declined, and goes on.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from riverbeam.agents._child_hold import ChildHeld, ChildHold
from riverbeam.agents._io import AgentContext, AgentInput
from riverbeam.agents._registry import AgentRegistry
from riverbeam.agents._run_child import DEPTH_KEY, run_agent
from riverbeam.agents._tool import TOOL_NAME_PATTERN, ToolCallContext, ToolSpec, json_params
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ContentPart, StreamChunk, ToolCallRecord

if TYPE_CHECKING:
    from riverbeam.agents._run import RigRun

__all__ = ["HANDOFF_PREFIX", "HandoffRequest", "HandoffTool", "hand_off"]

HANDOFF_PREFIX = "transfer_to_"


@dataclass(frozen=True, slots=True)
class HandoffRequest:
    """A handoff the model asked for in this run (AgentContext.handoff)."""

    source: str
    target: str
    reason: str
    registry: AgentRegistry

    def as_json(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target, "reason": self.reason}


class HandoffTool:
    """`transfer_to_<agent>`: hands the conversation to another registered agent.

    Args:
        registry: Where the target is looked up (at each call; BEM-236 when it is gone).
        agent: The target agent's name.
        name: The tool's name (default transfer_to_<agent>, made a valid tool name).
        description: What the model is told (default: the target's description).
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
        default = HANDOFF_PREFIX + "".join(
            c if TOOL_NAME_PATTERN.fullmatch(c) else "_" for c in agent
        )
        self._name = name or default[:64]
        self._description = description

    def spec(self) -> ToolSpec:
        description = self._description
        if description is None:
            with contextlib.suppress(RiverbeamError):
                description = self._registry.get_metadata(self.agent).description
        return ToolSpec(
            name=self._name,
            description=f"Hand the conversation to the {self.agent} agent "
            f"({description or 'another agent'}); it answers the user from now on. "
            "Call it alone, as your last step.",
            parameters=json_params({"reason": {"type": "string"}}, []),
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        return await self.invoke_in_context(
            args, ToolCallContext(input, AgentContext(), input.agent_name)
        )

    async def invoke_in_context(self, args: dict[str, Any], call: ToolCallContext) -> Any:
        """Record the handoff for the run to carry out after this tool round.

        Raises:
            RiverbeamError: BEM-236 (target unknown or the agent itself, or a child run).
        """
        source = call.agent_name
        if self.agent == source or self.agent not in self._registry:
            raise RiverbeamError(
                ErrorCode.HANDOFF_INVALID,
                f"{source} cannot hand off to {self.agent!r}: "
                + ("it is the agent itself" if self.agent == source else "no such agent"),
                agent=self.agent,
            )
        if int(call.input.metadata.get(DEPTH_KEY, 0)) > 0:
            raise RiverbeamError(
                ErrorCode.HANDOFF_INVALID,
                f"{source} runs for another agent and cannot hand the conversation off",
                agent=self.agent,
            )
        reason = str(args.get("reason") or "")
        call.context.handoff = HandoffRequest(source, self.agent, reason, self._registry)
        return {"transferred_to": self.agent, "message": f"{self.agent} answers from here on."}


async def hand_off(run: RigRun, request: HandoffRequest) -> AsyncIterator[StreamChunk]:
    """The target answers the user's turn as a child run; the run's chunk and done frames.

    The done frame's result is the target's answer, with the run's own tool calls (the
    transfer call among them), handoff_to and metadata.handoff. In the pipeline the
    interaction record is given to the target first (its agent and version pin).
    """
    host = run.context.child_runs
    if host is not None:
        target = request.registry.get_metadata(request.target)
        await host.hand_off(agent_name=request.target, agent_version=target.version)
    try:
        result = await run_agent(
            request.registry,
            request.target,
            run.input.text,
            run.input,
            run.context,
            content=run.input.content,
            history=run.context.history,
        )
    except ChildHeld as paused:
        # The target waits for a person: the interaction pauses with the target's own calls.
        async for frame in _held(run, request, paused.hold):
            yield frame
        return
    text = result.text
    if text:
        run.streamed.append(text)
        yield run.factory.chunk(text)
    done = run._result(text, output=result.output)
    metadata = dict(done.metadata or {})
    metadata["handoff"] = {**request.as_json(), "run_id": result.run_id}
    metered = run.context.usage.snapshot()
    usage = done.token_usage
    if usage is None or metered.total_tokens > usage.total_tokens:
        usage = metered
    yield run.factory.done(
        done.model_copy(
            update={
                "handoff_to": request.target,
                "metadata": metadata,
                "token_usage": usage,
                "model_used": done.model_used or result.model_used,
            }
        )
    )


def _target_calls(hold: ChildHold, prior: int) -> list[ToolCallRecord]:
    """The calls the target answered in the handed turn before it paused (from its
    conversation, after the `prior` entries it was given), so the stored conversation it
    resumes from has them."""
    return [
        ToolCallRecord(
            tool_name=entry["tool_name"],
            args=entry.get("tool_args") or {},
            tool_call_id=entry.get("tool_call_id"),
            result=entry.get("tool_result"),
        )
        for entry in hold.history[max(prior, 1) :]
        if entry.get("type") == "tool_result" and entry.get("tool_name")
    ]


def _held_text(hold: ChildHold) -> str:
    """The target's reply as it paused (the last entry of its conversation)."""
    reply = hold.history[-1] if hold.history else {}
    parts = reply.get("content") if isinstance(reply, dict) else None
    texts = [
        part.text
        for part in (ContentPart.model_validate(p) for p in parts or ())
        if part.type == "text" and part.text
    ]
    return "".join(texts)


async def _held(
    run: RigRun, request: HandoffRequest, hold: ChildHold
) -> AsyncIterator[StreamChunk]:
    """The run's chunk and done frames when the target paused for approval in the handed turn.

    The actions are the target's held calls as it stated them (no child link), so their
    resume is the target's own (the interaction is the target's after record_handoff). The
    result's tool calls are the run's (the transfer among them), then the target's answered
    ones of this turn: the finish step stores them in the conversation the target resumes
    from.
    """
    names = ", ".join(action.tool for action in hold.actions)
    text = _held_text(hold) or f"Waiting for approval to run: {names}."
    run.streamed.append(text)
    yield run.factory.chunk(text)
    done = run._result(text)
    metadata = dict(done.metadata or {})
    metadata["handoff"] = {**request.as_json(), "run_id": hold.run_id, "held": True}
    metered = run.context.usage.snapshot()
    usage = done.token_usage
    if usage is None or metered.total_tokens > usage.total_tokens:
        usage = metered
    yield run.factory.done(
        done.model_copy(
            update={
                "handoff_to": request.target,
                "metadata": metadata,
                "token_usage": usage,
                "tool_calls": [*done.tool_calls, *_target_calls(hold, len(run.context.history))],
                "interrupted": True,
                "action_required": list(hold.actions),
            }
        )
    )
