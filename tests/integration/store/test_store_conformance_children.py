"""Child runs in every BeamStore: linked to the parent, fenced by its lease, idempotent.

Runs against memory, Postgres and the gRPC store service (the `store` fixture).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from store_kit import OWNER, begin, expect, uid

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore
from riverbeam.types import AgentResult, ContentPart, TokenUsage

LATER = timedelta(hours=1)


async def _child(store: BeamStore, parent_run_id: str, **overrides: object) -> str:
    run_id = uid()
    fields: dict[str, object] = {
        "parent_run_id": parent_run_id,
        "run_id": run_id,
        "agent_name": "helper",
        "lease_owner": OWNER,
        "lease_epoch": 1,
    }
    fields.update(overrides)
    await store.begin_child_run(**fields)  # type: ignore[arg-type]
    return run_id


async def test_a_child_run_is_linked_to_its_parent_and_listed_with_it(store: BeamStore) -> None:
    parent = (await begin(store)).run
    child = await store.begin_child_run(
        parent_run_id=parent.run_id,
        run_id=uid(),
        agent_name="helper",
        lease_owner=OWNER,
        lease_epoch=1,
        agent_version="2.0.0",
    )
    assert child.parent_run_id == parent.run_id
    assert (child.session_id, child.interaction_id) == (parent.session_id, parent.interaction_id)
    assert (child.status, child.agent_name, child.agent_version) == ("running", "helper", "2.0.0")
    assert child.lease_expires_at is None and child.request_id is None
    assert await store.get_run(run_id=child.run_id) == child
    runs = await store.list_runs(interaction_id=parent.interaction_id)
    assert {r.run_id: r.parent_run_id for r in runs} == {
        parent.run_id: None,
        child.run_id: parent.run_id,
    }


async def test_a_child_run_writes_no_message_and_leaves_the_session_free(
    store: BeamStore,
) -> None:
    begun = await begin(store)
    before, _ = await store.list_messages(session_id=begun.run.session_id)
    await _child(store, begun.run.run_id)
    after, _ = await store.list_messages(session_id=begun.run.session_id)
    assert after == before
    # No lease expiry of its own: a far-future reaper neither reaps nor takes it over.
    later = datetime.now(UTC) + LATER
    reaped = await store.reap_expired_runs(now=later)
    assert [r.run_id for r in reaped] == [begun.run.run_id]


async def test_finishing_a_child_records_its_result_and_usage(store: BeamStore) -> None:
    parent = (await begin(store)).run
    run_id = await _child(store, parent.run_id)
    usage = TokenUsage(prompt_tokens=7, completion_tokens=3, total_tokens=10)
    result = AgentResult(agent_name="helper", content=[ContentPart.of_text("42")])
    done = await store.finish_child_run(
        run_id=run_id,
        parent_run_id=parent.run_id,
        lease_owner=OWNER,
        lease_epoch=1,
        status="completed",
        token_usage=usage,
        model_used="m",
        result=result,
    )
    assert (done.status, done.token_usage, done.model_used) == ("completed", usage, "m")
    assert done.result is not None and done.result.text == "42"
    assert done.finished_at is not None
    # A repeat (a lost answer) returns the stored run.
    again = await store.finish_child_run(
        run_id=run_id,
        parent_run_id=parent.run_id,
        lease_owner=OWNER,
        lease_epoch=1,
        status="failed",
    )
    assert again == done
    # The parent is untouched.
    assert (await store.get_run(run_id=parent.run_id)).status == "running"


async def test_begin_child_run_is_idempotent_per_run_id(store: BeamStore) -> None:
    parent = (await begin(store)).run
    run_id = await _child(store, parent.run_id)
    first = await store.get_run(run_id=run_id)
    repeat = await store.begin_child_run(
        parent_run_id=parent.run_id,
        run_id=run_id,
        agent_name="helper",
        lease_owner=OWNER,
        lease_epoch=1,
    )
    assert repeat == first
    other = (await begin(store)).run
    with expect(ErrorCode.CHILD_RUN_INVALID):
        await _child(store, other.run_id, run_id=run_id)
    with expect(ErrorCode.CHILD_RUN_INVALID):  # a top-level run's id
        await _child(store, parent.run_id, run_id=other.run_id)


async def test_child_steps_are_fenced_by_the_parent_lease(store: BeamStore) -> None:
    parent = (await begin(store)).run
    running = await _child(store, parent.run_id)
    with expect(ErrorCode.STORE_CONFLICT):
        await _child(store, parent.run_id, lease_owner="someone-else")
    with expect(ErrorCode.STALE_EPOCH):
        await _child(store, parent.run_id, lease_epoch=2)
    later = datetime.now(UTC) + LATER
    [taken] = await store.take_over_expired_runs(new_owner="reaper", lease_ttl_s=30, now=later)
    assert taken.run.run_id == parent.run_id
    # The old holder can neither begin nor finish children any more.
    with expect(ErrorCode.STALE_EPOCH):
        await _child(store, parent.run_id)
    with expect(ErrorCode.STALE_EPOCH):
        await store.finish_child_run(
            run_id=running,
            parent_run_id=parent.run_id,
            lease_owner=OWNER,
            lease_epoch=1,
            status="completed",
        )
    # The takeover itself failed the child (it has no lease of its own to expire), so the new
    # holder finds it finished; it calls the agent again as a new child if it needs to.
    settled = await store.get_run(run_id=running)
    assert (settled.status, settled.error_code) == ("failed", "BEM-034")
    with expect(ErrorCode.STORE_CONFLICT):
        await store.finish_child_run(
            run_id=running,
            parent_run_id=parent.run_id,
            lease_owner="reaper",
            lease_epoch=2,
            status="cancelled",
        )
    assert (await store.get_run(run_id=running)).status == "failed"


async def test_child_steps_refuse_unknown_runs_and_wrong_parents(store: BeamStore) -> None:
    parent = (await begin(store)).run
    with expect(ErrorCode.RUN_NOT_FOUND):
        await _child(store, uid())
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.finish_child_run(
            run_id=uid(),
            parent_run_id=parent.run_id,
            lease_owner=OWNER,
            lease_epoch=1,
            status="completed",
        )
    run_id = await _child(store, parent.run_id)
    other = (await begin(store)).run
    with expect(ErrorCode.CHILD_RUN_INVALID):
        await store.finish_child_run(
            run_id=run_id,
            parent_run_id=other.run_id,
            lease_owner=OWNER,
            lease_epoch=1,
            status="completed",
        )
    with expect(ErrorCode.INVALID_ARGUMENT):
        await _child(store, parent.run_id, agent_name="")


async def test_a_finished_parent_refuses_new_children(store: BeamStore) -> None:
    parent = (await begin(store)).run
    await store.finish_run(
        run_id=parent.run_id, lease_owner=OWNER, status="completed", lease_epoch=1
    )
    with expect(ErrorCode.STORE_CONFLICT):
        await _child(store, parent.run_id)


async def test_usage_reports_count_a_child_only_in_its_top_level_run(store: BeamStore) -> None:
    session = uid()
    parent = (await begin(store, session_id=session)).run
    run_id = await _child(store, parent.run_id)
    child_usage = TokenUsage(prompt_tokens=3, completion_tokens=1, total_tokens=4)
    await store.finish_child_run(
        run_id=run_id,
        parent_run_id=parent.run_id,
        lease_owner=OWNER,
        lease_epoch=1,
        status="completed",
        token_usage=child_usage,
        model_used="m",
    )
    # The parent's usage already holds the child's (the pipeline adds it).
    total = TokenUsage(prompt_tokens=13, completion_tokens=6, total_tokens=19)
    await store.finish_run(
        run_id=parent.run_id,
        lease_owner=OWNER,
        status="completed",
        token_usage=total,
        model_used="m",
        lease_epoch=1,
    )
    [row] = await store.summarize_usage(group_by="session", session_id=session)
    assert (row.runs, row.total_tokens) == (1, 19)


async def test_a_handoff_gives_the_interaction_to_the_target(store: BeamStore) -> None:
    begun = await begin(store)
    run = begun.run
    handed = await store.record_handoff(
        run_id=run.run_id,
        lease_owner=OWNER,
        lease_epoch=1,
        agent_name="billing",
        agent_version="2.1.0",
    )
    assert (handed.interaction_id, handed.agent_name, handed.agent_version) == (
        run.interaction_id,
        "billing",
        "2.1.0",
    )
    assert await store.get_interaction(interaction_id=run.interaction_id) == handed
    with expect(ErrorCode.STALE_EPOCH):
        await store.record_handoff(
            run_id=run.run_id, lease_owner=OWNER, lease_epoch=2, agent_name="x"
        )
    with expect(ErrorCode.STORE_CONFLICT):
        await store.record_handoff(
            run_id=run.run_id, lease_owner="other", lease_epoch=1, agent_name="x"
        )
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.record_handoff(run_id=uid(), lease_owner=OWNER, lease_epoch=1, agent_name="x")
    await store.finish_run(run_id=run.run_id, lease_owner=OWNER, status="completed", lease_epoch=1)
    with expect(ErrorCode.STORE_CONFLICT):  # a finished run hands nothing off any more
        await store.record_handoff(
            run_id=run.run_id, lease_owner=OWNER, lease_epoch=1, agent_name="x"
        )
    assert (await store.get_interaction(interaction_id=run.interaction_id)).agent_name == "billing"


async def test_a_takeover_fails_the_running_children_of_the_run_it_takes(
    store: BeamStore,
) -> None:
    # A child has no lease of its own: left running, it would keep its session busy forever.
    parent = (await begin(store, lease_ttl_s=1.0)).run
    child = await _child(store, parent.run_id)
    grandchild = await _child(store, child, agent_name="helper2")
    done = await _child(store, parent.run_id, agent_name="finished")
    await store.finish_child_run(
        run_id=done,
        parent_run_id=parent.run_id,
        lease_owner=OWNER,
        lease_epoch=1,
        status="completed",
    )
    later = datetime.now(UTC) + LATER
    [taken] = await store.take_over_expired_runs(new_owner="taker", lease_ttl_s=30, now=later)
    assert taken.run.run_id == parent.run_id
    for run_id in (child, grandchild):
        orphan = await store.get_run(run_id=run_id)
        assert (orphan.status, orphan.error_code) == ("failed", "BEM-034")
    assert (await store.get_run(run_id=done)).status == "completed"
    # The new holder may call the agent again: a new child under the new epoch.
    again = await _child(store, parent.run_id, lease_owner="taker", lease_epoch=2)
    assert (await store.get_run(run_id=again)).status == "running"


async def test_reaping_a_run_fails_its_running_children(store: BeamStore) -> None:
    parent = (await begin(store, lease_ttl_s=1.0)).run
    child = await _child(store, parent.run_id)
    [reaped] = await store.reap_expired_runs(now=datetime.now(UTC) + LATER)
    assert reaped.run_id == parent.run_id
    orphan = await store.get_run(run_id=child)
    assert (orphan.status, orphan.error_code) == ("failed", "BEM-034")
