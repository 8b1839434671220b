"""Fencing in every BeamStore: the lease epoch, takeovers, and the idempotent finish step.

Runs against memory, Postgres and the gRPC store service (the `store` fixture).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from store_kit import OWNER, answer, begin, expect, interrupted_with, resume, uid

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore, NewMessage
from riverbeam.types import AgentResult, ContentPart, TokenUsage

LATER = timedelta(hours=1)


def _reply(text: str) -> NewMessage:
    return NewMessage(role="ai", content=[ContentPart.of_text(text)])


async def test_begin_run_starts_at_epoch_one(store: BeamStore) -> None:
    begun = await begin(store)
    assert begun.run.lease_epoch == 1
    assert (await store.get_run(run_id=begun.run.run_id)).lease_epoch == 1


async def test_a_takeover_bumps_the_epoch_and_keeps_the_run_running(store: BeamStore) -> None:
    mine = await begin(store)
    other = await begin(store)
    later = datetime.now(UTC) + LATER
    taken = await store.take_over_expired_runs(
        new_owner="reaper", lease_ttl_s=30, now=later, exclude_run_ids=[other.run.run_id]
    )
    assert [t.run.run_id for t in taken] == [mine.run.run_id]
    [held] = taken
    assert held.previous_owner == OWNER
    assert (held.run.status, held.run.lease_owner, held.run.lease_epoch) == (
        "running",
        "reaper",
        2,
    )
    assert await store.get_run(run_id=mine.run.run_id) == held.run
    # The excluded run was left alone.
    assert (await store.get_run(run_id=other.run.run_id)).lease_epoch == 1
    # A live lease (by the store's own clock) is not taken.
    assert await store.take_over_expired_runs(new_owner="reaper", lease_ttl_s=30) == []


async def test_the_old_holder_is_fenced_off_after_a_takeover(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    later = datetime.now(UTC) + LATER
    [taken] = await store.take_over_expired_runs(new_owner="reaper", lease_ttl_s=30, now=later)
    # Even were its owner name the same, epoch 1 is stale now.
    assert not await store.renew_lease(run_id=run_id, lease_owner="reaper", ttl_s=30, lease_epoch=1)
    with expect(ErrorCode.STALE_EPOCH):
        await store.finish_run(
            run_id=run_id,
            lease_owner="reaper",
            status="completed",
            messages=[_reply("late")],
            lease_epoch=1,
        )
    with expect(ErrorCode.STALE_EPOCH):
        await store.append_message(
            session_id=begun.session.session_id,
            role="ai",
            content=[ContentPart.of_text("late")],
            run_id=run_id,
            lease_epoch=1,
        )
    session = await store.get_session(session_id=begun.session.session_id)
    assert session.last_seq == 1  # nothing of the stale holder was written
    # The new holder at epoch 2 renews and finishes.
    assert await store.renew_lease(run_id=run_id, lease_owner="reaper", ttl_s=30, lease_epoch=2)
    run = await store.finish_run(
        run_id=run_id,
        lease_owner="reaper",
        status="failed",
        error_code="BEM-034",
        error_message="lost",
        lease_epoch=taken.run.lease_epoch,
    )
    assert (run.status, run.lease_epoch) == ("failed", 2)


async def test_a_repeated_finish_at_the_same_epoch_writes_once(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    result = AgentResult(agent_name="author", run_id=run_id)
    args = {
        "run_id": run_id,
        "lease_owner": OWNER,
        "status": "completed",
        "messages": [_reply("the reply")],
        "token_usage": TokenUsage(prompt_tokens=3, completion_tokens=4, total_tokens=7),
        "result": result,
        "lease_epoch": 1,
    }
    first = await store.finish_run(**args)  # type: ignore[arg-type]
    # The answer was lost; the runner retries the same step with fresh message ids.
    again = await store.finish_run(**{**args, "messages": [_reply("the reply")]})  # type: ignore[arg-type]
    assert again == first
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [m.role for m in messages] == ["human", "ai"]
    # Another owner at that epoch is no repeat.
    with expect(ErrorCode.STORE_CONFLICT):
        await store.finish_run(**{**args, "lease_owner": "someone else"})  # type: ignore[arg-type]
    # Without an epoch the step is not idempotent (the behaviour before fencing).
    with expect(ErrorCode.STORE_CONFLICT):
        await store.finish_run(run_id=run_id, lease_owner=OWNER, status="completed")


async def test_a_reaped_run_is_at_a_new_epoch(store: BeamStore) -> None:
    begun = await begin(store)
    [reaped] = await store.reap_expired_runs(now=datetime.now(UTC) + LATER)
    assert (reaped.status, reaped.lease_epoch) == ("failed", 2)
    with expect(ErrorCode.STALE_EPOCH):
        await store.finish_run(
            run_id=begun.run.run_id, lease_owner=OWNER, status="completed", lease_epoch=1
        )


async def test_concurrent_takeovers_never_share_a_run(store: BeamStore) -> None:
    begun = [await begin(store, lease_ttl_s=0.2) for _ in range(10)]
    await asyncio.sleep(0.4)
    # By the store's clock: a run taken over holds a fresh 30 s lease, so it is not taken again.
    first, second = await asyncio.gather(
        store.take_over_expired_runs(new_owner="a", lease_ttl_s=30),
        store.take_over_expired_runs(new_owner="b", lease_ttl_s=30),
    )
    ids = [t.run.run_id for t in first] + [t.run.run_id for t in second]
    assert sorted(ids) == sorted(b.run.run_id for b in begun)
    assert {t.run.lease_epoch for t in first + second} == {2}


async def test_an_action_outcome_of_a_taken_over_run_is_refused(store: BeamStore) -> None:
    paused, [action_id] = await interrupted_with(store, 1)
    resumed = await resume(store, paused, answer(action_id))
    run_id = resumed.run.run_id
    await store.take_over_expired_runs(
        new_owner="reaper", lease_ttl_s=30, now=datetime.now(UTC) + LATER
    )
    with expect(ErrorCode.STALE_EPOCH):
        await store.record_action_outcome(
            action_id=action_id, outcome="approved_ran", run_id=run_id, lease_epoch=1
        )
    assert (await store.get_action(action_id=action_id)).outcome == "approved_unknown"
    recorded = await store.record_action_outcome(
        action_id=action_id, outcome="approved_failed", run_id=run_id, lease_epoch=2
    )
    assert recorded.outcome == "approved_failed"


async def test_a_bad_epoch_is_an_invalid_argument(store: BeamStore) -> None:
    begun = await begin(store)
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.finish_run(
            run_id=begun.run.run_id, lease_owner=OWNER, status="completed", lease_epoch=0
        )
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.renew_lease(run_id=uid(), lease_owner=OWNER, ttl_s=5, lease_epoch=-1)
