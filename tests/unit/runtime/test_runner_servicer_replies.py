"""RunnerServicer.RunInvoke makes its reply in place, or copies the result message its finish
step sent the store: the message is the one the outcome's own to_proto gives, for a result
and for a streaming request's ack."""

from __future__ import annotations

from typing import Any

import pytest

from bench._stack import run_invoke_request
from riverbeam.runtime import RiverBeam
from riverbeam.types import AgentResult, StreamAck
from riverbeam.v1 import runner_service_pb2 as pb
from services.runner.servicer import RunnerServicer
from tests.support.direct_store import direct_store_client


async def test_a_result_reply_is_the_results_message() -> None:
    beam = RiverBeam()
    beam.register_echo_agent()
    reply = await RunnerServicer(beam).RunInvoke(run_invoke_request(), None)
    assert reply.WhichOneof("outcome") == "result"
    result = AgentResult.from_proto(reply.result)
    assert result.text.startswith("Echo: ") and result.latency_ms is not None
    run = await beam.get_run(result.run_id or "")
    assert run.result == result  # the recorded result, as sent
    expected = pb.RunInvokeResponse(result=result.to_proto())
    assert reply == expected
    assert reply.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )


async def test_an_ack_reply_is_the_acks_message() -> None:
    beam = RiverBeam()
    beam.register_echo_agent()
    request = run_invoke_request()
    request.request.stream = True
    reply = await RunnerServicer(beam).RunInvoke(request, None)
    await beam.wait_idle()
    assert reply.WhichOneof("outcome") == "ack"
    ack = StreamAck.from_proto(reply.ack)
    assert ack.request_id == request.request.request_id
    assert reply == pb.RunInvokeResponse(ack=ack.to_proto())


async def test_over_a_store_client_the_reply_copies_the_result_the_finish_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = direct_store_client()
    beam = RiverBeam(store=store)
    beam.register_echo_agent()
    made: list[AgentResult] = []
    original = AgentResult.to_proto_in

    def counting(self: AgentResult, target: Any) -> None:
        made.append(self)
        original(self, target)

    monkeypatch.setattr(AgentResult, "to_proto_in", counting)
    servicer = RunnerServicer(beam)
    for turn in range(1, 3):
        reply = await servicer.RunInvoke(run_invoke_request(), None)
        # One conversion a run, the finish step's: the reply is that message, copied.
        assert len(made) == turn
        assert reply.WhichOneof("outcome") == "result"
        run = await beam.get_run(reply.result.run_id)
        assert run.status == "completed" and run.result is not None
        assert made[-1] == run.result and run.result.latency_ms is not None
        expected = pb.RunInvokeResponse(result=run.result.to_proto())
        assert reply == expected
        assert reply.SerializeToString(deterministic=True) == expected.SerializeToString(
            deterministic=True
        )
    await store.aclose()
