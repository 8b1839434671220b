"""WorkingTree: the in-process, async working tree (pygit2 and file I/O off the event loop)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable
from typing import TypeVar

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._origin import OriginPolicy
from riverbeam.sandbox._preview import ActionPreview
from riverbeam.sandbox._results import (
    AddResult,
    CommitInfo,
    DiffReport,
    FileContent,
    LogEntry,
    PushResult,
    StatusReport,
    TreeListing,
    WriteResult,
)
from riverbeam.sandbox._root import SandboxRoot
from riverbeam.sandbox._settings import GitIdentity, SandboxLimits
from riverbeam.sandbox._tree import DEFAULT_PROTECTED_REFS, WorkingTreeCore

__all__ = ["WorkingTree"]

T = TypeVar("T")


class WorkingTree:
    """A jailed git working tree; implements `WorkingTreeOps`.

    Every call runs in a worker thread, and calls on one tree are serialised by an
    asyncio.Lock (and, underneath, a thread lock).

    Args:
        root: the jail, or a path to make one from.
        protected_refs: branches never committed to, checked out or pushed (default main, master).
        identity: author and committer (server configuration).
        origin: where pushes go (server configuration); None until `add_origin`.
        origin_policy: an allowlist the origin must match.
        limits: size bounds.

    Example:
        tree = WorkingTree(SandboxRoot("/srv/agent-work/docs", create=True))
        await tree.init()
        await tree.initial_commit()
        await tree.checkout_branch("docs/update", create=True)
        await tree.add_origin("https://git.example.com/docs.git")
    """

    def __init__(
        self,
        root: SandboxRoot | str | os.PathLike[str],
        *,
        protected_refs: Iterable[str] = DEFAULT_PROTECTED_REFS,
        identity: GitIdentity | None = None,
        origin: str | None = None,
        origin_policy: OriginPolicy | None = None,
        limits: SandboxLimits | None = None,
    ) -> None:
        jail = root if isinstance(root, SandboxRoot) else SandboxRoot(root)
        self._core = WorkingTreeCore(
            jail,
            protected_refs=protected_refs,
            identity=identity,
            origin=origin,
            origin_policy=origin_policy,
            limits=limits,
        )
        self._lock = asyncio.Lock()

    @property
    def core(self) -> WorkingTreeCore:
        """The synchronous implementation (for host code already off the event loop)."""
        return self._core

    @property
    def root(self) -> SandboxRoot:
        return self._core.root

    @property
    def protected_refs(self) -> tuple[str, ...]:
        return self._core.protected.names

    @property
    def origin(self) -> str | None:
        return self._core.origin

    async def _run(self, fn: Callable[..., T], *args: object) -> T:
        async with self._lock:
            return await asyncio.to_thread(fn, *args)

    async def release_repository(self) -> None:
        """Release the repository handle; the next operation reopens it."""
        await self._run(self._core.release_repository)

    async def aclose(self) -> None:
        """Release the repository and the root descriptor."""
        await self._run(self._core.close)

    # -- setup -------------------------------------------------------------------------

    async def init(self, initial_branch: str = "main") -> None:
        """Create an empty repository (or open the existing one)."""
        await self._run(self._core.init, initial_branch)

    async def initial_commit(self, message: str = "Initial commit") -> CommitInfo:
        """The first commit, allowed on a protected branch because HEAD is unborn."""
        return await self._run(self._core.initial_commit, message)

    async def add_origin(self, url: str) -> None:
        """Set the push URL (validated against the origin policy)."""
        await self._run(self._core.add_origin, url)

    async def checkout_branch(self, name: str, create: bool = False) -> str:
        """Switch to (or create) a branch; protected branches are refused with BEM-323."""
        return await self._run(self._core.checkout_branch, name, create)

    # -- the nine tool operations -----------------------------------------------------

    async def list_tree(self, path: str = "") -> TreeListing:
        return await self._run(self._core.list_tree, path)

    async def read_file(self, path: str) -> FileContent:
        return await self._run(self._core.read_file, path)

    async def write_file(self, path: str, body: str, expect_blob: str | None = None) -> WriteResult:
        return await self._run(self._core.write_file, path, body, expect_blob)

    async def git_status(self) -> StatusReport:
        return await self._run(self._core.status)

    async def git_diff(self) -> DiffReport:
        return await self._run(self._core.diff)

    async def git_log(self, limit: int = 20) -> list[LogEntry]:
        return await self._run(self._core.log, limit)

    async def git_add(self, path: str = "") -> AddResult:
        return await self._run(self._core.add, path)

    async def git_commit(self, message: str) -> CommitInfo:
        return await self._run(self._core.commit, message)

    async def git_push(
        self,
        ref: str | None = None,
        expect_head: str | None = None,
        expect_origin: str | None = None,
    ) -> PushResult:
        return await self._run(self._core.push, ref, expect_head, expect_origin)

    async def preview_action(
        self, tool: str, *, ref: str | None = None, path: str = "", body: str = ""
    ) -> ActionPreview:
        """What a held `tool` call would do (git_push: `ref`; write_file: `path`, `body`).

        Raises:
            RiverbeamError: BEM-276 for a tool without previews; the tool's own refusals.
        """
        if tool == "git_push":
            return await self._run(self._core.preview_push, ref)
        if tool == "write_file":
            return await self._run(self._core.preview_write, path, body)
        raise RiverbeamError(
            ErrorCode.PREVIEW_UNSUPPORTED, "no preview for this tool", tool=str(tool)[:64]
        )
