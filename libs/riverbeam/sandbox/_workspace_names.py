"""What a workspace's client shares with its manager: the name rule, ensure's and a listing's
results.

Apart from `WorkspaceManager` (_workspaces.py) so that the runner, which reaches workspaces
through the sandbox service, does not import the manager and the on-disk side with them
(issue 16: idle RSS).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._paths import display_path
from riverbeam.sandbox._results import WorkspaceInfo

__all__ = ["WORKSPACE_NAME", "EnsuredWorkspace", "WorkspacePage", "validate_workspace_name"]

WORKSPACE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")


def validate_workspace_name(name: object) -> str:
    """A workspace name, checked against `[a-z0-9][a-z0-9_-]{0,62}`.

    Raises:
        RiverbeamError: BEM-312.
    """
    if not isinstance(name, str) or not WORKSPACE_NAME.fullmatch(name):
        raise RiverbeamError(ErrorCode.WORKSPACE_BAD_NAME, name=display_path(name))
    return name


@dataclass(frozen=True, slots=True)
class EnsuredWorkspace:
    """What `ensure` found or made."""

    info: WorkspaceInfo
    created: bool


@dataclass(frozen=True, slots=True)
class WorkspacePage:
    """One page of a workspace listing."""

    workspaces: list[WorkspaceInfo]
    next_page_token: str
