"""Which workspace, and which branch, a run works in: the workspace policy.

    session   one workspace per session (the default): `s-<session id>` on `riverbeam/s-<id>`
    user      one per (organisation, user): `u-<hash>` on `riverbeam/u-<hash>`
    shared    the deployment's one named workspace for every run (an explicit opt-in)

Names are derived, never taken from a request, and always fit `[a-z0-9][a-z0-9_-]{0,62}`: a
session id that is not already a short lowercase name is hashed (`sh-<hash>`), and a user is
always hashed together with the organisation, so equal user ids of two organisations never
share a workspace. The three derived forms start `s-`, `sh-` and `u-`; a shared workspace may
use none of these prefixes, so no derived name can ever reach it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Literal

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._refs import ProtectedRefs, validate_branch_name
from riverbeam.sandbox._workspace_names import validate_workspace_name

__all__ = [
    "WORKSPACE_POLICIES",
    "Placement",
    "WorkspacePolicy",
    "place_run",
    "session_placement",
    "shared_placement",
    "user_placement",
]

WorkspacePolicy = Literal["session", "user", "shared"]
WORKSPACE_POLICIES: tuple[WorkspacePolicy, ...] = ("session", "user", "shared")

_RAW_SESSION = re.compile(r"[a-z0-9][a-z0-9_-]{0,60}")
_DERIVED_PREFIXES = ("s-", "sh-", "u-")
_BRANCH_PREFIX = "riverbeam/"
_HASH_CHARS = 40


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a run works: a workspace name and the branch a new workspace starts on."""

    workspace: str
    branch: str


def _digest(*parts: str | None) -> str:
    # JSON keeps ("a", "b:c") and ("a:b", "c") apart, and None apart from "".
    encoded = json.dumps(list(parts), ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("ascii")).hexdigest()[:_HASH_CHARS]


def _derived(name: str) -> Placement:
    return Placement(name, validate_branch_name(_BRANCH_PREFIX + name))


def session_placement(session_id: str) -> Placement:
    """The workspace of one session.

    Raises:
        RiverbeamError: BEM-331 for an empty session id.
    """
    if not isinstance(session_id, str) or not session_id:
        raise RiverbeamError(
            ErrorCode.WORKSPACE_POLICY_REFUSED, "a run without a session has no workspace"
        )
    if _RAW_SESSION.fullmatch(session_id):
        return _derived(f"s-{session_id}")
    return _derived(f"sh-{_digest('session', session_id)}")


def user_placement(org_id: str | None, user_id: str) -> Placement:
    """The workspace of one user of one organisation (always hashed with the organisation)."""
    return _derived(f"u-{_digest('user', org_id, user_id)}")


def shared_placement(workspace: str, branch: str, protected: ProtectedRefs) -> Placement:
    """The deployment's shared workspace, checked once at start-up.

    Raises:
        RiverbeamError: BEM-331 for a name a derived workspace could take, BEM-312 for a bad
            name, 323/325 for a protected or invalid branch.
    """
    validate_workspace_name(workspace)
    if workspace.startswith(_DERIVED_PREFIXES):
        raise RiverbeamError(
            ErrorCode.WORKSPACE_POLICY_REFUSED,
            "a shared workspace may not start with s-, sh- or u- (those are per-session and "
            "per-user names)",
            workspace=workspace,
        )
    protected.check(branch, ErrorCode.CHECKOUT_PROTECTED)
    return Placement(workspace, validate_branch_name(branch))


def place_run(
    policy: WorkspacePolicy,
    *,
    session_id: str,
    user_id: str | None,
    org_id: str | None,
    shared: Placement | None = None,
) -> Placement:
    """The workspace a run uses under `policy`.

    Under "user", a run without a user id works in its session's workspace (never in a
    workspace shared with anyone else). "shared" needs the deployment's `shared` placement.

    Raises:
        RiverbeamError: BEM-331 when the policy cannot place the run.
    """
    if policy == "session":
        return session_placement(session_id)
    if policy == "user":
        if user_id:
            return user_placement(org_id or None, user_id)
        return session_placement(session_id)
    if policy == "shared" and shared is not None:
        return shared
    raise RiverbeamError(
        ErrorCode.WORKSPACE_POLICY_REFUSED,
        f"workspace policy {str(policy)[:32]!r} cannot place this run",
    )
