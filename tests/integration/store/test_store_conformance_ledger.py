"""The tool-execution ledger in every BeamStore (issue 13 §3, docs/durability.md).

Runs against memory, Postgres and the gRPC store service (the `store` fixture): entries are
compare-and-set, a final entry never changes, stale epochs are refused, a takeover settles
what the dead runner had in flight, and finish-run writes its batch in its own transaction.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from store_kit import OWNER, AgeSessions, begin, expect, uid

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore, BeginRunResult, NewMessage
from riverbeam.types import ContentPart, ToolExecution, result_digest, result_preview

LATER = timedelta(minutes=5)


def entry(begun: BeginRunResult, seq: int = 1, **fields: Any) -> ToolExecution:
    """A ledger entry of the begun run; any field can be overridden."""
    values: dict[str, Any] = {
        "execution_id": uid(),
        "tool_call_id": f"call_{seq}",
        "run_id": begun.run.run_id,
        "interaction_id": begun.interaction.interaction_id,
        "session_id": begun.session.session_id,
        "seq": seq,
        "tool": "write_file",
        "args": {"path": "a.txt", "content": "hi"},
        "runner_id": OWNER,
        "lease_epoch": 1,
        "requested_at": datetime.now(UTC),
    }
    values.update(fields)
    return ToolExecution(**values)


def moved(e: ToolExecution, **fields: Any) -> ToolExecution:
    return e.model_copy(update=fields)


def succeeded(e: ToolExecution, result: Any) -> ToolExecution:
    now = datetime.now(UTC)
    return moved(
        e,
        status="succeeded",
        finished_at=now,
        result_digest=result_digest(result),
        result_preview=result_preview(result),
    )


async def ledger(store: BeamStore, **where: str) -> list[ToolExecution]:
    entries, _ = await store.list_tool_executions(**where)  # type: ignore[arg-type]
    return entries


async def test_an_entry_moves_forward_and_round_trips(store: BeamStore) -> None:
    begun = await begin(store)
    requested = entry(begun, read_only=False, idempotent=True, args={"path": "a", "n": [1, 2]})
    [stored] = await store.record_tool_executions(
        run_id=begun.run.run_id, lease_epoch=1, entries=[requested]
    )
    assert stored == requested
    started = moved(requested, status="started", started_at=datetime.now(UTC))
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[started])
    done = succeeded(started, {"written": 2})
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[done])
    [read] = await ledger(store, run_id=begun.run.run_id)
    assert read.status == "succeeded"
    assert read.result_digest == result_digest({"written": 2})
    assert read.result_preview == '{"written":2}'
    assert read.idempotent and not read.read_only
    assert read.started_at == started.started_at and read.finished_at == done.finished_at
    assert read.args == {"path": "a", "n": [1, 2]}


async def test_a_final_entry_never_changes(store: BeamStore) -> None:
    begun = await begin(store)
    done = succeeded(entry(begun), {"ok": True})
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[done])
    # The same final state again (a retried step) is a no-op.
    [again] = await store.record_tool_executions(
        run_id=begun.run.run_id, lease_epoch=1, entries=[done]
    )
    assert again == done
    for change in (
        moved(done, status="failed", error_code="BEM-092"),
        moved(done, status="started"),
        moved(done, result_digest=result_digest({"ok": False})),
    ):
        with expect(ErrorCode.TOOL_EXECUTION_CONFLICT):
            await store.record_tool_executions(
                run_id=begun.run.run_id, lease_epoch=1, entries=[change]
            )
    assert await ledger(store, run_id=begun.run.run_id) == [done]


async def test_an_entry_never_moves_back_nor_changes_its_call(store: BeamStore) -> None:
    begun = await begin(store)
    started = moved(entry(begun), status="started", started_at=datetime.now(UTC))
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[started])
    with expect(ErrorCode.TOOL_EXECUTION_CONFLICT):
        await store.record_tool_executions(
            run_id=begun.run.run_id, lease_epoch=1, entries=[moved(started, status="requested")]
        )
    with expect(ErrorCode.TOOL_EXECUTION_CONFLICT):
        await store.record_tool_executions(
            run_id=begun.run.run_id, lease_epoch=1, entries=[moved(started, args={"path": "b"})]
        )
    assert [e.status for e in await ledger(store, run_id=begun.run.run_id)] == ["started"]


async def test_a_refused_batch_writes_nothing(store: BeamStore) -> None:
    begun = await begin(store)
    done = succeeded(entry(begun, seq=1), 1)
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[done])
    fresh = entry(begun, seq=2)
    with expect(ErrorCode.TOOL_EXECUTION_CONFLICT):
        await store.record_tool_executions(
            run_id=begun.run.run_id,
            lease_epoch=1,
            entries=[fresh, moved(done, status="failed")],
        )
    assert await ledger(store, run_id=begun.run.run_id) == [done]


async def test_entries_of_another_run_or_bad_previews_are_refused(store: BeamStore) -> None:
    begun = await begin(store)
    other = await begin(store)
    for bad in (
        entry(other),
        entry(begun, session_id=other.session.session_id),
        entry(begun, result_preview="x" * 2049),
    ):
        with expect(ErrorCode.INVALID_TOOL_EXECUTION):
            await store.record_tool_executions(
                run_id=begun.run.run_id, lease_epoch=1, entries=[bad]
            )
    assert await ledger(store, run_id=begun.run.run_id) == []
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.record_tool_executions(run_id=uid(), lease_epoch=1, entries=[entry(begun)])


async def test_a_stale_epoch_is_refused(store: BeamStore) -> None:
    begun = await begin(store, lease_ttl_s=1.0)
    [taken] = await store.take_over_expired_runs(
        new_owner="reaper", lease_ttl_s=30, now=datetime.now(UTC) + LATER
    )
    assert taken.run.lease_epoch == 2
    with expect(ErrorCode.STALE_EPOCH):
        await store.record_tool_executions(
            run_id=begun.run.run_id, lease_epoch=1, entries=[entry(begun)]
        )
    assert await ledger(store, run_id=begun.run.run_id) == []
    # The new holder writes at its own epoch.
    await store.record_tool_executions(
        run_id=begun.run.run_id, lease_epoch=2, entries=[entry(begun, lease_epoch=2)]
    )


async def test_a_finished_run_takes_no_more_entries(store: BeamStore) -> None:
    begun = await begin(store)
    await store.finish_run(run_id=begun.run.run_id, lease_owner=OWNER, status="completed")
    with expect(ErrorCode.STALE_EPOCH):
        await store.record_tool_executions(
            run_id=begun.run.run_id, lease_epoch=1, entries=[entry(begun)]
        )
    with expect(ErrorCode.STORE_CONFLICT):
        await store.record_tool_executions(run_id=begun.run.run_id, entries=[entry(begun)])


async def test_a_takeover_settles_what_was_in_flight(store: BeamStore) -> None:
    begun = await begin(store, lease_ttl_s=1.0)
    done = succeeded(entry(begun, seq=1), "ok")
    started = moved(entry(begun, seq=2), status="started", started_at=datetime.now(UTC))
    requested = entry(begun, seq=3)
    await store.record_tool_executions(
        run_id=begun.run.run_id, lease_epoch=1, entries=[done, started, requested]
    )
    await store.take_over_expired_runs(
        new_owner="reaper", lease_ttl_s=30, now=datetime.now(UTC) + LATER
    )
    read = await ledger(store, run_id=begun.run.run_id)
    assert [e.status for e in read] == ["succeeded", "unknown", "cancelled"]
    assert read[0] == done
    assert read[1].error_code == "BEM-034" and read[1].finished_at is not None
    # The old runner's late report is refused; the unknown outcome stays on record.
    with expect(ErrorCode.STALE_EPOCH):
        await store.record_tool_executions(
            run_id=begun.run.run_id, lease_epoch=1, entries=[succeeded(started, "late")]
        )


async def test_reaping_settles_what_was_in_flight(store: BeamStore) -> None:
    begun = await begin(store, lease_ttl_s=1.0)
    started = moved(entry(begun), status="started", started_at=datetime.now(UTC))
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[started])
    await store.reap_expired_runs(now=datetime.now(UTC) + LATER)
    [read] = await ledger(store, run_id=begun.run.run_id)
    assert read.status == "unknown"


async def test_finish_run_writes_its_batch_in_its_transaction(store: BeamStore) -> None:
    begun = await begin(store)
    started = moved(entry(begun, seq=1), status="started", started_at=datetime.now(UTC))
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[started])
    batch = [succeeded(started, {"a": 1}), moved(entry(begun, seq=2), status="denied")]
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        lease_epoch=1,
        tool_executions=batch,
    )
    assert [e.status for e in await ledger(store, run_id=begun.run.run_id)] == [
        "succeeded",
        "denied",
    ]
    # A retry of the same finish (its answer lost) writes nothing again and succeeds.
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        lease_epoch=1,
        tool_executions=batch,
    )


async def test_a_refused_batch_refuses_the_finish_step(store: BeamStore) -> None:
    begun = await begin(store)
    done = succeeded(entry(begun), 1)
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[done])
    with expect(ErrorCode.TOOL_EXECUTION_CONFLICT):
        await store.finish_run(
            run_id=begun.run.run_id,
            lease_owner=OWNER,
            status="completed",
            lease_epoch=1,
            messages=[NewMessage(role="ai", content=[ContentPart.of_text("done")])],
            tool_executions=[moved(done, status="failed")],
        )
    assert (await store.get_run(run_id=begun.run.run_id)).status == "running"
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [m.role for m in messages] == ["human"]


async def test_an_interactions_ledger_spans_its_runs_in_order(store: BeamStore) -> None:
    first = await begin(store)
    await store.record_tool_executions(
        run_id=first.run.run_id,
        lease_epoch=1,
        entries=[entry(first, seq=1, tool="read_file"), entry(first, seq=2, tool="write_file")],
    )
    await store.finish_run(run_id=first.run.run_id, lease_owner=OWNER, status="completed")
    second = await begin(
        store,
        session_id=first.session.session_id,
        interaction_id=first.interaction.interaction_id,
    )
    await store.finish_run(
        run_id=second.run.run_id,
        lease_owner=OWNER,
        status="completed",
        tool_executions=[entry(second, seq=1, tool="git_commit")],
    )
    by_interaction = await ledger(store, interaction_id=first.interaction.interaction_id)
    assert [(e.run_id, e.tool) for e in by_interaction] == [
        (first.run.run_id, "read_file"),
        (first.run.run_id, "write_file"),
        (second.run.run_id, "git_commit"),
    ]
    assert [e.tool for e in await ledger(store, run_id=second.run.run_id)] == ["git_commit"]


async def test_ledger_pages(store: BeamStore) -> None:
    begun = await begin(store)
    await store.record_tool_executions(
        run_id=begun.run.run_id,
        lease_epoch=1,
        entries=[entry(begun, seq=i) for i in range(1, 6)],
    )
    seen: list[int] = []
    token: str | None = None
    while True:
        page, token = await store.list_tool_executions(
            run_id=begun.run.run_id, page_size=2, page_token=token
        )
        seen.extend(e.seq for e in page)
        if token is None:
            break
    assert seen == [1, 2, 3, 4, 5]
    with expect(ErrorCode.INVALID_PAGE_TOKEN):
        await store.list_tool_executions(run_id=begun.run.run_id, page_token="!!")


async def test_ledger_reads_name_one_known_run_or_interaction(store: BeamStore) -> None:
    begun = await begin(store)
    with expect(ErrorCode.LEDGER_QUERY):
        await store.list_tool_executions()
    with expect(ErrorCode.LEDGER_QUERY):
        await store.list_tool_executions(
            run_id=begun.run.run_id, interaction_id=begun.interaction.interaction_id
        )
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.list_tool_executions(run_id=uid())
    with expect(ErrorCode.INTERACTION_NOT_FOUND):
        await store.list_tool_executions(interaction_id=uid())


async def test_concurrent_writers_of_one_entry_leave_one_final_state(store: BeamStore) -> None:
    begun = await begin(store)
    started = moved(entry(begun), status="started", started_at=datetime.now(UTC))
    await store.record_tool_executions(run_id=begun.run.run_id, lease_epoch=1, entries=[started])
    outcomes = await asyncio.gather(
        store.record_tool_executions(
            run_id=begun.run.run_id, lease_epoch=1, entries=[succeeded(started, "a")]
        ),
        store.record_tool_executions(
            run_id=begun.run.run_id,
            lease_epoch=1,
            entries=[moved(started, status="failed", error_code="BEM-092")],
        ),
        return_exceptions=True,
    )
    refused = [o for o in outcomes if isinstance(o, Exception)]
    assert len(refused) == 1
    assert getattr(refused[0], "code", None) is ErrorCode.TOOL_EXECUTION_CONFLICT
    [read] = await ledger(store, run_id=begun.run.run_id)
    assert read.status in ("succeeded", "failed")


async def test_deleting_an_idle_session_deletes_its_ledger(
    store: BeamStore, age_sessions: AgeSessions
) -> None:
    begun = await begin(store)
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        tool_executions=[entry(begun)],
    )
    await age_sessions(timedelta(hours=2))
    await store.delete_idle_sessions(older_than=timedelta(hours=1))
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.list_tool_executions(run_id=begun.run.run_id)
