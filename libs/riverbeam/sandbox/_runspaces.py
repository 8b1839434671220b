"""Each run's workspace: placed by the workspace policy, created on first use, then opened.

The runner's sandbox tools ask `RunWorkspaces.tree_for_run(input)` for the tree of every call:
the workspace comes from the run (session id, user and organisation), never from the request's
metadata and never from one configured name, so runs of different sessions never share files,
an index or a branch (unless the deployment chose the "shared" policy).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

from riverbeam.agents._io import AgentInput
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._placement import Placement, WorkspacePolicy, place_run
from riverbeam.sandbox._results import WorkingTreeOps
from riverbeam.sandbox._workspace_names import EnsuredWorkspace

__all__ = ["EnsuresWorkspaces", "RunWorkspaces"]

_MAX_REMEMBERED_RUNS = 1024


class EnsuresWorkspaces(Protocol):
    """Creates workspaces on first use and opens them: `WorkspaceManager`, `WorkspacesClient`."""

    async def ensure(
        self, name: str, *, branch: str | None = None, origin: str | None = None
    ) -> EnsuredWorkspace: ...

    async def open_tree(self, name: str) -> WorkingTreeOps: ...


class RunWorkspaces:
    """Which workspace each run works in, under one workspace policy.

    Args:
        workspaces: where workspaces are ensured and opened (local or over gRPC).
        policy: "session" (default), "user" or "shared".
        origin: the origin new workspaces are cloned from and push to (deployment config).
        shared: the shared workspace; required by, and only used with, the "shared" policy
            (see `shared_placement`), which a deployment has to choose explicitly.

    Raises:
        RiverbeamError: BEM-331 for "shared" without a shared placement, or an unknown policy.
    """

    def __init__(
        self,
        workspaces: EnsuresWorkspaces,
        *,
        policy: WorkspacePolicy = "session",
        origin: str | None = None,
        shared: Placement | None = None,
    ) -> None:
        if policy not in ("session", "user", "shared") or (policy == "shared" and not shared):
            raise RiverbeamError(
                ErrorCode.WORKSPACE_POLICY_REFUSED,
                "the shared workspace policy needs a shared workspace"
                if policy == "shared"
                else f"unknown workspace policy {str(policy)[:32]!r}",
            )
        self._workspaces = workspaces
        self._policy: WorkspacePolicy = policy
        self._origin = origin
        self._shared = shared if policy == "shared" else None
        # (run id, workspace) pairs already ensured: one EnsureWorkspace per run, not per call.
        self._ensured: OrderedDict[tuple[str, str], None] = OrderedDict()

    @property
    def policy(self) -> WorkspacePolicy:
        return self._policy

    def placement(self, input: AgentInput) -> Placement:
        """The workspace and branch of the run `input` belongs to."""
        auth = input.auth_context
        return place_run(
            self._policy,
            session_id=input.session_id,
            user_id=auth.user_id if auth is not None else None,
            org_id=auth.org_id if auth is not None else None,
            shared=self._shared,
        )

    async def tree_for_run(self, input: AgentInput) -> tuple[Placement, WorkingTreeOps]:
        """The run's placement and working tree, the workspace created if it is missing."""
        placement = self.placement(input)
        key = (input.run_id, placement.workspace)
        if not input.run_id or key not in self._ensured:
            await self._workspaces.ensure(
                placement.workspace, branch=placement.branch, origin=self._origin
            )
            if input.run_id:
                self._ensured[key] = None
                while len(self._ensured) > _MAX_REMEMBERED_RUNS:
                    self._ensured.popitem(last=False)
        return placement, await self._workspaces.open_tree(placement.workspace)
