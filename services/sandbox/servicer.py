"""SandboxService: protobuf in, WorkspaceManager / WorkingTree call, protobuf out.

No checks live here: every argument is validated by the library, and RiverbeamError is mapped
to a gRPC status by the ErrorInterceptor of riverbeam.server.
"""

from __future__ import annotations

from typing import Any

from riverbeam.sandbox import WorkspaceManager
from riverbeam.sandbox import _convert as cv
from riverbeam.v1 import sandbox_service_pb2 as pb
from riverbeam.v1 import sandbox_service_pb2_grpc as pb_grpc

__all__ = ["SandboxServicer"]

_DEFAULT_LOG_LIMIT = 20


def _optional(message: Any, field: str) -> str | None:
    return str(getattr(message, field)) if message.HasField(field) else None


class SandboxServicer(pb_grpc.SandboxServiceServicer):
    def __init__(self, workspaces: WorkspaceManager) -> None:
        self._workspaces = workspaces

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

    async def CheckoutBranch(
        self, request: pb.CheckoutBranchRequest, context: Any
    ) -> pb.CheckoutBranchResponse:
        tree = await self._workspaces.get(request.workspace)
        branch = await tree.checkout_branch(request.branch, request.create)
        return pb.CheckoutBranchResponse(branch=branch)

    # ---- the tool operations -------------------------------------------------------------------
    async def ListTree(self, request: pb.ListTreeRequest, context: Any) -> pb.ListTreeResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.listing_to_pb(await tree.list_tree(request.path))

    async def ReadFile(self, request: pb.ReadFileRequest, context: Any) -> pb.ReadFileResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.content_to_pb(await tree.read_file(request.path))

    async def WriteFile(self, request: pb.WriteFileRequest, context: Any) -> pb.WriteFileResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.write_to_pb(await tree.write_file(request.path, request.body))

    async def GitStatus(self, request: pb.GitStatusRequest, context: Any) -> pb.GitStatusResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.status_to_pb(await tree.git_status())

    async def GitDiff(self, request: pb.GitDiffRequest, context: Any) -> pb.GitDiffResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.diff_to_pb(await tree.git_diff())

    async def GitLog(self, request: pb.GitLogRequest, context: Any) -> pb.GitLogResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.log_to_pb(await tree.git_log(request.limit or _DEFAULT_LOG_LIMIT))

    async def GitAdd(self, request: pb.GitAddRequest, context: Any) -> pb.GitAddResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.add_to_pb(await tree.git_add(request.path))

    async def GitCommit(self, request: pb.GitCommitRequest, context: Any) -> pb.GitCommitResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.commit_to_pb(await tree.git_commit(request.message))

    async def GitPush(self, request: pb.GitPushRequest, context: Any) -> pb.GitPushResponse:
        tree = await self._workspaces.get(request.workspace)
        return cv.push_to_pb(await tree.git_push(_optional(request, "ref")))
