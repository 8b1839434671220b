"""Catalog entries: The sandbox: paths, workspaces, git (3xx).

Each is an ErrorSpec; riverbeam.core._catalog.ErrorCode names them all.
"""

from __future__ import annotations

import grpc

from riverbeam.core._error_spec import ErrorSpec

_S = grpc.StatusCode

PATH_ABSOLUTE = ErrorSpec("BEM-300", "absolute path rejected", 400, _S.INVALID_ARGUMENT)
PATH_PARENT = ErrorSpec("BEM-301", "`..` path component rejected", 400, _S.INVALID_ARGUMENT)
PATH_BAD_CHARACTER = ErrorSpec(
    "BEM-302",
    "path has a forbidden character (NUL, control, backslash, invisible)",
    400,
    _S.INVALID_ARGUMENT,
)
PATH_EMPTY = ErrorSpec("BEM-303", "empty path or path component", 400, _S.INVALID_ARGUMENT)
PATH_TOO_LONG = ErrorSpec("BEM-304", "path or component too long", 400, _S.INVALID_ARGUMENT)
PATH_ESCAPES_ROOT = ErrorSpec(
    "BEM-305", "path resolves outside the sandbox root (symlink)", 403, _S.PERMISSION_DENIED
)
PATH_GIT_DIR = ErrorSpec("BEM-306", "the .git directory is off limits", 403, _S.PERMISSION_DENIED)
PATH_HARD_LINK = ErrorSpec("BEM-307", "file has more than one hard link", 403, _S.PERMISSION_DENIED)
PATH_NOT_FOUND = ErrorSpec("BEM-308", "no such file or directory", 404, _S.NOT_FOUND)
PATH_WRONG_KIND = ErrorSpec(
    "BEM-309", "not a regular file or directory as expected", 400, _S.INVALID_ARGUMENT
)
WORKSPACE_NOT_FOUND = ErrorSpec("BEM-310", "workspace not found", 404, _S.NOT_FOUND)
WORKSPACE_EXISTS = ErrorSpec("BEM-311", "workspace already exists", 409, _S.ALREADY_EXISTS)
WORKSPACE_BAD_NAME = ErrorSpec(
    "BEM-312", "workspace name must match [a-z0-9][a-z0-9_-]{0,62}", 400, _S.INVALID_ARGUMENT
)
WORKSPACE_NOT_ALLOWED = ErrorSpec(
    "BEM-313", "request may not choose this workspace", 403, _S.PERMISSION_DENIED
)
FILE_TOO_LARGE = ErrorSpec("BEM-314", "file too large", 400, _S.INVALID_ARGUMENT)
WORKSPACE_MISMATCH = ErrorSpec(
    "BEM-315",
    "the call names another workspace than the run's",
    409,
    _S.FAILED_PRECONDITION,
    "approve a push from the session that asked for it",
)
ORIGIN_PATH_COLLISION = ErrorSpec(
    "BEM-316",
    "origin tree has paths that collide by case or Unicode normalisation",
    422,
    _S.FAILED_PRECONDITION,
)
ORIGIN_UNSAFE_ENTRY = ErrorSpec(
    "BEM-317",
    "origin tree has an entry the sandbox refuses (submodule or non-file entry)",
    422,
    _S.FAILED_PRECONDITION,
)
ORIGIN_BLOB_TOO_LARGE = ErrorSpec(
    "BEM-318", "origin has a file or pack larger than the limit", 422, _S.FAILED_PRECONDITION
)
ORIGIN_FETCH_FAILED = ErrorSpec(
    "BEM-319", "cannot fetch the workspace's origin", 502, _S.UNAVAILABLE
)
GIT_FAILED = ErrorSpec("BEM-320", "git operation failed", 500, _S.INTERNAL)
NOTHING_TO_COMMIT = ErrorSpec("BEM-321", "nothing to commit", 400, _S.FAILED_PRECONDITION)
COMMIT_ON_PROTECTED = ErrorSpec(
    "BEM-322",
    "commits on a protected branch are refused",
    403,
    _S.PERMISSION_DENIED,
    "check out a branch of your own first",
)
CHECKOUT_PROTECTED = ErrorSpec(
    "BEM-323", "protected ref cannot be checked out", 403, _S.PERMISSION_DENIED
)
NO_ORIGIN = ErrorSpec("BEM-324", "workspace has no origin configured", 400, _S.FAILED_PRECONDITION)
INVALID_REF = ErrorSpec("BEM-325", "invalid branch or ref name", 400, _S.INVALID_ARGUMENT)
NO_BRANCH = ErrorSpec("BEM-326", "HEAD is detached or unborn", 400, _S.FAILED_PRECONDITION)
DIRTY_WORKTREE = ErrorSpec(
    "BEM-327",
    "working tree has uncommitted changes",
    409,
    _S.FAILED_PRECONDITION,
    "commit the changes first",
)
PUSH_PROTECTED = ErrorSpec("BEM-328", "push of a protected ref refused", 403, _S.PERMISSION_DENIED)
INVALID_ORIGIN = ErrorSpec("BEM-329", "origin URL not allowed", 400, _S.INVALID_ARGUMENT)
PUSH_REJECTED = ErrorSpec("BEM-330", "push rejected by the remote", 409, _S.ABORTED)
WORKSPACE_POLICY_REFUSED = ErrorSpec(
    "BEM-331",
    "the workspace policy cannot place this run",
    400,
    _S.FAILED_PRECONDITION,
    "a shared workspace needs the deployment to opt in",
)
FENCE_STALE = ErrorSpec(
    "BEM-340",
    "sandbox call refused: its run's lease epoch is stale",
    409,
    _S.ABORTED,
    "the run was taken over; its new holder acts for it",
)
FENCE_INVALID = ErrorSpec(
    "BEM-341", "invalid fence (run_id and an epoch >= 1)", 400, _S.INVALID_ARGUMENT
)
