"""Soak: sustained concurrent streaming invokes through router -> runner -> store on real NATS.

Bounded in count and time, loopback only; run by `make soak`, not `make test`. It checks what
must hold under load, not how fast it is: every request ends with exactly one terminal frame
after gap-free frames, relayed frames equal what NATS holds, every session's message sequence is
dense, and no run is left running.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid

import pytest

from riverbeam.stream import follow
from riverbeam.types import StreamAck, StreamChunk
from tests.integration.router.router_kit import Stack, collect, open_stack

pytestmark = [pytest.mark.slow, pytest.mark.nats, pytest.mark.timeout(600)]

SESSIONS = int(os.environ.get("RIVERBEAM_SOAK_SESSIONS", "32"))
TURNS = int(os.environ.get("RIVERBEAM_SOAK_TURNS", "100"))
BUDGET_S = float(os.environ.get("RIVERBEAM_SOAK_BUDGET_S", "240"))


async def _session_turns(stack: Stack, deadline: float) -> tuple[str, list[str]]:
    """One user's conversation: TURNS streaming invokes, one after another, each followed."""
    session_id = str(uuid.uuid4())
    client = stack.client("alice", timeout_s=60)
    requests: list[str] = []
    for turn in range(TURNS):
        if time.monotonic() > deadline:
            break
        ack = await client.invoke("assistant", f"turn {turn}", session_id=session_id, stream=True)
        assert isinstance(ack, StreamAck)
        frames = await collect(client.follow(ack.request_id))
        assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
        assert [f.is_terminal for f in frames].count(True) == 1 and frames[-1].type == "done"
        assert frames[-1].result is not None and frames[-1].result.text == f"Echo: turn {turn}"
        requests.append(ack.request_id)
    return session_id, requests


async def test_sustained_concurrent_invokes_lose_nothing(nats_url: str) -> None:
    async with open_stack(nats_url) as stack:
        try:
            deadline = time.monotonic() + BUDGET_S
            started = time.monotonic()
            results = await asyncio.gather(
                *(_session_turns(stack, deadline) for _ in range(SESSIONS))
            )
            elapsed = time.monotonic() - started
            total = sum(len(requests) for _, requests in results)
            assert total > 0
            # Relayed frames were checked per turn; NATS itself must hold the same for a sample.
            for _, requests in results[:4]:
                for request_id in requests[:5]:
                    direct: list[StreamChunk] = [
                        f
                        async for f in follow(
                            stack.nats.js, request_id, config=stack.stream_config, timeout_s=10
                        )
                    ]
                    assert direct[-1].type == "done"
                    assert [f.seq for f in direct] == list(range(1, len(direct) + 1))
            for session_id, requests in results:
                messages = await stack.beam.list_messages(session_id)
                assert [m.seq for m in messages] == list(range(1, len(messages) + 1))
                assert len(messages) == 2 * len(requests)
            assert all(run.status == "completed" for run in stack.records()["runs"].values())
            print(
                f"\nsoak: {total} streaming invokes over {SESSIONS} sessions in {elapsed:.1f}s "
                f"({total / elapsed:.1f}/s), all complete, no gaps"
            )
        finally:
            await stack.close_clients()
