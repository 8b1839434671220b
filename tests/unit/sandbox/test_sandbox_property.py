"""Property: for any path, every SandboxRoot call stays inside the root or fails with a catalog code."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_kit import CANARY_TEXT, Jail

from riverbeam.core.errors import RiverbeamError, by_code
from riverbeam.sandbox import SandboxRoot, parse_path

# Path fragments. Structure (separators, names of planted files and links, parent steps)
# is drawn most often, so generated paths reach real files and links as well as the
# forbidden characters and git aliases.
STRUCTURE = [
    "/",
    "/",
    "/",
    ".",
    "..",
    "docs",
    "readme.md",
    "a",
    "secret.txt",
    "dir",
    "new",
    "link_out",
    "link_in",
    "link_file",
    "link_rel",
    "dangling",
    "loop",
    "hard.txt",
    "fifo",
]
HOSTILE = [
    "...",
    " ",
    "~",
    ":",
    "\\",
    "\x00",
    "\n",
    "\x7f",
    "\u00a0",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\udcff",
    "\uff0e",
    "\uff47\uff49\uff54",
    ".git",
    ".GIT",
    ".git.",
    "git~1",
    "outside",
    "\u00e9",
    "C:",
    "x" * 120,
    "\u00e9" * 70,
]
piece = st.one_of(
    st.sampled_from(STRUCTURE),
    st.sampled_from(STRUCTURE),
    st.sampled_from(HOSTILE),
    st.text(max_size=3),
)
paths = st.lists(piece, max_size=8).map("".join)
operations = st.sampled_from(["read", "write", "kind", "scan", "remove"])


def plant(jail: Jail) -> None:
    """(Re)create the hazards inside the root; removes in earlier examples may have taken some."""
    r = jail.root_dir
    (r / "docs").mkdir(exist_ok=True)
    for name in ("docs/readme.md", "docs/a", "a", "readme.md"):
        if not os.path.lexists(r / name):
            (r / name).write_text("inside\n")
    links = {
        "link_out": str(jail.outside),
        "link_file": str(jail.canary),
        "link_rel": "../outside",
        "link_in": "docs",
        "dangling": "/nonexistent/x",
        "loop": "loop",
    }
    for name, target in links.items():
        if not os.path.lexists(r / name):
            os.symlink(target, r / name)
    if not os.path.lexists(r / "hard.txt"):
        os.link(jail.canary, r / "hard.txt")
    if not os.path.lexists(r / "fifo"):
        os.mkfifo(r / "fifo")
    (r / ".git").mkdir(exist_ok=True)


def lexical_target(root: Path, path: str) -> Path:
    """Where a successful call must have acted: the parsed path under the root, no symlinks on it."""
    target = root.joinpath(*parse_path(path, allow_root=True))
    current = root
    for part in target.relative_to(root).parts[:-1]:
        current = current / part
        assert not current.is_symlink(), f"{path!r} went through symlink {current}"
    return target


CALLS_PER_EXAMPLE = 5


@settings(
    max_examples=600,  # x5 calls each: 3000 generated paths
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    calls=st.lists(
        st.tuples(paths, operations), min_size=CALLS_PER_EXAMPLE, max_size=CALLS_PER_EXAMPLE
    )
)
def test_every_call_stays_inside_or_fails_with_a_code(
    jail: Jail, calls: list[tuple[str, str]]
) -> None:
    plant(jail)
    before = jail.outside_state()
    for path, op in calls:
        check_one(jail, path, op)
    jail.assert_canary_intact(before)


def check_one(jail: Jail, path: str, op: str) -> None:
    root: SandboxRoot = jail.root
    try:
        if op == "read":
            result = root.read(path, limit=4096)
            assert CANARY_TEXT not in result.data
            target = lexical_target(jail.root_dir, path)
            assert stat.S_ISREG(os.lstat(target).st_mode)
            assert target.read_bytes()[:4096] == result.data
        elif op == "write":
            root.write(path, b"written\n", max_bytes=64)
            target = lexical_target(jail.root_dir, path)
            assert not target.is_symlink()
            assert target.read_bytes() == b"written\n"
            assert os.path.realpath(target).startswith(str(jail.root_dir) + os.sep)
        elif op == "kind":
            kind = root.kind(path)
            if kind != "missing":
                lexical_target(jail.root_dir, path)
        elif op == "scan":
            scan = root.scan(path, max_entries=1000)
            for item in scan.files:
                target = lexical_target(jail.root_dir, item.path)
                assert not target.is_symlink() and target.is_file()
        else:
            if root.remove(path, prune=False):
                lexical_target(jail.root_dir, path)
    except RiverbeamError as err:
        assert by_code(err.bem) is not None, err
        assert err.bem.startswith("BEM-3") or err.bem == "BEM-002", err
