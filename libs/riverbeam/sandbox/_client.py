"""The sandbox service from the outside: WorkingTreeOps over gRPC, and workspace management.

Errors come back as the RiverbeamError the service raised (its BEM code travels in
google.rpc.ErrorInfo), never as grpc.RpcError.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.fencing import current_fence
from riverbeam.sandbox import _convert as cv
from riverbeam.sandbox._paths import display_path
from riverbeam.sandbox._results import (
    ActionPreview,
    AddResult,
    CommitInfo,
    DiffReport,
    FileContent,
    LogEntry,
    PushResult,
    StatusReport,
    TreeListing,
    WorkspaceInfo,
    WriteResult,
)
from riverbeam.sandbox._workspace_names import WORKSPACE_NAME, EnsuredWorkspace, WorkspacePage
from riverbeam.server import translate_rpc_errors
from riverbeam.v1 import sandbox_service_pb2 as pb
from riverbeam.v1 import sandbox_service_pb2_grpc as pb_grpc

__all__ = ["FenceClient", "SandboxClient", "WorkspacesClient"]

T = TypeVar("T")
DEFAULT_TIMEOUT_S = 60.0


def _text(
    value: object, field: str, bad: ErrorCode = ErrorCode.INVALID_ARGUMENT, *, typed: bool = False
) -> str:
    """`value` if it can travel as a protobuf string; otherwise the error the service would give."""
    if not isinstance(value, str):
        raise RiverbeamError(
            bad if typed else ErrorCode.INVALID_ARGUMENT, f"{field} must be a string"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # Protobuf strings are UTF-8; say what the service would have said.
        raise RiverbeamError(
            bad, f"{field} is not valid Unicode", **{field: display_path(value)}
        ) from None
    return value


def _path(value: object) -> str:
    return _text(value, "path", ErrorCode.PATH_BAD_CHARACTER)


async def _call(method: Callable[..., Awaitable[T]], request: Any, timeout_s: float) -> T:
    # A call made for a run carries the run's fence, so the service can refuse a holder
    # whose lease was taken over (BEM-340).
    fence = current_fence()
    if fence is not None and "fence" in request.DESCRIPTOR.fields_by_name:
        request.fence.CopyFrom(pb.Fence(run_id=fence.run_id, epoch=fence.epoch))
    async with translate_rpc_errors(service="sandbox"):
        return await method(request, timeout=timeout_s)


class SandboxClient:
    """One workspace of a remote sandbox service; implements `WorkingTreeOps`.

    Args:
        channel: a channel to the sandbox service (see `riverbeam.server.open_channel`).
        workspace: the workspace every call works in.
        timeout_s: deadline of each call.
    """

    def __init__(
        self, channel: grpc.aio.Channel, workspace: str, *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self._stub: Any = pb_grpc.SandboxServiceStub(channel)  # type: ignore[no-untyped-call]
        self._workspace = workspace
        self._timeout_s = timeout_s

    @property
    def workspace(self) -> str:
        return self._workspace

    async def checkout_branch(self, name: str, create: bool = False) -> str:
        request = pb.CheckoutBranchRequest(
            workspace=self._workspace,
            branch=_text(name, "name", ErrorCode.INVALID_REF, typed=True),
            create=bool(create),
        )
        response = await _call(self._stub.CheckoutBranch, request, self._timeout_s)
        return str(response.branch)

    async def list_tree(self, path: str = "") -> TreeListing:
        request = pb.ListTreeRequest(workspace=self._workspace, path=_path(path))
        return cv.listing_from_pb(await _call(self._stub.ListTree, request, self._timeout_s))

    async def read_file(self, path: str) -> FileContent:
        request = pb.ReadFileRequest(workspace=self._workspace, path=_path(path))
        return cv.content_from_pb(await _call(self._stub.ReadFile, request, self._timeout_s))

    async def write_file(self, path: str, body: str, expect_blob: str | None = None) -> WriteResult:
        request = pb.WriteFileRequest(
            workspace=self._workspace, path=_path(path), body=_text(body, "body")
        )
        if expect_blob is not None:
            request.expect_blob = _text(expect_blob, "expect_blob", ErrorCode.PREVIEW_UNSUPPORTED)
        return cv.write_from_pb(await _call(self._stub.WriteFile, request, self._timeout_s))

    async def git_status(self) -> StatusReport:
        request = pb.GitStatusRequest(workspace=self._workspace)
        return cv.status_from_pb(await _call(self._stub.GitStatus, request, self._timeout_s))

    async def git_diff(self) -> DiffReport:
        request = pb.GitDiffRequest(workspace=self._workspace)
        return cv.diff_from_pb(await _call(self._stub.GitDiff, request, self._timeout_s))

    async def git_log(self, limit: int = 20) -> list[LogEntry]:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 2**31 - 1:
            raise RiverbeamError(ErrorCode.INVALID_ARGUMENT, "limit must be a positive integer")
        request = pb.GitLogRequest(workspace=self._workspace, limit=limit)
        return cv.log_from_pb(await _call(self._stub.GitLog, request, self._timeout_s))

    async def git_add(self, path: str = "") -> AddResult:
        request = pb.GitAddRequest(workspace=self._workspace, path=_path(path))
        return cv.add_from_pb(await _call(self._stub.GitAdd, request, self._timeout_s))

    async def git_commit(self, message: str) -> CommitInfo:
        request = pb.GitCommitRequest(workspace=self._workspace, message=_text(message, "message"))
        return cv.commit_from_pb(await _call(self._stub.GitCommit, request, self._timeout_s))

    async def git_push(
        self,
        ref: str | None = None,
        expect_head: str | None = None,
        expect_origin: str | None = None,
    ) -> PushResult:
        request = pb.GitPushRequest(workspace=self._workspace)
        if ref is not None:
            request.ref = _text(ref, "ref", ErrorCode.INVALID_REF, typed=True)
        if expect_head is not None:
            request.expect_head = _text(expect_head, "expect_head", ErrorCode.PREVIEW_UNSUPPORTED)
        if expect_origin is not None:
            request.expect_origin = _text(
                expect_origin, "expect_origin", ErrorCode.PREVIEW_UNSUPPORTED
            )
        return cv.push_from_pb(await _call(self._stub.GitPush, request, self._timeout_s))

    async def preview_action(
        self, tool: str, *, ref: str | None = None, path: str = "", body: str = ""
    ) -> ActionPreview:
        """What a held `tool` call would do, computed by the service (see `WorkingTree`)."""
        request = pb.PreviewActionRequest(
            workspace=self._workspace,
            tool=_text(tool, "tool"),
            path=_path(path),
            body=_text(body, "body"),
        )
        if ref is not None:
            request.ref = _text(ref, "ref", ErrorCode.INVALID_REF, typed=True)
        response = await _call(self._stub.PreviewAction, request, self._timeout_s)
        return cv.preview_from_pb(response.preview)


class WorkspacesClient:
    """Workspace management on a remote sandbox service; a `WorkspaceResolver`.

    Args:
        channel: a channel to the sandbox service.
        allow_request_workspace: whether `tree_for_request` may hand out a workspace a
            request named (this deployment's decision, made where the request arrives).
        timeout_s: deadline of each call.
    """

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        allow_request_workspace: bool = False,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._channel = channel
        self._stub: Any = pb_grpc.SandboxServiceStub(channel)  # type: ignore[no-untyped-call]
        self._allow = allow_request_workspace
        self._timeout_s = timeout_s

    def tree(self, name: str) -> SandboxClient:
        """The working tree of workspace `name` (no call is made until it is used)."""
        return SandboxClient(self._channel, name, timeout_s=self._timeout_s)

    async def create(
        self, name: str, *, branch: str | None = None, origin: str | None = None
    ) -> WorkspaceInfo:
        request = pb.CreateWorkspaceRequest(name=_text(name, "name"))
        if branch is not None:
            request.branch = _text(branch, "branch")
        if origin is not None:
            request.origin = _text(origin, "origin")
        response = await _call(self._stub.CreateWorkspace, request, self._timeout_s)
        return cv.workspace_from_pb(response.workspace)

    async def ensure(
        self, name: str, *, branch: str | None = None, origin: str | None = None
    ) -> EnsuredWorkspace:
        """The workspace `name`, created on first use by the service (idempotent, race-safe)."""
        request = pb.EnsureWorkspaceRequest(name=_text(name, "name"))
        if branch is not None:
            request.branch = _text(branch, "branch")
        if origin is not None:
            request.origin = _text(origin, "origin")
        response = await _call(self._stub.EnsureWorkspace, request, self._timeout_s)
        return EnsuredWorkspace(cv.workspace_from_pb(response.workspace), bool(response.created))

    async def open_tree(self, name: str) -> SandboxClient:
        """The working tree of workspace `name` (no call is made)."""
        return self.tree(name)

    async def get(self, name: str) -> WorkspaceInfo:
        request = pb.GetWorkspaceRequest(name=_text(name, "name"))
        response = await _call(self._stub.GetWorkspace, request, self._timeout_s)
        return cv.workspace_from_pb(response.workspace)

    async def list(self, *, page_size: int = 100, page_token: str = "") -> WorkspacePage:
        request = pb.ListWorkspacesRequest(
            page_size=page_size, page_token=_text(page_token, "page_token")
        )
        response = await _call(self._stub.ListWorkspaces, request, self._timeout_s)
        return WorkspacePage(
            [cv.workspace_from_pb(w) for w in response.workspaces], response.next_page_token
        )

    async def delete(self, name: str) -> None:
        request = pb.DeleteWorkspaceRequest(name=_text(name, "name"))
        await _call(self._stub.DeleteWorkspace, request, self._timeout_s)

    async def tree_for_request(self, name: object) -> SandboxClient:
        """The workspace a request named, if this deployment lets requests choose.

        Raises:
            RiverbeamError: 313 not allowed or not a workspace name; 310 no such workspace.
        """
        if not self._allow:
            raise RiverbeamError(
                ErrorCode.WORKSPACE_NOT_ALLOWED, "requests may not choose a workspace"
            )
        if not isinstance(name, str) or not WORKSPACE_NAME.fullmatch(name):
            raise RiverbeamError(
                ErrorCode.WORKSPACE_NOT_ALLOWED,
                "metadata.workspace is not a workspace name",
                workspace=display_path(name),
            )
        await self.get(name)
        return self.tree(name)


class FenceClient:
    """Revokes stale lease epochs in a remote sandbox service (the reaper's `FenceRevoker`)."""

    def __init__(self, channel: grpc.aio.Channel, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._stub: Any = pb_grpc.SandboxServiceStub(channel)  # type: ignore[no-untyped-call]
        self._timeout_s = timeout_s

    async def revoke(self, run_id: str, min_epoch: int) -> int:
        """Refuse run_id's sandbox calls below min_epoch; returns once none is in flight."""
        request = pb.RevokeFenceRequest(run_id=run_id, min_epoch=min_epoch)
        response = await _call(self._stub.RevokeFence, request, self._timeout_s)
        return int(response.min_epoch)
