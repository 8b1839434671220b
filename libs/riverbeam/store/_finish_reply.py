"""A finish step's request (finish_request) and its reply without what its caller sent
(FinishRunRequest.brief).

The runner sends the run's result and token usage in FinishRun and then has no use for them
coming back inside the finished run: building, serialising and reading them again costs both
processes. For a `brief` request whose finished run holds exactly the result and usage the
request carried (the usual case; a retry answered with what an earlier attempt stored, or a
value the store changed, e.g. a NUL scrubbed, does not qualify) the store service leaves the
two out and says so with `as_sent`; the client puts back copies of its own. Anything else gets
the whole run, so a request without `brief` (an older client) is answered as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from riverbeam.store import _checks
from riverbeam.store._types import FinishStatus, NewAction, NewMessage
from riverbeam.types import (
    AgentResult,
    InteractionStatus,
    Run,
    TokenUsage,
    ToolExecution,
    deep_copy,
)
from riverbeam.types._copying import updated_copy
from riverbeam.v1 import store_service_pb2 as pb

__all__ = ["finish_request", "finish_response", "finished_run", "sent_result"]


def finish_request(
    *,
    run_id: str,
    lease_owner: str,
    status: FinishStatus,
    messages: Sequence[NewMessage] = (),
    pending_actions: Sequence[NewAction] = (),
    interaction_status: InteractionStatus | None = None,
    error_code: str | None = None,
    error_message: str | None = None,
    token_usage: TokenUsage | None = None,
    model_used: str | None = None,
    result: AgentResult | None = None,
    lease_epoch: int | None = None,
    action_ttl_s: float | None = None,
    tool_executions: Sequence[ToolExecution] = (),
) -> pb.FinishRunRequest:
    """The client's brief FinishRun request for BeamStore.finish_run's arguments.

    Each record is made in its field of the request (to_proto_in), not apart and then copied
    in: the same message, ~25k instructions less for a one-message finish (callgrind). The
    usage, when it is the result's own (the runner's finish), is copied from the result's
    message, not converted twice.
    """
    final = _checks.finish_status(status)
    after = _checks.interaction_after(final, interaction_status)
    request = pb.FinishRunRequest(
        run_id=run_id,
        lease_owner=lease_owner,
        status=f"RUN_STATUS_{final.upper()}",
        interaction_status=f"INTERACTION_STATUS_{after.upper()}",
        error_code=error_code,
        error_message=error_message,
        model_used=model_used,
        lease_epoch=_checks.lease_epoch(lease_epoch),
        action_ttl_s=action_ttl_s,
        brief=True,
    )
    for message in messages:
        message.to_proto_in(request.messages.add())
    for action in pending_actions:
        action.to_proto_in(request.pending_actions.add())
    if result is not None:
        result.to_proto_in(request.result)
    if token_usage is not None:
        if result is not None and result.token_usage is token_usage:
            request.token_usage.CopyFrom(request.result.token_usage)
        else:
            token_usage.to_proto_in(request.token_usage)
    for execution in tool_executions:
        execution.to_proto_in(request.tool_executions.add())
    return request


def sent_result(sent: object) -> Any | None:
    """The result message of a FinishRun request a finish step returned (StoreClient's
    finish_run_unread), or None: any other step's return value (a Run, None), or a request
    that carried no result. The message is the one finish_request made of the step's
    `result`: a reply of that same result can copy it instead of converting it again."""
    if type(sent) is pb.FinishRunRequest and sent.HasField("result"):
        return sent.result
    return None


def finish_response(
    run: Run, *, brief: bool, result: AgentResult | None, token_usage: TokenUsage | None
) -> pb.FinishRunResponse:
    """The service's reply: `run` whole, or for a brief request without what it sent.

    The run's message is made in the reply (to_proto_in), not apart and copied in. What the
    store kept of the request is usually the very object sent (records_lent): the same
    object is equal, unread.
    """
    resp = pb.FinishRunResponse()
    if (
        not brief
        or (run.result is not result and run.result != result)
        or (run.token_usage is not token_usage and run.token_usage != token_usage)
    ):
        run.to_proto_in(resp.run)
        return resp
    resp.as_sent = True
    if result is None and token_usage is None:
        run.to_proto_in(resp.run)
    else:
        updated_copy(run, {"result": None, "token_usage": None}).to_proto_in(resp.run)
    return resp


def finished_run(
    resp: pb.FinishRunResponse, *, result: AgentResult | None, token_usage: TokenUsage | None
) -> Run:
    """The client's finished run: as received, completed with copies of what it sent."""
    run = Run.from_proto(resp.run)
    if resp.as_sent:
        run.result = None if result is None else deep_copy(result)
        run.token_usage = None if token_usage is None else deep_copy(token_usage)
    return run
