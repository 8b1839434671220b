"""Approval previews in every BeamStore (issue 13): a pending action keeps the preview it was
held with, and the inbox and the run's result show it.

Runs against memory, Postgres and the gRPC store service (the `store` fixture).
"""

from __future__ import annotations

from store_kit import OWNER, begin, uid

from riverbeam.store import BeamStore, NewAction
from riverbeam.types import ActionPreview

PREVIEW = ActionPreview.model_validate(
    {
        "tool": "git_push",
        "summary": "1 commit to feature, 1 file changed",
        "commits": [{"id": "a" * 40, "summary": "Add docs", "author": "Agent <a@x.invalid>"}],
        "diff": "diff --git a/d.md b/d.md\n+++ b/d.md\n+é and \u2603\n",
        "truncated": True,
        "diff_bytes": 70_000,
        "state": {"branch": "feature", "head": "a" * 40, "origin": "absent"},
    }
)


async def test_a_pending_action_keeps_its_preview(store: BeamStore) -> None:
    begun = await begin(store)
    held, plain = uid(), uid()
    await store.finish_run(
        run_id=begun.run.run_id,
        lease_owner=OWNER,
        status="interrupted",
        pending_actions=[
            NewAction(
                action_id=held,
                tool="git_push",
                args={"ref": "feature", "expect": {"head": "a" * 40, "origin": "absent"}},
                preview=PREVIEW,
            ),
            NewAction(action_id=plain, tool="deploy", args={}),
        ],
    )
    stored = await store.get_action(action_id=held)
    assert stored.preview == PREVIEW
    assert stored.args["expect"] == {"head": "a" * 40, "origin": "absent"}
    assert (await store.get_action(action_id=plain)).preview is None
    page = await store.list_pending_actions(session_id=begun.session.session_id)
    listed = {a.action_id: a for a in page[0]}
    assert listed[held].preview == PREVIEW
    assert listed[plain].preview is None
