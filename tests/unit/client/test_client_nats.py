"""follow_nats: a request's frames straight from a real JetStream (nats-server on a free port)."""

from __future__ import annotations

import uuid

import pytest

from riverbeam.client import RiverbeamClient, follow_nats
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream import (
    DEFAULT_STREAM_NAME,
    NatsConnection,
    StreamConfig,
    ensure_stream,
    subject_for,
)
from riverbeam.types import StreamChunk

pytestmark = pytest.mark.nats

STREAM = (
    DEFAULT_STREAM_NAME  # the stream every test on this NATS shares; ensure_stream is idempotent
)


def _frame(request_id: str, seq: int, kind: str = "chunk") -> bytes:
    body: dict[str, object] = {"type": kind, "seq": seq, "request_id": request_id}
    if kind == "chunk":
        body["data"] = {"role": "ai", "content": [{"type": "text", "text": f"part {seq}"}]}
    elif kind == "done":
        body["result"] = {"agent_name": "assistant", "content": [{"type": "text", "text": "ok"}]}
    return StreamChunk.parse(body).to_json().encode()


async def _publish(nats_url: str, request_id: str, seqs: list[tuple[int, str]]) -> None:
    config = StreamConfig(name=STREAM)
    async with NatsConnection(nats_url, initial_connect_timeout_s=10) as conn:
        await ensure_stream(conn.js, config)
        for seq, kind in seqs:
            await conn.js.publish(
                subject_for(request_id), _frame(request_id, seq, kind), stream=STREAM
            )


async def test_follow_nats_replays_and_ends_at_done(nats_url: str) -> None:
    rid = str(uuid.uuid4())
    await _publish(nats_url, rid, [(1, "chunk"), (2, "chunk"), (2, "chunk"), (3, "done")])
    frames = [f async for f in follow_nats(nats_url, rid, stream_name=STREAM, timeout_s=10)]
    assert [(f.seq, f.type) for f in frames] == [(1, "chunk"), (2, "chunk"), (3, "done")]

    async with RiverbeamClient("127.0.0.1:1") as client:  # no router needed for this path
        later = [
            f async for f in client.follow_nats(nats_url, rid, after_seq=2, stream_name=STREAM)
        ]
    assert [f.seq for f in later] == [3]


async def test_follow_nats_detects_a_gap(nats_url: str) -> None:
    rid = str(uuid.uuid4())
    await _publish(nats_url, rid, [(1, "chunk"), (3, "done")])
    seen: list[int] = []
    with pytest.raises(RiverbeamError) as info:
        async for frame in follow_nats(nats_url, rid, stream_name=STREAM, timeout_s=10):
            seen.append(frame.seq or 0)
    assert seen == [1]
    assert info.value.code is ErrorCode.STREAM_GAP


async def test_follow_nats_unknown_request(nats_url: str) -> None:
    await _publish(nats_url, str(uuid.uuid4()), [(1, "done")])  # the stream exists
    with pytest.raises(RiverbeamError) as info:
        async for _ in follow_nats(
            nats_url, str(uuid.uuid4()), stream_name=STREAM, wait_for_start_s=0.5
        ):
            pass
    assert info.value.code is ErrorCode.STREAM_NOT_FOUND
