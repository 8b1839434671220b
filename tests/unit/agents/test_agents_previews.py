"""Held sandbox calls carry a preview, and approval is bound to the previewed state.

A real git working tree and a bare origin: git_push is held with the commits and diff it would
push; the branch moves after the preview; the approval is refused (BEM-275), nothing is pushed,
and the run pauses again with a fresh preview; approving that one pushes exactly once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
from agents_kit import envelope, make_input, run

from riverbeam.agents import (
    ApproveTools,
    PendingToolCall,
    PreviewTool,
    ResumedAction,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.sandbox import OriginPolicy, SandboxRoot, WorkingTree, sandbox_tools
from riverbeam.types import ActionRequired


async def _tree(tmp_path: Path) -> tuple[WorkingTree, Path]:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    origin = remotes / "origin.git"
    pygit2.init_repository(str(origin), bare=True)
    tree = WorkingTree(
        SandboxRoot(tmp_path / "work", create=True), origin_policy=OriginPolicy([f"{remotes}/"])
    )
    await tree.init("main")
    await tree.write_file("README.md", "# project\n")
    await tree.git_add("README.md")
    await tree.initial_commit()
    await tree.add_origin(str(origin))
    await tree.checkout_branch("feature", create=True)
    await tree.write_file("docs/a.md", "alpha\n")
    await tree.git_add("docs")
    await tree.git_commit("Add docs")
    return tree, origin


def _outside_commit(work: Path) -> str:
    repo = pygit2.Repository(str(work / ".git"))
    parent = repo.head.peel(pygit2.Commit)
    builder = repo.TreeBuilder(parent.tree)
    builder.insert("sneaked.txt", repo.create_blob(b"not reviewed\n"), pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("Someone", "someone@example.com")
    return str(repo.create_commit("HEAD", sig, sig, "Sneak\n", builder.write(), [parent.id]))


def _remote(origin: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(origin))
    return {name: str(repo.references[name].target) for name in repo.references}


def _approve(held: ActionRequired) -> ResumedAction:
    return ResumedAction(
        action_id=held.action_id,
        tool=held.tool,
        args=dict(held.args),
        tool_call_id=held.tool_call_id,
        response=envelope(held.action_id),
    )


def _results(frames: list[Any]) -> list[Any]:
    return [f.data.tool_result for f in frames if f.data and f.data.type == "tool_result"]


async def test_a_moved_branch_refuses_the_approval_and_offers_a_fresh_preview(
    tmp_path: Path,
) -> None:
    tree, origin = await _tree(tmp_path)
    tools = sandbox_tools(tree)
    assert all(isinstance(t, PreviewTool) for t in tools)
    client = ScriptedClient(
        [ToolCalls((PendingToolCall("git_push", {}, id="c1"),)), Text("Pushed.")]
    )
    agent = RigAgentRunner.new("author", client, tools, None)
    frames = await run(agent, make_input("push it"))
    first = frames[-1].result
    assert first is not None and first.interrupted
    (held,) = first.action_required
    assert held.preview is not None
    # The held call's `tool` action frame carries the same preview.
    (call_frame,) = [f for f in frames if f.type == "tool" and f.data and f.data.type == "action"]
    assert call_frame.data is not None and call_frame.data.preview == held.preview
    assert [c.summary for c in held.preview.commits] == ["Add docs", "Initial commit"]
    assert "+alpha" in held.preview.diff
    head = held.preview.state.head
    assert held.args == {
        "ref": "feature",
        "expect": {"head": head, "origin": "absent"},
    }

    moved = _outside_commit(tmp_path / "work")
    again = await run(agent, make_input("", actions=[_approve(held)]))
    (refused,) = _results(again)
    assert refused["error"]["code"] == "BEM-275"
    assert "refs/heads/feature" not in _remote(origin)  # nothing was pushed
    result = again[-1].result
    assert result is not None and result.interrupted
    (fresh,) = result.action_required
    assert fresh.action_id != held.action_id and fresh.tool_call_id == held.tool_call_id
    assert fresh.preview is not None and fresh.preview.state.head == moved
    assert fresh.preview.commits[0].summary == "Sneak"
    assert "+not reviewed" in fresh.preview.diff
    assert fresh.args["expect"] == {"head": moved, "origin": "absent"}
    assert [d.action for d in result.tool_calls[0].decisions] == ["approved"]

    done = await run(agent, make_input("", actions=[_approve(fresh)]))
    assert done[-1].result is not None and done[-1].result.text == "Pushed."
    (pushed,) = _results(done)
    assert pushed["commit"] == moved
    assert _remote(origin)["refs/heads/feature"] == moved
    await tree.aclose()


async def test_a_held_write_shows_its_diff_and_is_bound_to_the_file(tmp_path: Path) -> None:
    tree, _origin = await _tree(tmp_path)
    client = ScriptedClient(
        [
            ToolCalls(
                (PendingToolCall("write_file", {"path": "docs/a.md", "body": "beta\n"}, id="w1"),)
            ),
            Text("Written."),
        ]
    )
    agent = RigAgentRunner.new(
        "author",
        client,
        sandbox_tools(tree),
        None,
        options=RigOptions(policies=[ApproveTools(tools=["write_file"])]),
    )
    result = (await run(agent, make_input("edit")))[-1].result
    assert result is not None
    (held,) = result.action_required
    assert held.preview is not None and held.preview.tool == "write_file"
    assert "-alpha" in held.preview.diff and "+beta" in held.preview.diff
    blob = held.preview.state.blob
    assert blob == str(pygit2.hash(b"alpha\n"))
    assert held.args["expect"] == {"blob": blob}

    await tree.write_file("docs/a.md", "someone else\n")
    again = await run(agent, make_input("", actions=[_approve(held)]))
    assert _results(again)[0]["error"]["code"] == "BEM-275"
    assert (tmp_path / "work" / "docs/a.md").read_text() == "someone else\n"
    (fresh,) = again[-1].result.action_required  # type: ignore[union-attr]
    assert fresh.preview is not None and "-someone else" in fresh.preview.diff

    done = await run(agent, make_input("", actions=[_approve(fresh)]))
    assert done[-1].result is not None and done[-1].result.text == "Written."
    assert (tmp_path / "work" / "docs/a.md").read_text() == "beta\n"
    await tree.aclose()
