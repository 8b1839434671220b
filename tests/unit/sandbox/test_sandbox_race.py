"""A directory swapped for a symlink to outside, over and over, while reads and writes loop.

The swap is atomic (renameat2 RENAME_EXCHANGE), so `d` is always either the real directory or a
symlink to the directory holding the canary. Every call must either work inside the root or
fail with a catalog code; the canary is never returned, changed, or joined by new files.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from sandbox_kit import CANARY_TEXT, GitSetup, Jail

from riverbeam.core.errors import RiverbeamError, by_code

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_LIBC = ctypes.CDLL(None, use_errno=True)
_HAS_EXCHANGE = hasattr(_LIBC, "renameat2")

pytestmark = pytest.mark.skipif(not _HAS_EXCHANGE, reason="renameat2 not available")

ALLOWED_FAILURES = {"BEM-305", "BEM-308", "BEM-309"}
RUN_SECONDS = 1.0


def _exchange(a: Path, b: Path) -> None:
    if _LIBC.renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class Swapper(threading.Thread):
    """Exchanges `target` (a directory) and `decoy` (a symlink to outside) until stopped."""

    def __init__(self, target: Path, decoy: Path) -> None:
        super().__init__(daemon=True)
        self.target = target
        self.decoy = decoy
        self.stop = threading.Event()
        self.swaps = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                _exchange(self.target, self.decoy)
                self.swaps += 1
        except BaseException as exc:  # surfaced by the test
            self.error = exc

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=5)
        assert self.error is None, self.error
        if self.target.is_symlink():
            _exchange(self.target, self.decoy)
        assert not self.target.is_symlink()


def _plant(root_dir: Path, outside: Path) -> Swapper:
    real = root_dir / "d"
    real.mkdir()
    (real / "secret.txt").write_bytes(b"inside\n")
    (real / "sub").mkdir()
    (real / "sub" / "note.txt").write_bytes(b"inside note\n")
    # The decoy lives outside the root too, so the root never holds a second way in.
    decoy = outside.parent / "decoy"
    os.symlink(outside, decoy)
    return Swapper(real, decoy)


def _outcome(call: object) -> str:
    try:
        result = call()  # type: ignore[operator]
    except RiverbeamError as err:
        assert by_code(err.bem) is not None
        assert err.bem in ALLOWED_FAILURES, err
        assert CANARY_TEXT.decode() not in str(err)
        return err.bem
    data = getattr(result, "data", None) or getattr(result, "text", None)
    if isinstance(data, str):
        data = data.encode()
    if data is not None:
        assert CANARY_TEXT not in data
        assert data.startswith((b"inside", b"written"))
    return "ok"


def test_reads_and_writes_during_symlink_swaps(jail: Jail) -> None:
    before = jail.outside_state()
    swapper = _plant(jail.root_dir, jail.outside)
    root = jail.root
    seen: Counter[str] = Counter()
    swapper.start()
    try:
        deadline = time.monotonic() + RUN_SECONDS
        i = 0
        while time.monotonic() < deadline:
            i += 1
            seen[_outcome(lambda: root.read("d/secret.txt", limit=4096))] += 1
            seen[_outcome(lambda: root.read("d/sub/note.txt", limit=4096))] += 1
            seen[
                _outcome(lambda n=i: root.write("d/secret.txt", b"written %d\n" % n, max_bytes=64))
            ] += 1
            seen[
                _outcome(
                    lambda n=i: root.write(f"d/sub/new{n % 7}.txt", b"written\n", max_bytes=64)
                )
            ] += 1
            listing = None
            try:
                listing = root.scan("d", max_entries=100)
            except RiverbeamError as err:
                assert err.bem in ALLOWED_FAILURES
            if listing is not None:
                assert all(f.path.startswith("d/") for f in listing.files)
                assert "d/dir" not in {f.path.rsplit("/", 1)[0] for f in listing.files}
    finally:
        swapper.finish()
    assert swapper.swaps > 50
    assert seen["ok"] > 0 and seen["BEM-305"] > 0, seen
    jail.assert_canary_intact(before)
    assert sorted(os.listdir(jail.root_dir / "d")) == ["secret.txt", "sub"]


def test_git_operations_during_symlink_swaps(git: GitSetup) -> None:
    outside = git.outside
    before = {p.name: p.read_bytes() for p in outside.iterdir() if p.is_file()}
    tree = git.tree
    swapper = _plant(git.work_dir, outside)
    tree.add("d")
    tree.commit("add d")
    swapper.start()
    seen: Counter[str] = Counter()
    try:
        deadline = time.monotonic() + RUN_SECONDS
        while time.monotonic() < deadline:
            seen[_outcome(lambda: tree.read_file("d/secret.txt"))] += 1
            seen[_outcome(lambda: tree.write_file("d/secret.txt", "written\n"))] += 1
            seen[_outcome(lambda: tree.add("d"))] += 1
            status = tree.status()
            assert all(e.path.startswith(("d/", "README.md")) for e in status.entries)
            listing = tree.list_tree("")
            assert not any("secret.txt" in p and not p.startswith("d/") for p in listing.files)
    finally:
        swapper.finish()
    assert swapper.swaps > 20
    assert seen["ok"] > 0 and seen["BEM-305"] > 0, seen
    after = {p.name: p.read_bytes() for p in outside.iterdir() if p.is_file()}
    assert after == before
    # Whatever was staged came from inside the root.
    tree.add("")
    diff = tree.diff()
    assert CANARY_TEXT.decode() not in diff.staged + diff.unstaged
