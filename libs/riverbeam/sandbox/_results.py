"""What working-tree operations return, and the protocol every working tree implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "ActionPreview",
    "AddResult",
    "Change",
    "CommitInfo",
    "DiffReport",
    "FileContent",
    "FileStatus",
    "LogEntry",
    "PreviewCommit",
    "PreviewState",
    "PushResult",
    "StatusReport",
    "TreeListing",
    "WorkingTreeOps",
    "WorkspaceInfo",
    "WriteResult",
]

Change = Literal["", "added", "modified", "deleted", "untracked", "typechange"]
CHANGES: tuple[Change, ...] = ("", "added", "modified", "deleted", "untracked", "typechange")


@dataclass(frozen=True, slots=True)
class TreeListing:
    """Files under a directory, sorted."""

    path: str
    files: tuple[str, ...]
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "files": list(self.files), "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class FileContent:
    """The (possibly truncated) content of a file, as text."""

    path: str
    text: str
    size: int
    truncated: bool = False
    binary: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "content": self.text,
            "size": self.size,
            "truncated": self.truncated,
            "binary": self.binary,
        }


@dataclass(frozen=True, slots=True)
class WriteResult:
    """A file written."""

    path: str
    bytes_written: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "bytes": self.bytes_written}


@dataclass(frozen=True, slots=True)
class FileStatus:
    """One changed path: its change in the index (staged) and in the working tree."""

    path: str
    staged: Change = ""
    unstaged: Change = ""

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "staged": self.staged, "unstaged": self.unstaged}


@dataclass(frozen=True, slots=True)
class StatusReport:
    """The branch and every changed path."""

    branch: str | None
    head: str | None
    entries: tuple[FileStatus, ...] = ()
    truncated: bool = False

    @property
    def clean(self) -> bool:
        return not self.entries and not self.truncated

    def to_json(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "head": self.head,
            "clean": self.clean,
            "entries": [e.to_json() for e in self.entries],
            "truncated": self.truncated,
        }


@dataclass(frozen=True, slots=True)
class DiffReport:
    """Unified diffs: HEAD to index (staged) and index to working tree (unstaged)."""

    staged: str
    unstaged: str
    files: int = 0
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "staged": self.staged,
            "unstaged": self.unstaged,
            "files": self.files,
            "truncated": self.truncated,
        }


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One commit."""

    id: str
    summary: str
    author: str
    email: str
    time: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "summary": self.summary,
            "author": self.author,
            "email": self.email,
            "time": self.time,
        }


@dataclass(frozen=True, slots=True)
class AddResult:
    """What git_add changed in the index."""

    paths: tuple[str, ...]
    count: int
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"staged": list(self.paths), "count": self.count, "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """A commit made."""

    id: str
    branch: str
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.id, "branch": self.branch, "summary": self.summary}


@dataclass(frozen=True, slots=True)
class PushResult:
    """A branch pushed to origin."""

    branch: str
    remote_ref: str
    commit: str

    def to_json(self) -> dict[str, Any]:
        return {"branch": self.branch, "remote_ref": self.remote_ref, "commit": self.commit}


@dataclass(frozen=True, slots=True)
class WorkspaceInfo:
    """A named workspace managed by the sandbox service."""

    name: str
    origin: str | None
    branch: str | None
    head: str | None


@runtime_checkable
class WorkingTreeOps(Protocol):
    """What the sandbox tools need from a working tree.

    Implemented in process by `WorkingTree` and over gRPC by `SandboxClient`, so a tool
    cannot tell which one it runs against. Every argument is untrusted.
    """

    async def list_tree(self, path: str = "") -> TreeListing: ...

    async def read_file(self, path: str) -> FileContent: ...

    async def write_file(
        self, path: str, body: str, expect_blob: str | None = None
    ) -> WriteResult: ...

    async def git_status(self) -> StatusReport: ...

    async def git_diff(self) -> DiffReport: ...

    async def git_log(self, limit: int = 20) -> list[LogEntry]: ...

    async def git_add(self, path: str = "") -> AddResult: ...

    async def git_commit(self, message: str) -> CommitInfo: ...

    async def git_push(
        self,
        ref: str | None = None,
        expect_head: str | None = None,
        expect_origin: str | None = None,
    ) -> PushResult: ...

    async def checkout_branch(self, name: str, create: bool = False) -> str: ...


# ---- approval previews (computed by _preview, which says what their state means) -----------


@dataclass(frozen=True, slots=True)
class PreviewCommit:
    """One commit a push would send."""

    id: str
    summary: str
    author: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "summary": self.summary, "author": self.author}


@dataclass(frozen=True, slots=True)
class PreviewState:
    """The state a preview was computed from (see the module docstring)."""

    branch: str | None = None
    head: str | None = None
    origin: str | None = None
    path: str | None = None
    blob: str | None = None

    def to_json(self) -> dict[str, Any]:
        fields = ("branch", "head", "origin", "path", "blob")
        return {name: getattr(self, name) for name in fields if getattr(self, name) is not None}

    def expect(self) -> dict[str, str]:
        """What the held call's args carry as `expect`: the state the approved call checks."""
        if self.blob is not None:
            return {"blob": self.blob}
        return {"head": str(self.head), "origin": str(self.origin)}


@dataclass(frozen=True, slots=True)
class ActionPreview:
    """What approving a held call would do, bounded in size."""

    tool: str
    summary: str
    state: PreviewState
    diff: str = ""
    truncated: bool = False
    diff_bytes: int = 0
    commits: tuple[PreviewCommit, ...] = field(default_factory=tuple)
    commits_truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        """The wire form (`riverbeam.types.ActionPreview`)."""
        return {
            "tool": self.tool,
            "summary": self.summary,
            "commits": [c.to_json() for c in self.commits],
            "diff": self.diff,
            "truncated": self.truncated,
            "diff_bytes": self.diff_bytes,
            "state": self.state.to_json(),
            "commits_truncated": self.commits_truncated,
        }
