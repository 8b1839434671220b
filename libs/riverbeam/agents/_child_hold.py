"""An approval inside a called agent: the caller's run pauses with the child's held calls.

When a called agent (an AgentTool's child run, a crew step) ends interrupted, run_agent
records the child run `interrupted` and raises ChildHeld. The calling run treats its own call
of that agent as held: it ends `interrupted` too, and its action_required entries are the
child's held calls (tool, args, tool_call_id and preview as the child stated them), each with
`child` set to the ChildHold: which call of the caller it belongs to (parent_tool,
parent_tool_call_id), the child's agent and interrupted run (run_id), its task, and its
conversation so far (history, the records the child would have stored as a top-level run).
The pipeline writes that in the caller's finish step, in the reply's metadata.action_required
(the same transaction that stores the actions), so nothing is half-written.

On resume the pipeline resolves the answered actions exactly once (the begin-run step's
compare-and-set); the resumed caller finds each action's ChildHold in its history (by
action_id) and continues the child with the answered actions (ChildHold.resume_input): a new
child run, linked to the resumed run, that runs the approved calls once and finishes its
answer, which becomes the result of the caller's original call. Holds nest: a grandchild's
hold sits in the child's history and is continued the same way.

A handoff target is not a call of the run that handed off: its hold in the handed turn is not
linked as a child action, its held calls become that run's actions as they are (no `child`),
and the target, whose interaction it now is, resumes them as its own (agents/_handoff.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from riverbeam.agents._completion import PendingToolCall
from riverbeam.agents._io import ResumedAction
from riverbeam.core.ids import new_id
from riverbeam.types import ActionPreview, ActionRequired, AgentResult, ContentPart, Message

__all__ = [
    "ChildHeld",
    "ChildHold",
    "child_history",
    "child_holds_of",
    "group_child_actions",
    "held_actions",
]


@dataclasses.dataclass(frozen=True, slots=True)
class ChildHold:
    """A called agent's pause for approval, and what continuing it needs.

    Attributes:
        agent: The called agent.
        run_id: Its interrupted child run.
        task: Its user turn.
        actions: Its held calls.
        history: Its conversation so far (Message fields as JSON, in order).
        parent_tool: The caller's tool that called it (ask_<agent>, or the crew step's agent).
        parent_tool_call_id: The caller's call of that tool.
        state: What the caller needs besides the child to go on (a crew: its request and
            the answers of the steps that had finished); None for an agent's tool call.
    """

    agent: str
    run_id: str
    task: str
    actions: tuple[ActionRequired, ...]
    history: tuple[dict[str, Any], ...]
    parent_tool: str = ""
    parent_tool_call_id: str = ""
    state: dict[str, Any] | None = None

    def linked(
        self, tool: str, tool_call_id: str, state: dict[str, Any] | None = None
    ) -> ChildHold:
        """The hold, as the call `tool_call_id` of the caller's `tool`."""
        return dataclasses.replace(
            self, parent_tool=tool, parent_tool_call_id=tool_call_id, state=state
        )

    def as_json(self) -> dict[str, Any]:
        """What ActionRequired.child stores (the actions are the entries themselves)."""
        return {
            "agent": self.agent,
            "run_id": self.run_id,
            "task": self.task,
            "parent_tool": self.parent_tool,
            "parent_tool_call_id": self.parent_tool_call_id,
            "history": list(self.history),
        } | ({"state": self.state} if self.state is not None else {})

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChildHold | None:
        """The hold an ActionRequired.child holds; None when it is not one."""
        fields = ("agent", "run_id", "task", "parent_tool", "parent_tool_call_id")
        if not all(isinstance(data.get(f), str) for f in fields):
            return None
        history = data.get("history")
        if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
            return None
        state = data.get("state")
        return cls(
            state=state if isinstance(state, dict) else None,
            agent=data["agent"],
            run_id=data["run_id"],
            task=data["task"],
            actions=(),
            history=tuple(history),
            parent_tool=data["parent_tool"],
            parent_tool_call_id=data["parent_tool_call_id"],
        )

    def messages(self, session_id: str) -> list[Message]:
        """The child's conversation as Message records (what its run rebuilds on resume)."""
        now = datetime.now(UTC)
        return [
            Message.model_validate(
                {**entry, "message_id": new_id(), "session_id": session_id, "seq": i}
                | {"created_at": now}
            )
            for i, entry in enumerate(self.history)
        ]

    def parent_actions(self) -> list[ActionRequired]:
        """The child's held calls as the caller's actions, each carrying this hold."""
        link = self.as_json()
        return [action.model_copy(update={"child": link}) for action in self.actions]

    def parent_call(self) -> PendingToolCall:
        """The caller's call this hold answers."""
        return PendingToolCall(
            name=self.parent_tool, args={"task": self.task}, id=self.parent_tool_call_id
        )


class ChildHeld(Exception):
    """Raised by run_agent when the called agent ended interrupted (its run so recorded)."""

    def __init__(self, hold: ChildHold) -> None:
        super().__init__(f"agent {hold.agent} waits for approval")
        self.hold = hold


def _message(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def child_history(
    prior: Sequence[Message], task: str, result: AgentResult
) -> tuple[dict[str, Any], ...]:
    """The child's conversation after it paused: what it saw, its calls, its reply.

    The same records the pipeline stores for a top-level interrupted run: one tool_result per
    call it answered, then the reply with metadata.action_required (the held calls). A child
    that was itself resumed goes on after its prior history; a new one starts with its task.
    """
    out: list[dict[str, Any]] = [
        m.model_dump(mode="json", exclude={"message_id", "session_id", "seq", "created_at"})
        for m in prior
    ]
    if not prior:
        out.append(_message(role="human", content=[ContentPart.of_text(task).to_json_dict()]))
    for call in result.tool_calls:
        out.append(
            _message(
                role="tool",
                type="tool_result",
                tool_name=call.tool_name,
                tool_args=dict(call.args),
                tool_call_id=call.tool_call_id,
                tool_result=call.result,
            )
        )
    held = [
        {k: v for k, v in a.to_json_dict().items() if k != "preview"}
        for a in result.action_required
    ]
    out.append(
        _message(
            role="ai",
            content=[part.to_json_dict() for part in result.content],
            metadata={"action_required": held},
        )
    )
    return tuple(out)


def held_actions(
    held: Sequence[PendingToolCall], holds: dict[str, ChildHold]
) -> list[tuple[str, ActionRequired]]:
    """The actions a run pausing on `held` waits on, each with the call its ledger holds.

    A call of a called agent that paused (in `holds`) stands for the child's held calls, each
    carrying the hold; any other held call is one action of its own.
    """
    out: list[tuple[str, ActionRequired]] = []
    for call in held:
        hold = holds.get(call.id)
        if hold is not None:
            out.extend((call.id, action) for action in hold.parent_actions())
            continue
        action = ActionRequired(
            action_id=new_id(),
            kind="confirmation",
            tool=call.name,
            args=call.args,
            tool_call_id=call.id,
            preview=None if call.preview is None else ActionPreview.model_validate(call.preview),
        )
        out.append((call.id, action))
    return out


def child_holds_of(history: Iterable[Message]) -> dict[str, ChildHold]:
    """The holds of the called agents' actions in a run's history, by action_id."""
    found: dict[str, ChildHold] = {}
    for message in history:
        entries = (message.metadata or {}).get("action_required")
        if message.role != "ai" or not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("child"), dict):
                continue
            hold = ChildHold.from_json(entry["child"])
            if hold is not None and isinstance(entry.get("action_id"), str):
                found[entry["action_id"]] = hold
    return found


def group_child_actions(
    actions: Sequence[ResumedAction], history: Iterable[Message]
) -> dict[str, tuple[ChildHold, list[ResumedAction]]]:
    """The resumed actions that belong to called agents, by the caller's call they answer.

    Keyed by the action_id of each group's first action (so the caller handles a group where
    its first action comes); the tool, args and tool_call_id that run stay the stored action's.
    """
    holds = child_holds_of(history)
    groups: dict[str, tuple[ChildHold, list[ResumedAction]]] = {}
    first: dict[str, str] = {}
    for action in actions:
        hold = holds.get(action.action_id)
        if hold is None:
            continue
        key = first.setdefault(hold.parent_tool_call_id, action.action_id)
        groups.setdefault(key, (hold, []))[1].append(action)
    return groups
