"""run_agent: one registered agent run inside another agent's run, as a child run.

The called agent gets the caller's session, model, memory and auth context, a usage meter of
its own (added to the caller's when it ends, so the caller's run counts every token), and,
when the caller runs in the pipeline, a run record of its own linked to the caller's run
with its frames on the caller's stream (see _child_runs.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from riverbeam.agents._agent import Agent
from riverbeam.agents._child_hold import ChildHeld, ChildHold, child_history
from riverbeam.agents._child_runs import ChildRunHost, ChildStatus
from riverbeam.agents._completion import closing_events
from riverbeam.agents._io import AgentContext, AgentInput, ResumedAction, UsageMeter
from riverbeam.agents._registry import AgentRegistry
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.types import AgentResult, ContentPart, Message

__all__ = ["DEPTH_KEY", "MAX_AGENT_DEPTH", "run_agent"]

log = logging.getLogger("riverbeam.agents.composition")

MAX_AGENT_DEPTH = 3
"""How deep agents may call agents (a guard against an agent calling itself forever)."""

DEPTH_KEY = "riverbeam_agent_depth"


async def run_agent(
    registry: AgentRegistry,
    name: str,
    task: str,
    parent: AgentInput,
    context: AgentContext,
    *,
    content: Sequence[ContentPart] | None = None,
    history: Sequence[Message] | None = None,
    actions: Sequence[ResumedAction] = (),
) -> AgentResult:
    """Run a registered agent on `task` (or on `content`) inside the parent's run.

    Args:
        registry: Where the agent is looked up.
        name: The agent.
        task: Its user turn (as text).
        parent: The calling run's input (session, interaction, request, auth).
        context: The calling run's context (model, memory, usage, child-run host).
        content: The user turn as content parts instead of `task` (a handoff passes the
            user's own turn).
        history: The conversation the agent sees (a handoff passes the session's); none
            by default: a called agent sees only its task.
        actions: The answered actions a paused child is continued with (its history is
            then the ChildHold's, and content empty; see _child_hold.py).

    Raises:
        RiverbeamError: BEM-020 (not registered), BEM-087 (it failed; its code in the
            details), BEM-086, BEM-234 (nested deeper than MAX_AGENT_DEPTH), BEM-035/121
            (the caller lost its run).
        ChildHeld: it stopped for a person's approval; its run is recorded `interrupted`
            and the hold says what continuing it needs.
    """
    agent = registry.get(name)
    depth = int(parent.metadata.get(DEPTH_KEY, 0)) + 1
    if depth > MAX_AGENT_DEPTH:
        raise RiverbeamError(
            ErrorCode.AGENT_TOOL_UNSUPPORTED,
            f"agents call agents {depth} deep (at most {MAX_AGENT_DEPTH})",
            agent=name,
        )
    host = context.child_runs
    run_id = new_id()
    child_input = AgentInput(
        content=list(content) if content is not None else [ContentPart.of_text(task)],
        session_id=parent.session_id,
        run_id=run_id,
        agent_name=name,
        interaction_id=parent.interaction_id,
        request_id=parent.request_id,
        metadata={**parent.metadata, DEPTH_KEY: depth},
        auth_context=parent.auth_context,
        actions=list(actions),
    )
    usage = UsageMeter()
    child_context = AgentContext(
        history=list(history or ()),
        model_config_resolved=context.model_config_resolved,
        metadata=dict(context.metadata),
        memory_writer=context.memory_writer,
        memory_scopes=list(context.memory_scopes),
        usage=usage,
        agent_layer=context.agent_layer,
        child_runs=host.nested(run_id) if host is not None else None,
    )
    if host is not None:
        await host.begin(run_id=run_id, agent_name=name, agent_version=agent.metadata().version)
    try:
        result = await _drive(agent, name, child_input, child_context, host)
    except asyncio.CancelledError:
        if host is not None:
            await _finish_shielded(host, run_id, "cancelled", usage, None)
        raise
    except RiverbeamError as err:
        if host is not None:
            await _finish_shielded(host, run_id, "failed", usage, err)
        raise
    finally:
        context.usage.add(usage.snapshot())
    if result.interrupted:
        if host is not None:
            await host.finish(
                run_id=run_id, status="interrupted", usage=usage.snapshot(), result=result
            )
        raise ChildHeld(
            ChildHold(
                agent=name,
                run_id=run_id,
                task=task,
                actions=tuple(result.action_required),
                history=child_history(history or (), task, result),
            )
        )
    if host is not None:
        await host.finish(run_id=run_id, status="completed", usage=usage.snapshot(), result=result)
    return result


async def _drive(
    agent: Agent,
    name: str,
    child_input: AgentInput,
    child_context: AgentContext,
    host: ChildRunHost | None,
) -> AgentResult:
    result: AgentResult | None = None
    async with closing_events(agent.stream(child_input, child_context)) as frames:
        async for frame in frames:
            if frame.type == "error":
                raise RiverbeamError(
                    ErrorCode.AGENT_ERROR_FRAME,
                    f"agent {name} failed: {frame.error or 'error'}",
                    agent=name,
                    agent_error_code=frame.error_code,
                )
            if frame.type == "done":
                result = frame.result
                break
            if host is not None:
                await host.publish(
                    frame.model_copy(update={"run_id": child_input.run_id, "agent_name": name})
                )
    if result is None:
        raise RiverbeamError(
            ErrorCode.STREAM_WITHOUT_DONE, f"agent {name} ended without an answer", agent=name
        )
    return result


async def _finish_shielded(
    host: ChildRunHost,
    run_id: str,
    status: ChildStatus,
    usage: UsageMeter,
    error: RiverbeamError | None,
) -> None:
    """Record the child's end even while the caller is being cancelled; never raise over
    the error that ended it."""
    step = asyncio.ensure_future(
        host.finish(run_id=run_id, status=status, usage=usage.snapshot(), error=error)
    )
    try:
        await asyncio.shield(step)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await step
        raise
    except RiverbeamError as err:
        log.warning("child run %s not recorded as %s: %s", run_id, status, err)
