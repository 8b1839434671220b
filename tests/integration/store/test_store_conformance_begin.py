"""Conformance of the begin-run step's history and owner check, on every implementation.

Part of the BeamStore conformance suite: `store` is InMemoryStore, PgBeamStore, and
StoreClient -> store service -> PgBeamStore, and every test runs unchanged on each.
"""

from __future__ import annotations

import asyncio

from store_kit import OWNER, answer, begin, expect, interrupted_with, resume, uid

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import BeamStore, BeginRunResult, NewMessage
from riverbeam.types import ContentPart, Message


def _text(text: str) -> list[ContentPart]:
    return [ContentPart.of_text(text)]


async def _messages(store: BeamStore, session_id: str) -> list[Message]:
    """Every message of the session, in sequence order."""
    out: list[Message] = []
    token: str | None = None
    while True:
        page, token = await store.list_messages(
            session_id=session_id, page_size=1000, page_token=token
        )
        out.extend(page)
        if not token:
            return out


async def _finish(store: BeamStore, begun: BeginRunResult, *replies: str) -> None:
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        messages=[NewMessage(role="ai", content=_text(r)) for r in replies],
    )


# ---- history ---------------------------------------------------------------------------------
async def test_a_fresh_session_has_no_history(store: BeamStore) -> None:
    begun = await begin(store, history_limit=50)
    assert begun.history == []
    assert begun.human_message is not None and begun.human_message.seq == 1
    assert (await begin(store)).history == []  # the default asks for none


async def test_a_second_turn_gets_the_earlier_messages_oldest_first(store: BeamStore) -> None:
    first = await begin(store, history_limit=50)
    sid = first.session.session_id
    await _finish(store, first, "hi there", "anything else?")
    appended = await store.append_message(session_id=sid, role="system", content=_text("note"))
    second = await begin(
        store, session_id=sid, interaction_id=uid(), history_limit=50, human_content=_text("more")
    )
    assert [m.seq for m in second.history] == [1, 2, 3, 4]
    # Exactly the stored records, this step's human message excluded.
    stored = await _messages(store, sid)
    assert second.history == stored[:4]
    assert second.history[-1] == appended
    assert second.human_message == stored[4] and second.human_message.seq == 5
    assert all(m.run_id != second.run.run_id for m in second.history)


async def test_history_limit_keeps_the_newest(store: BeamStore) -> None:
    first = await begin(store)
    sid = first.session.session_id
    await _finish(store, first, "one", "two", "three")
    two = await begin(store, session_id=sid, history_limit=2)
    assert [(m.seq, m.text) for m in two.history] == [(3, "two"), (4, "three")]
    await _finish(store, two, "four")
    one = await begin(store, session_id=sid, history_limit=1)
    assert [(m.seq, m.text) for m in one.history] == [(6, "four")]
    none = await begin(store, session_id=sid, history_limit=0)
    assert none.history == []


async def test_a_resume_gets_the_history_without_its_own_action_results(
    store: BeamStore,
) -> None:
    begun, ids = await interrupted_with(store, count=2)
    sid = begun.session.session_id
    resumed = await resume(
        store,
        begun,
        answer(ids[0]),
        answer(ids[1], "cancelled"),
        human_content=_text("go on"),
        history_limit=50,
    )
    assert [m.seq for m in resumed.action_messages] == [3, 4]
    assert resumed.human_message is not None and resumed.human_message.seq == 5
    stored = await _messages(store, sid)
    assert resumed.history == stored[:2]
    assert [(m.role, m.text) for m in resumed.history] == [
        ("human", "hello"),
        ("ai", "may I push?"),
    ]


async def test_a_thousand_message_session_returns_only_the_newest(store: BeamStore) -> None:
    first = await begin(store)  # seq 1
    sid = first.session.session_id
    await _finish(store, first, *(f"m{seq}" for seq in range(2, 1001)))
    begun = await begin(store, session_id=sid, history_limit=7)
    assert [m.seq for m in begun.history] == list(range(994, 1001))
    assert [m.text for m in begun.history] == [f"m{seq}" for seq in range(994, 1001)]
    assert begun.human_message is not None and begun.human_message.seq == 1001
    # Asking for more than the maximum (1000) gets the newest 1000.
    most = await begin(store, session_id=sid, history_limit=5000)
    assert [m.seq for m in most.history] == list(range(2, 1002))


async def test_a_negative_history_limit_is_refused_and_writes_nothing(store: BeamStore) -> None:
    sid = uid()
    with expect(ErrorCode.INVALID_ARGUMENT) as info:
        await begin(store, session_id=sid, history_limit=-1)
    assert info.value.details.get("field") == "history_limit"
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await store.get_session(session_id=sid)


# ---- require_owner ---------------------------------------------------------------------------
async def test_require_owner_admits_a_new_session_and_its_owner(store: BeamStore) -> None:
    first = await begin(store, user_id="alice", require_owner="alice")
    sid = first.session.session_id
    assert first.session.user_id == "alice"
    await _finish(store, first, "hi")
    again = await begin(store, session_id=sid, user_id="alice", require_owner="alice")
    assert again.session.user_id == "alice"
    assert again.human_message is not None and again.human_message.seq == 3


async def test_require_owner_refuses_another_users_session_and_writes_nothing(
    store: BeamStore,
) -> None:
    first = await begin(store, user_id="alice")
    sid = first.session.session_id
    await _finish(store, first, "hi")
    session, messages = await store.get_session(session_id=sid), await _messages(store, sid)
    request_id, interaction_id = uid(), uid()
    with expect(ErrorCode.SESSION_NOT_FOUND) as info:
        await begin(
            store,
            session_id=sid,
            user_id="bob",
            require_owner="bob",
            request_id=request_id,
            interaction_id=interaction_id,
            exclusive=True,
            history_limit=50,
        )
    assert info.value.details.get("session_id") == sid
    assert await store.get_session(session_id=sid) == session
    assert await _messages(store, sid) == messages
    assert await store.get_run_by_request(request_id=request_id) is None
    with expect(ErrorCode.INTERACTION_NOT_FOUND):
        await store.get_interaction(interaction_id=interaction_id)


async def test_require_org_refuses_the_same_user_id_of_another_org(store: BeamStore) -> None:
    first = await begin(store, user_id="alice", org_id="o1")
    sid = first.session.session_id
    await _finish(store, first, "hi")
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await begin(store, session_id=sid, user_id="alice", require_owner="alice", require_org="o2")
    same_org = await begin(
        store, session_id=sid, user_id="alice", require_owner="alice", require_org="o1"
    )
    assert same_org.session.org_id == "o1"


async def test_require_org_does_not_constrain_an_unscoped_session(store: BeamStore) -> None:
    first = await begin(store, user_id="alice")  # single-tenant: no org id
    sid = first.session.session_id
    await _finish(store, first, "hi")
    again = await begin(
        store, session_id=sid, user_id="alice", require_owner="alice", require_org="o1"
    )
    assert again.session.user_id == "alice"


async def test_require_owner_refuses_a_session_without_owner(store: BeamStore) -> None:
    first = await begin(store)  # no user_id: nobody's session
    sid = first.session.session_id
    await _finish(store, first, "hi")
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await begin(store, session_id=sid, user_id="alice", require_owner="alice")
    assert (await store.get_session(session_id=sid)).user_id is None  # not claimed


async def test_require_owner_is_checked_before_the_session_is_busy(store: BeamStore) -> None:
    running = await begin(store, user_id="alice", exclusive=True)
    sid = running.session.session_id
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await begin(store, session_id=sid, user_id="bob", require_owner="bob", exclusive=True)
    with expect(ErrorCode.SESSION_BUSY):
        await begin(store, session_id=sid, user_id="alice", require_owner="alice", exclusive=True)


async def test_concurrent_creators_of_one_new_session_never_share_it(store: BeamStore) -> None:
    sid = uid()
    users = ["alice", "bob"] * 10
    outcomes = await asyncio.gather(
        *(begin(store, session_id=sid, user_id=u, require_owner=u) for u in users),
        return_exceptions=True,
    )
    owner = (await store.get_session(session_id=sid)).user_id
    assert owner in ("alice", "bob")
    won: set[str] = set()
    for user, outcome in zip(users, outcomes, strict=True):
        if user == owner:
            assert isinstance(outcome, BeginRunResult), outcome
            won.add(outcome.run.run_id)
        else:
            assert isinstance(outcome, RiverbeamError), outcome
            assert outcome.code is ErrorCode.SESSION_NOT_FOUND
    stored = await _messages(store, sid)
    assert [m.seq for m in stored] == list(range(1, 11))
    assert {m.run_id for m in stored} == won
