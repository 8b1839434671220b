"""The client's FinishRun request builds each record in its field (to_proto_in) and copies the
result's usage instead of converting it twice: the message is the one the records' own
to_proto messages make, byte for byte."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from riverbeam.store import NewAction, NewMessage, _checks
from riverbeam.store._finish_reply import finish_request
from riverbeam.types import AgentResult, ContentPart, TokenUsage, ToolExecution
from riverbeam.v1 import store_service_pb2 as pb

_SESSION, _RUN, _INTERACTION = (str(uuid.uuid4()) for _ in range(3))


def _reference(**step: Any) -> pb.FinishRunRequest:
    """The request as built before: every record converted apart and given to the constructor."""
    result, usage = step.get("result"), step.get("token_usage")
    return pb.FinishRunRequest(
        run_id=step["run_id"],
        lease_owner=step["lease_owner"],
        status=f"RUN_STATUS_{step['status'].upper()}",
        messages=[m.to_proto() for m in step.get("messages", ())],
        pending_actions=[a.to_proto() for a in step.get("pending_actions", ())],
        interaction_status="INTERACTION_STATUS_"
        + _checks.interaction_after(_checks.finish_status(step["status"]), None).upper(),
        error_code=step.get("error_code"),
        error_message=step.get("error_message"),
        token_usage=None if usage is None else usage.to_proto(),
        model_used=step.get("model_used"),
        result=None if result is None else result.to_proto(),
        lease_epoch=step.get("lease_epoch"),
        action_ttl_s=step.get("action_ttl_s"),
        tool_executions=[e.to_proto() for e in step.get("tool_executions", ())],
        brief=True,
    )


def _result(usage: TokenUsage | None) -> AgentResult:
    return AgentResult(
        content=[ContentPart.of_text("Echo: hi")],
        agent_name="assistant",
        model_used="echo",
        session_id=_SESSION,
        run_id=_RUN,
        interaction_id=_INTERACTION,
        request_id=str(uuid.uuid4()),
        token_usage=usage,
        latency_ms=0.25,
    )


def _ai(result: AgentResult) -> NewMessage:
    return NewMessage(role="ai", type="message", content=list(result.content))


def _steps() -> list[dict[str, Any]]:
    empty = _result(TokenUsage())
    spent = _result(TokenUsage(prompt_tokens=3, completion_tokens=4, total_tokens=7))
    unmetered = _result(None)
    action = NewAction(action_id=str(uuid.uuid4()), tool="delete", args={"path": "/tmp/x"})
    execution = ToolExecution(
        execution_id=str(uuid.uuid4()),
        run_id=_RUN,
        interaction_id=_INTERACTION,
        session_id=_SESSION,
        seq=1,
        tool="read",
        args={"path": "a"},
        requested_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    base = {"run_id": _RUN, "lease_owner": "runner-1", "lease_epoch": 1}
    done = {**base, "status": "completed"}
    return [
        # The runner's usual finish: the result's own (empty) usage.
        {
            **done,
            "messages": [_ai(empty)],
            "result": empty,
            "token_usage": empty.token_usage,
            "model_used": "echo",
        },
        {**done, "messages": [_ai(spent)], "result": spent, "token_usage": spent.token_usage},
        # A usage that is not the result's (an equal one, and another one).
        {
            **done,
            "result": spent,
            "token_usage": TokenUsage(prompt_tokens=3, completion_tokens=4, total_tokens=7),
        },
        {**done, "result": empty, "token_usage": TokenUsage(total_tokens=9)},
        {**done, "result": unmetered, "token_usage": None},
        {**done, "token_usage": TokenUsage(total_tokens=2)},
        {**done},
        {
            **base,
            "status": "interrupted",
            "pending_actions": [action],
            "result": spent,
            "token_usage": spent.token_usage,
            "action_ttl_s": 30.0,
            "tool_executions": [execution],
        },
        {
            **base,
            "status": "failed",
            "error_code": "BEM-500",
            "error_message": "boom",
            "messages": [_ai(spent), _ai(empty)],
            "result": spent,
            "token_usage": spent.token_usage,
        },
    ]


@pytest.mark.parametrize("step", _steps())
def test_the_request_is_the_records_own_messages(step: dict[str, Any]) -> None:
    expected = _reference(**step)
    built = finish_request(**step)
    assert built == expected
    assert built.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )
    assert built.HasField("token_usage") is expected.HasField("token_usage")
    assert built.HasField("result") is expected.HasField("result")
