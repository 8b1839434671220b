"""Answers to pending actions: the ActionResponseEnvelope of an approval or a refusal."""

from __future__ import annotations

from riverbeam.core.ids import new_id
from riverbeam.types import Action, ActionResponseEnvelope, ActionResponseStatus, JsonObject

__all__ = ["action_response"]


def action_response(
    action: Action,
    *,
    status: ActionResponseStatus = "submitted",
    responder_id: str | None = None,
    reason: str | None = None,
) -> ActionResponseEnvelope:
    """The envelope that answers one pending action.

    A `submitted` answer approves the call; any other status (`cancelled` for a refusal) runs
    nothing. The payload names the stored tool and arguments for readers of the record; the
    runner always runs the ones stored with the action, never the payload's.

    Args:
        action: The pending action, as `list_pending_actions` or `get_action` returns it.
        status: `submitted` to approve, `cancelled` to decline.
        responder_id: Who answered, recorded with the response.
        reason: Why, recorded in the payload.
    """
    approved = status == "submitted"
    payload: JsonObject = {"approved": approved}
    if approved:
        payload["tool"] = action.tool
        payload["args"] = dict(action.args)
    if reason:
        payload["reason"] = reason
    return ActionResponseEnvelope(
        action_id=action.action_id,
        kind=action.kind,
        request_id=new_id(),
        status=status,
        payload=payload,
        responder_id=responder_id,
    )
