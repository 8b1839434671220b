"""Approval previews over the sandbox service: PreviewAction, fenced like every run call, and
approved calls refused (BEM-275) when the previewed state moved. Real gRPC, real git."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pygit2
import pytest

from riverbeam.core.errors import RiverbeamError
from riverbeam.core.fencing import Fence, fenced
from riverbeam.core.settings import SandboxSettings
from riverbeam.sandbox import WorkspacesClient
from riverbeam.server import GrpcServer, open_channel
from services.sandbox.app import build

RUN = "9a1f1c52-3a53-4c55-9a55-3e4f0f7d4f10"


@pytest.fixture
async def workspaces(tmp_path: Path) -> AsyncIterator[tuple[WorkspacesClient, Path, Path]]:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    settings = SandboxSettings(
        listen="127.0.0.1:0",
        workspace_base=tmp_path / "workspaces",
        origin_base=remotes,
        max_preview_bytes=2048,
    )
    async with (
        build(settings) as app,
        GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server,
    ):
        channel = open_channel(server.address)
        try:
            yield WorkspacesClient(channel), remotes, tmp_path / "workspaces"
        finally:
            await channel.close()


async def _code(awaitable: object) -> str:
    with pytest.raises(RiverbeamError) as info:
        await awaitable  # type: ignore[misc]
    return info.value.bem


async def test_previews_and_bound_calls_over_grpc(
    workspaces: tuple[WorkspacesClient, Path, Path],
) -> None:
    client, remotes, base = workspaces
    origin_path = remotes / "docs.git"
    origin = pygit2.init_repository(str(origin_path), bare=True)
    await client.create("docs", branch="docs/update", origin=str(origin_path))
    tree = client.tree("docs")

    wrote = await tree.preview_action("write_file", path="guide.md", body="# Guide\n")
    assert wrote.state.blob == "absent" and "new file mode" in wrote.diff
    await tree.write_file("guide.md", "# Guide\n", wrote.state.blob)
    await tree.git_add("guide.md")
    first = await tree.git_commit("Add the guide")

    preview = await tree.preview_action("git_push")
    assert preview.state.branch == "docs/update" and preview.state.head == first.id
    assert preview.commits[0].summary == "Add the guide"
    assert "+# Guide" in preview.diff

    # The branch moves after the preview: the approved push is refused, nothing is pushed.
    await tree.write_file("more.md", "x\n" * 3000)
    await tree.git_add("more.md")
    second = await tree.git_commit("More")
    assert await _code(tree.git_push(None, preview.state.head, preview.state.origin)) == "BEM-275"
    assert "refs/heads/docs/update" not in list(origin.references)

    fresh = await tree.preview_action("git_push", ref="docs/update")
    assert fresh.state.head == second.id
    assert fresh.truncated and fresh.diff_bytes > 2048 and len(fresh.diff.encode()) < 2200
    pushed = await tree.git_push("docs/update", fresh.state.head, fresh.state.origin)
    assert str(origin.references["refs/heads/docs/update"].target) == pushed.commit == second.id

    # A write whose file moved is refused and writes nothing.
    held = await tree.preview_action("write_file", path="guide.md", body="approved\n")
    await tree.write_file("guide.md", "someone else\n")
    assert await _code(tree.write_file("guide.md", "approved\n", held.state.blob)) == "BEM-275"
    assert (base / "docs" / "tree" / "guide.md").read_text() == "someone else\n"

    assert await _code(tree.preview_action("git_commit")) == "BEM-276"
    assert await _code(tree.preview_action("git_push", ref="main")) == "BEM-328"


async def test_preview_action_is_fenced(workspaces: tuple[WorkspacesClient, Path, Path]) -> None:
    client, remotes, _base = workspaces
    origin_path = remotes / "f.git"
    pygit2.init_repository(str(origin_path), bare=True)
    await client.create("fenced", branch="work", origin=str(origin_path))
    tree = client.tree("fenced")
    with fenced(Fence(RUN, 2)):
        await tree.preview_action("write_file", path="a.txt", body="a\n")
    with fenced(Fence(RUN, 1)):
        assert await _code(tree.preview_action("write_file", path="a.txt", body="a\n")) == "BEM-340"
