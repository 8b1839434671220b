"""The reaper's error frame ends a stream even when a stalled runner took its number first."""

from __future__ import annotations

import uuid

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import JetStreamSinks, _jetstream
from riverbeam.stream import NatsConnection, RequestPublisher, StreamConfig, follow
from riverbeam.types import AgentMessage, ContentPart, StreamChunk


def _chunk(text: str) -> StreamChunk:
    return StreamChunk(
        type="chunk", data=AgentMessage(role="ai", content=[ContentPart.of_text(text)])
    )


async def test_reaper_renumbers_after_a_collision(
    nats: NatsConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = StreamConfig()
    request_id = str(uuid.uuid4())
    runner = RequestPublisher(nats.js, request_id, config=config)
    await runner.publish(_chunk("one"))
    await runner.publish(_chunk("two"))
    await runner.drain()  # both landed (a non-terminal publish does not wait for its ack)

    real_last_seq = _jetstream.last_seq
    calls = 0

    async def stale_once(js: object, rid: str, *, config: StreamConfig | None = None) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return 1  # read before the stalled runner's frame 2 landed
        return await real_last_seq(nats.js, rid, config=config)

    monkeypatch.setattr(_jetstream, "last_seq", stale_once)
    err = RiverbeamError(ErrorCode.RUN_LOST, "the runner holding this run stopped")
    await JetStreamSinks(nats.js, config).publish_terminal_error(request_id, err)

    frames = [f async for f in follow(nats.js, request_id, config=config, timeout_s=10)]
    assert [f.seq for f in frames] == [1, 2, 3]
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-034"
    assert calls == 2
