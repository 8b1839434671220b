"""The sandbox: jailed file access and git for agents' working trees.

    SandboxRoot        every path resolved under one directory through descriptors
    WorkingTree        a SandboxRoot plus a git repository (pygit2), async; WorkingTreeOps
    SandboxClient      WorkingTreeOps over gRPC, against the sandbox service
    WorkspaceManager   named workspaces under the service's base directory
    sandbox_tools      the nine agent tools over any WorkingTreeOps
    FenceBook          the service's per-run fencing epochs (FenceClient revokes them)

Every argument is treated as hostile; failures are RiverbeamError with a BEM-3xx code.
"""

from riverbeam.sandbox._client import FenceClient, SandboxClient, WorkspacesClient
from riverbeam.sandbox._fences import FenceBook
from riverbeam.sandbox._local import WorkingTree
from riverbeam.sandbox._origin import OriginPolicy, check_origin_form
from riverbeam.sandbox._paths import is_git_alias, parse_path
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
from riverbeam.sandbox._settings import GitIdentity, SandboxLimits, WorkspaceConfig
from riverbeam.sandbox._tools import SANDBOX_TOOL_NAMES, WorkspaceResolver, sandbox_tools
from riverbeam.sandbox._tree import DEFAULT_PROTECTED_REFS
from riverbeam.sandbox._workspaces import (
    WorkspaceManager,
    WorkspacePage,
    validate_workspace_name,
)

__all__ = [
    "DEFAULT_PROTECTED_REFS",
    "SANDBOX_TOOL_NAMES",
    "AddResult",
    "Change",
    "CommitInfo",
    "DiffReport",
    "FenceBook",
    "FenceClient",
    "FileContent",
    "FileStatus",
    "GitIdentity",
    "LogEntry",
    "OriginPolicy",
    "ProtectedRefs",
    "PushResult",
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
    "WorkspaceResolver",
    "WorkspacesClient",
    "WriteResult",
    "check_origin_form",
    "is_git_alias",
    "parse_path",
    "ref_skeleton",
    "sandbox_tools",
    "validate_branch_name",
    "validate_workspace_name",
]
