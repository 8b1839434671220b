"""What a finishing run records: its tool and ai messages, and the actions it waits on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from riverbeam.runtime._frames import OpenToolCall
from riverbeam.store import NewAction, NewMessage
from riverbeam.store._types import child_link
from riverbeam.types import AgentResult, ContentPart, InvokeRequest, Session, ToolCallRecord

__all__ = [
    "agent_options",
    "called_agents_calls",
    "finish_messages",
    "partial_result",
    "pending_actions",
    "tool_failure",
]


def finish_messages(
    result: AgentResult,
    *,
    unanswered: Iterable[OpenToolCall] = (),
    error: dict[str, Any] | None = None,
) -> list[NewMessage]:
    """The messages a run saves as it finishes, in this order.

    One tool_result message per answered call; one per call left unanswered (a cancelled
    run's open calls) with the result `{"cancelled": true}`; then the ai message, when there
    is content, an action to wait on, or an `error` ({code, message}) to record.
    """
    messages: list[NewMessage] = _summary_messages(result)
    messages += [
        NewMessage(
            role="tool",
            type="tool_result",
            tool_name=call.tool_name,
            tool_args=dict(call.args),
            tool_call_id=call.tool_call_id,
            tool_result=call.result,
            metadata=(
                {"decisions": [d.to_json_dict() for d in call.decisions]}
                if call.decisions
                else None
            ),
        )
        for call in result.tool_calls
    ]
    messages.extend(
        NewMessage(
            role="tool",
            type="tool_result",
            tool_name=call.tool_name,
            tool_args=call.args,
            tool_call_id=call.tool_call_id,
            tool_result={"cancelled": True},
        )
        for call in unanswered
    )
    ai_meta: dict[str, Any] = {}
    if result.action_required:
        # The previews stay with the actions (and the run's result), not in the message.
        ai_meta["action_required"] = [
            {k: v for k, v in a.to_json_dict().items() if k != "preview"}
            for a in result.action_required
        ]
    if error is not None:
        ai_meta["error"] = error
    if result.content or ai_meta:
        messages.append(
            NewMessage(
                role="ai",
                type="message",
                content=list(result.content),
                metadata=ai_meta or None,
            )
        )
    return messages


def _summary_messages(result: AgentResult) -> list[NewMessage]:
    """The compaction summary the run made (agent_layer.summary), as its own message type."""
    layer = (result.metadata or {}).get("agent_layer")
    summary = layer.get("summary") if isinstance(layer, dict) else None
    if not isinstance(summary, dict) or not isinstance(summary.get("text"), str):
        return []
    return [
        NewMessage(
            role="system",
            type="summary",
            content=[ContentPart.of_text(summary["text"])],
            metadata={"covers_until_seq": summary.get("covers_until_seq")},
        )
    ]


def pending_actions(result: AgentResult) -> list[NewAction]:
    """The actions an interrupted run waits on."""
    return [
        NewAction(
            action_id=a.action_id,
            kind=a.kind,
            tool=a.tool,
            args=dict(a.args),
            tool_call_id=a.tool_call_id,
            preview=a.preview,
            child=child_link(a.child),
        )
        for a in result.action_required
    ]


def called_agents_calls(result: AgentResult) -> list[ToolCallRecord]:
    """The answered actions' calls that called agents ran (metadata.agent_layer.child_calls)."""
    layer = (result.metadata or {}).get("agent_layer")
    entries = layer.get("child_calls") if isinstance(layer, dict) else None
    if not isinstance(entries, list):
        return []
    return [
        ToolCallRecord(
            tool_name=str(e.get("tool_name") or "tool"),
            tool_call_id=e["tool_call_id"],
            result=e.get("result"),
        )
        for e in entries
        if isinstance(e, dict) and isinstance(e.get("tool_call_id"), str)
    ]


def tool_failure(result: Any) -> str | None:
    """ "<code>: <message>" when a tool result is the error a failed call shows the model."""
    if not isinstance(result, dict) or set(result) != {"error"}:
        return None
    body = result["error"]
    if not isinstance(body, dict) or not isinstance(body.get("code"), str):
        return None
    return f"{body['code']}: {body.get('message', '')}"


def agent_options(request: InvokeRequest, session: Session) -> dict[str, Any]:
    """The AgentInput fields of the agent layer's per-request options.

    The session configuration is the session record's (`Session.config`), as the begin-run
    step left it: a request's session_config was stored by that step.
    """
    return {
        "response_schema": request.response_schema,
        "time_limit_s": request.time_limit_s,
        "token_budget": request.token_budget,
        "turn_config": request.turn_config,
        "session_config": session.config,
    }


def partial_result(recorded: AgentResult, left: AgentResult) -> AgentResult:
    """The failed run's record, with what the agent says it left (its error frame's result).

    The agent knows better than the frames which text and calls stand (a blocked answer was
    never streamed) and carries its decisions in metadata; the error stays the pipeline's.
    """
    metadata = {**(left.metadata or {}), **(recorded.metadata or {})}
    return recorded.model_copy(
        update={
            "content": list(left.content),
            "tool_calls": list(left.tool_calls) or list(recorded.tool_calls),
            "metadata": metadata,
        }
    )
