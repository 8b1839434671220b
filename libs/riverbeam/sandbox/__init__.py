"""The sandbox: jailed file access and git for agents' working trees.

    SandboxRoot        every path resolved under one directory through descriptors
    WorkingTree        a SandboxRoot plus a git repository (pygit2), async; WorkingTreeOps
    SandboxClient      WorkingTreeOps over gRPC, against the sandbox service
    WorkspaceManager   named workspaces under the service's base directory
    RunWorkspaces      each run's workspace under the workspace policy, made on first use
    sandbox_tools      the nine agent tools over any WorkingTreeOps
    FenceBook          the service's per-run fencing epochs (FenceClient revokes them)

Every argument is treated as hostile; failures are RiverbeamError with a BEM-3xx code.
"""

from riverbeam.sandbox._client import FenceClient, SandboxClient, WorkspacesClient
from riverbeam.sandbox._fences import FenceBook
from riverbeam.sandbox._local import WorkingTree
from riverbeam.sandbox._origin import OriginPolicy, check_origin_form
from riverbeam.sandbox._paths import is_git_alias, parse_path
from riverbeam.sandbox._placement import (
    WORKSPACE_POLICIES,
    Placement,
    WorkspacePolicy,
    place_run,
    session_placement,
    shared_placement,
    user_placement,
)
from riverbeam.sandbox._refs import ProtectedRefs, ref_skeleton, validate_branch_name
from riverbeam.sandbox._results import (
    AddResult,
    Change,
    CommitInfo,
    DiffReport,
    FileContent,
    FileStatus,
    LogEntry,
    PushResult,
    StatusReport,
    TreeListing,
    WorkingTreeOps,
    WorkspaceInfo,
    WriteResult,
)
from riverbeam.sandbox._root import SandboxRoot
from riverbeam.sandbox._runspaces import EnsuresWorkspaces, RunWorkspaces
from riverbeam.sandbox._settings import GitIdentity, SandboxLimits, WorkspaceConfig
from riverbeam.sandbox._tools import SANDBOX_TOOL_NAMES, WorkspaceResolver, sandbox_tools
from riverbeam.sandbox._tree import DEFAULT_PROTECTED_REFS
from riverbeam.sandbox._workspaces import (
    WORKSPACE_NAME,
    EnsuredWorkspace,
    WorkspaceManager,
    WorkspacePage,
    validate_workspace_name,
)

__all__ = [
    "DEFAULT_PROTECTED_REFS",
    "SANDBOX_TOOL_NAMES",
    "WORKSPACE_NAME",
    "WORKSPACE_POLICIES",
    "AddResult",
    "Change",
    "CommitInfo",
    "DiffReport",
    "EnsuredWorkspace",
    "EnsuresWorkspaces",
    "FenceBook",
    "FenceClient",
    "FileContent",
    "FileStatus",
    "GitIdentity",
    "LogEntry",
    "OriginPolicy",
    "Placement",
    "ProtectedRefs",
    "PushResult",
    "RunWorkspaces",
    "SandboxClient",
    "SandboxLimits",
    "SandboxRoot",
    "StatusReport",
    "TreeListing",
    "WorkingTree",
    "WorkingTreeOps",
    "WorkspaceConfig",
    "WorkspaceInfo",
    "WorkspaceManager",
    "WorkspacePage",
    "WorkspacePolicy",
    "WorkspaceResolver",
    "WorkspacesClient",
    "WriteResult",
    "check_origin_form",
    "is_git_alias",
    "parse_path",
    "place_run",
    "ref_skeleton",
    "sandbox_tools",
    "session_placement",
    "shared_placement",
    "user_placement",
    "validate_branch_name",
    "validate_workspace_name",
]
