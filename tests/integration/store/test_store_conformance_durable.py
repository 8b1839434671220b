"""Durable runs in every BeamStore (issue 13): the busy run named, version pinning, expiring
approvals.

Runs against memory, Postgres and the gRPC store service (the `store` fixture).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest
from store_kit import OWNER, answer, begin, expect, resume, uid

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore, BeginRunResult, NewAction

# The approval TTL of an action that expires during a test.
SHORT_TTL_S = 0.5


async def test_a_busy_session_names_its_running_run(store: BeamStore) -> None:
    """What a busy-session `interrupt` cancels: BEM-030 carries the running run's ids."""
    first = await begin(store, exclusive=True)
    with expect(ErrorCode.SESSION_BUSY) as info:
        await begin(store, session_id=first.session.session_id, exclusive=True)
    assert info.value.details["run_id"] == first.run.run_id
    assert info.value.details["request_id"] == first.run.request_id


# ---- version pinning ---------------------------------------------------------------------------
async def _paused_at(store: BeamStore, version: str | None) -> tuple[BeginRunResult, str]:
    """A run of agent `version` that paused for one approval: (its begin, the action id)."""
    begun = await begin(store, agent_version=version)
    action_id = uid()
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="interrupted",
        pending_actions=[NewAction(action_id=action_id, tool="git_push", args={"ref": "x"})],
    )
    return begun, action_id


async def test_the_interaction_and_each_run_record_the_agent_version(store: BeamStore) -> None:
    begun, action_id = await _paused_at(store, "1.2.0")
    assert begun.interaction.agent_version == "1.2.0" and begun.run.agent_version == "1.2.0"
    again = await resume(store, begun, answer(action_id), agent_version="1.2.0")
    assert again.run.agent_version == "1.2.0"
    stored = await store.get_interaction(interaction_id=begun.interaction.interaction_id)
    assert stored.agent_version == "1.2.0"
    runs = await store.list_runs(interaction_id=begun.interaction.interaction_id)
    assert [r.agent_version for r in runs] == ["1.2.0", "1.2.0"]


async def test_a_resume_by_another_version_is_refused_and_changes_nothing(
    store: BeamStore,
) -> None:
    begun, action_id = await _paused_at(store, "1.2.0")
    for policy in (None, "refuse"):
        with expect(ErrorCode.AGENT_VERSION_MISMATCH) as info:
            await resume(
                store, begun, answer(action_id), agent_version="1.3.0", version_policy=policy
            )
        assert "1.2.0" in info.value.message and "1.3.0" in info.value.message
        assert info.value.details["pinned_version"] == "1.2.0"
        assert info.value.details["runner_version"] == "1.3.0"
    # Nothing changed: the action is still pending, no run or message was added.
    assert (await store.get_action(action_id=action_id)).status == "pending"
    runs = await store.list_runs(interaction_id=begun.interaction.interaction_id)
    assert len(runs) == 1
    messages, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [m.role for m in messages] == ["human"]
    # The same version still resumes it.
    again = await resume(store, begun, answer(action_id), agent_version="1.2.0")
    assert [a.action_id for a in again.resolved_actions] == [action_id]


async def test_major_accepts_the_same_major_version_only(store: BeamStore) -> None:
    begun, action_id = await _paused_at(store, "v1.2.0")
    with expect(ErrorCode.AGENT_VERSION_MISMATCH):
        await resume(store, begun, answer(action_id), agent_version="2.0.0", version_policy="major")
    with expect(ErrorCode.AGENT_VERSION_MISMATCH):
        await resume(store, begun, answer(action_id), agent_version=None, version_policy="major")
    again = await resume(
        store, begun, answer(action_id), agent_version="1.9.1", version_policy="major"
    )
    assert again.run.agent_version == "1.9.1"
    # The pin stays the version that started the interaction.
    assert again.interaction.agent_version == "v1.2.0"


async def test_any_accepts_every_version_and_an_unpinned_interaction_takes_any(
    store: BeamStore,
) -> None:
    begun, action_id = await _paused_at(store, "1.0")
    again = await resume(store, begun, answer(action_id), agent_version="7.0", version_policy="any")
    assert again.run.agent_version == "7.0"
    unpinned, other_id = await _paused_at(store, None)
    taken = await resume(store, unpinned, answer(other_id), agent_version="3.1")
    assert taken.run.agent_version == "3.1"


async def test_an_unknown_version_policy_is_refused(store: BeamStore) -> None:
    with expect(ErrorCode.INVALID_VERSION_POLICY):
        await begin(store, version_policy="sometimes")


# ---- approvals that expire ---------------------------------------------------------------------
async def _pending(store: BeamStore, ttl_s: float | None) -> tuple[BeginRunResult, str]:
    begun = await begin(store)
    action_id = uid()
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="interrupted",
        pending_actions=[NewAction(action_id=action_id, tool="git_push", args={"ref": "x"})],
        action_ttl_s=ttl_s,
    )
    return begun, action_id


async def test_a_pending_action_carries_its_expiry(store: BeamStore) -> None:
    before = datetime.now(UTC)
    _, action_id = await _pending(store, 3600)
    action = await store.get_action(action_id=action_id)
    assert action.expires_at is not None
    assert before + timedelta(minutes=59) < action.expires_at < before + timedelta(minutes=61)
    _, forever = await _pending(store, None)
    assert (await store.get_action(action_id=forever)).expires_at is None


async def test_an_expired_action_cannot_be_answered_and_leaves_the_inbox(
    store: BeamStore,
) -> None:
    # Listed while still pending: read at once, before the other action is written. Only a
    # read that came within the TTL of the write can be held to that; a pause longer than the
    # TTL (a full collection of a loaded test worker's heap) leaves nothing to check, so the
    # action is written again, a few times at most.
    for _ in range(5):
        written_by = time.monotonic()
        begun, action_id = await _pending(store, SHORT_TTL_S)
        inbox, _ = await store.list_pending_actions(session_id=begun.session.session_id)
        if time.monotonic() - written_by < SHORT_TTL_S:
            assert [a.action_id for a in inbox] == [action_id]
            break
    else:
        pytest.fail(f"no write and read of an action came within its {SHORT_TTL_S} s TTL")
    sid = begun.session.session_id
    live_session, live_id = await _pending(store, 3600)
    await asyncio.sleep(SHORT_TTL_S * 1.5)  # at least this long: the short TTL has passed
    inbox, _ = await store.list_pending_actions(session_id=sid)
    assert inbox == []
    everyone, _ = await store.list_pending_actions(page_size=1000)
    ids = {a.action_id for a in everyone}
    assert live_id in ids and action_id not in ids
    with expect(ErrorCode.ACTION_EXPIRED):
        await resume(store, begun, answer(action_id))
    # Refused inside the compare-and-set: nothing was written.
    assert (await store.get_action(action_id=action_id)).status == "pending"
    assert len(await store.list_runs(interaction_id=begun.interaction.interaction_id)) == 1
    # An unexpired one is answered as usual.
    again = await resume(store, live_session, answer(live_id))
    assert [a.status for a in again.resolved_actions] == ["resolved"]


async def test_a_non_positive_approval_ttl_is_refused(store: BeamStore) -> None:
    begun = await begin(store)
    with expect(ErrorCode.INVALID_ARGUMENT):
        await store.finish_run(
            run_id=begun.run.run_id, lease_owner=OWNER, status="completed", action_ttl_s=0
        )


async def test_the_sweeper_marks_expired_actions_and_they_stay_unanswerable(
    store: BeamStore,
) -> None:
    begun, action_id = await _pending(store, 0.2)
    _, live_id = await _pending(store, 3600)
    await asyncio.sleep(0.5)
    marked = await store.expire_pending_actions()
    assert action_id in [a.action_id for a in marked] and live_id not in {
        a.action_id for a in marked
    }
    action = await store.get_action(action_id=action_id)
    assert action.status == "expired" and action.resolved_at is not None
    assert action_id not in [a.action_id for a in await store.expire_pending_actions()]
    with expect(ErrorCode.ACTION_EXPIRED):
        await resume(store, begun, answer(action_id))
    assert (await store.get_action(action_id=live_id)).status == "pending"


async def test_the_sweeper_honours_now(store: BeamStore) -> None:
    _, action_id = await _pending(store, 3600)
    assert action_id not in [a.action_id for a in await store.expire_pending_actions()]
    later = datetime.now(UTC) + timedelta(hours=2)
    marked = await store.expire_pending_actions(now=later, limit=1000)
    assert action_id in [a.action_id for a in marked]
