"""Fencing in the sandbox service: a call made for a run whose lease epoch was revoked is
refused with BEM-340 (a real gRPC server on port 0, real git, a local bare origin), and the
revocation survives a restart of the service."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pygit2
import pytest

from riverbeam.core.errors import RiverbeamError
from riverbeam.core.fencing import Fence, fenced
from riverbeam.core.settings import SandboxSettings
from riverbeam.sandbox import FenceBook, FenceClient, WorkspacesClient
from riverbeam.server import GrpcServer, open_channel
from services.sandbox.app import build

RUN = "40744652-2720-4b10-86ee-7333c1be8165"


def _settings(tmp_path: Path) -> SandboxSettings:
    return SandboxSettings(
        listen="127.0.0.1:0", workspace_base=tmp_path / "workspaces", origin_base=tmp_path
    )


@pytest.fixture
def origin(tmp_path: Path) -> tuple[str, pygit2.Repository]:
    path = tmp_path / "origin.git"
    return str(path), pygit2.init_repository(str(path), bare=True)


@contextlib.asynccontextmanager
async def _serve(settings: SandboxSettings) -> AsyncIterator[tuple[WorkspacesClient, FenceClient]]:
    async with (
        build(settings) as app,
        GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server,
    ):
        channel = open_channel(server.address)
        try:
            yield WorkspacesClient(channel), FenceClient(channel)
        finally:
            await channel.close()


async def _code(awaitable: object) -> str:
    with pytest.raises(RiverbeamError) as info:
        await awaitable  # type: ignore[misc]
    return info.value.bem


async def test_a_revoked_epoch_can_no_longer_write_or_push(
    tmp_path: Path, origin: tuple[str, pygit2.Repository]
) -> None:
    url, remote = origin
    async with _serve(_settings(tmp_path)) as (workspaces, fences):
        await workspaces.create("docs", origin=url)
        tree = workspaces.tree("docs")
        with fenced(Fence(RUN, 1)):
            await tree.write_file("a.md", "# A\n")
            await tree.git_add("a.md")
            await tree.git_commit("Add a")
        assert await fences.revoke(RUN, 2) == 2
        with fenced(Fence(RUN, 1)):
            assert await _code(tree.git_push()) == "BEM-340"
            assert await _code(tree.write_file("b.md", "late\n")) == "BEM-340"
            assert await _code(tree.read_file("a.md")) == "BEM-340"
        assert list(remote.references) == []  # the stale holder pushed nothing
        # The new holder (epoch 2) acts; a later epoch then fences epoch 2 off by itself.
        with fenced(Fence(RUN, 2)):
            await tree.git_push()
        with fenced(Fence(RUN, 3)):
            await tree.git_status()
        with fenced(Fence(RUN, 2)):
            assert await _code(tree.git_status()) == "BEM-340"
        # Other runs and unfenced calls (workspace management) are not affected.
        with fenced(Fence("another-run", 1)):
            await tree.git_status()
        await tree.git_status()
        assert await _code(fences.revoke(RUN, 0)) == "BEM-341"


async def test_a_revocation_survives_a_restart(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    async with _serve(settings) as (workspaces, fences):
        await workspaces.create("docs")
        await fences.revoke(RUN, 5)
    async with _serve(settings) as (workspaces, _):
        with fenced(Fence(RUN, 4)):
            assert await _code(workspaces.tree("docs").git_status()) == "BEM-340"
        with fenced(Fence(RUN, 5)):
            await workspaces.tree("docs").git_status()


async def test_revoke_waits_for_a_stale_call_in_flight() -> None:
    book = FenceBook(None)
    release = asyncio.Event()
    inside = asyncio.Event()

    async def stale_push() -> None:
        async with book.admit(Fence(RUN, 1)):
            inside.set()
            await release.wait()

    push = asyncio.create_task(stale_push())
    await inside.wait()
    revoke = asyncio.create_task(book.revoke(RUN, 2))
    await asyncio.sleep(0.05)
    assert not revoke.done()  # the old holder's push is still running
    release.set()
    assert await revoke == 2
    await push
    with pytest.raises(RiverbeamError) as info:
        async with book.admit(Fence(RUN, 1)):
            pass
    assert info.value.bem == "BEM-340"


async def test_the_book_is_bounded(tmp_path: Path) -> None:
    book = FenceBook(tmp_path, max_runs=3)
    for i in range(5):
        await book.revoke(f"run-{i}", 2)
    assert [book.min_epoch(f"run-{i}") for i in range(5)] == [1, 1, 2, 2, 2]
    reloaded = FenceBook(tmp_path, max_runs=3)
    await reloaded.load()
    assert [reloaded.min_epoch(f"run-{i}") for i in range(5)] == [1, 1, 2, 2, 2]
