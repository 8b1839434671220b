"""Resuming a run that paused inside a called agent: the child is continued, then the caller.

The resumed run's answered actions that belong to a called agent (their ChildHold is in the
run's history, see _child_hold.py) are not run by the caller: each group of them (the held
calls of one call of the caller's) goes to the tool that made that call, which continues its
child with them (ChildTool.resume_child: a new child run, linked to the resumed run, seeing
the child's conversation so far; it runs each approved call once with the stored arguments,
or tells its model a call was declined, and finishes). Its answer is the result of the
caller's original call, between that call's two frames, and the caller's loop goes on. A
child that pauses again pauses the caller again, with the child's new actions.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from riverbeam.agents._child_hold import ChildHeld, ChildHold
from riverbeam.agents._completion import PendingToolCall
from riverbeam.agents._io import ResumedAction
from riverbeam.agents._tool import ToolCallContext
from riverbeam.agents._toolcall import error_result
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentResult, ToolDecision

if TYPE_CHECKING:
    from riverbeam.agents._run import RigRun

__all__ = ["ChildTool", "answered_calls", "child_action", "paused_again_text", "resume_child"]


def answered_calls(child: AgentResult, ids: set[str]) -> list[dict[str, Any]]:
    """The answered actions' calls as the continued child (or its children) ran them.

    The caller's result keeps them in metadata.agent_layer.child_calls (tool_call_id,
    tool_name, result), so the pipeline records each approved call's outcome on its action.
    """
    out: list[dict[str, Any]] = [
        {"tool_call_id": c.tool_call_id, "tool_name": c.tool_name, "result": c.result}
        for c in child.tool_calls
        if c.tool_call_id in ids
    ]
    layer = (child.metadata or {}).get("agent_layer")
    nested = layer.get("child_calls") if isinstance(layer, dict) else None
    if isinstance(nested, list):
        out += [c for c in nested if isinstance(c, dict) and c.get("tool_call_id") in ids]
    return out


@runtime_checkable
class ChildTool(Protocol):
    """A tool whose call runs an agent as a child run, and can continue a paused one."""

    async def resume_child(
        self, hold: ChildHold, actions: Sequence[ResumedAction], call: ToolCallContext
    ) -> tuple[Any, AgentResult]:
        """Continue the paused child with the answered actions; the call's result, and the
        child's.

        Raises:
            ChildHeld: the child paused again.
            RiverbeamError: as the tool's own call does (BEM-087 when the child failed ...).
        """
        ...


def child_action(
    action: ResumedAction, children: dict[str, tuple[ChildHold, list[ResumedAction]]]
) -> bool:
    """Whether the action belongs to a called agent (is in one of the groups)."""
    return any(action in group for _, group in children.values())


def paused_again_text(reheld: Sequence[PendingToolCall], holds: dict[str, ChildHold]) -> str:
    """The reply of a resumed run that pauses again before going on."""
    names = ", ".join(call.name for call in reheld if call.id not in holds)
    agents = ", ".join(holds[call.id].agent for call in reheld if call.id in holds)
    parts: list[str] = []
    if names:
        parts.append(
            "The workspace changed since the preview, so nothing was done. Waiting for "
            f"approval of a fresh preview to run: {names}."
        )
    if agents:
        tools = ", ".join(
            a.tool for call in reheld if call.id in holds for a in holds[call.id].actions
        )
        parts.append(f"{agents} waits for approval to run: {tools}.")
    return " ".join(parts)


async def resume_child(
    run: RigRun,
    action: ResumedAction,
    children: dict[str, tuple[ChildHold, list[ResumedAction]]],
    answers: dict[str, Any],
    resumed: list[PendingToolCall],
    reheld: list[PendingToolCall],
) -> AsyncIterator[Any]:
    """Continue the child the group led by `action` belongs to (nothing for later members).

    The caller's original call is answered by the child's answer (its after-policies and
    tool-result guardrails apply); it is put in `reheld` when the child paused again.
    """
    entry = children.get(action.action_id)
    if entry is None:
        return
    hold, group = entry
    call = hold.parent_call()
    resumed.append(call)
    approved = any(a.approved for a in group)
    decisions = [ToolDecision(policy="person", action="approved" if approved else "declined")]
    yield run._call_frame(call, "")
    bound = run.tools.get(call.name)
    ledger_entry = run._ledger_request(call, bound)
    started = time.monotonic()
    fatal: RiverbeamError | None = None  # an after-policy or guardrail refused the result
    failed: RiverbeamError | None = None  # the child could not be continued, or failed
    try:
        if bound is None or not isinstance(bound.tool, ChildTool):
            raise RiverbeamError(
                ErrorCode.CHILD_RESUME_INVALID,
                f"the answered actions belong to agent {hold.agent}, called through "
                f"{call.name!r}, which this agent no longer has as an agent tool",
                tool=call.name,
                agent=hold.agent,
            )
        await run.ledger.start(ledger_entry)
        result, child = await run._within(
            bound.tool.resume_child(
                hold, group, ToolCallContext(run.input, run.context, run.agent_name, call.id)
            )
        )
        ids = {a.tool_call_id for a in group if a.tool_call_id}
        run.layer.setdefault("child_calls", []).extend(answered_calls(child, ids))
    except ChildHeld as paused:
        run.child_holds[call.id] = paused.hold.linked(call.name, call.id)
        reheld.append(call)
        return
    except RiverbeamError as err:
        run.ledger.finish(ledger_entry, "failed", error=err)
        result, failed = error_result(err), err
    else:
        run.ledger.finish(ledger_entry, "succeeded", result=result)
        try:
            result = await run._after(call, bound, result, decisions)
        except RiverbeamError as err:
            result, fatal = error_result(err), err
    yield run.factory.tool_result(tool_call_id=call.id, tool_name=call.name, tool_result=result)
    run._record(call, result, (time.monotonic() - started) * 1000, decisions)
    answers[call.id] = result
    if fatal is not None:
        raise fatal
    if failed is not None and run.fatal_tool_errors:
        raise failed
