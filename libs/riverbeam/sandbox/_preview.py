"""Approval previews: what a held git_push or write_file would do, and the state it saw.

A preview is computed when a call is held for a person, and shown to them. It records the
state it was computed from (`PreviewState`): for git_push the branch's local head and the
origin's tip of it as last known (the remote-tracking ref, kept up to date by every push),
for write_file the file's git blob id. The held call's stored arguments carry that state as
`expect`; the approved call checks it under the tree's lock, right before it acts, and refuses
with BEM-275 when anything moved, so a person only ever approves exactly what they saw.

The diff is bounded by `SandboxLimits.max_preview_bytes`, with a marker line when cut.
"""

from __future__ import annotations

import re
from typing import Any

import pygit2
from pygit2.enums import ReferenceType, SortMode

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._paths import display_path, parse_path

# The preview values live with the other results (no pygit2 there), for the servicer's and
# the client's conversions; they are still importable from here.
from riverbeam.sandbox._results import ActionPreview, PreviewCommit, PreviewState
from riverbeam.sandbox._root import SandboxRoot

__all__ = [
    "ABSENT",
    "MAX_PREVIEW_COMMITS",
    "ActionPreview",
    "PreviewCommit",
    "PreviewState",
    "bound_diff",
    "check_expected",
    "file_blob",
    "preview_push",
    "preview_write",
    "state_moved",
    "tracking_ref",
]

ABSENT = "absent"
MAX_PREVIEW_COMMITS = 50
# How many commits a push preview walks at most to find what the origin lacks.
_MAX_WALK = 10_000
_INT32_MAX = 2**31 - 1
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def bound_diff(text: str, limit: int) -> tuple[str, bool, int]:
    """`text` cut to at most `limit` bytes at a line end, with a marker; (text, cut, size).

    The size is capped at 2^31-1 (what the wire carries).
    """
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text, False, len(data)
    head = data[:limit].decode("utf-8", errors="ignore")
    if "\n" in head:
        head = head[: head.rfind("\n") + 1]
    shown = len(head.encode("utf-8"))
    size = min(len(data), _INT32_MAX)
    marker = f"[... preview truncated: showing {shown} of {size} bytes]\n"
    return head + marker, True, size


def tracking_ref(branch: str) -> str:
    """Where the sandbox keeps what it last knew of the origin's `branch`."""
    return f"refs/remotes/origin/{branch}"


def _known_origin(repo: pygit2.Repository, branch: str) -> str | None:
    ref = repo.references.get(tracking_ref(branch))
    if ref is None or ref.type != ReferenceType.DIRECT or ref.target not in repo:
        return None
    return str(ref.target)


def _origin_tips(repo: pygit2.Repository) -> list[pygit2.Oid]:
    tips: list[pygit2.Oid] = []
    for name in repo.references:
        if not name.startswith("refs/remotes/origin/"):
            continue
        ref = repo.references.get(name)
        if ref is not None and ref.type == ReferenceType.DIRECT and ref.target in repo:
            tips.append(pygit2.Oid(hex=str(ref.target)))
    return tips


def _author(commit: pygit2.Commit) -> str:
    return f"{commit.author.name} <{commit.author.email}>"


def preview_push(repo: pygit2.Repository, branch: str, *, limit: int) -> ActionPreview:
    """The commits and diff a push of `branch` would send to the origin.

    What the origin has is its tip of `branch` as last known; for a branch the origin does not
    have yet, whatever of the other known origin branches the local one already contains.
    `branch` must be a checked, pushable branch (see `resolve_push_branch`).
    """
    local = repo.references.get(f"refs/heads/{branch}")
    if local is None or local.type != ReferenceType.DIRECT:
        raise RiverbeamError(ErrorCode.INVALID_REF, "no such branch", ref=branch)
    head = repo[local.target]
    assert isinstance(head, pygit2.Commit)
    origin = _known_origin(repo, branch)
    walker = repo.walk(head.id, SortMode.TOPOLOGICAL | SortMode.TIME)
    for tip in [pygit2.Oid(hex=origin)] if origin is not None else _origin_tips(repo):
        walker.hide(tip)
    commits: list[PreviewCommit] = []
    oldest: pygit2.Commit | None = None
    walked = 0
    for commit in walker:
        walked += 1
        oldest = commit
        if len(commits) < MAX_PREVIEW_COMMITS:
            lines = (commit.message or "").strip().splitlines()
            commits.append(
                PreviewCommit(str(commit.id), (lines[0] if lines else "")[:200], _author(commit))
            )
        if walked >= _MAX_WALK:
            break
    base: pygit2.Tree | None
    if origin is not None:
        known = repo[origin]
        assert isinstance(known, pygit2.Commit)
        base = known.tree
    elif oldest is not None and oldest.parents:
        base = oldest.parents[0].tree
    elif oldest is None:
        base = head.tree
    else:
        base = None
    diff = (
        head.tree.diff_to_tree(swap=True)
        if base is None
        else repo.diff(base, head.tree, context_lines=3)
    )
    text, cut, size = bound_diff(diff.patch or "", limit)
    files = diff.stats.files_changed
    where = f"to {branch}" + ("" if origin is not None else " (new on origin)")
    summary = (
        f"nothing to push {where}"
        if walked == 0
        else f"{walked} commit{'s' * (walked != 1)} {where}, "
        f"{files} file{'s' * (files != 1)} changed"
    )
    return ActionPreview(
        tool="git_push",
        summary=summary,
        state=PreviewState(branch=branch, head=str(head.id), origin=origin or ABSENT),
        diff=text,
        truncated=cut,
        diff_bytes=size,
        commits=tuple(commits),
        commits_truncated=walked > len(commits),
    )


def file_blob(root: SandboxRoot, path: str, *, limit: int) -> tuple[str, bytes | None]:
    """The file's git blob id and content, or (`absent`, None) when there is no file.

    Raises:
        RiverbeamError: 314 for a file larger than `limit`; the root's path refusals.
    """
    kind = root.kind(path)
    if kind == "missing":
        return ABSENT, None
    if kind != "file":
        raise RiverbeamError(
            ErrorCode.PATH_WRONG_KIND, "not a regular file", path=display_path(path)
        )
    read = root.read(path, limit=limit)
    if read.truncated:
        raise RiverbeamError(
            ErrorCode.FILE_TOO_LARGE,
            f"file larger than {limit} bytes cannot be previewed",
            path=display_path(path),
        )
    return str(pygit2.hash(read.data)), read.data


def preview_write(
    root: SandboxRoot, path: str, body: bytes, *, limit: int, max_file_bytes: int
) -> ActionPreview:
    """The diff a write of `body` to `path` would make (a new file shown as one)."""
    shown = "/".join(parse_path(path))
    blob, old = file_blob(root, path, limit=max_file_bytes)
    patch = pygit2.Patch.create_from(old, body, old_as_path=shown, new_as_path=shown)
    text, cut, size = bound_diff(patch.text or "", limit)
    if old is None:
        summary = f"new file {shown} ({len(body)} bytes)"
    elif old == body:
        summary = f"{shown} unchanged"
    else:
        _context, added, removed = patch.line_stats
        summary = f"{shown}: +{added} -{removed} lines"
    return ActionPreview(
        tool="write_file",
        summary=summary,
        state=PreviewState(path=shown, blob=blob),
        diff=text,
        truncated=cut,
        diff_bytes=size,
    )


def check_expected(value: object, field: str, *, absent_ok: bool = True) -> str | None:
    """An `expect` value as given, after checking its form (None: nothing expected).

    Raises:
        RiverbeamError: BEM-276 for anything but an object id (or `absent`).
    """
    if value is None:
        return None
    if isinstance(value, str) and (_OID.fullmatch(value) or (absent_ok and value == ABSENT)):
        return value
    raise RiverbeamError(
        ErrorCode.PREVIEW_UNSUPPORTED, f"expect.{field} is not an object id", field=field
    )


def state_moved(what: str, *, expected: str, actual: str, **details: Any) -> RiverbeamError:
    """The BEM-275 refusal of an approved call whose previewed state is gone."""
    return RiverbeamError(
        ErrorCode.ACTION_STATE_MOVED,
        f"{what} changed since the approval's preview ({expected[:12]} -> {actual[:12]}); "
        "nothing was done",
        expected=expected,
        actual=actual,
        **details,
    )
