"""The repository inside a sandbox root, used only as an object database, index and refs.

libgit2 never reads or writes the working directory here: no checkout, no status, no
`index.add(path)`. Every working-tree byte goes through `SandboxRoot`; this module only opens
the repository, flattens trees and indexes into maps, and follows HEAD and symbolic refs.
"""

from __future__ import annotations

import os
import stat

import pygit2
from pygit2.enums import FileMode, ReferenceType, RepositoryOpenFlag

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._root import SandboxRoot
from riverbeam.sandbox._settings import GitIdentity

__all__ = [
    "Entry",
    "HeadState",
    "bound_object_cache",
    "flatten_index",
    "flatten_tree",
    "head_state",
    "init_repo",
    "open_repo",
    "signature",
    "symref_chain",
]

# (blob id, file mode) of one path in a tree, the index or the working tree.
Entry = tuple[str, int]

_MAX_SYMREF_DEPTH = 8


def _git_dir_kind(root: SandboxRoot) -> str:
    try:
        st = os.lstat(os.path.join(root.path, ".git"))
    except FileNotFoundError:
        return "missing"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return "other"


def open_repo(root: SandboxRoot) -> pygit2.Repository:
    """Open `<root>/.git`, which must be a real directory (not a symlink or a gitdir file).

    Raises:
        RiverbeamError: BEM-320 if there is no usable repository.
    """
    kind = _git_dir_kind(root)
    if kind != "dir":
        raise RiverbeamError(
            ErrorCode.GIT_FAILED, "the workspace has no git repository", state=kind
        )
    try:
        return pygit2.Repository(os.path.join(root.path, ".git"), RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError as exc:
        raise RiverbeamError(ErrorCode.GIT_FAILED, f"cannot open the repository: {exc}") from None


def bound_object_cache(max_bytes: int) -> None:
    """Bound libgit2's process-wide cache of parsed objects (0 turns caching off).

    Its default, 256 MiB, is as good as unbounded for a long-running service: commits and
    trees read by every call stay cached, and RSS grows with each commit.
    """
    if max_bytes == 0:
        pygit2.settings.enable_caching(False)
        return
    pygit2.settings.enable_caching(True)
    pygit2.settings.cache_max_size(max_bytes)


def init_repo(root: SandboxRoot, initial_branch: str) -> pygit2.Repository:
    """Create an empty repository with HEAD on `initial_branch`, or open the existing one."""
    kind = _git_dir_kind(root)
    if kind == "other":
        raise RiverbeamError(ErrorCode.GIT_FAILED, ".git exists and is not a directory")
    if kind == "dir":
        return open_repo(root)
    try:
        pygit2.init_repository(root.path, bare=False, initial_head=initial_branch)
    except pygit2.GitError as exc:
        raise RiverbeamError(ErrorCode.GIT_FAILED, f"cannot create the repository: {exc}") from None
    return open_repo(root)


def signature(identity: GitIdentity) -> pygit2.Signature:
    """The configured author/committer, stamped now."""
    return pygit2.Signature(identity.name, identity.email)


def flatten_tree(
    repo: pygit2.Repository, tree: pygit2.Tree | None, *, limit: int
) -> dict[str, Entry]:
    """Every non-tree entry of a tree, by full path."""
    out: dict[str, Entry] = {}
    if tree is None:
        return out
    stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for item in current:
            path = f"{prefix}{item.name}"
            if item.filemode == FileMode.TREE:
                sub = repo[item.id]
                if isinstance(sub, pygit2.Tree):
                    stack.append((path + "/", sub))
                continue
            out[path] = (str(item.id), int(item.filemode))
            if len(out) > limit:
                raise RiverbeamError(
                    ErrorCode.GIT_FAILED, f"repository has more than {limit} files"
                )
    return out


def flatten_index(index: pygit2.Index) -> dict[str, Entry]:
    """Every stage-0 index entry, by path."""
    return {str(e.path): (str(e.id), int(e.mode)) for e in index}


def symref_chain(repo: pygit2.Repository, name: str) -> list[str]:
    """`name` and every reference it points to through symbolic refs, in order.

    The last element is the direct ref (which may not exist yet, for an unborn branch).
    """
    chain = [name]
    current = name
    for _ in range(_MAX_SYMREF_DEPTH):
        ref = repo.references.get(current)
        if ref is None or ref.type != ReferenceType.SYMBOLIC:
            return chain
        current = str(ref.target)
        chain.append(current)
    raise RiverbeamError(ErrorCode.INVALID_REF, "symbolic refs nest too deep", ref=name)


class HeadState:
    """Where HEAD is: the ref chain, the branch (short name) and the commit, if any."""

    __slots__ = ("branch", "chain", "commit")

    def __init__(self, chain: list[str], branch: str | None, commit: pygit2.Commit | None) -> None:
        self.chain = chain
        self.branch = branch
        self.commit = commit

    @property
    def detached(self) -> bool:
        return self.branch is None


def head_state(repo: pygit2.Repository) -> HeadState:
    """Resolve HEAD without trusting its shorthand: follow every symbolic step."""
    chain = symref_chain(repo, "HEAD")
    final = chain[-1]
    branch = final[len("refs/heads/") :] if final.startswith("refs/heads/") else None
    ref = repo.references.get(final)
    commit: pygit2.Commit | None = None
    if ref is not None:
        try:
            commit = ref.peel(pygit2.Commit)
        except (pygit2.GitError, ValueError, KeyError):
            commit = None
    if final == "HEAD":
        branch = None
    return HeadState(chain, branch, commit)
