"""The synchronous working tree: a SandboxRoot plus a libgit2 repository inside it.

Each method holds the tree's thread lock, so two calls never interleave even if an async
caller was cancelled while its worker thread kept running.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import pygit2
from pygit2.enums import FileMode, SortMode

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._gitdir import (
    flatten_tree,
    head_state,
    init_repo,
    open_repo,
    signature,
    symref_chain,
)
from riverbeam.sandbox._origin import OriginPolicy, check_origin_form
from riverbeam.sandbox._paths import display_path, parse_path
from riverbeam.sandbox._preview import (
    ActionPreview,
    check_expected,
    file_blob,
    preview_push,
    preview_write,
    state_moved,
)
from riverbeam.sandbox._push import push_branch, resolve_push_branch
from riverbeam.sandbox._refs import DEFAULT_PROTECTED_REFS, ProtectedRefs, validate_branch_name
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
from riverbeam.sandbox._status import (
    compute_diff,
    compute_status,
    require_clean,
    take_snapshot,
    work_mode,
)

__all__ = ["DEFAULT_PROTECTED_REFS", "WorkingTreeCore"]

_BINARY_SNIFF = 8000
_MAX_REPORTED_PATHS = 200
_MESSAGE_CONTROLS = frozenset(chr(c) for c in [*range(0x20), 0x7F] if chr(c) not in "\t\n\r")


def _arg_error(message: str, **details: object) -> RiverbeamError:
    return RiverbeamError(ErrorCode.INVALID_ARGUMENT, message, **details)


class WorkingTreeCore:
    """Files and git for one workspace, synchronously. See `WorkingTree` for the async API.

    Args:
        root: the jail.
        protected_refs: branches that can never be committed to, checked out or pushed.
        identity: author and committer of every commit.
        origin: the push URL (server configuration); None until `add_origin`.
        origin_policy: if set, the origin must also match this allowlist at push time.
        limits: size bounds.
    """

    def __init__(
        self,
        root: SandboxRoot,
        *,
        protected_refs: Iterable[str] = DEFAULT_PROTECTED_REFS,
        identity: GitIdentity | None = None,
        origin: str | None = None,
        origin_policy: OriginPolicy | None = None,
        limits: SandboxLimits | None = None,
    ) -> None:
        self.root = root
        self.protected = ProtectedRefs(protected_refs)
        self.identity = identity or GitIdentity()
        self.limits = limits or SandboxLimits()
        self._policy = origin_policy
        self._origin = None if origin is None else self._check_origin(origin)
        self._repo: pygit2.Repository | None = None
        self._lock = threading.RLock()

    @property
    def origin(self) -> str | None:
        return self._origin

    def _check_origin(self, url: object) -> str:
        return self._policy.check(url) if self._policy is not None else check_origin_form(url)

    def _git(self) -> pygit2.Repository:
        if self._repo is None:
            self._repo = open_repo(self.root)
        return self._repo

    def release_repository(self) -> None:
        """Drop the repository handle (its index, caches, file handles); reopened on next use."""
        with self._lock:
            if self._repo is not None:
                self._repo.free()
                self._repo = None

    @property
    def repository_open(self) -> bool:
        """Whether the repository handle is open (for the bound on open handles)."""
        return self._repo is not None

    def repo(self) -> pygit2.Repository:
        """The repository handle, for trusted host code (workspace creation)."""
        with self._lock:
            return self._git()

    def close(self) -> None:
        """Drop the repository handle and the root descriptor."""
        with self._lock:
            if self._repo is not None:
                self._repo.free()
                self._repo = None
            self.root.close()

    # -- setup (host side, trusted) ------------------------------------------------------

    def init(self, initial_branch: str = "main") -> None:
        """Create the repository (HEAD unborn on `initial_branch`), or open an existing one."""
        with self._lock:
            validate_branch_name(initial_branch)
            self._repo = init_repo(self.root, initial_branch)

    def initial_commit(self, message: str = "Initial commit") -> CommitInfo:
        """Commit the index on an unborn HEAD, even on a protected branch. Host use only."""
        with self._lock:
            repo = self._git()
            state = head_state(repo)
            if state.commit is not None or state.branch is None:
                raise RiverbeamError(ErrorCode.NO_BRANCH, "the repository already has commits")
            return self._commit(repo, state.chain[-1], state.branch, message, [])

    def add_origin(self, url: str) -> None:
        """Set the origin pushes go to (validated; also recorded in .git/config for people)."""
        with self._lock:
            checked = self._check_origin(url)
            repo = self._git()
            if "origin" in repo.remotes.names():
                repo.remotes.set_url("origin", checked)
            else:
                repo.remotes.create("origin", checked)
            self._origin = checked

    def checkout_branch(self, name: str, create: bool = False) -> str:
        """Switch to branch `name`, creating it from HEAD if asked.

        Creating only moves HEAD (the files stay; on an unborn HEAD it renames the unborn
        branch). Switching to an existing branch needs a clean working tree (BEM-327) and
        rewrites changed files through the root.

        Raises:
            RiverbeamError: 323 protected, 325 invalid name or missing branch, 327 uncommitted
                changes, 302-306 or 320 for a branch whose files the root would refuse.
        """
        with self._lock:
            if isinstance(name, str):
                self.protected.check(name, ErrorCode.CHECKOUT_PROTECTED)
            branch = validate_branch_name(name)
            refname = f"refs/heads/{branch}"
            repo = self._git()
            chain = symref_chain(repo, refname)
            for link in chain:
                self.protected.check(link, ErrorCode.CHECKOUT_PROTECTED)
            if len(chain) > 1:
                raise RiverbeamError(
                    ErrorCode.INVALID_REF, "symbolic branch refs cannot be checked out"
                )
            state = head_state(repo)
            existing = repo.references.get(refname)
            if existing is None:
                if not create:
                    raise RiverbeamError(ErrorCode.INVALID_REF, "no such branch", ref=branch)
                if state.commit is None:
                    # Unborn HEAD: renaming the unborn branch is all "create" can mean.
                    repo.set_head(refname)
                    return branch
                repo.create_branch(branch, state.commit)
                repo.set_head(refname)
                return branch
            if state.branch == branch:
                return branch
            self._switch(repo, refname)
            return branch

    def _switch(self, repo: pygit2.Repository, refname: str) -> None:
        target = repo.references[refname].peel(pygit2.Commit)
        snap = take_snapshot(repo, self.root, self.limits)
        require_clean(snap)
        new = flatten_tree(repo, target.tree, limit=self.limits.max_scan_entries)
        # Everything is checked before the first file changes: names the root would refuse
        # (a branch made outside the sandbox may hold `.git/...`), non-file entries, clashes.
        for path, (_blob, mode) in new.items():
            parse_path(path)
            if mode not in (int(FileMode.BLOB), int(FileMode.BLOB_EXECUTABLE)):
                raise RiverbeamError(ErrorCode.GIT_FAILED, "branch has a non-file entry", path=path)
            if path not in snap.index and path in snap.work:
                raise RiverbeamError(
                    ErrorCode.DIRTY_WORKTREE, "an untracked file would be overwritten", path=path
                )
        for path in snap.index:
            if path not in new:
                self.root.remove(path)
        for path, (blob_id, mode) in sorted(new.items()):
            if snap.index.get(path) == (blob_id, mode):
                continue
            blob = repo[blob_id]
            assert isinstance(blob, pygit2.Blob)
            self.root.write(
                path,
                blob.data,
                max_bytes=max(self.limits.max_stage_bytes, blob.size),
                executable=mode == int(FileMode.BLOB_EXECUTABLE),
            )
        index = repo.index
        index.read_tree(target.tree)
        index.write()
        repo.set_head(refname)

    # -- files -------------------------------------------------------------------------

    def list_tree(self, path: str = "") -> TreeListing:
        """Regular files under `path` (default: everything), sorted, never following symlinks."""
        with self._lock:
            components = parse_path(path, allow_root=True)
            scan = self.root.scan(path, max_entries=self.limits.max_list_entries)
            return TreeListing(
                "/".join(components), tuple(f.path for f in scan.files), scan.truncated
            )

    def read_file(self, path: str) -> FileContent:
        """Up to `limits.max_read_bytes` of a file, as text, with a marker if truncated."""
        with self._lock:
            read = self.root.read(path, limit=self.limits.max_read_bytes)
            shown = "/".join(parse_path(path))
            if b"\0" in read.data[:_BINARY_SNIFF]:
                return FileContent(
                    shown, f"[binary file, {read.size} bytes]", read.size, read.truncated, True
                )
            text = read.data.decode("utf-8", errors="replace")
            if read.truncated:
                text += (
                    f"\n[... truncated: showing the first {len(read.data)} of {read.size} bytes]"
                )
            return FileContent(shown, text, read.size, read.truncated, False)

    def write_file(self, path: str, body: str, expect_blob: str | None = None) -> WriteResult:
        """Create or replace a file with `body` (UTF-8), creating parent directories.

        Args:
            expect_blob: an approved write's previewed state: the file's blob id, or
                `absent`. If the file is not so any more, nothing is written (BEM-275).
        """
        with self._lock:
            data = _body_bytes(body)
            expected = check_expected(expect_blob, "blob")
            if expected is not None:
                actual, _old = file_blob(self.root, path, limit=self.limits.max_stage_bytes)
                if actual != expected:
                    raise state_moved(
                        "the file", expected=expected, actual=actual, path=display_path(path)
                    )
            written = self.root.write(path, data, max_bytes=self.limits.max_write_bytes)
            return WriteResult("/".join(parse_path(path)), written)

    # -- approval previews -----------------------------------------------------------------

    def preview_write(self, path: str, body: str) -> ActionPreview:
        """What `write_file(path, body)` would change, and the file's state now."""
        with self._lock:
            data = _body_bytes(body)
            if len(data) > self.limits.max_write_bytes:
                raise RiverbeamError(
                    ErrorCode.FILE_TOO_LARGE,
                    f"body larger than {self.limits.max_write_bytes} bytes",
                    path=display_path(path),
                )
            return preview_write(
                self.root,
                path,
                data,
                limit=self.limits.max_preview_bytes,
                max_file_bytes=self.limits.max_stage_bytes,
            )

    def preview_push(self, ref: str | None = None) -> ActionPreview:
        """The commits and diff `push(ref)` would send, and the heads they were computed from."""
        with self._lock:
            repo = self._git()
            branch = resolve_push_branch(repo, ref, self.protected)
            return preview_push(repo, branch, limit=self.limits.max_preview_bytes)

    # -- git -----------------------------------------------------------------------------

    def status(self) -> StatusReport:
        """Staged and unstaged changes, and untracked files."""
        with self._lock:
            return compute_status(self._git(), self.root, self.limits)

    def diff(self) -> DiffReport:
        """Staged and unstaged patches, bounded by `limits.max_diff_bytes`."""
        with self._lock:
            return compute_diff(self._git(), self.root, self.limits)

    def log(self, limit: int = 20) -> list[LogEntry]:
        """The latest commits reachable from HEAD, newest first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise _arg_error("limit must be a positive integer")
        limit = min(limit, self.limits.max_log_entries)
        with self._lock:
            repo = self._git()
            state = head_state(repo)
            if state.commit is None:
                return []
            out: list[LogEntry] = []
            for commit in repo.walk(state.commit.id, SortMode.TOPOLOGICAL | SortMode.TIME):
                if len(out) >= limit:
                    break
                summary = (commit.message or "").strip().splitlines()
                out.append(
                    LogEntry(
                        id=str(commit.id),
                        summary=(summary[0] if summary else "")[:200],
                        author=commit.author.name,
                        email=commit.author.email,
                        time=int(commit.commit_time),
                    )
                )
            return out

    def add(self, path: str = "") -> AddResult:
        """Stage `path`: a file, everything under a directory, or ("" / ".") everything.

        Content is read through the root and written as blobs by this process; libgit2 never
        reads the working tree. A tracked path that no longer exists is staged as deleted.
        """
        with self._lock:
            components = parse_path(path, allow_root=True)
            prefix = "/".join(components)
            repo = self._git()
            index = repo.index
            index.read(False)
            indexed = {str(e.path): (str(e.id), int(e.mode)) for e in index}
            kind = self.root.kind(path)
            if kind == "symlink":
                raise RiverbeamError(
                    ErrorCode.PATH_ESCAPES_ROOT, "symlinks are not staged", path=display_path(path)
                )
            if kind == "other":
                raise RiverbeamError(
                    ErrorCode.PATH_WRONG_KIND, "not a regular file", path=display_path(path)
                )
            candidates: dict[str, tuple[str | None, int]] = {}
            preloaded: dict[str, bytes] = {}
            if kind == "file":
                read = self.root.read(path, limit=self.limits.max_stage_bytes)
                if read.truncated:
                    raise self._too_large(prefix)
                mode = int(FileMode.BLOB_EXECUTABLE if read.executable else FileMode.BLOB)
                candidates[prefix] = (str(pygit2.hash(read.data)), mode)
                preloaded[prefix] = read.data
            elif kind == "dir":
                scan = self.root.scan(
                    path, max_entries=self.limits.max_scan_entries, hash_files=True
                )
                if scan.truncated:
                    raise _arg_error("too many files to stage at once; stage a subdirectory")
                candidates = {f.path: (f.blob_id, work_mode(f)) for f in scan.files}
            in_scope = [
                p for p in indexed if not prefix or p == prefix or p.startswith(prefix + "/")
            ]
            if kind == "missing" and not in_scope:
                raise RiverbeamError(
                    ErrorCode.PATH_NOT_FOUND, "no such file or directory", path=display_path(path)
                )
            changed: list[str] = []
            for rel, (blob_id, mode) in sorted(candidates.items()):
                if blob_id is not None and indexed.get(rel) == (blob_id, mode):
                    continue
                data = preloaded.get(rel)
                if data is None:
                    read = self.root.read(rel, limit=self.limits.max_stage_bytes)
                    if read.truncated:
                        raise self._too_large(rel)
                    data = read.data
                oid = repo.create_blob(data)
                if indexed.get(rel) == (str(oid), mode):
                    continue
                index.add(pygit2.IndexEntry(rel, oid, FileMode(mode)))
                changed.append(rel)
            for rel in in_scope:
                if rel not in candidates and self._missing(rel):
                    index.remove(rel)
                    changed.append(rel)
            if changed:
                index.write()
            changed.sort(key=lambda p: p.encode("utf-8"))
            return AddResult(
                tuple(changed[:_MAX_REPORTED_PATHS]),
                len(changed),
                len(changed) > _MAX_REPORTED_PATHS,
            )

    def _missing(self, path: str) -> bool:
        try:
            return self.root.kind(path) == "missing"
        except RiverbeamError:
            return False

    def _too_large(self, path: str) -> RiverbeamError:
        return RiverbeamError(
            ErrorCode.FILE_TOO_LARGE,
            f"file larger than {self.limits.max_stage_bytes} bytes",
            path=display_path(path),
        )

    def commit(self, message: str) -> CommitInfo:
        """Commit the index on the current branch, which must not be protected (BEM-322)."""
        with self._lock:
            repo = self._git()
            state = head_state(repo)
            for link in state.chain[1:]:
                self.protected.check(link, ErrorCode.COMMIT_ON_PROTECTED)
            if state.branch is None:
                raise RiverbeamError(ErrorCode.NO_BRANCH, "HEAD is detached")
            parents = [state.commit.id] if state.commit is not None else []
            return self._commit(repo, state.chain[-1], state.branch, message, parents)

    def _commit(
        self,
        repo: pygit2.Repository,
        refname: str,
        branch: str,
        message: object,
        parents: list[pygit2.Oid],
    ) -> CommitInfo:
        if not isinstance(message, str) or not message.strip():
            raise _arg_error("commit message must be a non-empty string")
        if any(ch in _MESSAGE_CONTROLS for ch in message):
            # NUL would truncate the message; escapes would reach whoever reads the log.
            raise _arg_error("commit message contains control characters")
        if len(message.encode("utf-8", errors="replace")) > self.limits.max_message_bytes:
            raise _arg_error(f"commit message longer than {self.limits.max_message_bytes} bytes")
        index = repo.index
        index.read(False)
        tree = index.write_tree()
        if parents:
            parent = repo[parents[0]]
            assert isinstance(parent, pygit2.Commit)
            if parent.tree_id == tree:
                raise RiverbeamError(ErrorCode.NOTHING_TO_COMMIT)
        sig = signature(self.identity)
        text = message if message.endswith("\n") else message + "\n"
        try:
            oid = repo.create_commit(refname, sig, sig, text, tree, parents)
        except pygit2.GitError as exc:
            raise RiverbeamError(ErrorCode.GIT_FAILED, f"commit failed: {exc}") from None
        return CommitInfo(str(oid), branch, message.strip().splitlines()[0][:200])

    def push(
        self,
        ref: str | None = None,
        expect_head: str | None = None,
        expect_origin: str | None = None,
    ) -> PushResult:
        """Push a branch (default: the current one) to origin without force or credentials.

        An approved push passes its preview's state (`expect_head`, `expect_origin`); if the
        branch or the origin's tip moved since, nothing is pushed (BEM-275).
        """
        with self._lock:
            repo = self._git()
            return push_branch(
                repo,
                ref=ref,
                origin=self._origin,
                protected=self.protected,
                policy=self._policy,
                expect_head=check_expected(expect_head, "head", absent_ok=False),
                expect_origin=check_expected(expect_origin, "origin"),
            )


def _body_bytes(body: object) -> bytes:
    if not isinstance(body, str):
        raise _arg_error("body must be a string")
    try:
        return body.encode("utf-8")
    except UnicodeEncodeError:
        raise _arg_error("body is not valid Unicode") from None
