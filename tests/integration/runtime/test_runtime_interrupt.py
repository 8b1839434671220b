"""Busy-session `interrupt`: a new message cancels the session's running run and starts anew."""

from __future__ import annotations

import pytest

from riverbeam.runtime import DEFAULT_MODEL, Grant, RunnerClient
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection
from riverbeam.types import AgentResult, InvokeRequest, StreamAck
from tests.integration.runtime.rt_kit import (
    GUARD_S,
    SLOW_GUARD_S,
    assert_gap_free,
    collect,
    first_frames,
    runner_service,
    runner_settings,
    store_service,
    text_request,
    uid,
)

pytestmark = pytest.mark.nats


def request(agent: str, text: str, session_id: str, **extra: object) -> InvokeRequest:
    return InvokeRequest.parse(text_request(agent, text, session_id, **extra))


@pytest.mark.parametrize("same_replica", [True, False], ids=["same-replica", "other-replica"])
async def test_interrupt_cancels_the_running_run_and_starts_the_new_one(
    store: BeamStore, nats: NatsConnection, nats_url: str, same_replica: bool
) -> None:
    """The held run is recorded cancelled (BEM-033) with its partial text; its stream ends in
    one error frame; the new message's run then completes. On another replica the cancel
    travels over the NATS control subject."""
    session_id = uid()
    settings = {"busy_session_policy": "interrupt", "queue_timeout_s": SLOW_GUARD_S}
    async with (
        store_service(store) as store_url,
        runner_service(runner_settings(nats_url, store_url, **settings)) as first,
        runner_service(runner_settings(nats_url, store_url, **settings)) as second,
    ):
        holder = RunnerClient(first)
        newcomer = holder if same_replica else RunnerClient(second)
        try:
            hold = await holder.run_invoke(
                request("hold", "take your time", session_id, stream=True),
                model=DEFAULT_MODEL,
                grant=Grant(),
                timeout_s=GUARD_S,
            )
            assert isinstance(hold, StreamAck)
            await first_frames(nats.js, hold.request_id, 1)

            result = await newcomer.run_invoke(
                request("assistant", "change of plan", session_id),
                model=DEFAULT_MODEL,
                grant=Grant(),
                timeout_s=SLOW_GUARD_S,
            )
            held_frames = await collect(nats.js, hold.request_id)
        finally:
            await holder.aclose()
            if newcomer is not holder:
                await newcomer.aclose()

    assert isinstance(result, AgentResult) and result.text == "Echo: change of plan"
    assert_gap_free(held_frames)
    assert held_frames[-1].type == "error" and held_frames[-1].error_code == "BEM-033"
    held = await store.get_run(run_id=hold.run_id or "")
    after = await store.get_run(run_id=result.run_id or "")
    assert held.status == "cancelled" and held.error_code == "BEM-033"
    assert "interrupted" in (held.error_message or "")
    assert after.status == "completed"
    assert held.finished_at is not None and after.started_at >= held.finished_at
    messages, _ = await store.list_messages(session_id=session_id)
    assert [(m.seq, m.role, m.run_id) for m in messages] == [
        (1, "human", held.run_id),
        (2, "ai", held.run_id),
        (3, "human", after.run_id),
        (4, "ai", after.run_id),
    ]
    # The partial text of the interrupted run is kept.
    assert messages[1].content[0].text == "working on it"
