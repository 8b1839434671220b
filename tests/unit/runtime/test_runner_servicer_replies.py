"""RunnerServicer.RunInvoke makes its reply in place: the message is the one the outcome's own
to_proto gives, for a result and for a streaming request's ack."""

from __future__ import annotations

from bench._stack import run_invoke_request
from riverbeam.runtime import RiverBeam
from riverbeam.types import AgentResult, StreamAck
from riverbeam.v1 import runner_service_pb2 as pb
from services.runner.servicer import RunnerServicer


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
