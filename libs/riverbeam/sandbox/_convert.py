"""Sandbox results to and from riverbeam.v1 protobuf (shared by the servicer and the client)."""

from __future__ import annotations

from typing import Any

from riverbeam.sandbox._results import (
    CHANGES,
    ActionPreview,
    AddResult,
    Change,
    CommitInfo,
    DiffReport,
    FileContent,
    FileStatus,
    LogEntry,
    PreviewCommit,
    PreviewState,
    PushResult,
    StatusReport,
    TreeListing,
    WorkspaceInfo,
    WriteResult,
)
from riverbeam.v1 import sandbox_service_pb2 as pb
from riverbeam.v1 import types_pb2

__all__ = [
    "add_from_pb",
    "add_to_pb",
    "change_from_pb",
    "change_to_pb",
    "commit_from_pb",
    "commit_to_pb",
    "content_from_pb",
    "content_to_pb",
    "diff_from_pb",
    "diff_to_pb",
    "listing_from_pb",
    "listing_to_pb",
    "log_from_pb",
    "log_to_pb",
    "preview_from_pb",
    "preview_to_pb",
    "push_from_pb",
    "push_to_pb",
    "status_from_pb",
    "status_to_pb",
    "workspace_from_pb",
    "workspace_to_pb",
    "write_from_pb",
    "write_to_pb",
]

_TO_PB: dict[Change, pb.FileChange] = {
    "": pb.FILE_CHANGE_UNSPECIFIED,
    "added": pb.FILE_CHANGE_ADDED,
    "modified": pb.FILE_CHANGE_MODIFIED,
    "deleted": pb.FILE_CHANGE_DELETED,
    "untracked": pb.FILE_CHANGE_UNTRACKED,
    "typechange": pb.FILE_CHANGE_TYPECHANGE,
}
_FROM_PB: dict[int, Change] = {int(value): key for key, value in _TO_PB.items()}
assert set(_TO_PB) == set(CHANGES)


def change_to_pb(change: Change) -> pb.FileChange:
    return _TO_PB[change]


def change_from_pb(value: int) -> Change:
    # An enum value from a newer server reads as "modified": something changed.
    return _FROM_PB.get(int(value), "modified")


def _opt(msg: Any, field: str) -> str | None:
    return str(getattr(msg, field)) if msg.HasField(field) else None


def workspace_to_pb(info: WorkspaceInfo) -> pb.Workspace:
    return pb.Workspace(name=info.name, origin=info.origin, branch=info.branch, head=info.head)


def workspace_from_pb(msg: pb.Workspace) -> WorkspaceInfo:
    return WorkspaceInfo(
        name=msg.name,
        origin=_opt(msg, "origin"),
        branch=_opt(msg, "branch"),
        head=_opt(msg, "head"),
    )


def listing_to_pb(listing: TreeListing) -> pb.ListTreeResponse:
    return pb.ListTreeResponse(path=listing.path, files=listing.files, truncated=listing.truncated)


def listing_from_pb(msg: pb.ListTreeResponse) -> TreeListing:
    return TreeListing(msg.path, tuple(msg.files), msg.truncated)


def content_to_pb(content: FileContent) -> pb.ReadFileResponse:
    return pb.ReadFileResponse(
        path=content.path,
        text=content.text,
        size=content.size,
        truncated=content.truncated,
        binary=content.binary,
    )


def content_from_pb(msg: pb.ReadFileResponse) -> FileContent:
    return FileContent(msg.path, msg.text, msg.size, msg.truncated, msg.binary)


def write_to_pb(result: WriteResult) -> pb.WriteFileResponse:
    return pb.WriteFileResponse(path=result.path, bytes_written=result.bytes_written)


def write_from_pb(msg: pb.WriteFileResponse) -> WriteResult:
    return WriteResult(msg.path, msg.bytes_written)


def status_to_pb(report: StatusReport) -> pb.GitStatusResponse:
    return pb.GitStatusResponse(
        branch=report.branch,
        head=report.head,
        entries=[
            pb.GitFileStatus(
                path=e.path, staged=change_to_pb(e.staged), unstaged=change_to_pb(e.unstaged)
            )
            for e in report.entries
        ],
        truncated=report.truncated,
    )


def status_from_pb(msg: pb.GitStatusResponse) -> StatusReport:
    return StatusReport(
        _opt(msg, "branch"),
        _opt(msg, "head"),
        tuple(
            FileStatus(e.path, change_from_pb(e.staged), change_from_pb(e.unstaged))
            for e in msg.entries
        ),
        msg.truncated,
    )


def diff_to_pb(report: DiffReport) -> pb.GitDiffResponse:
    return pb.GitDiffResponse(
        staged=report.staged,
        unstaged=report.unstaged,
        files=report.files,
        truncated=report.truncated,
    )


def diff_from_pb(msg: pb.GitDiffResponse) -> DiffReport:
    return DiffReport(msg.staged, msg.unstaged, msg.files, msg.truncated)


def log_to_pb(entries: list[LogEntry]) -> pb.GitLogResponse:
    return pb.GitLogResponse(
        commits=[
            pb.GitLogEntry(id=e.id, summary=e.summary, author=e.author, email=e.email, time=e.time)
            for e in entries
        ]
    )


def log_from_pb(msg: pb.GitLogResponse) -> list[LogEntry]:
    return [LogEntry(c.id, c.summary, c.author, c.email, c.time) for c in msg.commits]


def add_to_pb(result: AddResult) -> pb.GitAddResponse:
    return pb.GitAddResponse(paths=result.paths, count=result.count, truncated=result.truncated)


def add_from_pb(msg: pb.GitAddResponse) -> AddResult:
    return AddResult(tuple(msg.paths), msg.count, msg.truncated)


def commit_to_pb(info: CommitInfo) -> pb.GitCommitResponse:
    return pb.GitCommitResponse(id=info.id, branch=info.branch, summary=info.summary)


def commit_from_pb(msg: pb.GitCommitResponse) -> CommitInfo:
    return CommitInfo(msg.id, msg.branch, msg.summary)


def push_to_pb(result: PushResult) -> pb.GitPushResponse:
    return pb.GitPushResponse(
        branch=result.branch, remote_ref=result.remote_ref, commit=result.commit
    )


def push_from_pb(msg: pb.GitPushResponse) -> PushResult:
    return PushResult(msg.branch, msg.remote_ref, msg.commit)


_STATE_FIELDS = ("branch", "head", "origin", "path", "blob")


def preview_to_pb(preview: ActionPreview) -> types_pb2.ActionPreview:
    state = types_pb2.PreviewState(
        **{
            name: getattr(preview.state, name)
            for name in _STATE_FIELDS
            if getattr(preview.state, name) is not None
        }
    )
    return types_pb2.ActionPreview(
        tool=preview.tool,
        summary=preview.summary,
        commits=[
            types_pb2.PreviewCommit(id=c.id, summary=c.summary, author=c.author)
            for c in preview.commits
        ],
        diff=preview.diff,
        truncated=preview.truncated,
        diff_bytes=preview.diff_bytes,
        state=state,
        commits_truncated=preview.commits_truncated,
    )


def preview_from_pb(msg: types_pb2.ActionPreview) -> ActionPreview:
    state = PreviewState(
        **{
            name: str(getattr(msg.state, name))
            for name in _STATE_FIELDS
            if msg.state.HasField(name)
        }
    )
    return ActionPreview(
        tool=msg.tool,
        summary=msg.summary,
        state=state,
        diff=msg.diff,
        truncated=msg.truncated,
        diff_bytes=int(msg.diff_bytes),
        commits=tuple(PreviewCommit(c.id, c.summary, c.author) for c in msg.commits),
        commits_truncated=msg.commits_truncated,
    )
