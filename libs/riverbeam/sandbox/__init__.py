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

import typing as _typing

from riverbeam._lazy import lazy_exports as _lazy_exports

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

if _typing.TYPE_CHECKING:
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
    from riverbeam.sandbox._refs import (
        DEFAULT_PROTECTED_REFS,
        ProtectedRefs,
        ref_skeleton,
        validate_branch_name,
    )
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
    from riverbeam.sandbox._workspace_names import (
        WORKSPACE_NAME,
        EnsuredWorkspace,
        WorkspacePage,
        validate_workspace_name,
    )
    from riverbeam.sandbox._workspaces import WorkspaceManager

# Each name's module, imported on first use (PEP 562): importing this package costs only
# what the caller then uses.
_LAZY: dict[str, str | tuple[str, str]] = {
    "FenceClient": "riverbeam.sandbox._client",
    "SandboxClient": "riverbeam.sandbox._client",
    "WorkspacesClient": "riverbeam.sandbox._client",
    "FenceBook": "riverbeam.sandbox._fences",
    "WorkingTree": "riverbeam.sandbox._local",
    "OriginPolicy": "riverbeam.sandbox._origin",
    "check_origin_form": "riverbeam.sandbox._origin",
    "is_git_alias": "riverbeam.sandbox._paths",
    "parse_path": "riverbeam.sandbox._paths",
    "WORKSPACE_POLICIES": "riverbeam.sandbox._placement",
    "Placement": "riverbeam.sandbox._placement",
    "WorkspacePolicy": "riverbeam.sandbox._placement",
    "place_run": "riverbeam.sandbox._placement",
    "session_placement": "riverbeam.sandbox._placement",
    "shared_placement": "riverbeam.sandbox._placement",
    "user_placement": "riverbeam.sandbox._placement",
    "ProtectedRefs": "riverbeam.sandbox._refs",
    "ref_skeleton": "riverbeam.sandbox._refs",
    "validate_branch_name": "riverbeam.sandbox._refs",
    "AddResult": "riverbeam.sandbox._results",
    "Change": "riverbeam.sandbox._results",
    "CommitInfo": "riverbeam.sandbox._results",
    "DiffReport": "riverbeam.sandbox._results",
    "FileContent": "riverbeam.sandbox._results",
    "FileStatus": "riverbeam.sandbox._results",
    "LogEntry": "riverbeam.sandbox._results",
    "PushResult": "riverbeam.sandbox._results",
    "StatusReport": "riverbeam.sandbox._results",
    "TreeListing": "riverbeam.sandbox._results",
    "WorkingTreeOps": "riverbeam.sandbox._results",
    "WorkspaceInfo": "riverbeam.sandbox._results",
    "WriteResult": "riverbeam.sandbox._results",
    "SandboxRoot": "riverbeam.sandbox._root",
    "EnsuresWorkspaces": "riverbeam.sandbox._runspaces",
    "RunWorkspaces": "riverbeam.sandbox._runspaces",
    "GitIdentity": "riverbeam.sandbox._settings",
    "SandboxLimits": "riverbeam.sandbox._settings",
    "WorkspaceConfig": "riverbeam.sandbox._settings",
    "SANDBOX_TOOL_NAMES": "riverbeam.sandbox._tools",
    "WorkspaceResolver": "riverbeam.sandbox._tools",
    "sandbox_tools": "riverbeam.sandbox._tools",
    "DEFAULT_PROTECTED_REFS": "riverbeam.sandbox._refs",
    "WORKSPACE_NAME": "riverbeam.sandbox._workspace_names",
    "EnsuredWorkspace": "riverbeam.sandbox._workspace_names",
    "WorkspaceManager": "riverbeam.sandbox._workspaces",
    "WorkspacePage": "riverbeam.sandbox._workspace_names",
    "validate_workspace_name": "riverbeam.sandbox._workspace_names",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
