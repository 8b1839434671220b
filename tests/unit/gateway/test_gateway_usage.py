"""Usage reports in the router: priced from the model list, scoped to what the caller may see."""

from __future__ import annotations

import uuid

import pytest

from riverbeam.auth import Principal, Role
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway._usage import usage_report
from riverbeam.routing import ModelList
from riverbeam.store import InMemoryStore
from riverbeam.types import ModelConfig, TokenUsage

MODELS = ModelList(
    [
        ModelConfig(name="priced", provider="openai", cost_per_1k_tokens=2.0),
        ModelConfig(name="free", provider="custom"),
    ]
)


async def _run(store: InMemoryStore, *, user: str, org: str, model: str, total: int) -> None:
    run_id = str(uuid.uuid4())
    await store.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="a",
        run_id=run_id,
        lease_owner="me",
        lease_ttl_s=60,
        user_id=user,
        org_id=org,
    )
    await store.finish_run(
        run_id=run_id,
        lease_owner="me",
        status="completed",
        token_usage=TokenUsage(prompt_tokens=total, completion_tokens=0, total_tokens=total),
        model_used=model,
    )


@pytest.fixture
async def store() -> InMemoryStore:
    store = InMemoryStore()
    await _run(store, user="alice", org="acme", model="priced", total=1500)
    await _run(store, user="bob", org="acme", model="free", total=100)
    await _run(store, user="eve", org="other", model="priced", total=500)
    return store


async def _report(
    store: InMemoryStore, principal: Principal, **filters: str | None
) -> dict[tuple[str, str], float]:
    rows, total = await usage_report(
        store,
        MODELS,
        principal,
        group_by="user",
        start=None,
        end=None,
        user_id=filters.get("user_id"),
        org_id=filters.get("org_id"),
        session_id=None,
    )
    assert total.cost == pytest.approx(sum(r.cost for r in rows))
    assert total.total_tokens == sum(r.total_tokens for r in rows)
    return {(r.key, r.model): r.cost for r in rows}


async def test_rows_are_priced_from_the_model_list(store: InMemoryStore) -> None:
    admin = Principal("root", roles=frozenset({Role.ADMIN}))
    assert await _report(store, admin) == {
        ("alice", "priced"): pytest.approx(3.0),
        ("bob", "free"): 0.0,
        ("eve", "priced"): pytest.approx(1.0),
    }


async def test_a_user_sees_its_own_usage_only(store: InMemoryStore) -> None:
    alice = Principal("alice", org_id="acme")
    assert set(await _report(store, alice)) == {("alice", "priced")}
    with pytest.raises(RiverbeamError) as info:
        await _report(store, alice, user_id="bob")
    assert info.value.code is ErrorCode.PERMISSION_DENIED


async def test_an_approver_sees_its_organisation(store: InMemoryStore) -> None:
    approver = Principal("carol", org_id="acme", roles=frozenset({Role.APPROVER}))
    assert set(await _report(store, approver)) == {("alice", "priced"), ("bob", "free")}
    with pytest.raises(RiverbeamError) as info:
        await _report(store, approver, org_id="other")
    assert info.value.code is ErrorCode.PERMISSION_DENIED
