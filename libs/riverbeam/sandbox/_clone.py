"""A new workspace's base, fetched from its origin, which is treated as hostile input.

The origin's base branch is fetched into the fresh repository (objects and one remote-tracking
ref only: no config, hooks or alternates travel in a fetch), then every entry of its tree is
checked before the first file is written:

- only regular and executable files: a symlink entry is BEM-305, a submodule (gitlink) or any
  other mode BEM-317;
- every path must be one the tools could address (`parse_path`: `.git` in any spelling is
  BEM-306, invisible or control characters BEM-302, ...), and every entry name one component;
- no two paths may collide on a case-insensitive or normalising file system (`README` and
  `readme`, NFC and NFD `é`, a file and a directory folding to one name): BEM-316;
- no blob above `limits.max_blob_bytes`, no fetch above `limits.max_fetch_bytes`, no more than
  `limits.max_checkout_bytes` in all: BEM-318.

The files are then written through the `SandboxRoot` from the blobs' bytes, verbatim: libgit2's
checkout never runs, so no filter driver, `eol`/`ident` conversion, LFS smudge, submodule update
or hook can act on them.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import pygit2
from pygit2.enums import CredentialType, FileMode

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._paths import display_path, parse_path
from riverbeam.sandbox._root import SandboxRoot
from riverbeam.sandbox._settings import SandboxLimits

__all__ = ["CheckedFile", "check_tree", "clone_base", "fold_path"]

_FILE_MODES = frozenset({int(FileMode.BLOB), int(FileMode.BLOB_EXECUTABLE)})

# (path, blob id, executable)
CheckedFile = tuple[str, pygit2.Oid, bool]


def fold_path(path: str) -> str:
    """The name a case-insensitive, normalising file system (HFS+, APFS, NTFS) would see."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", path).casefold())


class _FetchGuard(pygit2.RemoteCallbacks):
    """No credentials, and a bound on what a fetch may download."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__()
        self._max_bytes = max_bytes

    def credentials(
        self, url: str, username_from_url: str | None, allowed_types: CredentialType
    ) -> Any:
        raise RiverbeamError(
            ErrorCode.ORIGIN_FETCH_FAILED,
            "the origin asked for credentials; the sandbox sends none",
        )

    def transfer_progress(self, stats: pygit2.remotes.TransferProgress) -> None:
        if stats.received_bytes > self._max_bytes:
            raise RiverbeamError(
                ErrorCode.ORIGIN_BLOB_TOO_LARGE,
                f"the origin sent more than {self._max_bytes} bytes",
                limit=self._max_bytes,
            )


def _entry_name(raw: bytes, prefix: str) -> str:
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RiverbeamError(
            ErrorCode.PATH_BAD_CHARACTER,
            "origin tree has a name that is not UTF-8",
            path=display_path(prefix + raw.decode("utf-8", errors="replace")),
        ) from None
    if len(parse_path(name)) != 1:
        # "a/b" inside one entry, "." or "": would alias another path.
        raise RiverbeamError(
            ErrorCode.ORIGIN_UNSAFE_ENTRY, "origin tree entry names more than one component"
        )
    return name


def _register(seen: dict[str, tuple[str, str]], path: str, kind: str) -> None:
    key = fold_path(path)
    previous = seen.get(key)
    if previous is None:
        seen[key] = (path, kind)
        return
    if previous == (path, kind) and kind == "dir":
        return
    raise RiverbeamError(
        ErrorCode.ORIGIN_PATH_COLLISION,
        "origin tree has paths that one file system would see as the same",
        path=display_path(path),
        other=display_path(previous[0]),
    )


def check_tree(
    repo: pygit2.Repository, tree: pygit2.Tree, limits: SandboxLimits
) -> list[CheckedFile]:
    """Every file of `tree`, after the checks in the module docstring (nothing is written).

    Raises:
        RiverbeamError: 302-306, 316, 317, 318, or 320 for more than `max_scan_entries` files.
    """
    files: list[CheckedFile] = []
    total = 0
    seen: dict[str, tuple[str, str]] = {}
    stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for item in current:
            name = _entry_name(item.raw_name or b"", prefix)
            path = prefix + name
            parse_path(path)
            mode = int(item.filemode)
            if mode == int(FileMode.TREE):
                sub = repo.get(item.id)
                if not isinstance(sub, pygit2.Tree):
                    raise RiverbeamError(
                        ErrorCode.ORIGIN_UNSAFE_ENTRY, "origin tree is incomplete", path=path
                    )
                _register(seen, path, "dir")
                stack.append((path + "/", sub))
                continue
            if mode == int(FileMode.LINK):
                raise RiverbeamError(
                    ErrorCode.PATH_ESCAPES_ROOT, "origin tree has a symlink", path=path
                )
            if mode not in _FILE_MODES:
                kind = "submodule" if mode == int(FileMode.COMMIT) else f"mode {mode:o}"
                raise RiverbeamError(
                    ErrorCode.ORIGIN_UNSAFE_ENTRY, f"origin tree has a {kind}", path=path
                )
            _register(seen, path, "file")
            try:
                obj_type, size = repo.odb.read_header(item.id)
            except (KeyError, pygit2.GitError):
                raise RiverbeamError(
                    ErrorCode.ORIGIN_UNSAFE_ENTRY, "origin tree is incomplete", path=path
                ) from None
            if int(obj_type) != int(pygit2.enums.ObjectType.BLOB):
                raise RiverbeamError(
                    ErrorCode.ORIGIN_UNSAFE_ENTRY, "origin tree entry is not a blob", path=path
                )
            if size > limits.max_blob_bytes:
                raise RiverbeamError(
                    ErrorCode.ORIGIN_BLOB_TOO_LARGE,
                    f"origin file larger than {limits.max_blob_bytes} bytes",
                    path=path,
                    size=size,
                )
            total += size
            if total > limits.max_checkout_bytes:
                raise RiverbeamError(
                    ErrorCode.ORIGIN_BLOB_TOO_LARGE,
                    f"origin files add up to more than {limits.max_checkout_bytes} bytes",
                    path=path,
                )
            files.append((path, item.id, mode == int(FileMode.BLOB_EXECUTABLE)))
            if len(files) > limits.max_scan_entries:
                raise RiverbeamError(
                    ErrorCode.GIT_FAILED, f"origin has more than {limits.max_scan_entries} files"
                )
    return files


def _fetch(repo: pygit2.Repository, url: str, branch: str, limits: SandboxLimits) -> None:
    try:
        remote = repo.remotes.create_anonymous(url)
    except pygit2.GitError as exc:
        raise RiverbeamError(ErrorCode.ORIGIN_FETCH_FAILED, f"cannot use origin: {exc}") from None
    if remote.url != url:
        raise RiverbeamError(ErrorCode.INVALID_ORIGIN, "git configuration rewrites the origin URL")
    refspec = f"+refs/heads/{branch}:refs/remotes/origin/{branch}"
    try:
        remote.fetch([refspec], callbacks=_FetchGuard(limits.max_fetch_bytes), proxy=None, depth=0)
    except RiverbeamError:
        raise
    except (pygit2.GitError, OSError) as exc:
        raise RiverbeamError(
            ErrorCode.ORIGIN_FETCH_FAILED, f"fetch failed: {exc}", url=display_path(url)
        ) from None


def clone_base(
    repo: pygit2.Repository,
    root: SandboxRoot,
    *,
    url: str,
    branch: str,
    limits: SandboxLimits,
) -> str | None:
    """Fetch `branch` from `url` and make it the repository's HEAD, files and index.

    The repository must be fresh (HEAD unborn on `branch`). An origin without that branch
    (an empty repository) leaves everything as it was and returns None.

    Returns:
        The id of the commit the workspace now starts from, or None.

    Raises:
        RiverbeamError: 319 fetch failed, 329 origin rewritten by git configuration, and the
            tree refusals of `check_tree`.
    """
    _fetch(repo, url, branch, limits)
    tracking = repo.references.get(f"refs/remotes/origin/{branch}")
    if tracking is None:
        return None
    try:
        commit = tracking.peel(pygit2.Commit)
    except (pygit2.GitError, ValueError, KeyError):
        raise RiverbeamError(
            ErrorCode.ORIGIN_UNSAFE_ENTRY, "origin branch does not point at a commit"
        ) from None
    files = check_tree(repo, commit.tree, limits)
    for path, blob_id, executable in files:
        blob = repo[blob_id]
        assert isinstance(blob, pygit2.Blob)
        root.write(path, blob.data, max_bytes=max(blob.size, 1), executable=executable)
    index = repo.index
    index.read_tree(commit.tree)
    index.write()
    repo.references.create(f"refs/heads/{branch}", commit.id, force=True)
    return str(commit.id)
