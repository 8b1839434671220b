"""Per-session workspaces through the real sandbox service over gRPC (port 0, real git).

EnsureWorkspace under concurrent callers, a clone of a real bare origin, hostile origins
refused with their codes over the wire, the retention sweep of the service, and the runner's
per-run tools (RunWorkspaces over WorkspacesClient) keeping two sessions apart.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from pygit2.enums import FileMode, ObjectType

from riverbeam.agents._io import AgentInput
from riverbeam.core.errors import RiverbeamError
from riverbeam.core.settings import SandboxSettings
from riverbeam.sandbox import RunWorkspaces, WorkspacesClient, sandbox_tools, session_placement
from riverbeam.server import GrpcServer, open_channel
from riverbeam.types import ContentPart
from services.sandbox.app import build

SIG = pygit2.Signature("Origin", "origin@example.com")


@dataclass
class Service:
    workspaces: WorkspacesClient
    base: Path
    remotes: Path


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[Service]:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    settings = SandboxSettings(
        listen="127.0.0.1:0",
        workspace_base=tmp_path / "workspaces",
        origin_base=remotes,
        max_blob_bytes=64 * 1024,
        workspace_max_idle_s=3600,
        workspace_sweep_interval_s=3600,
    )
    async with (
        build(settings) as app,
        GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server,
    ):
        channel = open_channel(server.address)
        try:
            yield Service(WorkspacesClient(channel), tmp_path / "workspaces", remotes)
        finally:
            await channel.close()


def origin(remotes: Path, name: str, files: dict[str, bytes]) -> tuple[str, str]:
    path = remotes / f"{name}.git"
    repo = pygit2.init_repository(str(path), bare=True)
    builder = repo.TreeBuilder()
    for file, data in files.items():
        builder.insert(file, repo.create_blob(data), FileMode.BLOB)
    commit = repo.create_commit("refs/heads/main", SIG, SIG, "base\n", builder.write(), [])
    return str(path), str(commit)


def hostile_origin(remotes: Path, name: str, entries: list[tuple[int, bytes, bytes]]) -> str:
    """An origin whose tree is written byte for byte (names libgit2 would never build)."""
    path = remotes / f"{name}.git"
    repo = pygit2.init_repository(str(path), bare=True)
    body = b"".join(
        f"{mode:o}".encode() + b" " + entry + b"\0" + repo.create_blob(data).raw
        for mode, entry, data in sorted(entries, key=lambda e: e[1])
    )
    tree = repo.odb.write(ObjectType.TREE, body)
    repo.create_commit("refs/heads/main", SIG, SIG, "hostile\n", tree, [])
    return str(path)


def run_input(session_id: str) -> AgentInput:
    return AgentInput(
        content=[ContentPart.of_text("edit")],
        session_id=session_id,
        run_id=str(uuid.uuid4()),
        agent_name="author",
    )


async def test_concurrent_ensures_over_grpc_create_one_clone(service: Service) -> None:
    url, base = origin(service.remotes, "docs", {"README.md": b"# Docs\n"})
    results = await asyncio.gather(
        *(
            service.workspaces.ensure("s-shared-race", branch="riverbeam/s-shared-race", origin=url)
            for _ in range(8)
        )
    )
    assert [r.created for r in results].count(True) == 1
    assert {(r.info.branch, r.info.head, r.info.origin) for r in results} == {
        ("riverbeam/s-shared-race", base, url)
    }
    tree = service.workspaces.tree("s-shared-race")
    assert (await tree.read_file("README.md")).text == "# Docs\n"
    assert os.listdir(service.base) == ["s-shared-race"]


@pytest.mark.parametrize(
    ("entries", "code"),
    [
        ([(0o100755, b".GIT", b"#!/bin/sh\n")], "BEM-306"),
        ([(0o100644, b"README", b"a"), (0o100644, b"readme", b"b")], "BEM-316"),
        ([(0o120000, b"passwd", b"/etc/passwd")], "BEM-305"),
        ([(0o100644, b"big.bin", b"\0" * (65 * 1024))], "BEM-318"),
    ],
)
async def test_hostile_origins_are_refused_over_grpc(
    service: Service, entries: list[tuple[int, bytes, bytes]], code: str
) -> None:
    url = hostile_origin(service.remotes, f"evil{uuid.uuid4().hex[:6]}", entries)
    with pytest.raises(RiverbeamError) as info:
        await service.workspaces.ensure("s-evil", branch="riverbeam/s-evil", origin=url)
    assert info.value.bem == code
    assert (await service.workspaces.list()).workspaces == []


async def test_run_tools_over_grpc_keep_sessions_apart(service: Service) -> None:
    url, base = origin(service.remotes, "site", {"index.md": b"home\n"})
    runs = RunWorkspaces(service.workspaces, origin=url)
    tools = {t.spec().name: t for t in sandbox_tools(None, runs=runs)}
    a, b = str(uuid.uuid4()), str(uuid.uuid4())

    async def author(session: str, path: str) -> dict[str, Any]:
        run = run_input(session)
        await tools["write_file"].invoke({"path": path, "body": f"{session}\n"}, run)
        await tools["git_add"].invoke({"path": "."}, run)
        result: dict[str, Any] = await tools["git_commit"].invoke({"message": f"add {path}"}, run)
        return result

    # Two sessions at once: each commits exactly its own file (no BEM-321, no foreign file).
    one, two = await asyncio.gather(author(a, "a.md"), author(b, "b.md"))
    assert one["branch"] == session_placement(a).branch
    assert two["branch"] == session_placement(b).branch
    for session, mine in ((a, "a.md"), (b, "b.md")):
        listing = await tools["list_tree"].invoke({}, run_input(session))
        assert listing["files"] == sorted(["index.md", mine])
        log = await tools["git_log"].invoke({"limit": 5}, run_input(session))
        assert [c["id"] for c in log["commits"]][1:] == [base]


async def test_the_service_sweeps_idle_session_workspaces(service: Service) -> None:
    await service.workspaces.ensure("s-old", branch="riverbeam/s-old")
    await service.workspaces.ensure("s-new", branch="riverbeam/s-new")
    await service.workspaces.create("operator")
    then = time.time() - 7200
    for name in ("s-old", "operator"):
        os.utime(service.base / name / "workspace.json", (then, then))
    # A service (re)started on the same base runs the sweep in the background.
    settings = SandboxSettings(
        listen="127.0.0.1:0",
        workspace_base=service.base,
        workspace_max_idle_s=3600,
        workspace_sweep_interval_s=0.05,
    )
    async with build(settings):
        for _ in range(600):  # up to 30 s
            left = os.listdir(service.base)
            if "s-old" not in left and not [n for n in left if n.startswith(".")]:
                break
            await asyncio.sleep(0.05)
    names = [w.name for w in (await service.workspaces.list()).workspaces]
    assert names == ["operator", "s-new"]
    assert not [n for n in os.listdir(service.base) if n.startswith(".")]  # nothing half-deleted
    with pytest.raises(RiverbeamError) as info:
        await service.workspaces.tree("s-old").git_status()
    assert info.value.bem == "BEM-310"
