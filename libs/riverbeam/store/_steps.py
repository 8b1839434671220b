"""What the pipeline steps write, decided once for every store implementation."""

from __future__ import annotations

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store._types import NewMessage
from riverbeam.types import (
    Action,
    ActionOutcome,
    ActionResponseEnvelope,
    ActionStatus,
    ContentPart,
    Interaction,
)

__all__ = [
    "LOST_RUN_CODE",
    "LOST_RUN_MESSAGE",
    "action_result_message",
    "check_resume_agent",
    "resolution",
]

LOST_RUN_CODE = ErrorCode.RUN_LOST.code
LOST_RUN_MESSAGE = ErrorCode.RUN_LOST.spec.title


def check_resume_agent(interaction: Interaction, agent_name: str) -> None:
    """A resume runs the interaction's own agent: another one is refused (BEM-069).

    Checked inside the begin-run step, before any action is resolved, so a refused resume
    changes nothing: the actions stay pending and a correct resume still works.
    """
    if interaction.agent_name != agent_name:
        raise RiverbeamError(
            ErrorCode.RESUME_AGENT_MISMATCH,
            "a resume must name the interaction's agent (or leave agent_name out)",
            interaction_id=interaction.interaction_id,
            agent_name=interaction.agent_name,
        )


def resolution(response: ActionResponseEnvelope) -> tuple[ActionStatus, ActionOutcome]:
    """A submitted response approves the action; any other status declines it (nothing runs)."""
    if response.status == "submitted":
        return "resolved", "approved_unknown"
    return "cancelled", "declined"


def action_result_message(action: Action, response: ActionResponseEnvelope) -> NewMessage:
    """The tool message that records the answer to a pending action in the conversation."""
    status, outcome = resolution(response)
    text = "approved" if status == "resolved" else f"declined ({response.status})"
    return NewMessage(
        role="tool",
        type="action_result",
        content=[ContentPart.of_text(text)],
        tool_name=action.tool,
        tool_args=dict(action.args),
        tool_call_id=action.tool_call_id,
        metadata={"action_id": action.action_id, "status": response.status, "outcome": outcome},
    )
