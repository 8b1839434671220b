"""SandboxRoot: file access confined to one directory, resolved through directory descriptors.

Every access starts from a descriptor on the root that is opened once, and walks the path one
component at a time with `openat(..., O_NOFOLLOW | O_DIRECTORY)`. A symlink anywhere on the way
fails the call (BEM-305) instead of being followed, so neither a symlink planted in the tree nor
a directory swapped for a symlink between a check and a use can lead outside. Nothing here
compares path strings to decide containment.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal, Self

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._paths import MAX_PATH_BYTES, display_path, parse_path

__all__ = ["FileRead", "SandboxRoot", "ScannedFile", "TreeScan"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO someone planted must not hang the service.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 64 * 1024
MAX_DEPTH = 64
TMP_PREFIX = ".riverbeam-tmp-"

Kind = Literal["file", "dir", "symlink", "other", "missing"]


@dataclass(frozen=True, slots=True)
class FileRead:
    """The first bytes of a file and what is known about the rest."""

    data: bytes
    size: int
    truncated: bool
    executable: bool


@dataclass(frozen=True, slots=True)
class ScannedFile:
    """A regular file found by `SandboxRoot.scan`."""

    path: str
    size: int
    executable: bool
    # Git blob id of the content, when the scan hashed files (None if it changed mid-read).
    blob_id: str | None = None


@dataclass(slots=True)
class TreeScan:
    """The result of a scan: files in git (bytewise) path order."""

    files: list[ScannedFile] = field(default_factory=list)
    truncated: bool = False
    # Entries left out: symlinks, special files, hard-linked files, unusable names, too deep.
    skipped: int = 0
    directories: int = 0


class _Full(Exception):
    pass


def _error(code: ErrorCode, message: str, path: object) -> RiverbeamError:
    return RiverbeamError(code, message, path=display_path(path))


def _io_error(exc: OSError, path: object) -> RiverbeamError:
    # Host paths never go into the message: only the caller's relative path does.
    name = errno.errorcode.get(exc.errno or 0, "EIO")
    return RiverbeamError(ErrorCode.INTERNAL, f"filesystem error ({name})", path=display_path(path))


def _usable_name(name: str) -> bool:
    if name.startswith(TMP_PREFIX):
        return False
    try:
        return parse_path(name) == (name,)
    except RiverbeamError:
        return False


def git_blob_id(fd: int, size: int) -> str | None:
    """The git blob id of an open file's content, streamed; None if its size changed."""
    digest = hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False)
    seen = 0
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            break
        seen += len(chunk)
        if seen > size:
            return None
        digest.update(chunk)
    return digest.hexdigest() if seen == size else None


class SandboxRoot:
    """A directory that confines every path a caller names.

    Args:
        path: the root directory (server configuration, trusted).
        create: create the directory if it does not exist.

    Raises:
        RiverbeamError: BEM-308 if the root does not exist, BEM-309 if it is not a directory.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False) -> None:
        self._path = os.path.abspath(os.fspath(path))
        if create:
            os.makedirs(self._path, mode=0o755, exist_ok=True)
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise RiverbeamError(ErrorCode.PATH_NOT_FOUND, "sandbox root does not exist") from None
        except NotADirectoryError:
            raise RiverbeamError(
                ErrorCode.PATH_WRONG_KIND, "sandbox root is not a directory"
            ) from None
        self._fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)

    @property
    def path(self) -> str:
        """The absolute path of the root (for libgit2, which needs a path)."""
        return self._path

    def close(self) -> None:
        """Release the root descriptor. Idempotent."""
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- walking -------------------------------------------------------------------------

    def _root_fd(self) -> int:
        if not self._finalizer.alive:
            # Only a deleted (or shut down) workspace closes its root.
            raise RiverbeamError(ErrorCode.WORKSPACE_NOT_FOUND, "the workspace was closed")
        return os.dup(self._fd)

    def _classify(self, dir_fd: int, name: str, exc: OSError, path: object) -> RiverbeamError:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            try:
                st = os.lstat(name, dir_fd=dir_fd)
            except FileNotFoundError:
                return _error(ErrorCode.PATH_NOT_FOUND, "no such file or directory", path)
            except OSError as inner:
                return _io_error(inner, path)
            if stat.S_ISLNK(st.st_mode):
                return _error(ErrorCode.PATH_ESCAPES_ROOT, "symlinks are not followed", path)
            return _error(ErrorCode.PATH_WRONG_KIND, "a path component is not a directory", path)
        if exc.errno == errno.ENOENT:
            return _error(ErrorCode.PATH_NOT_FOUND, "no such file or directory", path)
        return _io_error(exc, path)

    def _open_subdir(self, dir_fd: int, name: str, *, create: bool, path: object) -> int:
        for _ in range(3):
            try:
                return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except FileNotFoundError:
                if not create:
                    raise _error(
                        ErrorCode.PATH_NOT_FOUND, "no such file or directory", path
                    ) from None
                try:
                    os.mkdir(name, 0o755, dir_fd=dir_fd)
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise self._classify(dir_fd, name, exc, path) from None
            except OSError as exc:
                raise self._classify(dir_fd, name, exc, path) from None
        raise _error(ErrorCode.PATH_NOT_FOUND, "directory kept disappearing", path)

    def _open_dir(
        self, components: tuple[str, ...], *, create: bool = False, path: object = None
    ) -> int:
        """A new descriptor on the directory named by `components` (the caller closes it)."""
        fd = self._root_fd()
        try:
            for name in components:
                next_fd = self._open_subdir(fd, name, create=create, path=path)
                os.close(fd)
                fd = next_fd
        except BaseException:
            os.close(fd)
            raise
        return fd

    # -- queries -------------------------------------------------------------------------

    def kind(self, path: str) -> Kind:
        """What `path` is, without following a symlink at its end.

        Raises:
            RiverbeamError: for an invalid path, or a symlink or file on the way (305/309).
        """
        components = parse_path(path, allow_root=True)
        if not components:
            return "dir"
        try:
            dir_fd = self._open_dir(components[:-1], path=path)
        except RiverbeamError as err:
            if err.code is ErrorCode.PATH_NOT_FOUND:
                return "missing"
            raise
        try:
            st = os.lstat(components[-1], dir_fd=dir_fd)
        except FileNotFoundError:
            return "missing"
        except OSError as exc:
            raise _io_error(exc, path) from None
        finally:
            os.close(dir_fd)
        if stat.S_ISLNK(st.st_mode):
            return "symlink"
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        return "file" if stat.S_ISREG(st.st_mode) else "other"

    def read(self, path: str, *, limit: int) -> FileRead:
        """Read at most `limit` bytes of a regular file.

        Raises:
            RiverbeamError: path rejections (300-306), 305 symlink, 307 hard link, 308 missing,
                309 not a regular file.
        """
        components = parse_path(path)
        dir_fd = self._open_dir(components[:-1], path=path)
        try:
            return self._read_at(dir_fd, components[-1], limit=limit, path=path)
        finally:
            os.close(dir_fd)

    def _check_regular(self, st: os.stat_result, path: object) -> None:
        if stat.S_ISLNK(st.st_mode):
            raise _error(ErrorCode.PATH_ESCAPES_ROOT, "symlinks are not followed", path)
        if not stat.S_ISREG(st.st_mode):
            raise _error(ErrorCode.PATH_WRONG_KIND, "not a regular file", path)
        if st.st_nlink > 1:
            raise _error(ErrorCode.PATH_HARD_LINK, "file has more than one hard link", path)

    def _read_at(self, dir_fd: int, name: str, *, limit: int, path: object) -> FileRead:
        try:
            # lstat first so a device or FIFO is never even opened.
            self._check_regular(os.lstat(name, dir_fd=dir_fd), path)
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except RiverbeamError:
            raise
        except OSError as exc:
            raise self._classify(dir_fd, name, exc, path) from None
        try:
            st = os.fstat(fd)
            self._check_regular(st, path)
            parts: list[bytes] = []
            wanted = limit + 1
            while wanted > 0:
                chunk = os.read(fd, min(_CHUNK, wanted))
                if not chunk:
                    break
                parts.append(chunk)
                wanted -= len(chunk)
            data = b"".join(parts)
        except OSError as exc:
            raise _io_error(exc, path) from None
        finally:
            os.close(fd)
        truncated = len(data) > limit
        return FileRead(
            data=data[:limit],
            size=max(st.st_size, len(data)),
            truncated=truncated,
            executable=bool(st.st_mode & 0o111),
        )

    # -- changes -------------------------------------------------------------------------

    def write(
        self, path: str, data: bytes, *, max_bytes: int, executable: bool | None = None
    ) -> int:
        """Replace (or create) a regular file atomically, creating parent directories.

        The bytes go to a temporary file created with O_EXCL in the target directory, which
        is then renamed over the target, both relative to the same directory descriptor.

        Args:
            path: relative path of the file.
            data: the whole new content.
            max_bytes: refuse larger content with BEM-314.
            executable: set or clear the executable bits; None keeps the existing file's.

        Returns:
            The number of bytes written.
        """
        if len(data) > max_bytes:
            raise RiverbeamError(
                ErrorCode.FILE_TOO_LARGE,
                f"file larger than {max_bytes} bytes",
                path=display_path(path),
            )
        components = parse_path(path)
        dir_fd = self._open_dir(components[:-1], create=True, path=path)
        try:
            self._write_at(dir_fd, components[-1], data, executable=executable, path=path)
        finally:
            os.close(dir_fd)
        return len(data)

    def _write_at(
        self, dir_fd: int, name: str, data: bytes, *, executable: bool | None, path: object
    ) -> None:
        keep_exec = False
        try:
            existing = os.lstat(name, dir_fd=dir_fd)
        except FileNotFoundError:
            existing = None
        except OSError as exc:
            raise _io_error(exc, path) from None
        if existing is not None:
            if stat.S_ISDIR(existing.st_mode):
                raise _error(ErrorCode.PATH_WRONG_KIND, "a directory is in the way", path)
            self._check_regular(existing, path)
            keep_exec = bool(existing.st_mode & 0o111)
        mode = 0o755 if (keep_exec if executable is None else executable) else 0o644
        tmp = TMP_PREFIX + secrets.token_hex(8)
        try:
            fd = os.open(tmp, _CREATE_FLAGS, mode, dir_fd=dir_fd)
        except OSError as exc:
            raise _io_error(exc, path) from None
        try:
            try:
                os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException as exc:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            if isinstance(exc, IsADirectoryError):
                raise _error(ErrorCode.PATH_WRONG_KIND, "a directory is in the way", path) from None
            if isinstance(exc, OSError):
                raise _io_error(exc, path) from None
            raise

    def remove(self, path: str, *, prune: bool = True) -> bool:
        """Delete a file (or a symlink entry, never its target); prune empty parent directories.

        Returns:
            Whether something was removed.
        """
        components = parse_path(path)
        try:
            dir_fd = self._open_dir(components[:-1], path=path)
        except RiverbeamError as err:
            if err.code is ErrorCode.PATH_NOT_FOUND:
                return False
            raise
        try:
            st = os.lstat(components[-1], dir_fd=dir_fd)
            if stat.S_ISDIR(st.st_mode):
                raise _error(ErrorCode.PATH_WRONG_KIND, "is a directory", path)
            os.unlink(components[-1], dir_fd=dir_fd)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _io_error(exc, path) from None
        finally:
            os.close(dir_fd)
        if prune:
            self._prune(components[:-1])
        return True

    def _prune(self, components: tuple[str, ...]) -> None:
        for depth in range(len(components), 0, -1):
            try:
                parent = self._open_dir(components[: depth - 1])
            except RiverbeamError:
                return
            try:
                os.rmdir(components[depth - 1], dir_fd=parent)
            except OSError:
                return
            finally:
                os.close(parent)

    # -- listing -------------------------------------------------------------------------

    def scan(self, path: str = "", *, max_entries: int, hash_files: bool = False) -> TreeScan:
        """Regular files under a directory, recursively, never following a symlink.

        Skips the `.git` directory in every spelling, symlinks, special files, hard-linked
        files and names no tool could address; counts what it skipped.

        Args:
            path: the directory to scan ("" for the root).
            max_entries: stop after this many files and mark the result truncated.
            hash_files: compute each file's git blob id (streamed).
        """
        components = parse_path(path, allow_root=True)
        fd = self._open_dir(components, path=path)
        result = TreeScan()
        try:
            self._scan_dir(fd, list(components), 0, result, max_entries, hash_files)
        except _Full:
            result.truncated = True
        finally:
            os.close(fd)
        result.files.sort(key=lambda f: f.path.encode("utf-8"))
        return result

    def _scan_dir(
        self,
        fd: int,
        prefix: list[str],
        depth: int,
        out: TreeScan,
        max_entries: int,
        hash_files: bool,
    ) -> None:
        for name, is_dir, st in self._entries(fd):
            rel = "/".join([*prefix, name])
            if not _usable_name(name) or len(rel.encode("utf-8")) > MAX_PATH_BYTES:
                out.skipped += 1
                continue
            if is_dir:
                out.directories += 1
                if out.directories > max_entries:
                    raise _Full
                if depth + 1 >= MAX_DEPTH:
                    out.skipped += 1
                    continue
                try:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    out.skipped += 1
                    continue
                try:
                    self._scan_dir(sub, [*prefix, name], depth + 1, out, max_entries, hash_files)
                finally:
                    os.close(sub)
                continue
            if st is None or not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                out.skipped += 1
                continue
            if len(out.files) >= max_entries:
                raise _Full
            blob_id = self._hash_at(fd, name) if hash_files else None
            out.files.append(ScannedFile(rel, st.st_size, bool(st.st_mode & 0o111), blob_id))

    @staticmethod
    def _entries(fd: int) -> Iterator[tuple[str, bool, os.stat_result | None]]:
        with os.scandir(fd) as it:
            listed = sorted(it, key=lambda e: e.name)
        for entry in listed:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                st = None if is_dir else entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield entry.name, is_dir, st

    @staticmethod
    def _hash_at(dir_fd: int, name: str) -> str | None:
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                return None
            return git_blob_id(fd, st.st_size)
        except OSError:
            return None
        finally:
            os.close(fd)
