"""Helpers shared by the sandbox tests: a jail with a canary outside it, and real git repositories."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import pygit2

from riverbeam.sandbox import OriginPolicy, SandboxLimits, SandboxRoot
from riverbeam.sandbox._tree import WorkingTreeCore

CANARY_TEXT = b"CANARY: this file is outside the sandbox and must never be read or changed\n"


def tree_digest(path: Path) -> dict[str, str]:
    """Every entry under `path` (without following symlinks) and a digest of what it is."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            full = Path(dirpath, name)
            rel = str(full.relative_to(path))
            if full.is_symlink():
                out[rel] = "link:" + os.readlink(full)
            elif full.is_file():
                out[rel] = hashlib.sha256(full.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


@dataclass
class Jail:
    """A sandbox root, and an `outside` directory holding a canary the root must never reach."""

    root_dir: Path
    outside: Path
    canary: Path
    root: SandboxRoot

    def outside_state(self) -> dict[str, str]:
        return tree_digest(self.outside)

    def assert_canary_intact(self, before: dict[str, str]) -> None:
        assert self.canary.read_bytes() == CANARY_TEXT
        assert self.outside_state() == before


@dataclass
class GitSetup:
    """A working tree on branch `feature` (one commit on main before it) and a bare origin."""

    tree: WorkingTreeCore
    work_dir: Path
    origin_dir: Path
    origin: pygit2.Repository
    outside: Path

    def remote_refs(self) -> dict[str, str]:
        repo = pygit2.Repository(str(self.origin_dir))
        return {name: str(repo.references[name].target) for name in repo.references}


def make_git(tmp_path: Path, limits: SandboxLimits | None = None) -> GitSetup:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_bytes(CANARY_TEXT)
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    origin_dir = remotes / "origin.git"
    origin = pygit2.init_repository(str(origin_dir), bare=True)
    work_dir = tmp_path / "work"
    work_dir.mkdir()
    tree = WorkingTreeCore(
        SandboxRoot(work_dir),
        origin_policy=OriginPolicy([f"{remotes}/"]),
        limits=limits,
    )
    tree.init("main")
    tree.write_file("README.md", "# project\n")
    tree.add("README.md")
    tree.initial_commit("Initial commit")
    tree.add_origin(str(origin_dir))
    # Seed origin's main the way a person would, outside the sandbox.
    repo = pygit2.Repository(str(work_dir / ".git"))
    repo.remotes.create_anonymous(str(origin_dir)).push(["refs/heads/main:refs/heads/main"])
    tree.checkout_branch("feature", create=True)
    return GitSetup(tree, work_dir, origin_dir, origin, outside)
