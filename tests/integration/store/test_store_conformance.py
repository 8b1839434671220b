"""The BeamStore conformance suite: every test runs, unchanged, against each implementation.

`store` is InMemoryStore, PgBeamStore, and StoreClient -> store service -> PgBeamStore.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from store_kit import (
    OWNER,
    AgeSessions,
    answer,
    begin,
    expect,
    interrupted_with,
    resume,
    uid,
    unchecked_answer,
)

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import MIN_RETENTION_IDLE_DAYS
from riverbeam.store import BeamStore, NewAction, NewMessage
from riverbeam.types import AgentResult, ContentPart, TokenUsage


async def test_every_implementation_is_a_beamstore(store: BeamStore) -> None:
    assert isinstance(store, BeamStore)


# ---- begin_run: sessions, interactions, runs -------------------------------------------------
async def test_begin_run_creates_the_whole_step(store: BeamStore) -> None:
    begun = await begin(store, message_metadata={"source": "api", "n": 2})
    assert begun.session.last_seq == 1
    assert begun.interaction.status == "in_progress"
    assert begun.interaction.session_id == begun.session.session_id
    assert begun.run.status == "running"
    assert begun.run.lease_owner == OWNER
    assert (
        begun.run.lease_expires_at is not None and begun.run.lease_expires_at > begun.run.started_at
    )
    human = begun.human_message
    assert human is not None
    assert (human.seq, human.role, human.type, human.text) == (1, "human", "message", "hello")
    assert human.metadata == {"source": "api", "n": 2}
    assert (human.run_id, human.interaction_id) == (
        begun.run.run_id,
        begun.interaction.interaction_id,
    )
    assert await store.get_session(session_id=begun.session.session_id) == begun.session
    assert (
        await store.get_interaction(interaction_id=begun.interaction.interaction_id)
        == begun.interaction
    )
    assert await store.get_run(run_id=begun.run.run_id) == begun.run
    messages, token = await store.list_messages(session_id=begun.session.session_id)
    assert messages == [human] and token is None


async def test_empty_human_content_saves_no_message(store: BeamStore) -> None:
    begun = await begin(store, human_content=[])
    assert begun.human_message is None
    assert begun.session.last_seq == 0
    assert (await store.list_messages(session_id=begun.session.session_id))[0] == []


async def test_owner_ids_are_stored_whatever_their_form(store: BeamStore) -> None:
    begun = await begin(
        store, user_id="alice@example.com", profile_id="profile 7", org_id="acme-corp"
    )
    session = await store.get_session(session_id=begun.session.session_id)
    assert (session.user_id, session.profile_id, session.org_id) == (
        "alice@example.com",
        "profile 7",
        "acme-corp",
    )


async def test_first_owner_ids_stick_and_missing_ones_are_filled(store: BeamStore) -> None:
    first = await begin(store, user_id="alice")
    sid = first.session.session_id
    await store.finish_run(run_id=first.run.run_id, lease_owner=OWNER, status="completed")
    second = await begin(store, session_id=sid, user_id="mallory", org_id="acme")
    assert (second.session.user_id, second.session.org_id) == ("alice", "acme")
    assert second.session.created_at == first.session.created_at
    assert second.session.last_active_at >= first.session.last_active_at


async def test_interaction_is_created_with_the_given_id_then_reused(store: BeamStore) -> None:
    iid = uid()
    first = await begin(store, interaction_id=iid)
    assert first.interaction.interaction_id == iid
    await store.finish_run(run_id=first.run.run_id, lease_owner=OWNER, status="completed")
    assert (await store.get_interaction(interaction_id=iid)).status == "completed"
    second = await begin(store, session_id=first.session.session_id, interaction_id=iid)
    assert second.interaction.interaction_id == iid
    assert second.interaction.status == "in_progress"
    assert second.interaction.created_at == first.interaction.created_at
    runs = await store.list_runs(interaction_id=iid)
    assert [r.run_id for r in runs] == [first.run.run_id, second.run.run_id]


async def test_interaction_of_another_session_is_refused(store: BeamStore) -> None:
    other = await begin(store)
    with expect(ErrorCode.INTERACTION_NOT_RESUMABLE):
        await begin(store, interaction_id=other.interaction.interaction_id)


async def test_request_id_is_unique_across_runs(store: BeamStore) -> None:
    request_id = uid()
    begun = await begin(store, request_id=request_id)
    assert await store.get_run_by_request(request_id=request_id) == begun.run
    assert await store.get_run_by_request(request_id=uid()) is None
    fresh_session = uid()
    with expect(ErrorCode.REQUEST_ID_REUSED):
        await begin(store, session_id=fresh_session, request_id=request_id)
    with expect(ErrorCode.SESSION_NOT_FOUND):  # the failed step wrote nothing
        await store.get_session(session_id=fresh_session)


async def test_exclusive_refuses_a_second_live_run_of_the_session(store: BeamStore) -> None:
    first = await begin(store, exclusive=True)
    sid = first.session.session_id
    with expect(ErrorCode.SESSION_BUSY):
        await begin(store, session_id=sid, exclusive=True)
    parallel = await begin(store, session_id=sid, exclusive=False)
    assert parallel.run.status == "running"
    for run in (first.run, parallel.run):
        await store.finish_run(run_id=run.run_id, lease_owner=OWNER, status="completed")
    assert (await begin(store, session_id=sid, exclusive=True)).run.status == "running"


async def test_exclusive_ignores_a_run_whose_lease_expired(store: BeamStore) -> None:
    first = await begin(store, exclusive=True, lease_ttl_s=0.2)
    await asyncio.sleep(0.4)
    again = await begin(store, session_id=first.session.session_id, exclusive=True)
    assert again.run.status == "running"


async def test_concurrent_exclusive_begins_admit_exactly_one(store: BeamStore) -> None:
    sid = uid()
    outcomes = await asyncio.gather(
        *(begin(store, session_id=sid, exclusive=True) for _ in range(20)), return_exceptions=True
    )
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(outcomes) - len(errors) == 1
    assert all(isinstance(e, RiverbeamError) and e.code is ErrorCode.SESSION_BUSY for e in errors)


async def test_unknown_ids_are_not_found(store: BeamStore) -> None:
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await store.get_session(session_id=uid())
    with expect(ErrorCode.INTERACTION_NOT_FOUND):
        await store.get_interaction(interaction_id=uid())
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.get_run(run_id=uid())
    with expect(ErrorCode.ACTION_NOT_FOUND):
        await store.get_action(action_id=uid())
    with expect(ErrorCode.INTERACTION_NOT_FOUND):
        await store.list_runs(interaction_id=uid())
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await store.list_messages(session_id=uid())


# ---- finish_run -------------------------------------------------------------------------------
async def test_finish_run_records_the_whole_step(store: BeamStore) -> None:
    begun = await begin(store)
    result = AgentResult(
        agent_name="author", content=[ContentPart.of_text("done")], model_used="m1"
    )
    usage = TokenUsage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
    run = await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        messages=[
            NewMessage(
                role="tool",
                type="tool_result",
                tool_name="read_file",
                tool_args={"path": "a.md", "limit": 3},
                tool_call_id="c1",
                tool_result={"lines": [1, 2, 3]},
            ),
            NewMessage(role="ai", content=[ContentPart.of_text("done")], metadata={"k": "v"}),
        ],
        token_usage=usage,
        model_used="m1",
        result=result,
    )
    assert run.status == "completed" and run.finished_at is not None
    assert (run.token_usage, run.model_used, run.result) == (usage, "m1", result)
    assert await store.get_run(run_id=run.run_id) == run
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [(m.seq, m.role, m.type) for m in messages] == [
        (1, "human", "message"),
        (2, "tool", "tool_result"),
        (3, "ai", "message"),
    ]
    tool = messages[1]
    assert (tool.tool_args, tool.tool_result, tool.tool_call_id) == (
        {"path": "a.md", "limit": 3},
        {"lines": [1, 2, 3]},
        "c1",
    )
    assert messages[2].metadata == {"k": "v"} and messages[2].run_id == run.run_id
    assert (await store.get_interaction(interaction_id=run.interaction_id)).status == "completed"
    session = await store.get_session(session_id=begun.session.session_id)
    assert session.last_seq == 3 and session.last_active_at >= begun.session.last_active_at


@pytest.mark.parametrize(
    ("status", "interaction_status"),
    [
        ("completed", "completed"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
        ("interrupted", "in_progress"),
    ],
)
async def test_interaction_follows_the_run_by_default(
    store: BeamStore, status: str, interaction_status: str
) -> None:
    begun = await begin(store)
    await store.finish_run(
        run_id=begun.run.run_id, lease_owner=OWNER, status=status, error_code="BEM-087"
    )  # type: ignore[arg-type]
    interaction = await store.get_interaction(interaction_id=begun.interaction.interaction_id)
    assert interaction.status == interaction_status
    assert (await store.get_run(run_id=begun.run.run_id)).error_code == "BEM-087"


async def test_explicit_interaction_status_wins(store: BeamStore) -> None:
    begun = await begin(store)
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="failed",
        interaction_status="in_progress",
    )
    assert (
        await store.get_interaction(interaction_id=begun.interaction.interaction_id)
    ).status == "in_progress"


async def test_finish_run_needs_the_running_run_and_its_lease_owner(store: BeamStore) -> None:
    begun = await begin(store)
    run_id, sid = begun.run.run_id, begun.session.session_id
    ai = [NewMessage(role="ai", content=[ContentPart.of_text("x")])]
    with expect(ErrorCode.STORE_CONFLICT):
        await store.finish_run(
            run_id=run_id, lease_owner="someone-else", status="completed", messages=ai
        )
    assert (await store.get_session(session_id=sid)).last_seq == 1  # nothing written
    await store.finish_run(run_id=run_id, lease_owner=OWNER, status="completed")
    with expect(ErrorCode.STORE_CONFLICT):
        await store.finish_run(run_id=run_id, lease_owner=OWNER, status="failed", messages=ai)
    assert (await store.get_run(run_id=run_id)).status == "completed"
    assert (await store.get_session(session_id=sid)).last_seq == 1
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.finish_run(run_id=uid(), lease_owner=OWNER, status="completed")
    with expect(ErrorCode.INVALID_ENUM):
        await store.finish_run(run_id=run_id, lease_owner=OWNER, status="running")  # type: ignore[arg-type]


async def test_finish_run_with_a_used_action_id_writes_nothing(store: BeamStore) -> None:
    _, (taken,) = await interrupted_with(store)
    begun = await begin(store)
    with expect(ErrorCode.STORE_CONFLICT):
        await store.finish_run(
            run_id=begun.run.run_id,
            lease_owner=OWNER,
            status="interrupted",
            messages=[NewMessage(role="ai", content=[ContentPart.of_text("x")])],
            pending_actions=[NewAction(action_id=taken, tool="git_push")],
        )
    assert (await store.get_run(run_id=begun.run.run_id)).status == "running"
    assert (await store.get_session(session_id=begun.session.session_id)).last_seq == 1


async def test_pending_actions_carry_their_run_and_owner(store: BeamStore) -> None:
    begun, (action_id,) = await interrupted_with(store, user_id="alice")
    action = await store.get_action(action_id=action_id)
    assert (action.status, action.outcome, action.kind, action.tool) == (
        "pending",
        None,
        "confirmation",
        "git_push",
    )
    assert action.args == {"ref": "docs/0", "force": False} and action.tool_call_id == "call-0"
    assert (action.session_id, action.interaction_id, action.run_id) == (
        begun.session.session_id,
        begun.interaction.interaction_id,
        begun.run.run_id,
    )
    assert (action.agent_name, action.user_id) == ("author", "alice")
    assert (await store.get_run(run_id=begun.run.run_id)).status == "interrupted"
    assert (
        await store.get_interaction(interaction_id=begun.interaction.interaction_id)
    ).status == "in_progress"


# ---- resume: the checks, and the approval ledger ---------------------------------------------
async def test_resume_resolves_and_records_the_ledger(store: BeamStore) -> None:
    begun, (ok, no, late) = await interrupted_with(store, count=3)
    when = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    resumed = await resume(
        store,
        begun,
        answer(ok, responder_id="bob", responded_at=when, payload={"tool": "rm", "args": {"n": 1}}),
        answer(no, status="cancelled"),
        answer(late, status="expired"),
    )
    by_id = {a.action_id: a for a in resumed.resolved_actions}
    assert (by_id[ok].status, by_id[ok].outcome) == ("resolved", "approved_unknown")
    assert (by_id[no].status, by_id[no].outcome) == ("cancelled", "declined")
    assert (by_id[late].status, by_id[late].outcome) == ("cancelled", "declined")
    response = by_id[ok].response
    assert response is not None
    assert (response.status, response.responder_id, response.responded_at) == (
        "submitted",
        "bob",
        when,
    )
    assert response.payload == {"tool": "rm", "args": {"n": 1}}
    assert by_id[ok].args == {"ref": "docs/0", "force": False}  # the stored call, not the payload's
    assert all(a.resolved_at is not None for a in resumed.resolved_actions)
    for action in resumed.resolved_actions:
        assert await store.get_action(action_id=action.action_id) == action

    results = resumed.action_messages
    assert [m.seq for m in results] == [3, 4, 5] and resumed.human_message is None
    assert all(
        (m.role, m.type, m.tool_name) == ("tool", "action_result", "git_push") for m in results
    )
    assert [m.metadata and m.metadata["action_id"] for m in results] == [ok, no, late]
    assert [m.metadata and m.metadata["status"] for m in results] == [
        "submitted",
        "cancelled",
        "expired",
    ]
    assert (results[0].tool_call_id, results[0].tool_args) == (
        "call-0",
        {"ref": "docs/0", "force": False},
    )
    assert results[0].run_id == resumed.run.run_id
    listed, _ = await store.list_messages(session_id=begun.session.session_id)
    assert listed[2:] == results

    ran = await store.record_action_outcome(
        action_id=ok, outcome="approved_ran", result={"pushed": 1}
    )
    assert (ran.outcome, ran.result, ran.error) == ("approved_ran", {"pushed": 1}, None)
    assert await store.get_action(action_id=ok) == ran
    with expect(ErrorCode.STORE_CONFLICT):  # an outcome is recorded once
        await store.record_action_outcome(action_id=ok, outcome="approved_failed", error="x")
    with expect(ErrorCode.STORE_CONFLICT):  # declined: nothing ran
        await store.record_action_outcome(action_id=no, outcome="approved_ran")
    with expect(ErrorCode.ACTION_NOT_FOUND):
        await store.record_action_outcome(action_id=uid(), outcome="approved_ran")
    with expect(ErrorCode.INVALID_ENUM):
        await store.record_action_outcome(action_id=ok, outcome="declined")  # type: ignore[arg-type]


async def test_ledger_records_a_failed_tool(store: BeamStore) -> None:
    begun, (action_id,) = await interrupted_with(store)
    with expect(ErrorCode.STORE_CONFLICT):  # still pending: nothing to record yet
        await store.record_action_outcome(action_id=action_id, outcome="approved_ran")
    await resume(store, begun, answer(action_id))
    failed = await store.record_action_outcome(
        action_id=action_id, outcome="approved_failed", error="BEM-330: rejected"
    )
    assert (failed.status, failed.outcome, failed.error) == (
        "resolved",
        "approved_failed",
        "BEM-330: rejected",
    )


async def test_resume_checks_each_action(store: BeamStore) -> None:
    begun, (a1,) = await interrupted_with(store)
    sid = begun.session.session_id
    other, (foreign,) = await interrupted_with(store, session_id=sid, interaction_id=uid())
    with expect(ErrorCode.ACTION_ID_NOT_UUID):
        await resume(store, begun, unchecked_answer("push-1"))
    with expect(ErrorCode.ACTION_NOT_FOUND):
        await resume(store, begun, answer(uid()))
    with expect(ErrorCode.ACTION_WRONG_INTERACTION):
        await resume(store, begun, answer(foreign))
    with expect(ErrorCode.DUPLICATE_ACTION):
        await resume(store, begun, answer(a1), answer(a1, status="cancelled"))
    with expect(ErrorCode.INTERACTION_NOT_RESUMABLE):
        await resume(store, begun, answer(a1), interaction_id=uid())
    with expect(ErrorCode.INTERACTION_NOT_RESUMABLE):
        await resume(store, begun, answer(a1), session_id=uid())
    await resume(store, begun, answer(a1))
    with expect(ErrorCode.ACTION_NOT_PENDING):
        await resume(store, begun, answer(a1))
    assert (await store.get_action(action_id=foreign)).status == "pending"
    assert other.interaction.interaction_id != begun.interaction.interaction_id


async def test_a_failed_resume_leaves_nothing_behind(store: BeamStore) -> None:
    begun, (a1, a2) = await interrupted_with(store, count=2)
    sid = begun.session.session_id
    before = await store.get_session(session_id=sid)
    request_id = uid()
    with expect(ErrorCode.ACTION_NOT_FOUND):
        await resume(store, begun, answer(a1), answer(a2), answer(uid()), request_id=request_id)
    assert (await store.get_action(action_id=a1)).status == "pending"
    assert (await store.get_action(action_id=a2)).status == "pending"
    assert await store.get_run_by_request(request_id=request_id) is None
    assert (await store.get_session(session_id=sid)).last_seq == before.last_seq
    assert len(await store.list_runs(interaction_id=begun.interaction.interaction_id)) == 1


async def test_concurrent_resolvers_of_one_action_have_one_winner(store: BeamStore) -> None:
    begun, (action_id,) = await interrupted_with(store)
    outcomes = await asyncio.gather(
        *(resume(store, begun, answer(action_id)) for _ in range(100)), return_exceptions=True
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    losers = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(winners) == 1
    assert len(losers) == 99
    assert all(
        isinstance(e, RiverbeamError) and e.code is ErrorCode.ACTION_NOT_PENDING for e in losers
    )
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [m.type for m in messages].count("action_result") == 1
    assert [m.seq for m in messages] == list(range(1, len(messages) + 1))
    assert len(await store.list_runs(interaction_id=begun.interaction.interaction_id)) == 2


async def test_a_second_answer_while_the_first_runs_is_066_not_busy(store: BeamStore) -> None:
    begun, (action_id,) = await interrupted_with(store)
    winner = await resume(store, begun, answer(action_id), exclusive=True)
    assert winner.run.status == "running"
    # The session is busy with the winner's run, but the answer itself is what is refused.
    with expect(ErrorCode.ACTION_NOT_PENDING):
        await resume(store, begun, answer(action_id), exclusive=True)
    # A fresh request on the busy session is still refused as busy, and nothing was written.
    with expect(ErrorCode.SESSION_BUSY):
        await begin(store, session_id=begun.session.session_id, exclusive=True)
    runs = await store.list_runs(interaction_id=begun.interaction.interaction_id)
    assert len(runs) == 2


# ---- messages and pagination -----------------------------------------------------------------
async def test_append_message_allocates_the_next_sequence(store: BeamStore) -> None:
    begun = await begin(store)
    sid = begun.session.session_id
    appended = await store.append_message(
        session_id=sid,
        role="tool",
        type="tool_result",
        tool_name="t",
        tool_args={"a": 1},
        tool_result=[1, "two", None],
        metadata={"m": True},
        interaction_id=begun.interaction.interaction_id,
        run_id=begun.run.run_id,
        content=[ContentPart.of_text("out")],
    )
    assert appended.seq == 2 and appended.session_id == sid
    assert (appended.tool_args, appended.tool_result, appended.metadata) == (
        {"a": 1},
        [1, "two", None],
        {"m": True},
    )
    assert (await store.list_messages(session_id=sid))[0][-1] == appended
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await store.append_message(session_id=uid(), role="human")
    with expect(ErrorCode.INVALID_ENUM):
        await store.append_message(session_id=sid, role="robot")  # type: ignore[arg-type]
    with expect(ErrorCode.STORE_CONFLICT):
        await store.append_message(session_id=sid, role="human", message_id=appended.message_id)
    assert (await store.get_session(session_id=sid)).last_seq == 2


async def test_messages_page_in_sequence_order(store: BeamStore) -> None:
    begun = await begin(store)
    sid = begun.session.session_id
    for i in range(24):
        await store.append_message(
            session_id=sid, role="human", content=[ContentPart.of_text(str(i))]
        )
    seen: list[int] = []
    token: str | None = None
    pages = 0
    while True:
        page, token = await store.list_messages(session_id=sid, page_size=10, page_token=token)
        seen.extend(m.seq for m in page)
        pages += 1
        if token is None:
            break
        assert token
    assert seen == list(range(1, 26)) and pages == 3
    assert len((await store.list_messages(session_id=sid, page_size=0))[0]) == 25
    exact, token = await store.list_messages(session_id=sid, page_size=25)
    assert len(exact) == 25 and token is None
    for bad in ("%%%", "YWJj", "LTE"):  # not base64; base64 of "abc"; base64 of "-1"
        with expect(ErrorCode.INVALID_PAGE_TOKEN):
            await store.list_messages(session_id=sid, page_token=bad)
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.list_messages(session_id=sid, page_size=-1)


async def test_pending_actions_are_an_inbox(store: BeamStore) -> None:
    alice, alice_ids = await interrupted_with(store, count=3, user_id="alice")
    bob, bob_ids = await interrupted_with(store, count=2, user_id="bob")
    mine, _ = await store.list_pending_actions(user_id="alice")
    assert [a.action_id for a in mine] == alice_ids
    theirs, _ = await store.list_pending_actions(session_id=bob.session.session_id)
    assert [a.action_id for a in theirs] == bob_ids
    assert (await store.list_pending_actions(session_id=bob.session.session_id, user_id="alice"))[
        0
    ] == []
    everyone: list[str] = []
    token: str | None = None
    while True:
        page, token = await store.list_pending_actions(page_size=2, page_token=token)
        assert len(page) <= 2
        everyone.extend(a.action_id for a in page)
        if token is None:
            break
    assert everyone == alice_ids + bob_ids
    await resume(store, alice, answer(alice_ids[1]))
    left, _ = await store.list_pending_actions(user_id="alice")
    assert [a.action_id for a in left] == [alice_ids[0], alice_ids[2]]
    with expect(ErrorCode.INVALID_PAGE_TOKEN):
        await store.list_pending_actions(page_token="not a token")


# ---- leases and the reaper -------------------------------------------------------------------
async def test_lease_renewal_belongs_to_the_owner_of_a_running_run(store: BeamStore) -> None:
    begun = await begin(store, lease_ttl_s=5)
    run_id = begun.run.run_id
    assert await store.renew_lease(run_id=run_id, lease_owner=OWNER, ttl_s=120)
    renewed = await store.get_run(run_id=run_id)
    assert renewed.lease_expires_at is not None and begun.run.lease_expires_at is not None
    assert renewed.lease_expires_at > begun.run.lease_expires_at
    assert not await store.renew_lease(run_id=run_id, lease_owner="thief", ttl_s=120)
    assert not await store.renew_lease(run_id=uid(), lease_owner=OWNER, ttl_s=120)
    await store.finish_run(run_id=run_id, lease_owner=OWNER, status="completed")
    assert not await store.renew_lease(run_id=run_id, lease_owner=OWNER, ttl_s=120)
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.renew_lease(run_id=run_id, lease_owner=OWNER, ttl_s=0)


async def test_reaper_fails_runs_whose_lease_expired(store: BeamStore) -> None:
    live = await begin(store, lease_ttl_s=60)
    lost = await begin(store, lease_ttl_s=0.2)
    await asyncio.sleep(0.4)
    reaped = await store.reap_expired_runs()
    assert [r.run_id for r in reaped] == [lost.run.run_id]
    run = reaped[0]
    assert (run.status, run.error_code, run.request_id) == (
        "failed",
        "BEM-034",
        lost.run.request_id,
    )
    assert run.finished_at is not None and run.error_message
    assert await store.get_run(run_id=run.run_id) == run
    assert (await store.get_interaction(interaction_id=run.interaction_id)).status == "failed"
    assert (await store.get_run(run_id=live.run.run_id)).status == "running"
    assert await store.reap_expired_runs() == []
    # The runner that lost its lease finds out, and writes nothing.
    assert not await store.renew_lease(run_id=run.run_id, lease_owner=OWNER, ttl_s=60)
    with expect(ErrorCode.STORE_CONFLICT):
        await store.finish_run(
            run_id=run.run_id,
            lease_owner=OWNER,
            status="completed",
            messages=[NewMessage(role="ai", content=[ContentPart.of_text("late")])],
        )
    assert (await store.get_session(session_id=lost.session.session_id)).last_seq == 1


async def test_concurrent_reapers_never_share_a_run(store: BeamStore) -> None:
    begun = [await begin(store) for _ in range(20)]
    later = datetime.now(UTC) + timedelta(hours=1)
    first, second = await asyncio.gather(
        store.reap_expired_runs(now=later, limit=100), store.reap_expired_runs(now=later, limit=100)
    )
    ids_first = {r.run_id for r in first}
    ids_second = {r.run_id for r in second}
    assert not ids_first & ids_second
    assert ids_first | ids_second == {b.run.run_id for b in begun}
    assert len(first) + len(second) == 20


async def test_reaper_takes_at_most_limit_runs(store: BeamStore) -> None:
    for _ in range(5):
        await begin(store)
    later = datetime.now(UTC) + timedelta(hours=1)
    sizes = [len(await store.reap_expired_runs(now=later, limit=2)) for _ in range(4)]
    assert sizes == [2, 2, 1, 0]
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.reap_expired_runs(now=datetime(2030, 1, 1))  # naive: which zone?


# ---- memory ----------------------------------------------------------------------------------
async def test_memory_is_per_scope_newest_first(store: BeamStore) -> None:
    first = await store.remember(
        scope_name="user", scope_id="alice", content="likes tea", metadata={"w": 1}
    )
    assert (first.scope_name, first.scope_id, first.content, first.metadata) == (
        "user",
        "alice",
        "likes tea",
        {"w": 1},
    )
    await store.remember(scope_name="user", scope_id="bob", content="likes coffee")
    await store.remember(scope_name="project", scope_id="p1", content="uses rust")
    await store.remember(scope_name="user", scope_id="alice", content="lives in Oslo")
    alice = await store.recall(scopes=[("user", "alice")])
    assert [e.content for e in alice] == ["lives in Oslo", "likes tea"]
    assert alice[1] == first
    both = await store.recall(scopes=[("user", "alice"), ("project", "p1")], limit=2)
    assert [e.content for e in both] == ["lives in Oslo", "uses rust"]
    assert await store.recall(scopes=[]) == []
    assert await store.recall(scopes=[("user", "nobody")]) == []
    for name, scope_id in (("", "x"), ("user", ""), ("user", "a\nb"), ("u" * 129, "x")):
        with expect(ErrorCode.INVALID_MEMORY_SCOPE):
            await store.remember(scope_name=name, scope_id=scope_id, content="c")
    with expect(ErrorCode.INVALID_MEMORY_SCOPE):
        await store.recall(scopes=[("user", "")])


# ---- retention -------------------------------------------------------------------------------
async def test_idle_sessions_are_deleted_with_everything_under_them(
    store: BeamStore, age_sessions: AgeSessions
) -> None:
    old, (old_action,) = await interrupted_with(store)
    busy = await begin(store, lease_ttl_s=60)  # idle too, but its run holds a live lease
    idle = timedelta(hours=1)
    await age_sessions(idle * 2)  # both are idle
    fresh = await begin(store)  # and this one is not
    assert await store.delete_idle_sessions(older_than=idle) == 1
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await store.get_session(session_id=old.session.session_id)
    with expect(ErrorCode.INTERACTION_NOT_FOUND):
        await store.get_interaction(interaction_id=old.interaction.interaction_id)
    with expect(ErrorCode.RUN_NOT_FOUND):
        await store.get_run(run_id=old.run.run_id)
    with expect(ErrorCode.ACTION_NOT_FOUND):
        await store.get_action(action_id=old_action)
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await store.list_messages(session_id=old.session.session_id)
    assert await store.get_run_by_request(request_id=old.run.request_id or "") is None
    assert (await store.list_pending_actions())[0] == []
    for kept in (busy, fresh):
        assert (await store.get_session(session_id=kept.session.session_id)).last_seq == 1
    assert await store.delete_idle_sessions(older_than=timedelta(hours=1)) == 0
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.delete_idle_sessions(older_than=timedelta(seconds=-1))


async def test_an_idle_window_under_the_retention_minimum_is_refused(store: BeamStore) -> None:
    """An hour at least, as RIVERBEAM_RETENTION_IDLE_DAYS: a shorter window could delete a
    session a router's stream grant still names. Refused before anything is deleted."""
    begun = await begin(store)
    await store.finish_run(run_id=begun.run.run_id, lease_owner=OWNER, status="completed")
    for window in (timedelta(0), timedelta(seconds=1), timedelta(minutes=59, seconds=59)):
        with expect(ErrorCode.INVALID_ARGUMENT) as info:
            await store.delete_idle_sessions(older_than=window)
        assert info.value.details["field"] == "older_than"
    assert (await store.get_session(session_id=begun.session.session_id)).last_seq == 1
    assert await store.delete_idle_sessions(older_than=timedelta(days=MIN_RETENTION_IDLE_DAYS)) == 0


# ---- isolation of stored records -------------------------------------------------------------
async def test_callers_cannot_change_stored_records(store: BeamStore) -> None:
    content = [ContentPart.of_text("original")]
    metadata = {"tags": ["a"]}
    begun = await begin(store, human_content=content, message_metadata=metadata)
    content[0].text = "changed"
    metadata["tags"].append("b")
    assert begun.human_message is not None
    begun.human_message.content.append(ContentPart.of_text("extra"))
    (stored,), _ = await store.list_messages(session_id=begun.session.session_id)
    assert stored.text == "original" and stored.metadata == {"tags": ["a"]}
    stored.content.clear()
    (again,), _ = await store.list_messages(session_id=begun.session.session_id)
    assert again.text == "original"
    result = AgentResult(agent_name="author", content=[ContentPart.of_text("r")])
    await store.finish_run(
        run_id=begun.run.run_id, lease_owner=OWNER, status="completed", result=result
    )
    result.content.clear()
    run = await store.get_run(run_id=begun.run.run_id)
    assert run.result is not None and run.result.text == "r"


async def test_concurrent_finishes_in_one_session_get_dense_sequence_numbers(
    store: BeamStore,
) -> None:
    """20 runs of one session (not exclusive) finish at once, three messages each: each run's
    messages are consecutive, and the session's are exactly 1..80 (20 human, 60 replies)."""
    sid = uid()
    runs = [(await begin(store, session_id=sid)).run.run_id for _ in range(20)]

    async def finish(run_id: str) -> None:
        replies = [NewMessage(role="ai", content=[ContentPart.of_text(run_id)]) for _ in range(3)]
        await store.finish_run(
            run_id=run_id, lease_owner=OWNER, status="completed", messages=replies
        )

    await asyncio.gather(*(finish(r) for r in runs))
    stored, _ = await store.list_messages(session_id=sid, page_size=1000)
    assert [m.seq for m in stored] == list(range(1, 81))
    assert (await store.get_session(session_id=sid)).last_seq == 80
    for run_id in runs:
        seqs = [m.seq for m in stored if m.role == "ai" and m.run_id == run_id]
        assert len(seqs) == 3 and seqs == list(range(seqs[0], seqs[0] + 3)), (run_id, seqs)
        assert (await store.get_run(run_id=run_id)).status == "completed"


async def test_concurrent_writers_get_dense_sequence_numbers(direct_store: BeamStore) -> None:
    """100 writers x 100 messages into one session: seqs are exactly 1..10000."""
    store = direct_store
    sid = (await begin(store, human_content=[])).session.session_id
    part = [ContentPart.of_text("m")]

    async def writer() -> list[int]:
        return [
            (await store.append_message(session_id=sid, role="human", content=part)).seq
            for _ in range(100)
        ]

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(writer()) for _ in range(100)]
    returned = sorted(seq for task in tasks for seq in task.result())
    assert returned == list(range(1, 10_001))
    listed: list[int] = []
    token: str | None = None
    while True:
        page, token = await store.list_messages(session_id=sid, page_size=1000, page_token=token)
        listed.extend(m.seq for m in page)
        if token is None:
            break
    assert listed == list(range(1, 10_001))
    assert (await store.get_session(session_id=sid)).last_seq == 10_000
