"""WorkspaceManager.ensure (first use, idempotent, race-safe) and the retention sweep."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from riverbeam.core.errors import RiverbeamError
from riverbeam.sandbox import WorkspaceConfig, WorkspaceManager

SIG = pygit2.Signature("Origin", "origin@example.com")


@pytest.fixture
def remotes(tmp_path: Path) -> Path:
    path = tmp_path / "remotes"
    path.mkdir()
    return path


def origin_with_files(path: Path, files: dict[str, bytes]) -> tuple[pygit2.Repository, str]:
    repo = pygit2.init_repository(str(path), bare=True)
    builder = repo.TreeBuilder()
    for name, data in files.items():
        builder.insert(name, repo.create_blob(data), FileMode.BLOB)
    first = repo.create_commit("refs/heads/main", SIG, SIG, "first\n", builder.write(), [])
    return repo, str(first)


def config(tmp_path: Path, remotes: Path, **extra: object) -> WorkspaceConfig:
    return WorkspaceConfig(
        base_dir=tmp_path / "ws",
        origin_allowlist=(f"{remotes}/",),
        **extra,  # type: ignore[arg-type]
    )


async def test_ensure_clones_the_origin_once_and_then_returns_it(
    tmp_path: Path, remotes: Path
) -> None:
    _origin, first = origin_with_files(remotes / "docs.git", {"README.md": b"# Docs\n"})
    manager = WorkspaceManager(config(tmp_path, remotes))
    try:
        made = await manager.ensure(
            "s-one", branch="riverbeam/s-one", origin=str(remotes / "docs.git")
        )
        assert made.created and made.info.branch == "riverbeam/s-one" and made.info.head == first
        tree = await manager.get("s-one")
        assert (await tree.read_file("README.md")).text == "# Docs\n"
        await tree.write_file("draft.md", "unsaved\n")
        again = await manager.ensure("s-one", branch="riverbeam/other", origin=None)
        assert not again.created and again.info.branch == "riverbeam/s-one"
        # What was there stays there: ensure never resets a workspace.
        assert (await tree.read_file("draft.md")).text == "unsaved\n"
    finally:
        await manager.aclose()


async def test_ensure_without_origin_or_with_an_empty_one_starts_from_a_first_commit(
    tmp_path: Path, remotes: Path
) -> None:
    pygit2.init_repository(str(remotes / "empty.git"), bare=True)
    manager = WorkspaceManager(config(tmp_path, remotes))
    try:
        for name, origin in (("s-a", None), ("s-b", str(remotes / "empty.git"))):
            made = await manager.ensure(name, branch=f"riverbeam/{name}", origin=origin)
            assert made.created and made.info.origin == origin
            log = await (await manager.get(name)).git_log(5)
            assert [e.summary for e in log] == ["Initial commit"]
    finally:
        await manager.aclose()


async def test_concurrent_ensures_create_exactly_once(tmp_path: Path, remotes: Path) -> None:
    origin_with_files(remotes / "docs.git", {"README.md": b"# Docs\n"})
    # Two managers on one base directory stand for two service processes.
    one = WorkspaceManager(config(tmp_path, remotes))
    two = WorkspaceManager(config(tmp_path, remotes))
    try:
        results = await asyncio.gather(
            *(
                m.ensure("s-race", branch="riverbeam/s-race", origin=str(remotes / "docs.git"))
                for m in [one, two] * 6
            )
        )
        assert sum(r.created for r in results) == 1
        assert {r.info.head for r in results} == {results[0].info.head}
        assert sorted(os.listdir(tmp_path / "ws")) == ["s-race"]  # no half-built copies left
    finally:
        await one.aclose()
        await two.aclose()


async def test_ensure_refusals(tmp_path: Path, remotes: Path) -> None:
    manager = WorkspaceManager(config(tmp_path, remotes))
    try:
        for kwargs, code in [
            ({"name": "Bad"}, "BEM-312"),
            ({"name": "s-x", "branch": "main"}, "BEM-323"),
            ({"name": "s-x", "branch": "a..b"}, "BEM-325"),
            ({"name": "s-x", "origin": "https://evil.example.com/x.git"}, "BEM-329"),
            ({"name": "s-x", "origin": str(remotes / "missing.git")}, "BEM-319"),
        ]:
            with pytest.raises(RiverbeamError) as info:
                await manager.ensure(**kwargs)  # type: ignore[arg-type]
            assert info.value.bem == code, kwargs
        assert os.listdir(tmp_path / "ws") == []
    finally:
        await manager.aclose()


def _age(base: Path, name: str, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(base / name / "workspace.json", (then, then))


async def test_retention_deletes_only_idle_managed_workspaces(
    tmp_path: Path, remotes: Path
) -> None:
    base = tmp_path / "ws"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep me\n")
    first = WorkspaceManager(config(tmp_path, remotes, max_idle_s=3600))
    try:
        await first.create("operator")  # made by CreateWorkspace: not managed, never swept
        for name in ("s-idle", "s-busy"):
            await first.ensure(name, branch=f"riverbeam/{name}")
        # A symlink to outside inside the idle workspace: removed, never followed.
        os.symlink(outside, base / "s-idle" / "tree" / "escape")
    finally:
        await first.aclose()
    for name in ("operator", "s-idle", "s-busy"):
        _age(base, name, 7200)

    # A fresh process: only the on-disk stamps count, until a workspace is used.
    manager = WorkspaceManager(config(tmp_path, remotes, max_idle_s=3600))
    try:
        await manager.get("s-busy")  # used now
        assert await manager.sweep() == ["s-idle"]
        assert sorted(os.listdir(base)) == ["operator", "s-busy"]
        assert (outside / "keep.txt").read_text() == "keep me\n"
        with pytest.raises(RiverbeamError) as info:
            await manager.get("s-idle")
        assert info.value.bem == "BEM-310"
        # Used again later: made again from scratch, as on first use.
        again = await manager.ensure("s-idle", branch="riverbeam/s-idle")
        assert again.created
        # max_idle_s=0 in the configuration switches retention off.
        _age(base, "s-idle", 10**6)
        off = WorkspaceManager(config(tmp_path, remotes, max_idle_s=0))
        try:
            assert await off.sweep() == []
        finally:
            await off.aclose()
    finally:
        await manager.aclose()


async def test_the_sweep_finishes_interrupted_deletes_and_drops_abandoned_creations(
    tmp_path: Path, remotes: Path
) -> None:
    base = tmp_path / "ws"
    manager = WorkspaceManager(config(tmp_path, remotes, max_idle_s=3600))
    try:
        for name in (".deleting-s-x-0123", ".creating-s-y-old", ".creating-s-z-new"):
            (base / name / "tree").mkdir(parents=True)
        then = time.time() - 2 * 3600
        os.utime(base / ".creating-s-y-old", (then, then))
        assert await manager.sweep() == []
        assert os.listdir(base) == [".creating-s-z-new"]  # maybe still being built: kept
    finally:
        await manager.aclose()


async def test_open_trees_are_bounded_and_reopened_on_use(
    tmp_path: Path, remotes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import riverbeam.sandbox._workspaces as workspaces_module

    monkeypatch.setattr(workspaces_module, "_MAX_OPEN_TREES", 2)
    monkeypatch.setattr(workspaces_module, "_EVICT_IDLE_S", 0.0)
    manager = WorkspaceManager(config(tmp_path, remotes))
    try:
        for name in ("s-a", "s-b", "s-c"):
            await manager.ensure(name, branch=f"riverbeam/{name}")
        first = await manager.get("s-a")
        await first.write_file("kept.md", "kept\n")
        await manager.get("s-b")
        await manager.get("s-c")  # three open: the longest unused (s-a) is closed
        with pytest.raises(RiverbeamError) as info:
            await first.read_file("kept.md")
        assert info.value.bem == "BEM-310"
        again = await manager.get("s-a")  # opened again on the next use, files intact
        assert again is not first
        assert (await again.read_file("kept.md")).text == "kept\n"
    finally:
        await manager.aclose()
