"""The runner's reaper pass also sweeps expired approvals (docs/durability.md)."""

from __future__ import annotations

import asyncio
import contextlib

from riverbeam.core.ids import new_id
from riverbeam.runtime import run_reaper
from riverbeam.runtime._facade import MemorySinks
from riverbeam.store import InMemoryStore, NewAction
from riverbeam.types import ContentPart

GUARD_S = 10.0  # a hang guard, never a timing assertion


async def test_the_reaper_marks_expired_actions() -> None:
    store = InMemoryStore()
    begun = await store.begin_run(
        session_id=new_id(),
        agent_name="author",
        run_id=new_id(),
        lease_owner="runner-a",
        lease_ttl_s=60,
        human_content=[ContentPart.of_text("push it")],
    )
    soon, later = new_id(), new_id()
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner="runner-a",
        status="interrupted",
        pending_actions=[NewAction(action_id=soon, tool="git_push")],
        action_ttl_s=0.1,
    )
    other = await store.begin_run(
        session_id=new_id(), agent_name="author", run_id=new_id(), lease_owner="a", lease_ttl_s=60
    )
    await store.finish_run(
        run_id=other.run.run_id,
        lease_owner="a",
        status="interrupted",
        pending_actions=[NewAction(action_id=later, tool="git_push")],
        action_ttl_s=3600,
    )
    reaper = asyncio.create_task(run_reaper(store, MemorySinks(), interval_s=0.05))
    try:
        async with asyncio.timeout(GUARD_S):
            while True:  # until marked (under the hang guard)
                if (await store.get_action(action_id=soon)).status == "expired":
                    break
                await asyncio.sleep(0.05)
    finally:
        reaper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reaper
    assert (await store.get_action(action_id=later)).status == "pending"
