"""Run checkpoints and run holders in every BeamStore (durable runs, docs/durability.md).

Runs against memory, Postgres and the gRPC store service (the `store` fixture).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from store_kit import OWNER, AgeSessions, answer, begin, expect, interrupted_with, resume, uid

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore, NewAction, NewMessage
from riverbeam.types import ActionResponseEnvelope, ContentPart

LATER = timedelta(hours=1)

STATE = {
    "agent": {"messages": [{"role": "user", "content": "hé"}], "rounds": 2, "ratio": 0.5},
    "next_seq": 7,
    "pending": None,
}


async def test_a_checkpoint_is_saved_and_read_back(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    assert await store.get_run_checkpoint(run_id=run_id) is None
    saved = await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=1, state=STATE)
    assert (saved.run_id, saved.lease_epoch, saved.step, saved.state) == (run_id, 1, 1, STATE)
    read = await store.get_run_checkpoint(run_id=run_id)
    assert read is not None
    assert (read.step, read.state, read.lease_epoch) == (1, STATE, 1)
    # A later step replaces it; the same step again (a retry) is accepted.
    later = {**STATE, "next_seq": 9}
    await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=2, state=later)
    await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=2, state=later)
    read = await store.get_run_checkpoint(run_id=run_id)
    assert read is not None and (read.step, read.state["next_seq"]) == (2, 9)


async def test_an_earlier_step_is_refused(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=3, state=STATE)
    with expect(ErrorCode.STORE_CONFLICT):
        await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=2, state={})
    read = await store.get_run_checkpoint(run_id=run_id)
    assert read is not None and (read.step, read.state) == (3, STATE)


async def test_the_state_is_the_store_s_own_copy(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    state = {"agent": {"messages": [1, 2]}}
    saved = await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=1, state=state)
    state["agent"]["messages"].append(3)
    saved.state["agent"]["messages"].append(4)
    read = await store.get_run_checkpoint(run_id=run_id)
    assert read is not None and read.state == {"agent": {"messages": [1, 2]}}


async def test_a_stale_epoch_writes_no_checkpoint(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=1, state=STATE)
    later = datetime.now(UTC) + LATER
    [taken] = await store.take_over_expired_runs(new_owner="taker", lease_ttl_s=30, now=later)
    assert taken.run.lease_epoch == 2
    with expect(ErrorCode.STALE_EPOCH):
        await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=2, state={"x": 1})
    read = await store.get_run_checkpoint(run_id=run_id)
    assert read is not None and (read.step, read.lease_epoch, read.state) == (1, 1, STATE)
    # The new holder continues the numbering at its epoch.
    await store.save_run_checkpoint(run_id=run_id, lease_epoch=2, step=2, state={"x": 2})
    read = await store.get_run_checkpoint(run_id=run_id)
    assert read is not None and (read.step, read.lease_epoch, read.state) == (2, 2, {"x": 2})


async def test_a_finished_or_unknown_run_takes_no_checkpoint(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    await store.finish_run(
        run_id=run_id,
        lease_owner=OWNER,
        status="completed",
        messages=[NewMessage(role="ai", content=[ContentPart.of_text("done")])],
        lease_epoch=1,
    )
    with expect(ErrorCode.STALE_EPOCH):
        await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=1, state=STATE)
    assert await store.get_run_checkpoint(run_id=run_id) is None
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.save_run_checkpoint(run_id=uid(), lease_epoch=1, step=1, state=STATE)


async def test_bad_steps_and_states_are_refused(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=0, state=STATE)
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.save_run_checkpoint(
            run_id=run_id, lease_epoch=1, step=1, state={"nan": float("nan")}
        )
    assert await store.get_run_checkpoint(run_id=run_id) is None


async def test_a_takeover_records_the_runners_that_held_the_run(store: BeamStore) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    assert begun.run.holders == [] and begun.run.takeovers == 0
    later = datetime.now(UTC) + LATER
    [first] = await store.take_over_expired_runs(new_owner="runner-b", lease_ttl_s=30, now=later)
    assert first.run.holders == [OWNER, "runner-b"] and first.run.takeovers == 1
    [second] = await store.take_over_expired_runs(
        new_owner="runner-c", lease_ttl_s=30, now=later + LATER
    )
    assert second.run.holders == [OWNER, "runner-b", "runner-c"]
    assert second.run.lease_epoch == 3
    assert (await store.get_run(run_id=run_id)).holders == [OWNER, "runner-b", "runner-c"]


async def test_an_outcome_unknown_answer_must_say_retry_skip_or_done(store: BeamStore) -> None:
    begun = await begin(store)
    action_id = uid()
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="interrupted",
        pending_actions=[
            NewAction(
                action_id=action_id,
                kind="outcome_unknown",
                tool="git_commit",
                args={"message": "m"},
                tool_call_id="call-1",
            )
        ],
    )

    def reply(payload: dict[str, str] | None) -> ActionResponseEnvelope:
        return ActionResponseEnvelope(
            action_id=action_id, kind="outcome_unknown", request_id=uid(), payload=payload
        )

    with expect(ErrorCode.INVALID_OUTCOME_DECISION):
        await resume(store, begun, reply({"decision": "maybe"}))
    with expect(ErrorCode.INVALID_OUTCOME_DECISION):
        await resume(store, begun, reply(None))
    # Nothing was written: the action is still pending and a valid answer resolves it once.
    assert (await store.get_action(action_id=action_id)).status == "pending"
    resumed = await resume(store, begun, reply({"decision": "skip"}))
    assert [a.action_id for a in resumed.resolved_actions] == [action_id]
    assert resumed.resolved_actions[0].kind == "outcome_unknown"
    with expect(ErrorCode.ACTION_NOT_PENDING):
        await resume(store, begun, reply({"decision": "retry"}))


async def test_a_confirmation_answer_needs_no_decision(store: BeamStore) -> None:
    begun, [action_id] = await interrupted_with(store)
    resumed = await resume(store, begun, answer(action_id))
    assert [a.action_id for a in resumed.resolved_actions] == [action_id]


async def test_a_checkpoint_goes_with_its_deleted_session(
    store: BeamStore, age_sessions: AgeSessions
) -> None:
    begun = await begin(store)
    run_id = begun.run.run_id
    await store.save_run_checkpoint(run_id=run_id, lease_epoch=1, step=1, state=STATE)
    await store.finish_run(run_id=run_id, lease_owner=OWNER, status="completed", lease_epoch=1)
    await age_sessions(timedelta(hours=2))
    assert await store.delete_idle_sessions(older_than=timedelta(hours=1)) == 1
    assert await store.get_run_checkpoint(run_id=run_id) is None
