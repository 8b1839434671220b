"""The sandbox service end to end: a real gRPC server on port 0, real git, a local bare origin."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pygit2
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from riverbeam.agents._io import AgentInput
from riverbeam.agents._tool import Tool
from riverbeam.core.errors import RiverbeamError
from riverbeam.core.settings import SandboxSettings
from riverbeam.sandbox import SandboxClient, WorkingTreeOps, WorkspacesClient, sandbox_tools
from riverbeam.server import GrpcServer, open_channel
from riverbeam.types import ContentPart
from services.sandbox.app import SERVICE_NAME, build

CANARY = b"CANARY outside every workspace\n"


@dataclass
class Service:
    workspaces: WorkspacesClient
    channel: grpc.aio.Channel
    base: Path
    remotes: Path
    canary: Path

    def origin(self, name: str) -> tuple[str, pygit2.Repository]:
        path = self.remotes / f"{name}.git"
        return str(path), pygit2.init_repository(str(path), bare=True)


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[Service]:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    canary = tmp_path / "canary.txt"
    canary.write_bytes(CANARY)
    settings = SandboxSettings(
        listen="127.0.0.1:0",
        workspace_base=tmp_path / "workspaces",
        origin_base=remotes,
        git_author_name="Riverbeam Test",
        git_author_email="test@riverbeam.invalid",
    )
    async with (
        build(settings) as app,
        GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server,
    ):
        channel = open_channel(server.address)
        try:
            yield Service(
                WorkspacesClient(channel), channel, tmp_path / "workspaces", remotes, canary
            )
        finally:
            await channel.close()


def _input() -> AgentInput:
    return AgentInput(
        content=[ContentPart.of_text("update the docs")],
        session_id="5f8915eb-31eb-4f8a-9517-e2c15ce7bc41",
        run_id="40744652-2720-4b10-86ee-7333c1be8165",
        agent_name="author",
    )


def _tools(tree: WorkingTreeOps) -> dict[str, Tool]:
    return {t.spec().name: t for t in sandbox_tools(tree)}


async def _code(awaitable: Any) -> str:
    with pytest.raises(RiverbeamError) as info:
        await awaitable
    return info.value.bem


async def test_every_tool_over_grpc(service: Service) -> None:
    url, origin = service.origin("docs")
    info = await service.workspaces.create("docs", branch="docs/update", origin=url)
    assert (info.name, info.branch, info.origin) == ("docs", "docs/update", url)
    tree = service.workspaces.tree("docs")
    assert isinstance(tree, WorkingTreeOps)
    tools, inp = _tools(tree), _input()

    written = await tools["write_file"].invoke({"path": "guide/intro.md", "body": "# Intro\n"}, inp)
    assert written == {"path": "guide/intro.md", "bytes": 8}
    assert (service.base / "docs" / "tree" / "guide" / "intro.md").read_bytes() == b"# Intro\n"
    assert (await tools["list_tree"].invoke({}, inp))["files"] == ["guide/intro.md"]
    assert (await tools["list_tree"].invoke({"path": "guide"}, inp))["files"] == ["guide/intro.md"]
    read = await tools["read_file"].invoke({"path": "guide/intro.md"}, inp)
    assert read == {
        "path": "guide/intro.md",
        "content": "# Intro\n",
        "size": 8,
        "truncated": False,
        "binary": False,
    }
    status = await tools["git_status"].invoke({}, inp)
    assert status["branch"] == "docs/update"
    assert status["entries"] == [{"path": "guide/intro.md", "staged": "", "unstaged": "untracked"}]
    assert (await tools["git_add"].invoke({"path": ""}, inp))["staged"] == ["guide/intro.md"]
    diff = await tools["git_diff"].invoke({}, inp)
    assert "+# Intro" in diff["staged"] and diff["files"] == 1 and not diff["truncated"]
    commit = await tools["git_commit"].invoke({"message": "Add the intro"}, inp)
    assert commit["branch"] == "docs/update"
    log = await tools["git_log"].invoke({}, inp)
    assert [c["summary"] for c in log["commits"]] == ["Add the intro", "Initial commit"]
    assert log["commits"][0]["author"] == "Riverbeam Test"
    pushed = await tools["git_push"].invoke({}, inp)
    assert pushed == {
        "branch": "docs/update",
        "remote_ref": "refs/heads/docs/update",
        "commit": commit["commit"],
    }
    assert str(origin.references["refs/heads/docs/update"].target) == commit["commit"]
    assert "refs/heads/main" not in list(origin.references)
    assert (await tools["git_status"].invoke({}, inp))["clean"] is True


async def test_errors_keep_their_codes_over_the_wire(service: Service) -> None:
    url, origin = service.origin("docs")
    await service.workspaces.create("docs", origin=url)
    tree = service.workspaces.tree("docs")
    root = service.base / "docs" / "tree"
    (root / "out").symlink_to(service.canary.parent)
    hostile = {
        "/etc/passwd": "BEM-300",
        "../../canary.txt": "BEM-301",
        "a\x00b": "BEM-302",
        "a\u200bb": "BEM-302",
        "\udcff": "BEM-302",
        "": "BEM-303",
        "a//b": "BEM-303",
        "x" * 300: "BEM-304",
        "out/canary.txt": "BEM-305",
        ".git/config": "BEM-306",
        ".GIT/HEAD": "BEM-306",
        "git~1/config": "BEM-306",
        "missing.txt": "BEM-308",
    }
    for path, code in hostile.items():
        assert await _code(tree.read_file(path)) == code, path
    for path, code in {
        ".git/hooks/pre-push": "BEM-306",
        "out/new.txt": "BEM-305",
        "..": "BEM-301",
    }.items():
        assert await _code(tree.write_file(path, "#!/bin/sh\n")) == code, path
    assert await _code(tree.list_tree("out")) == "BEM-305"
    assert await _code(tree.git_add("out")) == "BEM-305"
    for ref in (
        "main",
        "HEAD:main",
        "+riverbeam/work:main",
        ":master",
        "refs/heads//MAIN",
        "m\u0430in",
    ):
        assert await _code(tree.git_push(ref)) == "BEM-328", ref
    assert await _code(tree.git_push("a..b")) == "BEM-325"
    assert await _code(tree.checkout_branch("main")) == "BEM-323"
    assert await _code(tree.git_commit("nothing staged")) == "BEM-321"
    assert await _code(tree.git_log(0)) == "BEM-002"
    assert await _code(service.workspaces.tree("nope").list_tree()) == "BEM-310"
    assert await _code(service.workspaces.tree("../docs").list_tree()) == "BEM-312"
    assert service.canary.read_bytes() == CANARY
    assert list(origin.references) == []


async def test_workspace_lifecycle(service: Service) -> None:
    url, _ = service.origin("a")
    await service.workspaces.create("a", origin=url)
    await service.workspaces.create("b")
    assert await _code(service.workspaces.create("a")) == "BEM-311"
    assert await _code(service.workspaces.create("Bad Name")) == "BEM-312"
    assert await _code(service.workspaces.create("c", branch="master")) == "BEM-323"
    assert (
        await _code(service.workspaces.create("c", origin="https://evil.example.com/x.git"))
        == "BEM-329"
    )
    assert await _code(service.workspaces.create("c", origin=str(service.canary))) == "BEM-329"
    page = await service.workspaces.list(page_size=1)
    assert [w.name for w in page.workspaces] == ["a"] and page.next_page_token == "a"
    rest = await service.workspaces.list(page_token=page.next_page_token)
    assert [w.name for w in rest.workspaces] == ["b"] and rest.workspaces[0].origin is None
    got = await service.workspaces.get("a")
    assert got.origin == url and got.head
    tree = service.workspaces.tree("b")
    assert await tree.checkout_branch("second", create=True) == "second"
    assert (await service.workspaces.get("b")).branch == "second"
    assert await _code(tree.git_push()) == "BEM-324"
    await service.workspaces.delete("a")
    assert await _code(service.workspaces.get("a")) == "BEM-310"
    assert [w.name for w in (await service.workspaces.list()).workspaces] == ["b"]


async def test_remote_refusal_is_330_over_grpc(service: Service) -> None:
    url, origin = service.origin("docs")
    await service.workspaces.create("docs", origin=url)
    tree: SandboxClient = service.workspaces.tree("docs")
    await tree.write_file("a.txt", "a")
    await tree.git_add("a.txt")
    await tree.git_commit("a")
    await tree.git_push()
    sig = pygit2.Signature("someone", "someone@example.com")
    foreign = origin.create_commit(None, sig, sig, "foreign", origin.TreeBuilder().write(), [])
    origin.references["refs/heads/riverbeam/work"].set_target(foreign)
    await tree.write_file("b.txt", "b")
    await tree.git_add("b.txt")
    await tree.git_commit("b")
    assert await _code(tree.git_push()) == "BEM-330"


async def test_requests_cannot_choose_a_workspace_by_default(service: Service) -> None:
    await service.workspaces.create("docs")
    tools = {t.spec().name: t for t in sandbox_tools(None, workspaces=service.workspaces)}
    inp = _input()
    inp.metadata = {"workspace": "docs"}
    assert await _code(tools["list_tree"].invoke({}, inp)) == "BEM-313"
    allowing = WorkspacesClient(service.channel, allow_request_workspace=True)
    tools = {t.spec().name: t for t in sandbox_tools(None, workspaces=allowing)}
    assert (await tools["list_tree"].invoke({}, inp))["files"] == []
    inp.metadata = {"workspace": "../docs"}
    assert await _code(tools["list_tree"].invoke({}, inp)) == "BEM-313"


async def test_health_and_reflection(service: Service) -> None:
    stub = health_pb2_grpc.HealthStub(service.channel)
    reply = await stub.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(service.channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    async for response in reflection.ServerReflectionInfo(iter([request])):
        names = {s.name for s in response.list_services_response.service}
        assert SERVICE_NAME in names
        break
