"""The author skill end to end: a real git workspace, frames on NATS, approval and resume.

Runs on both stores, with the working tree in process (WorkingTree) and behind the sandbox
service (SandboxClient over gRPC). The origin is a local bare repository.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
import pytest

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Text, ToolCalls
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import SandboxSettings
from riverbeam.runtime import JetStreamSinks, PipelineOptions, RiverBeam
from riverbeam.sandbox import (
    PushResult,
    WorkingTreeOps,
    WorkspaceConfig,
    WorkspaceManager,
    WorkspacesClient,
    sandbox_tools,
)
from riverbeam.server import GrpcServer, open_channel
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection, StreamConfig
from riverbeam.types import AgentResult, StreamAck
from services.sandbox.app import build as build_sandbox
from tests.integration.runtime.rt_kit import (
    approval,
    assert_gap_free,
    collect,
    shape,
    text_request,
    uid,
)

pytestmark = pytest.mark.nats

BRANCH = "docs/update"
BODY = "# Intro\n\nRiverbeam serves agents.\n"


class CountingTree:
    """A working tree that counts the pushes it is asked for (and passes everything on)."""

    def __init__(self, inner: WorkingTreeOps) -> None:
        self._inner = inner
        self.pushes: list[str | None] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def git_push(
        self,
        ref: str | None = None,
        expect_head: str | None = None,
        expect_origin: str | None = None,
    ) -> PushResult:
        self.pushes.append(ref)
        return await self._inner.git_push(ref, expect_head, expect_origin)


@dataclass
class Workspace:
    tree: CountingTree
    origin: pygit2.Repository
    kind: str
    extra: dict[str, Any] = field(default_factory=dict)

    def origin_refs(self) -> dict[str, str]:
        return {name: str(self.origin.references[name].target) for name in self.origin.references}


@pytest.fixture(params=["local", "grpc"])
async def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Workspace]:
    """Workspace `docs` on branch docs/update (after the first commit), origin a bare repo."""
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    origin_path = remotes / "docs.git"
    origin = pygit2.init_repository(str(origin_path), bare=True)
    if request.param == "local":
        manager = WorkspaceManager(
            WorkspaceConfig(base_dir=tmp_path / "workspaces", origin_allowlist=(f"{remotes}/",))
        )
        try:
            await manager.create("docs", branch=BRANCH, origin=str(origin_path))
            yield Workspace(CountingTree(await manager.get("docs")), origin, "local")
        finally:
            await manager.aclose()
        return
    settings = SandboxSettings(
        listen="127.0.0.1:0", workspace_base=tmp_path / "workspaces", origin_base=remotes
    )
    async with (
        build_sandbox(settings) as app,
        GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server,
    ):
        channel = open_channel(server.address)
        try:
            workspaces = WorkspacesClient(channel)
            await workspaces.create("docs", branch=BRANCH, origin=str(origin_path))
            yield Workspace(CountingTree(workspaces.tree("docs")), origin, "grpc")
        finally:
            await channel.close(None)


def author_script(last: str) -> list[Text | ToolCalls]:
    return [
        ToolCalls(
            (PendingToolCall("write_file", {"path": "docs/intro.md", "body": BODY}),),
            text="Writing the intro.",
        ),
        ToolCalls((PendingToolCall("git_add", {"path": "docs/intro.md"}),)),
        ToolCalls((PendingToolCall("git_commit", {"message": "Add the intro"}),)),
        ToolCalls((PendingToolCall("git_push", {"ref": BRANCH}),), text="Pushing docs/update."),
        Text(last),
    ]


@contextlib.asynccontextmanager
async def author_beam(
    store: BeamStore, nats: NatsConnection, workspace: Workspace, last: str
) -> AsyncIterator[RiverBeam]:
    beam = RiverBeam(
        store=store,
        sinks=JetStreamSinks(nats.js, StreamConfig()),
        options=PipelineOptions(lease_ttl_s=30),
    )
    beam.register_agent(
        RigAgentRunner.for_skill(
            "author",
            ScriptedClient(author_script(last)),
            sandbox_tools(workspace.tree),
        )
    )
    try:
        yield beam
    finally:
        await beam.aclose(grace_s=1)


FIRST_RUN_SHAPE = [
    ("placeholder", "message", None),
    ("thinking", "step", None),
    ("chunk", "message", None),
    ("tool", "action", "write_file"),
    ("tool", "tool_result", "write_file"),
    ("tool", "action", "git_add"),
    ("tool", "tool_result", "git_add"),
    ("tool", "action", "git_commit"),
    ("tool", "tool_result", "git_commit"),
    ("chunk", "message", None),
    ("tool", "action", "git_push"),
    ("done", None, None),
]


async def interrupted_author_run(
    beam: RiverBeam, nats: NatsConnection, session_id: str
) -> tuple[AgentResult, str]:
    """The first run: write, add, commit, then the push waits. Returns (result, commit sha)."""
    request_id = uid()
    # One follower is there before the first frame; another joins after the done frame.
    early = asyncio.create_task(collect(nats.js, request_id))
    ack = await beam.invoke(
        text_request(
            "author", "add an intro and push it", session_id, stream=True, request_id=request_id
        )
    )
    assert isinstance(ack, StreamAck) and ack.request_id == request_id
    frames = await early
    late = await collect(nats.js, request_id)
    assert [f.to_json() for f in late] == [f.to_json() for f in frames]

    assert_gap_free(frames)
    assert shape(frames) == FIRST_RUN_SHAPE
    assert all(f.request_id == request_id and f.run_id == ack.run_id for f in frames)
    done = frames[-1]
    assert done.type == "done" and done.result is not None
    result = done.result
    assert result.interrupted
    (pending,) = result.action_required
    commit = next(
        f.data.tool_result
        for f in frames
        if f.data is not None and f.data.type == "tool_result" and f.data.tool_name == "git_commit"
    )
    assert commit["branch"] == BRANCH
    # The stored call names the branch and the state its preview was computed from.
    expect = {"head": commit["commit"], "origin": "absent"}
    assert (pending.tool, pending.args) == ("git_push", {"ref": BRANCH, "expect": expect})
    assert pending.preview is not None and pending.preview.commits[0].id == commit["commit"]
    # The done frame is published after the records: they are there when it is seen.
    run = await beam.get_run(ack.run_id or "")
    assert run.status == "interrupted" and run.result == result
    assert (await beam.get_interaction(ack.interaction_id)).status == "in_progress"
    assert (await beam.get_action(pending.action_id)).status == "pending"
    return result, str(commit["commit"])


async def test_author_push_runs_once_under_twenty_concurrent_resumes(
    store: BeamStore, nats: NatsConnection, workspace: Workspace
) -> None:
    session_id = uid()
    async with author_beam(store, nats, workspace, "Pushed docs/update.") as beam:
        first, sha = await interrupted_author_run(beam, nats, session_id)
        (pending,) = first.action_required
        assert workspace.tree.pushes == [] and workspace.origin_refs() == {}

        body = {"agent_name": "author", "session_id": session_id}
        body["interaction_id"] = first.interaction_id or ""
        outcomes = await asyncio.gather(
            *(beam.resume({**body, "actions": [approval(pending.action_id)]}) for _ in range(20)),
            return_exceptions=True,
        )
        wins = [o for o in outcomes if isinstance(o, StreamAck)]
        losses = [o for o in outcomes if isinstance(o, RiverbeamError)]
        assert len(wins) == 1 and len(losses) == 19, outcomes
        assert {e.code for e in losses} == {ErrorCode.ACTION_NOT_PENDING}

        (ack,) = wins
        frames = await collect(nats.js, ack.request_id)
        await beam.wait_idle()

    assert_gap_free(frames)
    assert shape(frames) == [
        ("placeholder", "message", None),
        ("thinking", "step", None),
        ("tool", "action", "git_push"),
        ("tool", "tool_result", "git_push"),
        ("chunk", "message", None),
        ("done", None, None),
    ]
    pushed = frames[3].data
    assert pushed is not None
    assert pushed.tool_result == {
        "branch": BRANCH,
        "remote_ref": f"refs/heads/{BRANCH}",
        "commit": sha,
    }
    done = frames[-1].result
    assert done is not None and not done.interrupted and done.text == "Pushed docs/update."

    # Pushed exactly once, to the bare origin, at the committed sha.
    assert workspace.tree.pushes == [BRANCH]
    assert workspace.origin_refs() == {f"refs/heads/{BRANCH}": sha}
    action = await store.get_action(action_id=pending.action_id)
    assert (action.status, action.outcome) == ("resolved", "approved_ran")
    assert action.result == pushed.tool_result
    interaction = await store.get_interaction(interaction_id=first.interaction_id or "")
    assert interaction.status == "completed"
    runs = await store.list_runs(interaction_id=first.interaction_id or "")
    assert [r.status for r in runs] == ["interrupted", "completed"]


async def test_author_declined_push_pushes_nothing(
    store: BeamStore, nats: NatsConnection, workspace: Workspace
) -> None:
    session_id = uid()
    async with author_beam(store, nats, workspace, "Not pushing, as you asked.") as beam:
        first, _sha = await interrupted_author_run(beam, nats, session_id)
        (pending,) = first.action_required
        ack = await beam.resume(
            {
                "agent_name": "author",
                "session_id": session_id,
                "interaction_id": first.interaction_id,
                "actions": [approval(pending.action_id, status="cancelled")],
            }
        )
        frames = await collect(nats.js, ack.request_id)
        await beam.wait_idle()

    assert_gap_free(frames)
    results = [
        f.data.tool_result
        for f in frames
        if f.data is not None and f.data.type == "tool_result" and f.data.tool_name == "git_push"
    ]
    assert len(results) == 1 and results[0]["declined"] is True
    assert frames[-1].type == "done"
    assert workspace.tree.pushes == []
    assert workspace.origin_refs() == {}
    action = await store.get_action(action_id=pending.action_id)
    assert (action.status, action.outcome) == ("cancelled", "declined")
    assert (await store.get_interaction(interaction_id=first.interaction_id or "")).status == (
        "completed"
    )
