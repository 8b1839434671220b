"""SandboxService: protobuf in, WorkspaceManager / WorkingTree call, protobuf out.

No checks live here: every argument is validated by the library, and RiverbeamError is mapped
to a gRPC status by the ErrorInterceptor of riverbeam.server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar

from riverbeam.core.fencing import Fence
from riverbeam.sandbox import FenceBook, WorkspaceManager
from riverbeam.sandbox import _convert as cv
from riverbeam.v1 import sandbox_service_pb2 as pb
from riverbeam.v1 import sandbox_service_pb2_grpc as pb_grpc

__all__ = ["SandboxServicer"]

_DEFAULT_LOG_LIMIT = 20


_R = TypeVar("_R")


def _optional(message: Any, field: str) -> str | None:
    return str(getattr(message, field)) if message.HasField(field) else None


def _fence(message: Any) -> Fence | None:
    if not message.HasField("fence"):
        return None
    return Fence(message.fence.run_id, int(message.fence.epoch))


def _fenced(
    method: Callable[[Any, Any, Any], Awaitable[_R]],
) -> Callable[[Any, Any, Any], Awaitable[_R]]:
    """Admit the call through the fence book first (BEM-340 for a stale epoch)."""

    @wraps(method)
    async def call(self: SandboxServicer, request: Any, context: Any) -> _R:
        async with self._fences.admit(_fence(request)):
            return await method(self, request, context)

    return call


class SandboxServicer(pb_grpc.SandboxServiceServicer):
    def __init__(self, workspaces: WorkspaceManager, fences: FenceBook | None = None) -> None:
        self._workspaces = workspaces
        self._fences = fences or FenceBook(None)

    # ---- fencing -------------------------------------------------------------------------------
    async def RevokeFence(
        self, request: pb.RevokeFenceRequest, context: Any
    ) -> pb.RevokeFenceResponse:
        floor = await self._fences.revoke(request.run_id, int(request.min_epoch))
        return pb.RevokeFenceResponse(min_epoch=floor)

    # ---- workspaces ----------------------------------------------------------------------------
    async def CreateWorkspace(
        self, request: pb.CreateWorkspaceRequest, context: Any
    ) -> pb.CreateWorkspaceResponse:
        info = await self._workspaces.create(
            request.name, branch=_optional(request, "branch"), origin=_optional(request, "origin")
        )
        return pb.CreateWorkspaceResponse(workspace=cv.workspace_to_pb(info))

    async def EnsureWorkspace(
        self, request: pb.EnsureWorkspaceRequest, context: Any
    ) -> pb.EnsureWorkspaceResponse:
        ensured = await self._workspaces.ensure(
            request.name, branch=_optional(request, "branch"), origin=_optional(request, "origin")
        )
        return pb.EnsureWorkspaceResponse(
            workspace=cv.workspace_to_pb(ensured.info), created=ensured.created
        )

    async def GetWorkspace(
        self, request: pb.GetWorkspaceRequest, context: Any
    ) -> pb.GetWorkspaceResponse:
        info = await self._workspaces.info(request.name)
        return pb.GetWorkspaceResponse(workspace=cv.workspace_to_pb(info))

    async def ListWorkspaces(
        self, request: pb.ListWorkspacesRequest, context: Any
    ) -> pb.ListWorkspacesResponse:
        page = await self._workspaces.list(
            page_size=request.page_size, page_token=request.page_token
        )
        return pb.ListWorkspacesResponse(
            workspaces=[cv.workspace_to_pb(w) for w in page.workspaces],
            next_page_token=page.next_page_token,
        )

    async def DeleteWorkspace(
        self, request: pb.DeleteWorkspaceRequest, context: Any
    ) -> pb.DeleteWorkspaceResponse:
        await self._workspaces.delete(request.name)
        return pb.DeleteWorkspaceResponse()

    @_fenced
    async def CheckoutBranch(
        self, request: pb.CheckoutBranchRequest, context: Any
    ) -> pb.CheckoutBranchResponse:
        tree = await self._workspaces.get(request.workspace)
        branch = await tree.checkout_branch(request.branch, request.create)
        return pb.CheckoutBranchResponse(branch=branch)

    # ---- the tool operations -------------------------------------------------------------------
    @_fenced
    async def ListTree(self, request: pb.ListTreeRequest, context: Any) -> pb.ListTreeResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.listing_to_pb(await tree.list_tree(request.path))

    @_fenced
    async def ReadFile(self, request: pb.ReadFileRequest, context: Any) -> pb.ReadFileResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.content_to_pb(await tree.read_file(request.path))

    @_fenced
    async def WriteFile(self, request: pb.WriteFileRequest, context: Any) -> pb.WriteFileResponse:
        tree = await self._workspaces.get(request.workspace)
        written = await tree.write_file(
            request.path, request.body, _optional(request, "expect_blob")
        )
        return cv.write_to_pb(written)

    @_fenced
    async def GitStatus(self, request: pb.GitStatusRequest, context: Any) -> pb.GitStatusResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.status_to_pb(await tree.git_status())

    @_fenced
    async def GitDiff(self, request: pb.GitDiffRequest, context: Any) -> pb.GitDiffResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.diff_to_pb(await tree.git_diff())

    @_fenced
    async def GitLog(self, request: pb.GitLogRequest, context: Any) -> pb.GitLogResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.log_to_pb(await tree.git_log(request.limit or _DEFAULT_LOG_LIMIT))

    @_fenced
    async def GitAdd(self, request: pb.GitAddRequest, context: Any) -> pb.GitAddResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.add_to_pb(await tree.git_add(request.path))

    @_fenced
    async def GitCommit(self, request: pb.GitCommitRequest, context: Any) -> pb.GitCommitResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.commit_to_pb(await tree.git_commit(request.message))

    @_fenced
    async def GitPush(self, request: pb.GitPushRequest, context: Any) -> pb.GitPushResponse:
        tree = await self._workspaces.get(request.workspace)
        pushed = await tree.git_push(
            _optional(request, "ref"),
            _optional(request, "expect_head"),
            _optional(request, "expect_origin"),
        )
        return cv.push_to_pb(pushed)

    @_fenced
    async def PreviewAction(
        self, request: pb.PreviewActionRequest, context: Any
    ) -> pb.PreviewActionResponse:
        tree = await self._workspaces.get(request.workspace)
        preview = await tree.preview_action(
            request.tool, ref=_optional(request, "ref"), path=request.path, body=request.body
        )
        return pb.PreviewActionResponse(preview=cv.preview_to_pb(preview))
