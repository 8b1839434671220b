"""A server answering one store step in three transport shapes, for benchmark 8.

    python -m bench._transport_shapes --ready-file F

Every shape does the same work per step: parse the request as a BeginRunRequest and answer
with the same serialized BeginRunResponse. Only how steps travel differs:

- `Unary`: one unary call per step (what the runner does today);
- `Stream`: one long-lived bidi stream, one message per step each way, a step id in front;
- `Batch`: one long-lived bidi stream whose messages each carry every step the client had
  queued while its previous write was in flight, answered in one message per batch.

The framing inside a stream message is this benchmark's own (8-byte step id, 4-byte length,
then the step's bytes): it prices the transport, it is not a wire format.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc

from bench._procs import serve_bare

__all__ = ["SERVICE", "begin_reply", "begin_request", "frame", "main", "unframe"]

SERVICE = "bench.Steps"
_ID = 8
_LEN = 4


def begin_request(n: int) -> bytes:
    """A BeginRunRequest the size of an echo invoke's (new session, one text part)."""
    from riverbeam.v1 import store_service_pb2 as pb
    from riverbeam.v1 import types_pb2 as types

    request = pb.BeginRunRequest(
        session_id=f"sess-{n:026d}",
        user_id="dev",
        agent_name="assistant",
        run_id=f"run-{n:027d}",
        request_id=f"req-{n:027d}",
        lease_owner="runner-bench-0123456789",
        lease_ttl_s=60.0,
        exclusive=True,
        require_owner="dev",
    )
    request.human_content.append(types.ContentPart(type="text", text="hello, how are you today?"))
    data: bytes = request.SerializeToString()
    return data


def begin_reply() -> bytes:
    """A BeginRunResponse with the session, interaction, run and human message set."""
    from riverbeam.v1 import store_service_pb2 as pb
    from riverbeam.v1 import types_pb2 as types

    reply = pb.BeginRunResponse()
    reply.session.session_id = "sess-" + "0" * 26
    reply.session.user_id = "dev"
    reply.interaction.interaction_id = "int-" + "0" * 27
    reply.interaction.session_id = reply.session.session_id
    reply.run.run_id = "run-" + "0" * 27
    reply.run.session_id = reply.session.session_id
    reply.run.agent_name = "assistant"
    reply.run.lease_owner = "runner-bench-0123456789"
    reply.human_message.message_id = "msg-" + "0" * 27
    reply.human_message.content.append(types.ContentPart(type="text", text="hello"))
    data: bytes = reply.SerializeToString()
    return data


def frame(step_id: int, body: bytes) -> bytes:
    return step_id.to_bytes(_ID, "big") + len(body).to_bytes(_LEN, "big") + body


def unframe(data: bytes) -> list[tuple[int, bytes]]:
    """The (step id, bytes) of every step in one stream message."""
    steps, at = [], 0
    while at < len(data):
        step_id = int.from_bytes(data[at : at + _ID], "big")
        size = int.from_bytes(data[at + _ID : at + _ID + _LEN], "big")
        start = at + _ID + _LEN
        steps.append((step_id, data[start : start + size]))
        at = start + size
    return steps


def _handlers() -> grpc.GenericRpcHandler[Any, Any]:
    from riverbeam.v1 import store_service_pb2 as pb

    reply = begin_reply()
    parse = pb.BeginRunRequest.FromString

    def step(body: bytes) -> bytes:
        parse(body)
        return reply

    async def unary(request: bytes, context: Any) -> bytes:
        return step(request)

    async def stream(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        async for message in requests:
            ((step_id, body),) = unframe(message)
            yield frame(step_id, step(body))

    async def batch(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        async for message in requests:
            yield b"".join(frame(step_id, step(body)) for step_id, body in unframe(message))

    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Unary": grpc.unary_unary_rpc_method_handler(unary),
            "Stream": grpc.stream_stream_rpc_method_handler(stream),
            "Batch": grpc.stream_stream_rpc_method_handler(batch),
        },
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench._transport_shapes")
    parser.add_argument("--ready-file", required=True)
    args = parser.parse_args(argv)
    import uvloop

    uvloop.run(serve_bare(_handlers(), args.ready_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
