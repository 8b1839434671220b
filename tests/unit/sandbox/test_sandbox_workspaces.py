"""WorkspaceManager: names, origins, lifecycle, listing, and the mapping from service settings."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from riverbeam.core.errors import RiverbeamError
from riverbeam.core.settings import SandboxSettings
from riverbeam.sandbox import (
    GitIdentity,
    OriginPolicy,
    WorkspaceConfig,
    WorkspaceManager,
    check_origin_form,
    validate_workspace_name,
)


@pytest.fixture
async def manager(tmp_path: Path) -> WorkspaceManager:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    config = WorkspaceConfig(
        base_dir=tmp_path / "ws",
        origin_allowlist=(f"{remotes}/", "https://git.example.com/team/"),
        identity=GitIdentity(name="Docs Bot", email="docs@example.com"),
    )
    return WorkspaceManager(config)


async def _code(awaitable: object) -> str:
    with pytest.raises(RiverbeamError) as info:
        await awaitable  # type: ignore[misc]
    return info.value.bem


BAD_NAMES = [
    "",
    "A",
    "Docs",
    "-docs",
    "_docs",
    ".docs",
    "..",
    ".",
    "../x",
    "a/b",
    "a\\b",
    "docs ",
    " docs",
    "do cs",
    "docs\x00",
    "d\u200bocs",
    "\u0434ocs",
    "x" * 64,
    "/etc",
    "~",
    None,
    5,
]


@pytest.mark.parametrize("name", BAD_NAMES, ids=[repr(n) for n in BAD_NAMES])
async def test_bad_workspace_names(manager: WorkspaceManager, name: object) -> None:
    for call in (manager.create, manager.get, manager.delete, manager.info):
        assert await _code(call(name)) == "BEM-312"  # type: ignore[operator]
    assert sorted(os.listdir(manager.base_dir)) == []


@pytest.mark.parametrize("name", ["docs", "a", "0", "team-docs_2", "x" * 63])
def test_good_workspace_names(name: str) -> None:
    assert validate_workspace_name(name) == name


async def test_create_list_get_delete(manager: WorkspaceManager, tmp_path: Path) -> None:
    origin = str(tmp_path / "remotes" / "docs.git")
    info = await manager.create("docs", origin=origin)
    assert (info.name, info.origin, info.branch) == ("docs", origin, "riverbeam/work")
    assert info.head
    tree = await manager.get("docs")
    assert tree is await manager.get("docs")  # one tree, hence one lock, per workspace
    assert tree.origin == origin
    log = await tree.git_log()
    assert [e.summary for e in log] == ["Initial commit"]
    assert log[0].author == "Docs Bot" and log[0].email == "docs@example.com"
    repo = pygit2.Repository(str(manager.base_dir / "docs" / "tree" / ".git"))
    assert repo.references["refs/heads/main"].target == repo.head.target
    await manager.create("api", branch="api/v2")
    page = await manager.list()
    assert [w.name for w in page.workspaces] == ["api", "docs"]
    assert page.workspaces[0].branch == "api/v2" and page.workspaces[0].origin is None
    assert page.next_page_token == ""
    assert await _code(manager.create("docs")) == "BEM-311"
    await manager.delete("docs")
    assert await _code(manager.get("docs")) == "BEM-310"
    assert await _code(manager.delete("docs")) == "BEM-310"
    assert [w.name for w in (await manager.list()).workspaces] == ["api"]
    assert sorted(os.listdir(manager.base_dir)) == ["api"]
    await manager.aclose()


async def test_a_deleted_workspace_is_gone_for_trees_already_handed_out(
    manager: WorkspaceManager,
) -> None:
    await manager.create("docs")
    tree = await manager.get("docs")
    await manager.delete("docs")
    assert await _code(tree.list_tree()) == "BEM-310"
    assert await _code(tree.write_file("a.txt", "a")) == "BEM-310"
    assert os.listdir(manager.base_dir) == []


async def test_paging(manager: WorkspaceManager) -> None:
    for name in ("a", "b", "c", "d", "e"):
        await manager.create(name)
    first = await manager.list(page_size=2)
    assert [w.name for w in first.workspaces] == ["a", "b"] and first.next_page_token
    second = await manager.list(page_size=2, page_token=first.next_page_token)
    assert [w.name for w in second.workspaces] == ["c", "d"]
    third = await manager.list(page_size=2, page_token=second.next_page_token)
    assert [w.name for w in third.workspaces] == ["e"] and third.next_page_token == ""
    assert await _code(manager.list(page_token="../../etc")) == "BEM-015"


async def test_create_refusals_leave_nothing_behind(manager: WorkspaceManager) -> None:
    assert await _code(manager.create("docs", branch="main")) == "BEM-323"
    assert await _code(manager.create("docs", branch="refs/heads/MASTER")) == "BEM-323"
    assert await _code(manager.create("docs", branch="a..b")) == "BEM-325"
    for origin in (
        "https://evil.example.com/x.git",
        "https://git.example.com/team",
        "https://git.example.com/team.evil.com/x.git",
        "https://user:pass@git.example.com/team/x.git",
        "https://git.example.com/team/../other/x.git",
        "https://git.example.com/team/%2e%2e/x.git",
        "/etc/passwd",
        "relative/path.git",
        "ext::sh -c touch% /tmp/pwned",
        "file:///etc",
        "https://git.example.com/team/x.git\n",
    ):
        assert await _code(manager.create("docs", origin=origin)) == "BEM-329", origin
    assert os.listdir(manager.base_dir) == []


async def test_a_symlinked_workspace_directory_is_not_a_workspace(
    manager: WorkspaceManager, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.symlink(target, manager.base_dir / "evil")
    assert await _code(manager.get("evil")) == "BEM-310"
    assert (await manager.list()).workspaces == []


async def test_request_workspace_switch(tmp_path: Path) -> None:
    closed = WorkspaceManager(WorkspaceConfig(base_dir=tmp_path / "a"))
    await closed.create("docs")
    assert await _code(closed.tree_for_request("docs")) == "BEM-313"
    opened = WorkspaceManager(
        WorkspaceConfig(base_dir=tmp_path / "b", allow_request_workspace=True)
    )
    await opened.create("docs")
    assert (await opened.tree_for_request("docs")) is (await opened.get("docs"))
    assert await _code(opened.tree_for_request("../a/docs")) == "BEM-313"
    assert await _code(opened.tree_for_request("missing")) == "BEM-310"
    await closed.aclose()
    await opened.aclose()


def test_config_from_service_settings(tmp_path: Path) -> None:
    settings = SandboxSettings(
        workspace_base=tmp_path / "ws",
        allowed_origin_prefixes=["https://git.example.com/"],
        origin_base=tmp_path / "remotes",
        allow_request_workspace=True,
        git_author_name="Bot",
        git_author_email="bot@example.com",
        max_read_bytes=10,
        protected_refs=["main", "release"],
    )
    config = WorkspaceConfig.from_settings(settings)
    assert config.base_dir == tmp_path / "ws"
    assert config.origin_allowlist == ("https://git.example.com/", f"{tmp_path}/remotes/")
    assert config.allow_request_workspace
    assert config.identity == GitIdentity(name="Bot", email="bot@example.com")
    assert config.limits.max_read_bytes == 10
    assert config.protected_refs == ("main", "release")


@pytest.mark.parametrize(
    "url",
    [
        "https://git.example.com/team/docs.git",
        "http://localhost:8080/docs.git",
        "git://git.example.com/docs.git",
        "ssh://git.example.com/docs.git",
        "file:///srv/git/docs.git",
        "/srv/git/docs.git",
    ],
)
def test_origin_forms_accepted(url: str) -> None:
    assert check_origin_form(url) == url


def test_origin_policy_prefixes_and_exact_entries() -> None:
    policy = OriginPolicy(["https://git.example.com/team/", "/srv/git/docs.git"])
    assert policy.allows("https://git.example.com/team/docs.git")
    assert not policy.allows("https://git.example.com/team/")
    assert not policy.allows("https://git.example.com/teammates/x.git")
    assert policy.allows("/srv/git/docs.git")
    assert not policy.allows("/srv/git/docs.git.evil")
    with pytest.raises(RiverbeamError) as info:
        OriginPolicy(["https://user:secret@git.example.com/"])
    assert info.value.bem == "BEM-329"
