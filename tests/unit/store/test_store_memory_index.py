"""InMemoryStore's index of running runs: right after every state transition, and the busy check
and the reaper read only the running runs (counted rows, not timed)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import InMemoryStore
from riverbeam.store._memory_tables import RunTable
from riverbeam.types import ContentPart, Run

T0 = datetime(2030, 1, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def _index(store: InMemoryStore) -> dict[str, set[str]]:
    """The index as it is, and checked against a full scan of the rows."""
    runs = store._t.runs
    indexed = {s: {r.run_id for r in runs.running_in(s)} for s in runs.running_sessions()}
    scanned: dict[str, set[str]] = {}
    for run in runs.values():
        if run.status == "running":
            scanned.setdefault(run.session_id, set()).add(run.run_id)
    assert indexed == scanned
    return indexed


async def _begin(store: InMemoryStore, session: str, run: str, *, exclusive: bool = False) -> None:
    await store.begin_run(
        session_id=session,
        agent_name="a",
        run_id=run,
        lease_owner="w",
        lease_ttl_s=30,
        exclusive=exclusive,
        human_content=[ContentPart(type="text", text="hi")],
    )


async def test_the_index_follows_begin_finish_renew_reap_and_retention() -> None:
    clock = Clock()
    store = InMemoryStore(clock=clock)
    await _begin(store, "s1", "r1")
    await _begin(store, "s1", "r2")
    await _begin(store, "s2", "r3")
    assert _index(store) == {"s1": {"r1", "r2"}, "s2": {"r3"}}

    await store.finish_run(run_id="r1", lease_owner="w", status="completed")
    assert _index(store) == {"s1": {"r2"}, "s2": {"r3"}}
    assert await store.renew_lease(run_id="r2", lease_owner="w", ttl_s=60)
    assert _index(store) == {"s1": {"r2"}, "s2": {"r3"}}

    # A refused step changes nothing.
    with pytest.raises(RiverbeamError) as refused:
        await _begin(store, "s1", "r4", exclusive=True)
    assert refused.value.code is ErrorCode.SESSION_BUSY
    with pytest.raises(RiverbeamError):
        await store.finish_run(run_id="r1", lease_owner="w", status="failed")
    assert _index(store) == {"s1": {"r2"}, "s2": {"r3"}}

    clock.now = T0 + timedelta(seconds=31)  # r3's lease is over, r2's (renewed) is not
    (reaped,) = await store.reap_expired_runs()
    assert reaped.run_id == "r3"
    assert _index(store) == {"s1": {"r2"}}
    await _begin(store, "s2", "r5", exclusive=True)  # s2 is no longer busy
    assert _index(store) == {"s1": {"r2"}, "s2": {"r5"}}

    await store.finish_run(run_id="r2", lease_owner="w", status="interrupted")
    await store.finish_run(run_id="r5", lease_owner="w", status="completed")
    assert _index(store) == {}
    await _begin(store, "s1", "r6", exclusive=True)
    assert _index(store) == {"s1": {"r6"}}

    clock.now = T0 + timedelta(days=1)
    await store.finish_run(run_id="r6", lease_owner="w", status="completed")
    await _begin(store, "s3", "r7")
    clock.now = T0 + timedelta(days=1, seconds=1)
    # s2 is idle (s1 was active a second ago, s3 is busy): its runs go, and the index agrees.
    assert await store.delete_idle_sessions(older_than=timedelta(hours=1)) == 1
    assert set(store._t.runs) == {"r1", "r2", "r6", "r7"}
    assert _index(store) == {"s3": {"r7"}}


async def test_the_busy_check_reads_only_the_session_s_running_runs() -> None:
    store = InMemoryStore()
    for i in range(300):  # finished runs of other sessions, and of this one
        await _begin(store, f"other-{i % 50}", f"done-{i}")
        await store.finish_run(run_id=f"done-{i}", lease_owner="w", status="completed")
    await _begin(store, "s", "live")
    runs = store._t.runs
    before = runs.scanned
    with pytest.raises(RiverbeamError) as busy:
        await _begin(store, "s", "second", exclusive=True)
    assert busy.value.code is ErrorCode.SESSION_BUSY
    assert runs.scanned - before == 1  # the one running run, not the 301 stored
    before = runs.scanned
    await _begin(store, "fresh", "third", exclusive=True)
    assert runs.scanned - before == 0
    before = runs.scanned
    assert await store.reap_expired_runs() == []
    assert runs.scanned - before == 2  # the running runs ("live", "third"), not the 302 stored


async def test_the_take_over_reads_only_the_running_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    store = InMemoryStore(clock=clock)
    for i in range(300):  # finished runs, whose leases are long over by the take-over
        await _begin(store, f"other-{i % 50}", f"done-{i}")
        await store.finish_run(run_id=f"done-{i}", lease_owner="w", status="completed")
    await _begin(store, "s", "lost")
    await _begin(store, "s2", "kept")
    clock.now = T0 + timedelta(minutes=10)  # every lease given so far is over
    runs = store._t.runs
    before = runs.scanned

    def every_row(_: RunTable) -> Iterator[str]:
        raise AssertionError("the take-over walked every stored run")

    monkeypatch.setattr(RunTable, "__iter__", every_row)
    taken = await store.take_over_expired_runs(
        new_owner="w2", lease_ttl_s=30, exclude_run_ids=["kept"]
    )
    assert [(t.run.run_id, t.previous_owner) for t in taken] == [("lost", "w")]
    # The running runs ("lost", "kept"), for the candidates and for lost's children: not the
    # 302 stored.
    assert runs.scanned - before == 4
    monkeypatch.undo()
    assert runs["lost"].lease_owner == "w2"
    assert runs["lost"].lease_epoch == 2
    assert runs["kept"].lease_owner == "w"
    assert {r for r, run in runs.items() if run.status == "running"} == {"lost", "kept"}


def _run(run_id: str, session: str, status: str) -> Run:
    return Run(
        run_id=run_id,
        interaction_id="i",
        session_id=session,
        agent_name="a",
        status=status,  # type: ignore[arg-type]
        started_at=T0,
    )


def test_every_mapping_write_keeps_the_index() -> None:
    table = RunTable()
    table["a"] = _run("a", "s1", "running")
    table.update({"b": _run("b", "s1", "running"), "c": _run("c", "s2", "completed")})
    assert {r.run_id for r in table.running_in("s1")} == {"a", "b"}
    assert table.running_in("s2") == []
    table["a"] = _run("a", "s1", "failed")
    assert [r.run_id for r in table.running_in("s1")] == ["b"]
    table["c"] = _run("c", "s2", "running")
    assert table.running_sessions() == {"s1", "s2"}
    assert table.pop("b").run_id == "b"
    del table["c"]
    assert table.running_sessions() == set()
    assert table.running() == []
    table["d"] = _run("d", "s3", "running")
    table.clear()
    assert len(table) == 0 and table.running_sessions() == set()
    assert table.get("d") is None and "d" not in table
