"""summarize_usage: the same report from every store (memory, Postgres, the store service)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore, UsageRow
from riverbeam.types import TokenUsage
from tests.integration.store.store_kit import OWNER, begin, expect, uid


async def _run(
    store: BeamStore, *, session_id: str, user: str, org: str, model: str, tokens: tuple[int, int]
) -> str:
    begun = await begin(store, session_id=session_id, user_id=user, org_id=org)
    usage = TokenUsage(
        prompt_tokens=tokens[0], completion_tokens=tokens[1], total_tokens=sum(tokens)
    )
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="completed",
        token_usage=usage,
        model_used=model,
    )
    return begun.run.run_id


async def test_usage_per_group_and_model(store: BeamStore) -> None:
    org = f"org-{uid()[:8]}"
    s1, s2 = uid(), uid()
    r1 = await _run(store, session_id=s1, user="alice", org=org, model="m-a", tokens=(10, 5))
    await _run(store, session_id=s1, user="alice", org=org, model="m-a", tokens=(20, 1))
    await _run(store, session_id=s2, user="bob", org=org, model="m-b", tokens=(7, 3))
    by_user = await store.summarize_usage(group_by="user", org_id=org)
    assert by_user == [
        UsageRow(
            key="alice", model="m-a", runs=2, prompt_tokens=30, completion_tokens=6, total_tokens=36
        ),
        UsageRow(
            key="bob", model="m-b", runs=1, prompt_tokens=7, completion_tokens=3, total_tokens=10
        ),
    ]
    by_org = await store.summarize_usage(group_by="org", org_id=org)
    assert [(r.key, r.model, r.runs, r.total_tokens) for r in by_org] == [
        (org, "m-a", 2, 36),
        (org, "m-b", 1, 10),
    ]
    by_session = await store.summarize_usage(group_by="session", session_id=s1)
    assert [(r.key, r.runs) for r in by_session] == [(s1, 2)]
    by_run = await store.summarize_usage(group_by="run", org_id=org, user_id="alice")
    assert r1 in {r.key for r in by_run} and len(by_run) == 2


async def test_usage_over_a_time_range(store: BeamStore) -> None:
    org = f"org-{uid()[:8]}"
    await _run(store, session_id=uid(), user="carol", org=org, model="m", tokens=(1, 1))
    now = datetime.now(UTC)
    assert (
        await store.summarize_usage(group_by="org", org_id=org, start=now + timedelta(hours=1))
        == []
    )
    assert (
        await store.summarize_usage(group_by="org", org_id=org, end=now - timedelta(hours=1)) == []
    )
    inside = await store.summarize_usage(
        group_by="org", org_id=org, start=now - timedelta(hours=1), end=now + timedelta(hours=1)
    )
    assert [r.runs for r in inside] == [1]


async def test_bad_usage_queries_are_bem_425(store: BeamStore) -> None:
    with expect(ErrorCode.USAGE_RANGE_INVALID):
        await store.summarize_usage(group_by="planet")
    now = datetime.now(UTC)
    with expect(ErrorCode.USAGE_RANGE_INVALID):
        await store.summarize_usage(group_by="user", start=now, end=now - timedelta(seconds=1))
