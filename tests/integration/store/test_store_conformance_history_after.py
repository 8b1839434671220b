"""Conformance of begin_run's history_after: the caller's held messages are not sent again.

Part of the BeamStore conformance suite (memory, postgres, grpc). The last tests drive a
StoreClient with no history_after of its own: it names the window it holds itself
(store/_session_history.py), and each turn's history must still be the stored window.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from store_kit import (
    OWNER,
    AgeSessions,
    age_pg_sessions,
    answer,
    begin,
    interrupted_with,
    resume,
    uid,
)

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer
from riverbeam.store import (
    BeamStore,
    BeginRunResult,
    InMemoryStore,
    NewMessage,
    PgBeamStore,
    StoreClient,
    _session_history,
)
from riverbeam.store import _client as client_module
from riverbeam.types import ContentPart, Message
from services.store.app import binding


def _text(text: str) -> list[ContentPart]:
    return [ContentPart.of_text(text)]


async def _finish(store: BeamStore, begun: BeginRunResult, *replies: str) -> None:
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        messages=[NewMessage(role="ai", content=_text(r)) for r in replies],
    )


async def _turns(store: BeamStore, sid: str, n: int) -> None:
    for i in range(n):
        begun = await begin(store, session_id=sid, human_content=_text(f"q{i}"))
        await _finish(store, begun, f"a{i}")


async def _stored(store: BeamStore, sid: str) -> list[Message]:
    page, _ = await store.list_messages(session_id=sid, page_size=1000)
    return page


async def test_a_held_seq_with_its_id_leaves_the_held_messages_out(store: BeamStore) -> None:
    sid = uid()
    await _turns(store, sid, 3)  # seqs 1..6
    stored = await _stored(store, sid)
    begun = await begin(
        store,
        session_id=sid,
        history_limit=50,
        history_after=4,
        history_after_id=stored[3].message_id,
    )
    assert begun.history_after == 4
    assert begun.history == stored[4:6]
    assert begun.human_message is not None and begun.human_message.seq == 7


async def test_holding_everything_gets_an_empty_history(store: BeamStore) -> None:
    sid = uid()
    await _turns(store, sid, 2)
    stored = await _stored(store, sid)
    begun = await begin(
        store,
        session_id=sid,
        history_limit=10,
        history_after=4,
        history_after_id=stored[3].message_id,
    )
    assert (begun.history_after, begun.history) == (4, [])


async def test_the_window_still_bounds_what_is_sent(store: BeamStore) -> None:
    sid = uid()
    await _turns(store, sid, 5)  # seqs 1..10
    stored = await _stored(store, sid)
    begun = await begin(
        store,
        session_id=sid,
        history_limit=3,
        history_after=2,
        history_after_id=stored[1].message_id,
    )
    # The newest 3 are 8..10; nothing of the held 1..2 is in that window anyway.
    assert begun.history == stored[7:10]


async def test_another_id_at_the_held_seq_gets_the_whole_window(store: BeamStore) -> None:
    sid = uid()
    await _turns(store, sid, 3)
    stored = await _stored(store, sid)
    for seq, message_id in ((4, uid()), (4, stored[2].message_id), (99, stored[3].message_id)):
        begun = await begin(
            store, session_id=sid, history_limit=50, history_after=seq, history_after_id=message_id
        )
        assert begun.history_after == 0
        assert [m.seq for m in begun.history] == list(range(1, begun.history[-1].seq + 1))
        await _finish(store, begun, "ok")


async def test_no_id_or_no_limit_ignores_history_after(store: BeamStore) -> None:
    sid = uid()
    await _turns(store, sid, 2)
    stored = await _stored(store, sid)
    begun = await begin(store, session_id=sid, history_limit=50, history_after=2)
    assert begun.history_after == 0 and begun.history == stored[:4]
    await _finish(store, begun, "ok")
    none = await begin(
        store, session_id=sid, history_after=2, history_after_id=stored[1].message_id
    )
    assert none.history_after == 0 and none.history == []


async def test_a_session_made_again_under_its_id_gets_its_whole_window(
    store: BeamStore, age_sessions: AgeSessions
) -> None:
    sid = uid()
    await _turns(store, sid, 2)
    old = await _stored(store, sid)
    await age_sessions(timedelta(hours=2))
    assert await store.delete_idle_sessions(older_than=timedelta(hours=1)) >= 1
    await _turns(store, sid, 3)
    begun = await begin(
        store, session_id=sid, history_limit=50, history_after=4, history_after_id=old[3].message_id
    )
    assert begun.history_after == 0
    assert begun.history == (await _stored(store, sid))[:6]


# ---- a StoreClient naming the window it holds ---------------------------------------------------
async def test_store_client_turns_get_the_stored_window(
    pg_store: PgBeamStore, pg_url: str, pg_schema: str
) -> None:
    """Two clients (two runner replicas) take turns on sessions; every turn's history is the
    store's own window, also when a turn changes the history it was given, when the limit
    grows and when the session is deleted and made again under its id."""
    answered: list[int] = []
    begin_run = pg_store.begin_run

    async def recording(**kwargs: Any) -> BeginRunResult:
        got = await begin_run(**kwargs)
        answered.append(got.history_after)
        return got

    pg_store.begin_run = recording  # type: ignore[method-assign]
    async with GrpcServer([binding(pg_store)], listen="127.0.0.1:0", grace_s=1.0) as server:
        a = StoreClient(f"127.0.0.1:{server.port}", timeout_s=30.0)
        b = StoreClient(f"127.0.0.1:{server.port}", timeout_s=30.0)
        try:
            sid = uid()
            plan = [(a, 4), (a, 4), (b, 4), (a, 4), (a, 9), (b, 3), (a, 9), (a, 9), (a, 9), (a, 9)]
            for turn, (client, limit) in enumerate(plan):
                if turn == 7:
                    await age_pg_sessions(pg_url, pg_schema, timedelta(hours=2))
                    assert await pg_store.delete_idle_sessions(older_than=timedelta(hours=1)) >= 1
                begun = await begin(client, session_id=sid, history_limit=limit)
                assert begun.human_message is not None
                below = begun.human_message.seq
                window = [m for m in await _stored(pg_store, sid) if m.seq < below][-limit:]
                assert begun.history == window, turn
                for m in begun.history:  # what a turn does to its copies is not held
                    m.content.append(ContentPart.of_text("changed"))
                    m.metadata = {"changed": True}
                await _finish(client, begun, f"a{turn}")
            # Held windows were named and honoured: a's 4th turn (after its 2nd), b's 2nd (a
            # smaller limit), a's turn after that (b's turns between are sent as the rest) and
            # a's 2nd turn of the session made again; not a first turn, not after a grown
            # limit (9 > 4), not after the session was made again (no message at the held
            # seq) and not after an empty window.
            assert answered == [0, 0, 0, 2, 0, 4, 8, 0, 0, 2]
        finally:
            await a.aclose()
            await b.aclose()


async def test_a_held_window_is_converted_and_walked_once_per_message(
    memory_store: InMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn of a session whose window the client holds converts and prepares only the
    messages that are new since its last turn: the held ones are copied by the makers made
    when they were first held, never converted or walked again, however long the window."""
    counts: Counter[str] = Counter()
    make, copy, convert = _session_history.copy_maker, client_module.deep_copy, Message.from_proto

    def counting_maker(m: Message) -> Any:
        counts["makers"] += 1
        return make(m)

    def counting_copy(m: Message) -> Message:
        counts["deep_copies"] += 1
        return copy(m)

    def counting_convert(cls: type[Message], m: Any) -> Message:
        counts["conversions"] += 1
        return convert.__func__(cls, m)  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(_session_history, "copy_maker", counting_maker)
    monkeypatch.setattr(client_module, "deep_copy", counting_copy)
    monkeypatch.setattr(Message, "from_proto", classmethod(counting_convert))
    async with GrpcServer([binding(memory_store)], listen="127.0.0.1:0", grace_s=1.0) as server:
        client = StoreClient(f"127.0.0.1:{server.port}", timeout_s=30.0)
        try:
            sid = uid()
            per_turn: list[tuple[int, Counter[str]]] = []
            held: list[Message] = []
            for turn in range(12):
                counts.clear()
                begun = await begin(client, session_id=sid, history_limit=200)
                per_turn.append((len(begun.history), +counts))
                assert begun.history == held
                # Every turn's copies are new objects: none is one handed out before.
                assert not {id(m) for m in begun.history} & {id(m) for m in held}
                assert begun.human_message is not None
                held = [*begun.history, begun.human_message]
                await _finish(client, begun, f"a{turn}")
                held.append((await _stored(memory_store, sid))[-1])
        finally:
            await client.aclose()
    # The 1st turn holds nothing; from the 2nd on each turn gets the 2 messages of the last
    # turn (converted and given makers) and its human message (converted): 3 conversions and
    # 2 makers a turn whether it holds 2 messages or 22, and no deep copy of the window.
    assert per_turn[0] == (0, Counter({"conversions": 1}))
    for turn, (size, got) in enumerate(per_turn[1:], start=1):
        assert size == 2 * turn
        assert got == Counter({"conversions": 3, "makers": 2}), (turn, got)


# ---- lock order of the folded steps -------------------------------------------------------------
async def test_a_finish_and_queued_resumes_of_its_session_do_not_deadlock(
    store: BeamStore,
) -> None:
    """A resumed run finishes while other resumes of the same (answered) action wait on the
    session: each resume holds the session and then updates the interaction, so the finish
    must take the session before the interaction. Every loser is told 066, never 121."""
    for _ in range(5):
        begun, (action_id,) = await interrupted_with(store)
        won = await resume(store, begun, answer(action_id))
        results = await asyncio.gather(
            _finish(store, won, "pushed"),
            *(resume(store, begun, answer(action_id)) for _ in range(12)),
            return_exceptions=True,
        )
        assert results[0] is None
        for lost in results[1:]:
            assert isinstance(lost, RiverbeamError), lost
            assert lost.code is ErrorCode.ACTION_NOT_PENDING, lost
