"""Status and diff, computed from HEAD, the index and a SandboxRoot scan of the working tree.

libgit2 would read working-tree files by path (and follow a directory swapped for a symlink);
here the working tree is only ever read through the root's descriptors, and a diff is built
patch by patch until its byte budget is spent.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygit2
from pygit2.enums import FileMode

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._gitdir import Entry, flatten_index, flatten_tree, head_state
from riverbeam.sandbox._results import Change, DiffReport, FileStatus, StatusReport
from riverbeam.sandbox._root import SandboxRoot, ScannedFile
from riverbeam.sandbox._settings import SandboxLimits

__all__ = ["Snapshot", "compute_diff", "compute_status", "take_snapshot", "work_mode"]

_LINK = int(FileMode.LINK)


def work_mode(file: ScannedFile) -> int:
    """The index mode a working-tree file would get."""
    return int(FileMode.BLOB_EXECUTABLE) if file.executable else int(FileMode.BLOB)


@dataclass(slots=True)
class Snapshot:
    """HEAD, index and working tree as maps from path to (blob id, mode)."""

    branch: str | None
    head_id: str | None
    head: dict[str, Entry]
    index: dict[str, Entry]
    work: dict[str, tuple[str | None, int]]
    work_truncated: bool


def take_snapshot(repo: pygit2.Repository, root: SandboxRoot, limits: SandboxLimits) -> Snapshot:
    """Read the three states once."""
    state = head_state(repo)
    tree = state.commit.tree if state.commit is not None else None
    head = flatten_tree(repo, tree, limit=limits.max_scan_entries)
    index = repo.index
    index.read(False)
    scan = root.scan("", max_entries=limits.max_scan_entries, hash_files=True)
    work = {f.path: (f.blob_id, work_mode(f)) for f in scan.files}
    return Snapshot(
        branch=state.branch,
        head_id=str(state.commit.id) if state.commit is not None else None,
        head=head,
        index=flatten_index(index),
        work=work,
        work_truncated=scan.truncated,
    )


def _change(old: Entry | None, new: Entry | None) -> Change:
    if old is None:
        return "" if new is None else "added"
    if new is None:
        return "deleted"
    if (old[1] == _LINK) != (new[1] == _LINK):
        return "typechange"
    return "" if old == new else "modified"


def _work_change(
    root: SandboxRoot, path: str, indexed: Entry | None, work: tuple[str | None, int] | None
) -> Change:
    if work is None:
        if indexed is None:
            return ""
        try:
            kind = root.kind(path)
        except RiverbeamError:
            # A symlink or a file where a directory should be: not something we follow.
            return "typechange"
        if kind == "missing":
            return "deleted"
        # A symlink, a hard-linked or special file: present, but not something we read.
        return "" if indexed[1] == _LINK and kind == "symlink" else "typechange"
    if indexed is None:
        return "untracked"
    blob_id, mode = work
    if blob_id is None:
        return "modified"
    return _change(indexed, (blob_id, mode))


def _git_order(paths: set[str]) -> list[str]:
    return sorted(paths, key=lambda p: p.encode("utf-8"))


def compute_status(
    repo: pygit2.Repository, root: SandboxRoot, limits: SandboxLimits
) -> StatusReport:
    """Every path whose index or working-tree state differs from the one before it."""
    snap = take_snapshot(repo, root, limits)
    entries: list[FileStatus] = []
    truncated = snap.work_truncated
    for path in _git_order(set(snap.head) | set(snap.index) | set(snap.work)):
        staged = _change(snap.head.get(path), snap.index.get(path))
        unstaged = _work_change(root, path, snap.index.get(path), snap.work.get(path))
        if not staged and not unstaged:
            continue
        if len(entries) >= limits.max_status_entries:
            truncated = True
            break
        entries.append(FileStatus(path, staged, unstaged))
    return StatusReport(snap.branch, snap.head_id, tuple(entries), truncated)


class _Budget:
    """Accumulates patch text until a byte budget is spent, then adds one visible marker."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.exhausted = False
        self.skipped = 0

    def take(self, parts: list[str], text: str) -> None:
        if self.exhausted:
            self.skipped += 1
            return
        size = len(text.encode("utf-8"))
        if self.used + size <= self.limit:
            parts.append(text)
            self.used += size
            return
        room = max(self.limit - self.used, 0)
        parts.append(text.encode("utf-8")[:room].decode("utf-8", errors="ignore"))
        self.used = self.limit
        self.exhausted = True

    def marker(self) -> str:
        return f"\n[diff truncated at {self.limit} bytes; {self.skipped} more file(s) not shown]\n"


def _too_large(path: str, old_size: int | None, new_size: int | None) -> str:
    sizes = f"{old_size if old_size is not None else 0} -> {new_size if new_size is not None else 0} bytes"
    return f"diff --git a/{path} b/{path}\n(file too large to diff: {sizes})\n"


def _blob(repo: pygit2.Repository, entry: Entry | None) -> pygit2.Blob | None:
    if entry is None or entry[1] == int(FileMode.COMMIT):
        return None
    obj = repo.get(entry[0])
    return obj if isinstance(obj, pygit2.Blob) else None


def _patch(
    path: str, old: pygit2.Blob | bytes | None, new: pygit2.Blob | bytes | None, limit: int
) -> str:
    sizes = [
        None if b is None else (b.size if isinstance(b, pygit2.Blob) else len(b))
        for b in (old, new)
    ]
    if any(size is not None and size > limit for size in sizes):
        return _too_large(path, sizes[0], sizes[1])
    patch = pygit2.Patch.create_from(old, new, old_as_path=path, new_as_path=path)
    return patch.text or ""


def compute_diff(repo: pygit2.Repository, root: SandboxRoot, limits: SandboxLimits) -> DiffReport:
    """Staged (HEAD to index) and unstaged (index to working tree) patches, within the budget.

    Untracked files are not part of a diff (as with git); git_status lists them.
    """
    snap = take_snapshot(repo, root, limits)
    budget = _Budget(limits.max_diff_bytes)
    per_file = limits.max_diff_file_bytes
    staged: list[str] = []
    unstaged: list[str] = []
    files = 0
    for path in _git_order(set(snap.head) | set(snap.index)):
        old, new = snap.head.get(path), snap.index.get(path)
        if _change(old, new):
            files += 1
            if budget.exhausted:
                budget.skipped += 1
                continue
            budget.take(staged, _patch(path, _blob(repo, old), _blob(repo, new), per_file))
    for path in _git_order(set(snap.index)):
        indexed, work = snap.index[path], snap.work.get(path)
        change = _work_change(root, path, indexed, work)
        if not change:
            continue
        files += 1
        if budget.exhausted:
            budget.skipped += 1
            continue
        new_side: bytes | None = None
        if change == "typechange":
            budget.take(
                unstaged,
                f"diff --git a/{path} b/{path}\n(not a regular file in the working tree)\n",
            )
            continue
        if change != "deleted":
            read = root.read(path, limit=per_file)
            if read.truncated:
                budget.take(unstaged, _too_large(path, None, read.size))
                continue
            new_side = read.data
        budget.take(unstaged, _patch(path, _blob(repo, indexed), new_side, per_file))
    if budget.exhausted:
        marker = budget.marker()
        (unstaged if unstaged else staged).append(marker)
    return DiffReport("".join(staged), "".join(unstaged), files, budget.exhausted)


def require_clean(snap: Snapshot) -> None:
    """Raise BEM-327 if anything is staged or modified (untracked files are fine)."""
    for path in set(snap.head) | set(snap.index):
        if _change(snap.head.get(path), snap.index.get(path)):
            raise RiverbeamError(ErrorCode.DIRTY_WORKTREE, "changes are staged", path=path)
    for path, indexed in snap.index.items():
        work = snap.work.get(path)
        if work is None or work[0] != indexed[0] or work[1] != indexed[1]:
            raise RiverbeamError(
                ErrorCode.DIRTY_WORKTREE, "the working tree has changes", path=path
            )
