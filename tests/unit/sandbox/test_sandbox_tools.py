"""The nine sandbox tools: specs, argument checks, a full session, and unbound trees."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from sandbox_kit import CANARY_TEXT, GitSetup

from riverbeam.agents._io import AgentInput
from riverbeam.agents._tool import Tool
from riverbeam.core.errors import RiverbeamError
from riverbeam.sandbox import (
    SANDBOX_TOOL_NAMES,
    OriginPolicy,
    WorkingTree,
    WorkspaceConfig,
    WorkspaceManager,
    sandbox_tools,
)
from riverbeam.types import ContentPart


def _input(**metadata: Any) -> AgentInput:
    return AgentInput(
        content=[ContentPart.of_text("edit the docs")],
        session_id="5f8915eb-31eb-4f8a-9517-e2c15ce7bc41",
        run_id="40744652-2720-4b10-86ee-7333c1be8165",
        agent_name="author",
        metadata=dict(metadata),
    )


def _by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.spec().name: t for t in tools}


async def _code(tool: Tool, args: Any, inp: AgentInput | None = None) -> str:
    with pytest.raises(RiverbeamError) as info:
        await tool.invoke(args, inp or _input())
    return info.value.bem


@pytest.fixture
async def tree(git: GitSetup) -> WorkingTree:
    wrapped = WorkingTree(
        git.tree.root,
        origin=str(git.origin_dir),
        origin_policy=OriginPolicy([f"{git.origin_dir.parent}/"]),
    )
    return wrapped


def test_nine_tools_with_their_specs() -> None:
    tools = sandbox_tools(None)
    assert [t.spec().name for t in tools] == list(SANDBOX_TOOL_NAMES)
    assert all(isinstance(t, Tool) for t in tools)
    specs = {t.spec().name: t.spec() for t in tools}
    assert [n for n, s in specs.items() if s.confirm_required] == ["git_push"]
    assert specs["read_file"].parameters["required"] == ["path"]
    assert specs["write_file"].parameters["required"] == ["path", "body"]
    assert specs["git_commit"].parameters["required"] == ["message"]
    assert set(specs["git_push"].parameters["properties"]) == {"ref", "workspace", "expect"}
    # Set when a call is held for approval: its workspace and the previewed state.
    assert set(specs["write_file"].parameters["properties"]) == {
        "path",
        "body",
        "workspace",
        "expect",
    }
    for spec in specs.values():
        assert spec.parameters["additionalProperties"] is False
        assert spec.openai()["function"]["name"] == spec.name


async def test_a_whole_session_through_the_tools(tree: WorkingTree, git: GitSetup) -> None:
    tools = _by_name(sandbox_tools(tree))
    inp = _input()
    assert (
        await tools["write_file"].invoke({"path": "docs/intro.md", "body": "# Intro\n"}, inp)
    ) == {
        "path": "docs/intro.md",
        "bytes": 8,
    }
    listing = await tools["list_tree"].invoke({}, inp)
    assert listing["files"] == ["README.md", "docs/intro.md"]
    assert (await tools["list_tree"].invoke({"path": "docs"}, inp))["files"] == ["docs/intro.md"]
    assert (await tools["read_file"].invoke({"path": "docs/intro.md"}, inp))[
        "content"
    ] == "# Intro\n"
    status = await tools["git_status"].invoke({}, inp)
    assert status["entries"] == [{"path": "docs/intro.md", "staged": "", "unstaged": "untracked"}]
    assert (await tools["git_add"].invoke({"path": "."}, inp))["staged"] == ["docs/intro.md"]
    diff = await tools["git_diff"].invoke({}, inp)
    assert "+# Intro" in diff["staged"] and diff["unstaged"] == ""
    commit = await tools["git_commit"].invoke({"message": "Add intro"}, inp)
    assert commit["branch"] == "feature"
    log = await tools["git_log"].invoke({"limit": 1}, inp)
    assert [c["id"] for c in log["commits"]] == [commit["commit"]]
    pushed = await tools["git_push"].invoke({}, inp)
    assert pushed == {
        "branch": "feature",
        "remote_ref": "refs/heads/feature",
        "commit": commit["commit"],
    }
    assert git.remote_refs()["refs/heads/feature"] == commit["commit"]
    assert (await tools["git_push"].invoke({"ref": "feature"}, inp))["commit"] == commit["commit"]


async def test_tool_arguments_are_checked(tree: WorkingTree) -> None:
    tools = _by_name(sandbox_tools(tree))
    cases: list[tuple[str, Any]] = [
        ("read_file", {}),
        ("read_file", {"path": 5}),
        ("read_file", {"path": "a", "extra": 1}),
        ("read_file", "README.md"),
        ("read_file", ["README.md"]),
        ("write_file", {"path": "a"}),
        ("write_file", {"path": "a", "body": None}),
        ("write_file", {"path": "a", "body": ["x"]}),
        ("git_log", {"limit": "5"}),
        ("git_log", {"limit": True}),
        ("git_log", {"limit": 0}),
        ("git_log", {"limit": 10_000}),
        ("git_push", {"refspec": "feature:main"}),
        ("git_push", {"ref": "feature", "force": True}),
        ("git_push", {"ref": 1}),
        ("git_commit", {"message": "m", "author": "Mallory <m@evil>"}),
        ("git_add", {"path": "a", "all": True}),
        ("list_tree", {"path": "", "follow_symlinks": True}),
        ("git_status", {"path": "/etc"}),
    ]
    for name, args in cases:
        assert await _code(tools[name], args) == "BEM-090", (name, args)


async def test_hostile_arguments_fail_with_their_codes(tree: WorkingTree, git: GitSetup) -> None:
    tools = _by_name(sandbox_tools(tree))
    (git.work_dir / "link").symlink_to(git.outside)
    before = git.remote_refs()
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("read_file", {"path": "/etc/passwd"}, "BEM-300"),
        ("read_file", {"path": "../outside/secret.txt"}, "BEM-301"),
        ("read_file", {"path": "link/secret.txt"}, "BEM-305"),
        ("read_file", {"path": ".git/config"}, "BEM-306"),
        (
            "write_file",
            {"path": ".git/hooks/post-commit", "body": "#!/bin/sh\nrm -rf /\n"},
            "BEM-306",
        ),
        ("write_file", {"path": ".GIT/config", "body": "[core]\n"}, "BEM-306"),
        ("write_file", {"path": "link/pwn.txt", "body": "x"}, "BEM-305"),
        ("write_file", {"path": "a\u200b.txt", "body": "x"}, "BEM-302"),
        ("list_tree", {"path": "link"}, "BEM-305"),
        ("list_tree", {"path": "../"}, "BEM-301"),
        ("git_add", {"path": "../outside"}, "BEM-301"),
        ("git_add", {"path": "link"}, "BEM-305"),
        ("git_push", {"ref": "main"}, "BEM-328"),
        ("git_push", {"ref": "HEAD:main"}, "BEM-328"),
        ("git_push", {"ref": "+feature:master"}, "BEM-328"),
        ("git_commit", {"message": ""}, "BEM-002"),
    ]
    for name, args, code in cases:
        assert await _code(tools[name], args) == code, (name, args)
    assert (git.outside / "secret.txt").read_bytes() == CANARY_TEXT
    assert not (git.outside / "pwn.txt").exists()
    assert not (git.work_dir / ".git" / "hooks" / "post-commit").exists()
    assert git.remote_refs() == before


async def test_unbound_tools_never_let_a_request_pick_a_directory(tmp_path: Path) -> None:
    tools = _by_name(sandbox_tools(None))
    for metadata in ({}, {"sandbox_root": str(tmp_path)}, {"workspace": "docs"}):
        for name in SANDBOX_TOOL_NAMES:
            args = {"path": "a", "body": "b"} if name == "write_file" else {}
            if name in ("read_file",):
                args = {"path": "a"}
            if name == "git_commit":
                args = {"message": "m"}
            assert await _code(tools[name], args, _input(**metadata)) == "BEM-313"
    assert os.listdir(tmp_path) == []


async def test_request_workspace_only_where_the_deployment_allows(tmp_path: Path) -> None:
    closed = WorkspaceManager(WorkspaceConfig(base_dir=tmp_path / "closed"))
    await closed.create("docs")
    tools = _by_name(sandbox_tools(None, workspaces=closed))
    assert await _code(tools["list_tree"], {}, _input(workspace="docs")) == "BEM-313"

    open_ = WorkspaceManager(
        WorkspaceConfig(base_dir=tmp_path / "open", allow_request_workspace=True)
    )
    await open_.create("docs")
    tools = _by_name(sandbox_tools(None, workspaces=open_))
    await tools["write_file"].invoke({"path": "a.md", "body": "a"}, _input(workspace="docs"))
    listing = await tools["list_tree"].invoke({}, _input(workspace="docs"))
    assert listing["files"] == ["a.md"]
    for name in ("../closed/docs", "/etc", "docs/../x", "", "DOCS", 5, None, ".", "docs\x00"):
        assert await _code(tools["list_tree"], {}, _input(workspace=name)) == "BEM-313", name
    assert await _code(tools["list_tree"], {}, _input(workspace="nope")) == "BEM-310"
    assert (
        await _code(tools["list_tree"], {}, _input(workspace="docs", sandbox_root="/")) == "BEM-313"
    )
    await closed.aclose()
    await open_.aclose()


async def test_a_bound_tree_ignores_request_metadata(tree: WorkingTree, tmp_path: Path) -> None:
    tools = _by_name(sandbox_tools(tree))
    listing = await tools["list_tree"].invoke({}, _input(sandbox_root="/", workspace="other"))
    assert listing["files"] == ["README.md"]


def test_tool_names_match_the_skills_allowlists() -> None:
    from riverbeam.agents._skills import SANDBOX_TOOL_NAMES as SKILL_NAMES

    assert SANDBOX_TOOL_NAMES == SKILL_NAMES


def test_each_sandbox_tool_declares_what_a_rerun_does() -> None:
    specs = {t.spec().name: t.spec() for t in sandbox_tools(None)}
    read_only = {n for n, s in specs.items() if s.read_only}
    idempotent = {n for n, s in specs.items() if s.idempotent}
    assert read_only == {"list_tree", "read_file", "git_status", "git_diff", "git_log"}
    assert idempotent == {"write_file", "git_add"}
    # A commit made twice is two commits, a push reaches another system: never re-run blind.
    assert not specs["git_commit"].rerun_safe
    assert not specs["git_push"].rerun_safe
    assert all(specs[n].rerun_safe for n in read_only | idempotent)


def test_each_sandbox_tool_schema_is_a_valid_json_schema() -> None:
    # BoundTool takes the sandbox's schemas as checked (schema_checked) and compiles them at a
    # tool's first call: this is the check it skips when an agent is built.
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    for tool in sandbox_tools(None):
        assert getattr(tool, "schema_checked", False) is True
        Draft202012Validator.check_schema(tool.spec().parameters)
