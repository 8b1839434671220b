"""Bad input over real gRPC to the router: every refusal carries a BEM code (issue 11, §8).

Raw bytes are sent with a generic `channel.unary_unary` call, so nothing on the client side
parses or checks them first.
"""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest

from riverbeam.server import open_channel
from riverbeam.types import InvokeAuthContext, InvokePayload, StreamChunk
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import types_pb2
from tests.integration.router.router_kit import Stack, auth, refused, wire_error
from tests.integration.router.test_router_refusals import every_rpc, invoke_request

pytestmark = pytest.mark.nats

SERVICE = "/riverbeam.v1.RiverbeamService"
UNARY = [
    "Invoke",
    "Resume",
    "Cancel",
    "ListAgents",
    "GetAgent",
    "ListModels",
    "GetSession",
    "ListMessages",
    "GetInteraction",
    "GetRun",
    "GetAction",
    "ListPendingActions",
]


def raw_call(stack: Stack, method: str, **channel_options: Any) -> Any:
    """A generic unary call that sends bytes as they are and returns the reply's bytes."""
    options = [(f"grpc.{k}", v) for k, v in channel_options.items()]
    channel = grpc.aio.insecure_channel(stack.router_address, options=options)
    stack._channels.append(channel)
    return channel.unary_unary(
        f"{SERVICE}/{method}", request_serializer=None, response_deserializer=None
    )


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def nested_metadata(depth: int) -> bytes:
    """InvokeRequest.metadata (field 5) as a Struct nested `depth` levels: {"k": {"k": ...}}.

    Encoded by hand: protobuf itself refuses to build (or parse) it past its recursion limit.
    """
    value = _len_field(3, b"x")  # Value.string_value
    for _ in range(depth):
        entry = _len_field(1, b"k") + _len_field(2, value)  # map entry: key, Value
        struct = _len_field(1, entry)  # Struct.fields
        value = _len_field(5, struct)  # Value.struct_value
    return _len_field(5, struct)


async def test_malformed_bytes_get_bem_018_on_every_rpc(stack: Stack) -> None:
    for method in UNARY:
        for garbage in (b"\xff\xff\xff\xff", b"\x0a\x7fshort", b"\x08"):
            error = wire_error(
                await _failed(raw_call(stack, method)(garbage, metadata=auth("alice")))
            )
            assert (error.code, error.bem) == (grpc.StatusCode.INVALID_ARGUMENT, "BEM-018"), (
                method,
                error,
            )
    before = stack.records()
    stream = open_channel(stack.router_address).unary_stream(
        f"{SERVICE}/FollowStream", request_serializer=None, response_deserializer=None
    )
    error = wire_error(await _failed_stream(stream(b"\xff\xff", metadata=auth("alice"))))
    assert error.bem == "BEM-018"
    assert stack.records() == before


@pytest.mark.parametrize("depth", [17, 30, 40, 100, 1000, 10_000])
async def test_deeply_nested_metadata_gets_bem_013(stack: Stack, depth: int) -> None:
    # Within protobuf's recursion limit (100 message levels, ~33 of these) the sanitiser's
    # depth limit answers; past it, the parser does: both say BEM-013.
    head = invoke_request("inspect").SerializeToString()
    before = stack.records()
    call = raw_call(stack, "Invoke")(head + nested_metadata(depth), metadata=auth("alice"))
    error = wire_error(await _failed(call))
    assert (error.code, error.bem) == (grpc.StatusCode.INVALID_ARGUMENT, "BEM-013"), error
    assert stack.records() == before


async def test_a_message_over_16_mib_gets_bem_019(stack: Stack) -> None:
    big = invoke_request("inspect", "x" * (17 << 20)).SerializeToString()
    call = raw_call(stack, "Invoke", max_send_message_length=64 << 20)
    error = wire_error(await _failed(call(big, metadata=auth("alice"))))
    assert (error.code, error.bem) == (grpc.StatusCode.INVALID_ARGUMENT, "BEM-019")
    assert len(error.message) < 200


async def test_a_9_kib_authorization_header_gets_bem_050_on_every_rpc(stack: Stack) -> None:
    header = (("authorization", "Bearer " + "t" * (9 << 10)),)
    for name, call in every_rpc(stack.stub()).items():
        for _ in range(3):  # gRPC's soft metadata limit refused some calls, at random
            error = await refused(call(header))
            assert (error.code, error.bem) == (grpc.StatusCode.UNAUTHENTICATED, "BEM-050"), name


@pytest.mark.parametrize(
    ("field", "extra"),
    [
        ("agent_name", {"agent_name": "a" * 5000}),
        ("model_override", {"model_override": "m" * 5000}),
        (
            "auth_context.profile_id",
            {"auth_context": InvokeAuthContext(profile_id="p" * (8 << 20))},
        ),
        ("auth_context.user_id", {"auth_context": InvokeAuthContext(user_id="u" * 5000)}),
        ("auth_context.mcp_token", {"auth_context": InvokeAuthContext(mcp_token="t" * 10_000)}),
    ],
)
async def test_unbounded_strings_are_refused_and_never_echoed(
    stack: Stack, field: str, extra: dict[str, Any]
) -> None:
    payload = InvokePayload.parse(
        {
            "agent_name": "inspect",
            "content": [{"type": "text", "text": "hi"}],
            "session_id": str(uuid.uuid4()),
        }
    ).model_copy(update=extra)
    message: types_pb2.InvokeRequest = payload.to_proto()
    before = stack.records()
    call = raw_call(stack, "Invoke", max_send_message_length=64 << 20)
    error = wire_error(await _failed(call(message.SerializeToString(), metadata=auth("backend"))))
    assert (error.code, error.bem) == (grpc.StatusCode.INVALID_ARGUMENT, "BEM-022"), error
    assert error.metadata["field"] == field
    assert len(error.message) < 200 and all(len(v) <= 300 for v in error.metadata.values())
    assert stack.records() == before


async def test_an_unknown_long_agent_name_is_not_echoed_in_full(stack: Stack) -> None:
    name = "n" * 5000
    error = await refused(
        stack.stub().GetAgent(pb.GetAgentRequest(name=name), metadata=auth("alice"))
    )
    assert error.bem == "BEM-020"
    assert len(error.message) <= 1100 and name not in error.message
    assert all(len(v) <= 300 for v in error.metadata.values())


@pytest.mark.parametrize("past", [1, 3, None])
async def test_follow_after_the_last_frame_gets_no_frames_and_the_real_end(
    stack: Stack, past: int | None
) -> None:
    alice = stack.client("alice")
    ack = await alice.invoke("echo", "hello there", stream=True)
    await stack.wait_run(ack.request_id)
    every = [f async for f in alice.follow(ack.request_id)]
    assert every[-1].type == "done"
    last = every[-1].seq or 0
    after = 2147483647 if past is None else last - 1 + past

    raw = stack.stub().FollowStream(
        pb.FollowStreamRequest(request_id=ack.request_id, after_seq=after), metadata=auth("alice")
    )
    chunks = [StreamChunk.from_proto(reply.chunk) async for reply in raw]
    assert chunks == []
    assert await raw.code() is grpc.StatusCode.OK
    # The cursor just before the end still gets the real done frame, with its own seq.
    assert [f async for f in alice.follow(ack.request_id, after_seq=last - 1)] == every[-1:]


async def _failed(call: Any) -> grpc.aio.AioRpcError:
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return exc
    raise AssertionError("the call succeeded")


async def _failed_stream(call: Any) -> grpc.aio.AioRpcError:
    try:
        async for _ in call:
            raise AssertionError("the stream yielded")
    except grpc.aio.AioRpcError as exc:
        return exc
    raise AssertionError("the stream ended without an error")
