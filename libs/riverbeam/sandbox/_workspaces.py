"""Named workspaces under one base directory: create, list, open, delete.

Layout, for a workspace `docs`:

    <base_dir>/docs/workspace.json   origin and creation time (never reachable by tools)
    <base_dir>/docs/tree/            the sandbox root: the working tree and its .git

A workspace is built under a hidden temporary name and renamed into place when complete, and
deleted by renaming it away before removing it, so a listing never shows half a workspace.

`create` makes an empty repository (today's CreateWorkspace); `ensure` makes a workspace on
first use, cloned from its origin's base branch (hostile input: see `_clone`), and marks it
managed: managed workspaces idle longer than `max_idle_s` are deleted by `sweep`.

The git side (pygit2 and the modules over it) is imported on a manager's first git call, not
when it is made: a sandbox that has served no workspace call has not loaded it (issue 16).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import os
import secrets
import shutil
import stat
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._origin import OriginPolicy, check_origin_form
from riverbeam.sandbox._paths import display_path
from riverbeam.sandbox._refs import ProtectedRefs, check_branch_form, validate_branch_name
from riverbeam.sandbox._results import WorkspaceInfo
from riverbeam.sandbox._root import SandboxRoot
from riverbeam.sandbox._settings import WorkspaceConfig
from riverbeam.sandbox._workspace_names import (
    WORKSPACE_NAME,
    EnsuredWorkspace,
    WorkspacePage,
    validate_workspace_name,
)

if TYPE_CHECKING:
    from riverbeam.sandbox._local import WorkingTree
    from riverbeam.sandbox._tree import WorkingTreeCore

__all__ = [
    "WORKSPACE_NAME",
    "EnsuredWorkspace",
    "WorkspaceManager",
    "WorkspacePage",
    "validate_workspace_name",
]

_TREE = "tree"
_META = "workspace.json"
_MAX_PAGE = 1000
# Last use is written to disk (workspace.json's mtime) at most this often per workspace.
_TOUCH_EVERY_S = 60.0
# Open trees (a directory descriptor and a repository each) kept beyond this many are closed
# once unused for _EVICT_IDLE_S; the next call opens them again.
_MAX_OPEN_TREES = 256
_EVICT_IDLE_S = 300.0
# A half-built workspace this old belongs to a process that stopped while creating it.
_STALE_CREATION_S = 3600.0


class WorkspaceManager:
    """Creates and opens the workspaces of one sandbox service.

    Args:
        config: base directory, origin allowlist and default, protected refs, identity, limits.
    """

    def __init__(self, config: WorkspaceConfig) -> None:
        self._config = config
        self._base = Path(os.path.abspath(config.base_dir))
        self._base.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._default_origin = (
            check_origin_form(config.default_origin) if config.default_origin else None
        )
        self._request_policy = OriginPolicy(config.origin_allowlist)
        # At push time the configured default is allowed too.
        defaults = [self._default_origin] if self._default_origin else []
        self._push_policy = OriginPolicy([*config.origin_allowlist, *defaults])
        self._protected = ProtectedRefs(config.protected_refs)
        check_branch_form(config.base_branch)  # libgit2's check too, on the first git call
        self._trees: dict[str, WorkingTree] = {}
        # Names of trees in use order (least recent first): beyond max_open_repositories, the
        # oldest release their repository handle, so memory does not grow with workspaces.
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._lock = asyncio.Lock()
        self._git_checked = False  # the object cache bound and libgit2's branch check
        # One creation lock per name being made (removed when nobody waits), and when each
        # workspace was last handed out (monotonic) and last stamped on disk (wall clock).
        self._making: dict[str, tuple[asyncio.Lock, int]] = {}
        self._used: dict[str, float] = {}
        self._stamped: dict[str, float] = {}

    @property
    def base_dir(self) -> Path:
        return self._base

    @property
    def allow_request_workspace(self) -> bool:
        return self._config.allow_request_workspace

    def _dir(self, name: str) -> Path:
        return self._base / validate_workspace_name(name)

    def _exists(self, name: str) -> bool:
        try:
            st = os.lstat(self._dir(name))
        except FileNotFoundError:
            return False
        return stat.S_ISDIR(st.st_mode)

    # -- create ------------------------------------------------------------------------

    async def create(
        self, name: str, *, branch: str | None = None, origin: str | None = None
    ) -> WorkspaceInfo:
        """Create a workspace: repository, first commit, working branch, origin.

        Args:
            name: the workspace name (BEM-312).
            branch: the working branch (default from settings); protected names are refused.
            origin: a URL in the allowlist (BEM-329); default: the configured origin.

        Raises:
            RiverbeamError: 311 exists, 312 bad name, 323 protected branch, 325 bad branch,
                329 origin not allowed.
        """
        work_branch, url = self._creation_args(name, branch, origin)
        async with self._making_lock(name):
            await asyncio.to_thread(self._create_sync, name, work_branch, url, False)
        return await self.info(name)

    async def ensure(
        self, name: str, *, branch: str | None = None, origin: str | None = None
    ) -> EnsuredWorkspace:
        """The workspace `name`, made on first use: idempotent and safe under races.

        A new workspace is a clone of the origin's base branch (the first commit of an empty
        repository when there is no origin, or the origin has no base branch yet), on a new
        working branch `branch`, and is managed (the retention sweep deletes it when idle).
        An existing workspace is returned as it is, whatever `branch` and `origin` say.

        Raises:
            RiverbeamError: 312 bad name, 323/325 bad branch, 329 origin not allowed, 319 the
                origin cannot be fetched, 305/306/316/317/318 the origin's tree is refused.
        """
        work_branch, url = self._creation_args(name, branch, origin)
        for attempt in range(2):
            created = False
            if not await asyncio.to_thread(self._exists, name):
                async with self._making_lock(name):
                    if not await asyncio.to_thread(self._exists, name):
                        try:
                            await asyncio.to_thread(self._create_sync, name, work_branch, url, True)
                            created = True
                        except RiverbeamError as err:
                            # Another process renamed its copy into place first.
                            if err.code is not ErrorCode.WORKSPACE_EXISTS:
                                raise
            self._mark_used(name)
            try:
                return EnsuredWorkspace(await self.info(name), created)
            except RiverbeamError as err:
                # Swept (or deleted) between the check and now: make it again, once.
                if err.code is not ErrorCode.WORKSPACE_NOT_FOUND or attempt:
                    raise
        raise AssertionError("unreachable")

    def _creation_args(
        self, name: str, branch: str | None, origin: str | None
    ) -> tuple[str, str | None]:
        validate_workspace_name(name)
        work_branch = branch or self._config.default_branch
        if isinstance(work_branch, str):
            self._protected.check(work_branch, ErrorCode.CHECKOUT_PROTECTED)
        validate_branch_name(work_branch)
        url = self._request_policy.check(origin) if origin else self._default_origin
        return work_branch, url

    @contextlib.asynccontextmanager
    async def _making_lock(self, name: str) -> AsyncIterator[None]:
        lock, users = self._making.get(name, (asyncio.Lock(), 0))
        self._making[name] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._making[name]
            if users <= 1:
                del self._making[name]
            else:
                self._making[name] = (lock, users - 1)

    def _git_ready(self) -> None:
        """Before the first git call: libgit2's object cache bound (process-wide: set by the
        manager whose git calls begin last) and libgit2's branch check."""
        if not self._git_checked:
            from riverbeam.sandbox._gitdir import bound_object_cache

            bound_object_cache(self._config.git_object_cache_bytes)
            validate_branch_name(self._config.base_branch)
            self._git_checked = True

    def _core(self, tree_dir: Path, origin: str | None) -> WorkingTreeCore:
        from riverbeam.sandbox._tree import WorkingTreeCore

        self._git_ready()
        config = self._config
        return WorkingTreeCore(
            SandboxRoot(tree_dir),
            protected_refs=config.protected_refs,
            identity=config.identity,
            origin=origin,
            origin_policy=self._push_policy if origin else None,
            limits=config.limits,
        )

    def _create_sync(self, name: str, branch: str, origin: str | None, managed: bool) -> None:
        if self._exists(name):
            raise RiverbeamError(ErrorCode.WORKSPACE_EXISTS, workspace=name)
        staging = self._base / f".creating-{name}-{secrets.token_hex(6)}"
        staging.mkdir(mode=0o700)
        try:
            (staging / _TREE).mkdir(mode=0o755)
            core = self._core(staging / _TREE, None)
            base: str | None = None
            try:
                core.init(self._config.base_branch)
                if managed and origin is not None:
                    from riverbeam.sandbox._clone import clone_base

                    base = clone_base(
                        core.repo(),
                        core.root,
                        url=origin,
                        branch=self._config.base_branch,
                        limits=self._config.limits,
                    )
                if base is None:
                    core.initial_commit("Initial commit")
                core.checkout_branch(branch, create=True)
                if origin is not None:
                    core.add_origin(origin)
            finally:
                core.close()
            meta = {
                "name": name,
                "origin": origin,
                "created_at": int(time.time()),
                "managed": managed,
                "base_commit": base,
            }
            (staging / _META).write_text(json.dumps(meta), encoding="utf-8")
            try:
                os.rename(staging, self._dir(name))
            except OSError:
                raise RiverbeamError(ErrorCode.WORKSPACE_EXISTS, workspace=name) from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    # -- open ----------------------------------------------------------------------------

    def _read_meta(self, name: str) -> dict[str, Any]:
        try:
            raw = (self._dir(name) / _META).read_text(encoding="utf-8")
            meta = json.loads(raw)
        except (OSError, ValueError):
            raise RiverbeamError(ErrorCode.WORKSPACE_NOT_FOUND, workspace=name) from None
        return meta if isinstance(meta, dict) else {}

    def _open_sync(self, name: str) -> WorkingTree:
        from riverbeam.sandbox._local import WorkingTree

        self._git_ready()
        if not self._exists(name):
            raise RiverbeamError(ErrorCode.WORKSPACE_NOT_FOUND, workspace=name)
        meta = self._read_meta(name)
        origin = meta.get("origin")
        origin = check_origin_form(origin) if isinstance(origin, str) else None
        config = self._config
        return WorkingTree(
            SandboxRoot(self._dir(name) / _TREE),
            protected_refs=config.protected_refs,
            identity=config.identity,
            origin=origin,
            origin_policy=self._push_policy if origin else None,
            limits=config.limits,
        )

    async def get(self, name: str) -> WorkingTree:
        """The working tree of an existing workspace (one object, hence one lock, per name).

        Raises:
            RiverbeamError: 312 bad name, 310 no such workspace.
        """
        validate_workspace_name(name)
        async with self._lock:
            tree = self._trees.get(name)
            if tree is None:
                tree = await asyncio.to_thread(self._open_sync, name)
                self._trees[name] = tree
            self._mark_used(name)
            self._recent[name] = None
            self._recent.move_to_end(name)
            idle: list[WorkingTree] = []
            while len(self._recent) > self._config.max_open_repositories:
                oldest, _ = self._recent.popitem(last=False)
                if oldest in self._trees:
                    idle.append(self._trees[oldest])
            evicted = self._evictable()
        # Outside the manager's lock: a release or close waits for that tree's running operation.
        for other in idle:
            if other not in evicted:
                await other.release_repository()
        for old in evicted:
            await old.aclose()
        return tree

    @property
    def open_repositories(self) -> int:
        """How many workspaces hold an open repository handle (bounded by configuration)."""
        return sum(1 for tree in self._trees.values() if tree.core.repository_open)

    def _mark_used(self, name: str) -> None:
        now = time.monotonic()
        self._used[name] = now
        if now - self._stamped.get(name, -_TOUCH_EVERY_S) >= _TOUCH_EVERY_S:
            self._stamped[name] = now
            with contextlib.suppress(OSError):
                os.utime(self._dir(name) / _META)

    def _evictable(self) -> list[WorkingTree]:
        """Trees to close: the longest unused, beyond _MAX_OPEN_TREES. Holds self._lock."""
        if len(self._trees) <= _MAX_OPEN_TREES:
            return []
        now = time.monotonic()
        idle = sorted(
            (self._used.get(n, 0.0), n)
            for n in self._trees
            if now - self._used.get(n, 0.0) >= _EVICT_IDLE_S
        )
        out = []
        for _used, name in idle[: len(self._trees) - _MAX_OPEN_TREES]:
            self._recent.pop(name, None)
            out.append(self._trees.pop(name))
        return out

    async def open_tree(self, name: str) -> WorkingTree:
        """The working tree of an existing workspace (the same as `get`)."""
        return await self.get(name)

    async def tree_for_request(self, name: object) -> WorkingTree:
        """The workspace a request's metadata names, if this deployment allows requests to choose.

        Raises:
            RiverbeamError: 313 not allowed (or a name that is not a plain workspace name),
                310 no such workspace.
        """
        if not self.allow_request_workspace:
            raise RiverbeamError(
                ErrorCode.WORKSPACE_NOT_ALLOWED, "requests may not choose a workspace"
            )
        if not isinstance(name, str) or not WORKSPACE_NAME.fullmatch(name):
            raise RiverbeamError(
                ErrorCode.WORKSPACE_NOT_ALLOWED,
                "metadata.workspace is not a workspace name",
                workspace=display_path(name),
            )
        return await self.get(name)

    # -- list / info / delete -------------------------------------------------------------

    def _info_sync(self, name: str) -> WorkspaceInfo:
        from riverbeam.sandbox._gitdir import head_state, open_repo

        self._git_ready()
        meta = self._read_meta(name)
        origin = meta.get("origin") if isinstance(meta.get("origin"), str) else None
        branch: str | None = None
        head: str | None = None
        with SandboxRoot(self._dir(name) / _TREE) as root:
            repo = open_repo(root)
            try:
                state = head_state(repo)
                branch = state.branch
                head = str(state.commit.id) if state.commit is not None else None
            finally:
                repo.free()
        return WorkspaceInfo(name=name, origin=origin, branch=branch, head=head)

    async def info(self, name: str) -> WorkspaceInfo:
        """Name, origin, current branch and head commit of a workspace."""
        validate_workspace_name(name)
        if not await asyncio.to_thread(self._exists, name):
            raise RiverbeamError(ErrorCode.WORKSPACE_NOT_FOUND, workspace=name)
        return await asyncio.to_thread(self._info_sync, name)

    def _names_sync(self) -> list[str]:
        names = []
        with os.scandir(self._base) as it:
            for entry in it:
                if WORKSPACE_NAME.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
                    names.append(entry.name)
        return sorted(names)

    async def list(self, *, page_size: int = 100, page_token: str = "") -> WorkspacePage:
        """Workspaces in name order, a page at a time (AIP-158).

        Raises:
            RiverbeamError: BEM-015 for a page token this service did not issue.
        """
        if page_token and not WORKSPACE_NAME.fullmatch(page_token):
            raise RiverbeamError(ErrorCode.INVALID_PAGE_TOKEN)
        size = _MAX_PAGE if page_size <= 0 else min(page_size, _MAX_PAGE)
        names = [n for n in await asyncio.to_thread(self._names_sync) if n > page_token]
        page, rest = names[:size], names[size:]
        infos = []
        for name in page:
            try:
                infos.append(await self.info(name))
            except RiverbeamError as err:
                if err.code is not ErrorCode.WORKSPACE_NOT_FOUND:
                    raise
        return WorkspacePage(infos, page[-1] if rest and page else "")

    async def delete(self, name: str) -> None:
        """Remove a workspace and everything in it (symlinks inside are removed, not followed).

        Raises:
            RiverbeamError: 312 bad name, 310 no such workspace.
        """
        validate_workspace_name(name)
        async with self._lock:
            await self._delete_locked(name)

    async def _delete_locked(self, name: str) -> None:
        tree = self._trees.pop(name, None)
        self._recent.pop(name, None)
        if tree is not None:
            await tree.aclose()
        await asyncio.to_thread(self._delete_sync, name)
        self._used.pop(name, None)
        self._stamped.pop(name, None)

    # -- retention ----------------------------------------------------------------------

    def _idle_s(self, name: str) -> float | None:
        """Seconds since a managed workspace was last used; None for unmanaged ones."""
        try:
            meta = self._read_meta(name)
            stamped = os.stat(self._dir(name) / _META).st_mtime
        except (RiverbeamError, OSError):
            return None
        if meta.get("managed") is not True:
            return None
        idle = time.time() - stamped
        used = self._used.get(name)
        if used is not None:
            idle = min(idle, time.monotonic() - used)
        return max(idle, 0.0)

    def _remove_leftovers(self) -> None:
        """Finish deletes a stopped process left half done, and drop abandoned creations."""
        now = time.time()
        with os.scandir(self._base) as it:
            entries = list(it)
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            doomed = entry.name.startswith(".deleting-")
            stale = entry.name.startswith(".creating-") and (
                now - entry.stat(follow_symlinks=False).st_mtime > _STALE_CREATION_S
            )
            if doomed or stale:
                shutil.rmtree(entry.path, ignore_errors=True)

    async def sweep(self, *, max_idle_s: float | None = None) -> builtins.list[str]:
        """Delete managed workspaces nobody used for `max_idle_s` (default: the config's).

        Each is renamed away, then removed (symlinks inside are removed, not followed). A
        workspace in use (handed out since the check) is kept; one being created is skipped.

        Returns:
            The names deleted.
        """
        limit = self._config.max_idle_s if max_idle_s is None else max_idle_s
        if limit <= 0 and max_idle_s is None:
            return []
        await asyncio.to_thread(self._remove_leftovers)
        deleted: builtins.list[str] = []
        for name in await asyncio.to_thread(self._names_sync):
            idle = await asyncio.to_thread(self._idle_s, name)
            if idle is None or idle < limit or name in self._making:
                continue
            async with self._lock:
                # Checked again under the lock: get() marks use under the same lock.
                idle = await asyncio.to_thread(self._idle_s, name)
                if idle is None or idle < limit or name in self._making:
                    continue
                try:
                    await self._delete_locked(name)
                except RiverbeamError as err:
                    if err.code is not ErrorCode.WORKSPACE_NOT_FOUND:
                        raise
                    continue
            deleted.append(name)
        return deleted

    def _delete_sync(self, name: str) -> None:
        if not self._exists(name):
            raise RiverbeamError(ErrorCode.WORKSPACE_NOT_FOUND, workspace=name)
        doomed = self._base / f".deleting-{name}-{secrets.token_hex(6)}"
        os.rename(self._dir(name), doomed)
        shutil.rmtree(doomed)

    async def aclose(self) -> None:
        """Close every open tree. Idempotent."""
        async with self._lock:
            trees, self._trees = list(self._trees.values()), {}
            self._recent.clear()
        for tree in trees:
            await tree.aclose()
