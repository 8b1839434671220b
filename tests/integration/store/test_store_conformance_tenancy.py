"""Tenancy of memory, conformance: every test runs against memory, Postgres and gRPC.

Memory is keyed by organisation as well as scope (issue 11, section 2): two organisations'
users with equal ids never read each other's entries.
"""

from __future__ import annotations

from store_kit import expect

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore


async def test_equal_user_ids_of_two_orgs_share_no_memory(store: BeamStore) -> None:
    pin = await store.remember(
        scope_name="user", scope_id="alice", content="alice-acme's card PIN is 4321", org_id="acme"
    )
    assert (pin.org_id, pin.scope_name, pin.scope_id) == ("acme", "user", "alice")
    await store.remember(
        scope_name="user", scope_id="alice", content="alice-other likes tea", org_id="other"
    )
    await store.remember(scope_name="user", scope_id="alice", content="unscoped alice")

    acme = await store.recall(scopes=[("user", "alice")], org_id="acme")
    other = await store.recall(scopes=[("user", "alice")], org_id="other")
    unscoped = await store.recall(scopes=[("user", "alice")])
    assert [e.content for e in acme] == ["alice-acme's card PIN is 4321"]
    assert acme[0] == pin
    assert [e.content for e in other] == ["alice-other likes tea"]
    assert [(e.content, e.org_id) for e in unscoped] == [("unscoped alice", None)]
    # "" is the unscoped organisation, as None is.
    assert await store.recall(scopes=[("user", "alice")], org_id="") == unscoped
    assert await store.recall(scopes=[("user", "alice")], org_id="third") == []


async def test_a_bad_org_id_is_refused(store: BeamStore) -> None:
    for bad in ("a\nb", "o" * 257, "nul\x00"):
        with expect(ErrorCode.INVALID_MEMORY_SCOPE):
            await store.remember(scope_name="user", scope_id="alice", content="c", org_id=bad)
        with expect(ErrorCode.INVALID_MEMORY_SCOPE):
            await store.recall(scopes=[("user", "alice")], org_id=bad)
    assert await store.recall(scopes=[("user", "alice")]) == []
