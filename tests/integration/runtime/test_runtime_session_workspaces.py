"""Author runs of different sessions work in different workspaces (issue 11, item 1).

The real sandbox service over gRPC, the per-run sandbox tools (RunWorkspaces: one workspace
per session, made on first use from a real bare origin), frames on real NATS, both stores.

- Session A writes a private draft and is cancelled before committing; session B then stages
  everything (`git_add "."`), commits and asks to push; the approval names B's workspace and
  branch; after it is approved, the origin holds B's file and not A's draft, and A's draft is
  still in A's workspace, where A's next run finds it.
- Author runs of two sessions at once both commit their own file (no BEM-321).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from pygit2.enums import FileMode

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Text, ToolCalls
from riverbeam.agents._io import AgentInput
from riverbeam.agents._tool import Tool
from riverbeam.core.settings import SandboxSettings
from riverbeam.runtime import JetStreamSinks, PipelineOptions, RiverBeam
from riverbeam.sandbox import RunWorkspaces, WorkspacesClient, sandbox_tools, session_placement
from riverbeam.server import GrpcServer, open_channel
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection, StreamConfig
from riverbeam.types import AgentResult, ContentPart, StreamAck
from services.sandbox.app import build as build_sandbox
from tests.integration.runtime.rt_kit import (
    GUARD_S,
    BlockingTool,
    approval,
    collect,
    frame_where,
    text_request,
    uid,
)

pytestmark = pytest.mark.nats

SIG = pygit2.Signature("Origin", "origin@example.com")
DRAFT = "notes/a-private-draft.md"


@dataclass
class Sandbox:
    runs: RunWorkspaces
    origin_path: Path
    base_commit: str

    def origin(self) -> pygit2.Repository:
        return pygit2.Repository(str(self.origin_path))

    def tools(self) -> list[Tool]:
        return sandbox_tools(None, runs=self.runs)


@pytest.fixture
async def sandbox(tmp_path: Path) -> AsyncIterator[Sandbox]:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    origin_path = remotes / "docs.git"
    origin = pygit2.init_repository(str(origin_path), bare=True)
    builder = origin.TreeBuilder()
    builder.insert("README.md", origin.create_blob(b"# Docs\n"), FileMode.BLOB)
    base = origin.create_commit("refs/heads/main", SIG, SIG, "base\n", builder.write(), [])
    settings = SandboxSettings(
        listen="127.0.0.1:0", workspace_base=tmp_path / "workspaces", origin_base=remotes
    )
    async with (
        build_sandbox(settings) as app,
        GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server,
    ):
        channel = open_channel(server.address)
        try:
            runs = RunWorkspaces(WorkspacesClient(channel), origin=str(origin_path))
            yield Sandbox(runs, origin_path, str(base))
        finally:
            await channel.close(None)


@contextlib.asynccontextmanager
async def beam_with(store: BeamStore, nats: NatsConnection) -> AsyncIterator[RiverBeam]:
    beam = RiverBeam(
        store=store,
        sinks=JetStreamSinks(nats.js, StreamConfig()),
        options=PipelineOptions(lease_ttl_s=30),
    )
    try:
        yield beam
    finally:
        await beam.aclose(grace_s=1)


def _call(name: str, args: dict[str, Any]) -> ToolCalls:
    return ToolCalls((PendingToolCall(name, args),))


def _tool_results(frames: list[Any], tool: str) -> list[Any]:
    return [
        f.data.tool_result
        for f in frames
        if f.data is not None and f.data.type == "tool_result" and f.data.tool_name == tool
    ]


async def test_a_cancelled_sessions_draft_never_reaches_another_sessions_push(
    store: BeamStore, nats: NatsConnection, sandbox: Sandbox
) -> None:
    session_a, session_b = uid(), uid()
    blocking = BlockingTool()
    client = ScriptedClient(
        [
            # Session A: a private draft, then a call that never returns (it is cancelled).
            _call("write_file", {"path": DRAFT, "body": "A's card PIN is 4321\n"}),
            _call("block", {"v": "x"}),
            # Session B: its own file, everything staged, committed, then the push waits.
            _call("write_file", {"path": "notes/b.md", "body": "B's notes\n"}),
            _call("git_add", {"path": "."}),
            _call("git_commit", {"message": "B's notes"}),
            _call("git_push", {}),
            Text("Pushed."),
        ]
    )
    async with beam_with(store, nats) as beam:
        beam.register_agent(
            RigAgentRunner.new("author", client, [*sandbox.tools(), blocking], "author")
        )
        request_a = uid()
        follower = asyncio.create_task(collect(nats.js, request_a))
        ack = await beam.invoke(
            text_request("author", "draft", session_a, stream=True, request_id=request_a)
        )
        assert isinstance(ack, StreamAck)
        async with asyncio.timeout(GUARD_S):
            await blocking.started.wait()
        assert await beam.cancel(request_a, "stop")
        frames_a = await follower
        assert (frames_a[-1].type, frames_a[-1].error_code) == ("error", "BEM-033")
        assert _tool_results(frames_a, "write_file") == [{"path": DRAFT, "bytes": 21}]
        await beam.wait_idle()

        first = await beam.invoke(text_request("author", "notes, and push", session_b))
        assert isinstance(first, AgentResult) and first.interrupted
        staged = [c.result for c in first.tool_calls if c.tool_name == "git_add"]
        assert staged == [{"staged": ["notes/b.md"], "count": 1, "truncated": False}]
        # The approver sees which workspace and which branch the push is for.
        placement = session_placement(session_b)
        (pending,) = first.action_required
        assert pending.tool == "git_push"
        # ... and what it would push (its preview), the state its approval is bound to.
        assert pending.preview is not None and pending.preview.state.branch == placement.branch
        expect = {"head": pending.preview.state.head, "origin": "absent"}
        assert pending.args == {
            "ref": placement.branch,
            "workspace": placement.workspace,
            "expect": expect,
        }
        stored = await store.get_action(action_id=pending.action_id)
        assert stored.args == pending.args and stored.preview == pending.preview

        resumed = await beam.resume(
            {
                "agent_name": "author",
                "session_id": session_b,
                "interaction_id": first.interaction_id,
                "actions": [approval(pending.action_id)],
            }
        )
        frames_b = await collect(nats.js, resumed.request_id)
        await beam.wait_idle()
        done = frames_b[-1]
        assert done.type == "done" and done.result is not None, done
        assert done.result.text == "Pushed."
        (pushed,) = _tool_results(frames_b, "git_push")
        assert pushed["branch"] == placement.branch
        action = await store.get_action(action_id=pending.action_id)
        assert (action.status, action.outcome) == ("resolved", "approved_ran")

    origin = sandbox.origin()
    heads = sorted(r for r in origin.references if r.startswith("refs/heads/"))
    assert heads == sorted(["refs/heads/main", f"refs/heads/{placement.branch}"])
    tip = origin.references[f"refs/heads/{placement.branch}"].peel(pygit2.Commit)
    assert str(tip.parents[0].id) == sandbox.base_commit
    files = {e.name for e in tip.tree} | {f"notes/{e.name}" for e in origin[tip.tree["notes"].id]}
    assert DRAFT not in files
    assert files == {"README.md", "notes", "notes/b.md"}

    # A's draft stays A's: uncommitted in A's own workspace, which A's next run sees.
    run_a = AgentInput(
        content=[ContentPart.of_text("again")],
        session_id=session_a,
        run_id=uid(),
        agent_name="author",
    )
    tools = {t.spec().name: t for t in sandbox.tools()}
    status = await tools["git_status"].invoke({}, run_a)
    assert status["branch"] == session_placement(session_a).branch
    assert [(e["path"], e["staged"], e["unstaged"]) for e in status["entries"]] == [
        (DRAFT, "", "untracked")
    ]


async def test_concurrent_author_runs_of_two_sessions_both_commit(
    store: BeamStore, nats: NatsConnection, sandbox: Sandbox
) -> None:
    def script(path: str) -> ScriptedClient:
        return ScriptedClient(
            [
                _call("write_file", {"path": path, "body": f"{path}\n"}),
                _call("git_add", {"path": "."}),
                _call("git_commit", {"message": f"add {path}"}),
                Text("Committed."),
            ]
        )

    sessions = [uid() for _ in range(4)]
    async with beam_with(store, nats) as beam:
        for n in range(len(sessions)):
            beam.register_agent(
                RigAgentRunner.new(f"author-{n}", script(f"f{n}.md"), sandbox.tools(), "author")
            )
        results = await asyncio.gather(
            *(
                beam.invoke(text_request(f"author-{n}", "commit it", session))
                for n, session in enumerate(sessions)
            )
        )
    for n, (session, result) in enumerate(zip(sessions, results, strict=True)):
        assert isinstance(result, AgentResult) and result.text == "Committed.", result
        (commit,) = [c.result for c in result.tool_calls if c.tool_name == "git_commit"]
        assert "error" not in commit, commit
        assert commit["branch"] == session_placement(session).branch
        (added,) = [c.result for c in result.tool_calls if c.tool_name == "git_add"]
        assert added["staged"] == [f"f{n}.md"]


async def test_frame_of_a_held_push_shows_the_stored_arguments(
    store: BeamStore, nats: NatsConnection, sandbox: Sandbox
) -> None:
    session = uid()
    client = ScriptedClient([_call("git_push", {})])
    async with beam_with(store, nats) as beam:
        beam.register_agent(RigAgentRunner.new("author", client, sandbox.tools(), "author"))
        request_id = uid()
        ack = await beam.invoke(
            text_request("author", "push", session, stream=True, request_id=request_id)
        )
        assert isinstance(ack, StreamAck)
        frame = await frame_where(
            nats.js,
            request_id,
            lambda f: f.data is not None and f.data.tool_name == "git_push",
        )
        await beam.wait_idle()
    placement = session_placement(session)
    assert frame.data is not None
    args = dict(frame.data.tool_args or {})
    assert set(args.pop("expect")) == {"head", "origin"}  # the previewed state
    assert args == {"ref": placement.branch, "workspace": placement.workspace}
