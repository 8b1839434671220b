"""Sandbox configuration: where workspaces live, who commits, where pushes may go, size limits.

The service reads `riverbeam.core.settings.SandboxSettings` from the environment and turns it
into a `WorkspaceConfig` with `WorkspaceConfig.from_settings`; library users and tests build a
`WorkspaceConfig` directly.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from riverbeam.core.settings import SandboxSettings

__all__ = ["GitIdentity", "SandboxLimits", "WorkspaceConfig"]

# Each model is built when it is first made (defer_build): a runner imports this module with
# the sandbox package's workspace names and never makes one (issue 16: idle RSS).


class GitIdentity(BaseModel):
    """Author and committer of every commit the sandbox makes. Never taken from a request."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str = "Riverbeam Agent"
    email: str = "agent@riverbeam.invalid"


class SandboxLimits(BaseModel):
    """Bounds on what one call may read, write or return."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    max_read_bytes: int = Field(default=256 * 1024, gt=0)
    """read_file returns at most this many bytes, then a truncation marker."""
    max_write_bytes: int = Field(default=1024 * 1024, gt=0)
    """write_file refuses larger bodies (BEM-314)."""
    max_stage_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    """git_add refuses larger files (BEM-314)."""
    max_diff_bytes: int = Field(default=256 * 1024, gt=0)
    """git_diff stops adding patches after this many bytes, with a marker."""
    max_preview_bytes: int = Field(default=64 * 1024, gt=0)
    """An approval preview's diff stops at this many bytes, with a marker."""
    max_diff_file_bytes: int = Field(default=1024 * 1024, gt=0)
    """Files larger than this are summarised in a diff, not diffed."""
    max_list_entries: int = Field(default=5000, gt=0)
    """list_tree returns at most this many paths."""
    max_status_entries: int = Field(default=2000, gt=0)
    """git_status reports at most this many paths."""
    max_scan_entries: int = Field(default=50_000, gt=0)
    """Status, diff and add look at no more files than this."""
    max_log_entries: int = Field(default=200, gt=0)
    """git_log returns at most this many commits."""
    max_message_bytes: int = Field(default=64 * 1024, gt=0)
    """Commit messages longer than this are refused."""
    max_blob_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    """A new workspace's origin may hold no file larger than this (BEM-318)."""
    max_fetch_bytes: int = Field(default=256 * 1024 * 1024, gt=0)
    """Cloning a new workspace's origin downloads at most this much (BEM-318)."""
    max_checkout_bytes: int = Field(default=1024 * 1024 * 1024, gt=0)
    """A new workspace's files may add up to at most this much (BEM-318): a small fetch of
    well-compressed blobs cannot fill the disk."""


class WorkspaceConfig(BaseModel):
    """What a `WorkspaceManager` needs: all of it server configuration, none of it from requests."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    base_dir: Path
    """Every workspace lives in a directory directly under this one."""
    allow_request_workspace: bool = False
    """Whether a request's metadata.workspace may pick the workspace tools run in."""
    origin_allowlist: tuple[str, ...] = ()
    """URL prefixes (ending in "/") or exact URLs a CreateWorkspace request may name as origin."""
    default_origin: str | None = None
    """Origin of workspaces created without one (trusted configuration)."""
    protected_refs: tuple[str, ...] = ("main", "master")
    base_branch: str = "main"
    """The branch the first commit goes on."""
    default_branch: str = "riverbeam/work"
    """The branch a new workspace's tools work on, unless the create request names one."""
    identity: GitIdentity = Field(default_factory=GitIdentity)
    limits: SandboxLimits = Field(default_factory=SandboxLimits)
    git_object_cache_bytes: int = Field(default=2 * 1024 * 1024, ge=0)
    """libgit2's cache of parsed objects, for the whole process (its own default, 256 MiB, let
    every commit and tree the sandbox ever read stay in memory: RSS grew with each commit)."""
    max_open_repositories: int = Field(default=32, gt=0)
    """Workspaces whose repository handle (index, object cache, file handles) stays open;
    the least recently used beyond this release theirs, reopened on next use."""
    max_idle_s: float = Field(default=7 * 24 * 3600, ge=0)
    """Workspaces made on first use (EnsureWorkspace) that nobody used for this long are
    deleted by the retention sweep; 0 keeps them forever."""

    @classmethod
    def from_settings(cls, settings: SandboxSettings) -> WorkspaceConfig:
        """The configuration the sandbox service runs with.

        `allowed_origin_prefixes` become the allowlist; `origin_base`, when set, adds every
        local path under it.
        """
        allowlist = list(settings.allowed_origin_prefixes)
        if settings.origin_base is not None:
            allowlist.append(os.path.abspath(settings.origin_base).rstrip("/") + "/")
        limits = SandboxLimits(
            max_read_bytes=settings.max_read_bytes,
            max_diff_bytes=settings.max_diff_bytes,
            max_preview_bytes=settings.max_preview_bytes,
            max_write_bytes=settings.max_write_bytes,
            max_blob_bytes=settings.max_blob_bytes,
            max_fetch_bytes=settings.max_fetch_bytes,
        )
        return cls(
            base_dir=settings.workspace_base,
            allow_request_workspace=settings.allow_request_workspace,
            origin_allowlist=tuple(allowlist),
            protected_refs=tuple(settings.protected_refs),
            identity=GitIdentity(name=settings.git_author_name, email=settings.git_author_email),
            limits=limits,
            max_idle_s=settings.workspace_max_idle_s,
        )
