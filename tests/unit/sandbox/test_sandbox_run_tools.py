"""The sandbox tools in a run's own workspace (RunWorkspaces), and what a held push states."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pygit2
import pytest

from riverbeam.agents._io import AgentInput
from riverbeam.agents._tool import ApprovalTool, Tool
from riverbeam.core.errors import RiverbeamError
from riverbeam.sandbox import (
    RunWorkspaces,
    WorkspaceConfig,
    WorkspaceManager,
    sandbox_tools,
    session_placement,
)
from riverbeam.types import ContentPart


def _input(session_id: str, **metadata: Any) -> AgentInput:
    return AgentInput(
        content=[ContentPart.of_text("edit")],
        session_id=session_id,
        run_id=str(uuid.uuid4()),
        agent_name="author",
        metadata=dict(metadata),
    )


@pytest.fixture
async def setup(tmp_path: Path) -> Any:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    origin = pygit2.init_repository(str(remotes / "origin.git"), bare=True)
    manager = WorkspaceManager(
        WorkspaceConfig(base_dir=tmp_path / "ws", origin_allowlist=(f"{remotes}/",))
    )
    runs = RunWorkspaces(manager, origin=str(remotes / "origin.git"))
    tools = {t.spec().name: t for t in sandbox_tools(None, runs=runs)}
    try:
        yield tools, origin, manager
    finally:
        await manager.aclose()


async def test_sessions_never_see_each_others_files_index_or_branch(setup: Any) -> None:
    tools, origin, _manager = setup
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    await tools["write_file"].invoke({"path": "notes/a-private-draft.md", "body": "A\n"}, _input(a))
    await tools["git_add"].invoke({"path": "notes"}, _input(a))  # staged in A, never committed

    assert await tools["list_tree"].invoke({}, _input(b)) == {
        "path": "",
        "files": [],
        "truncated": False,
    }
    await tools["write_file"].invoke({"path": "b.md", "body": "B\n"}, _input(b))
    added = await tools["git_add"].invoke({"path": "."}, _input(b))
    assert added["staged"] == ["b.md"]
    status = await tools["git_status"].invoke({}, _input(b))
    assert status["branch"] == session_placement(b).branch
    committed = await tools["git_commit"].invoke({"message": "B's file"}, _input(b))
    pushed = await tools["git_push"].invoke({}, _input(b))
    assert pushed["branch"] == session_placement(b).branch

    tip = origin.references[f"refs/heads/{session_placement(b).branch}"].peel(pygit2.Commit)
    assert str(tip.id) == committed["commit"]
    assert sorted(e.name for e in tip.tree) == ["b.md"]
    # A's state is still A's: its staged draft, on its own branch.
    status_a = await tools["git_status"].invoke({}, _input(a))
    assert status_a["branch"] == session_placement(a).branch
    assert [e["path"] for e in status_a["entries"]] == ["notes/a-private-draft.md"]


async def test_a_held_push_names_its_workspace_and_branch(setup: Any) -> None:
    tools, _origin, _manager = setup
    push: Tool = tools["git_push"]
    assert isinstance(push, ApprovalTool)
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    placement = session_placement(a)
    stored = await push.approval_args({}, _input(a))
    assert stored == {"ref": placement.branch, "workspace": placement.workspace}
    assert await push.approval_args({"ref": "docs/x"}, _input(a)) == {
        "ref": "docs/x",
        "workspace": placement.workspace,
    }
    # The stored call, run from another session, is refused and changes nothing.
    with pytest.raises(RiverbeamError) as info:
        await push.invoke(stored, _input(b))
    assert info.value.bem == "BEM-315"
    with pytest.raises(RiverbeamError) as info:
        await push.approval_args({"workspace": "s-someone-else"}, _input(a))
    assert info.value.bem == "BEM-315"


async def test_a_request_still_cannot_pick_a_directory(setup: Any) -> None:
    tools, _origin, _manager = setup
    with pytest.raises(RiverbeamError) as info:
        await tools["list_tree"].invoke({}, _input(str(uuid.uuid4()), sandbox_root="/etc"))
    assert info.value.bem == "BEM-313"


async def test_bound_tools_refuse_a_named_workspace(tmp_path: Path, setup: Any) -> None:
    _tools, _origin, manager = setup
    await manager.create("docs")
    bound = {t.spec().name: t for t in sandbox_tools(await manager.get("docs"))}
    sid = str(uuid.uuid4())
    assert await bound["git_push"].approval_args({}, _input(sid)) == {"ref": "riverbeam/work"}
    with pytest.raises(RiverbeamError) as info:
        await bound["git_push"].invoke({"workspace": "docs"}, _input(sid))
    assert info.value.bem == "BEM-315"
