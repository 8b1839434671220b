"""A caller's gRPC deadline reaches the runner: an abandoned run stops and is recorded cancelled."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from riverbeam.core.errors import RiverbeamError
from riverbeam.types import InvokePayload
from riverbeam.v1 import types_pb2
from tests.integration.router.router_kit import Stack, auth, collect, eventually, refused

pytestmark = pytest.mark.nats

SHORT_S = 0.5  # the caller's deadline; the agent waits on a gate that never opens


async def _runner_idle(stack: Stack) -> bool:
    return stack.beam.pipeline.live_requests == []


def slow_invoke(request_id: str) -> types_pb2.InvokeRequest:
    message: types_pb2.InvokeRequest = InvokePayload.parse(
        {
            "agent_name": "gated",
            "content": [{"type": "text", "text": "take your time"}],
            "session_id": str(uuid.uuid4()),
            "request_id": request_id,
        }
    ).to_proto()
    return message


async def test_a_deadline_ends_the_call_and_the_run_is_recorded_cancelled(stack: Stack) -> None:
    stack.gate.gate(1)  # never opened
    request_id = str(uuid.uuid4())

    error = await refused(
        stack.stub().Invoke(slow_invoke(request_id), metadata=auth("alice"), timeout=SHORT_S)
    )

    assert error.code is grpc.StatusCode.DEADLINE_EXCEEDED
    run = await stack.wait_run(request_id)
    assert (run.status, run.error_code) == ("cancelled", "BEM-033")
    assert run.result is not None and run.result.text == "part 0 "  # what it had said
    # The agent was stopped, not left running (its gate never opens, so a runner still
    # driving it would hold the request past the guard). The runner lets go of the request
    # only after the store answered its finish step, which the test may see recorded first.
    await eventually(lambda: _runner_idle(stack))
    interaction = await stack.store.get_interaction(interaction_id=run.interaction_id)
    assert interaction.status == "cancelled"


async def test_the_sdk_reports_the_deadline(stack: Stack) -> None:
    stack.gate.gate(0)  # never opened
    request_id = str(uuid.uuid4())
    alice = stack.client("alice")

    with pytest.raises(RiverbeamError) as info:
        await alice.invoke("gated", "slow", request_id=request_id, timeout_s=SHORT_S)

    assert info.value.details["grpc_code"] == "DEADLINE_EXCEEDED"
    run = await stack.wait_run(request_id)
    assert run.status == "cancelled"
    # The session is free again: the next turn runs.
    assert run.session_id
    stack.gate.gates.clear()
    again = await alice.invoke("gated", "again", session_id=run.session_id)
    assert again.text == "part 0 part 1 part 2 "


async def test_a_deadline_only_bounds_the_ack_of_a_streaming_invoke(stack: Stack) -> None:
    opened = stack.gate.gate(1)
    alice = stack.client("alice")
    ack = await alice.invoke("gated", "go", stream=True, timeout_s=SHORT_S)
    await stack.gate.reached[1].wait()
    await asyncio.sleep(SHORT_S * 2)  # the call's deadline is long gone; the run goes on
    opened.set()
    frames = await collect(alice.follow(ack.request_id))
    assert frames[-1].type == "done"
    assert (await stack.wait_run(ack.request_id)).status == "completed"
