"""Named workspaces under one base directory: create, list, open, delete.

Layout, for a workspace `docs`:

    <base_dir>/docs/workspace.json   origin and creation time (never reachable by tools)
    <base_dir>/docs/tree/            the sandbox root: the working tree and its .git

A workspace is built under a hidden temporary name and renamed into place when complete, and
deleted by renaming it away before removing it, so a listing never shows half a workspace.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import stat
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._gitdir import bound_object_cache, head_state, open_repo
from riverbeam.sandbox._local import WorkingTree
from riverbeam.sandbox._origin import OriginPolicy, check_origin_form
from riverbeam.sandbox._paths import display_path
from riverbeam.sandbox._refs import ProtectedRefs, validate_branch_name
from riverbeam.sandbox._results import WorkspaceInfo
from riverbeam.sandbox._root import SandboxRoot
from riverbeam.sandbox._settings import WorkspaceConfig
from riverbeam.sandbox._tree import WorkingTreeCore

__all__ = ["WORKSPACE_NAME", "WorkspaceManager", "WorkspacePage", "validate_workspace_name"]

WORKSPACE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
_TREE = "tree"
_META = "workspace.json"
_MAX_PAGE = 1000


def validate_workspace_name(name: object) -> str:
    """A workspace name, checked against `[a-z0-9][a-z0-9_-]{0,62}`.

    Raises:
        RiverbeamError: BEM-312.
    """
    if not isinstance(name, str) or not WORKSPACE_NAME.fullmatch(name):
        raise RiverbeamError(ErrorCode.WORKSPACE_BAD_NAME, name=display_path(name))
    return name


@dataclass(frozen=True, slots=True)
class WorkspacePage:
    """One page of a workspace listing."""

    workspaces: list[WorkspaceInfo]
    next_page_token: str


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
        validate_branch_name(config.base_branch)
        self._trees: dict[str, WorkingTree] = {}
        # Names of trees in use order (least recent first): beyond max_open_repositories, the
        # oldest release their repository handle, so memory does not grow with workspaces.
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._lock = asyncio.Lock()
        bound_object_cache(config.git_object_cache_bytes)

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
        validate_workspace_name(name)
        work_branch = branch or self._config.default_branch
        if isinstance(work_branch, str):
            self._protected.check(work_branch, ErrorCode.CHECKOUT_PROTECTED)
        validate_branch_name(work_branch)
        url = self._request_policy.check(origin) if origin else self._default_origin
        async with self._lock:
            await asyncio.to_thread(self._create_sync, name, work_branch, url)
        return await self.info(name)

    def _core(self, tree_dir: Path, origin: str | None) -> WorkingTreeCore:
        config = self._config
        return WorkingTreeCore(
            SandboxRoot(tree_dir),
            protected_refs=config.protected_refs,
            identity=config.identity,
            origin=origin,
            origin_policy=self._push_policy if origin else None,
            limits=config.limits,
        )

    def _create_sync(self, name: str, branch: str, origin: str | None) -> None:
        if self._exists(name):
            raise RiverbeamError(ErrorCode.WORKSPACE_EXISTS, workspace=name)
        staging = self._base / f".creating-{name}-{secrets.token_hex(6)}"
        staging.mkdir(mode=0o700)
        try:
            (staging / _TREE).mkdir(mode=0o755)
            core = self._core(staging / _TREE, None)
            try:
                core.init(self._config.base_branch)
                core.initial_commit("Initial commit")
                core.checkout_branch(branch, create=True)
                if origin is not None:
                    core.add_origin(origin)
            finally:
                core.close()
            meta = {"name": name, "origin": origin, "created_at": int(time.time())}
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
            self._recent[name] = None
            self._recent.move_to_end(name)
            idle: list[WorkingTree] = []
            while len(self._recent) > self._config.max_open_repositories:
                oldest, _ = self._recent.popitem(last=False)
                if oldest in self._trees:
                    idle.append(self._trees[oldest])
        # Outside the manager's lock: a release waits for that tree's running operation.
        for other in idle:
            await other.release_repository()
        return tree

    @property
    def open_repositories(self) -> int:
        """How many workspaces hold an open repository handle (bounded by configuration)."""
        return sum(1 for tree in self._trees.values() if tree.core.repository_open)

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
            tree = self._trees.pop(name, None)
            self._recent.pop(name, None)
            if tree is not None:
                await tree.aclose()
            await asyncio.to_thread(self._delete_sync, name)

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
