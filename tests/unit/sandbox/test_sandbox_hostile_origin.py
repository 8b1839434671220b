"""A workspace made from an origin treats the origin as hostile input.

Each test builds an origin in the test (pygit2, with raw tree objects where libgit2's tree
builder would refuse the name), then asks `WorkspaceManager.ensure` for a workspace from it.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode, ObjectType

from riverbeam.core.errors import RiverbeamError
from riverbeam.sandbox import SandboxLimits, WorkspaceConfig, WorkspaceManager

SIG = pygit2.Signature("Origin", "origin@example.com")
BRANCH = "riverbeam/s-hostile"


def raw_tree(repo: pygit2.Repository, entries: list[tuple[int, bytes, pygit2.Oid]]) -> pygit2.Oid:
    """A tree object written byte for byte: names and modes libgit2 would never build."""
    body = b"".join(
        f"{mode:o}".encode() + b" " + name + b"\0" + oid.raw for mode, name, oid in entries
    )
    return repo.odb.write(ObjectType.TREE, body)


def blob(repo: pygit2.Repository, data: bytes) -> pygit2.Oid:
    return repo.create_blob(data)


def nest(repo: pygit2.Repository, path: bytes, leaf: pygit2.Oid, mode: int) -> pygit2.Oid:
    """A tree holding `leaf` at `path` (components split on b"/")."""
    *dirs, name = path.split(b"/")
    oid = raw_tree(repo, [(mode, name, leaf)])
    for d in reversed(dirs):
        oid = raw_tree(repo, [(int(FileMode.TREE), d, oid)])
    return oid


def commit_tree(repo: pygit2.Repository, tree: pygit2.Oid) -> pygit2.Oid:
    return repo.create_commit("refs/heads/main", SIG, SIG, "origin content\n", tree, [])


@pytest.fixture
def origin(tmp_path: Path) -> pygit2.Repository:
    (tmp_path / "remotes").mkdir()
    return pygit2.init_repository(str(tmp_path / "remotes" / "origin.git"), bare=True)


def manager_for(tmp_path: Path, **limits: int) -> WorkspaceManager:
    return WorkspaceManager(
        WorkspaceConfig(
            base_dir=tmp_path / "ws",
            origin_allowlist=(f"{tmp_path / 'remotes'}/",),
            limits=SandboxLimits(**limits),
        )
    )


async def refused(tmp_path: Path, origin: pygit2.Repository, **limits: int) -> str:
    manager = manager_for(tmp_path, **limits)
    try:
        with pytest.raises(RiverbeamError) as info:
            await manager.ensure("s-hostile", branch=BRANCH, origin=origin.path.rstrip("/"))
        # Nothing is left behind: no workspace, no half-built copy.
        assert (await manager.list()).workspaces == []
        assert os.listdir(tmp_path / "ws") == []
        return info.value.bem
    finally:
        await manager.aclose()


GIT_SPELLINGS = [
    b".git/hooks/post-checkout",
    b".git/config",
    b".GIT/config",
    b".Git/hooks/pre-commit",
    b"sub/.git/config",
    b".git /config",
    b".git./config",
    b"git~1/config",
    b"GIT~1/config",
    ".\uff47it/config".encode(),  # fullwidth g
    b".git::$INDEX_ALLOCATION/config",
]


@pytest.mark.parametrize("path", GIT_SPELLINGS)
async def test_dot_git_in_any_spelling_is_refused(
    tmp_path: Path, origin: pygit2.Repository, path: bytes
) -> None:
    commit_tree(origin, nest(origin, path, blob(origin, b"#!/bin/sh\ntouch pwned\n"), 0o100755))
    assert await refused(tmp_path, origin) == "BEM-306"


@pytest.mark.parametrize(
    "name",
    [".git\u200c".encode(), ".git\u200b".encode(), "\u200b.git".encode(), ".gi\u200dt".encode()],
)
async def test_dot_git_with_invisible_characters_is_refused(
    tmp_path: Path, origin: pygit2.Repository, name: bytes
) -> None:
    commit_tree(origin, nest(origin, name + b"/config", blob(origin, b"x"), 0o100644))
    assert await refused(tmp_path, origin) in {"BEM-302", "BEM-306"}


@pytest.mark.parametrize(
    "names",
    [
        [b"README", b"readme"],
        ["caf\u00e9".encode(), unicodedata.normalize("NFD", "caf\u00e9").encode()],
        [b"K", "\u212a".encode()],  # Kelvin sign folds to k
        [b"stra\xc3\x9fe", b"STRASSE"],
    ],
)
async def test_colliding_file_names_are_refused(
    tmp_path: Path, origin: pygit2.Repository, names: list[bytes]
) -> None:
    data = blob(origin, b"one\n")
    entries = sorted((0o100644, n, data) for n in names)
    commit_tree(origin, raw_tree(origin, entries))
    assert await refused(tmp_path, origin) == "BEM-316"


async def test_colliding_directories_and_a_file_shadowing_a_directory_are_refused(
    tmp_path: Path, origin: pygit2.Repository
) -> None:
    data = blob(origin, b"x\n")
    docs_a = raw_tree(origin, [(0o100644, b"a", data)])
    docs_b = raw_tree(origin, [(0o100644, b"b", data)])
    commit_tree(origin, raw_tree(origin, [(0o40000, b"Docs", docs_a), (0o40000, b"docs", docs_b)]))
    assert await refused(tmp_path, origin) == "BEM-316"

    commit = origin.create_commit(
        None,
        SIG,
        SIG,
        "file and dir\n",
        raw_tree(origin, [(0o40000, b"A", docs_a), (0o100644, b"a", data)]),
        [],
    )
    origin.references["refs/heads/main"].set_target(commit)
    assert await refused(tmp_path, origin) == "BEM-316"


async def test_a_duplicated_entry_is_refused(tmp_path: Path, origin: pygit2.Repository) -> None:
    one, two = blob(origin, b"one\n"), blob(origin, b"two\n")
    commit_tree(origin, raw_tree(origin, [(0o100644, b"a", one), (0o100644, b"a", two)]))
    assert await refused(tmp_path, origin) == "BEM-316"


async def test_symlink_entries_are_refused(tmp_path: Path, origin: pygit2.Repository) -> None:
    target = blob(origin, b"/etc/passwd")
    commit_tree(origin, nest(origin, b"docs/passwd", target, int(FileMode.LINK)))
    assert await refused(tmp_path, origin) == "BEM-305"


async def test_submodules_are_refused(tmp_path: Path, origin: pygit2.Repository) -> None:
    gitmodules = blob(origin, b'[submodule "evil"]\n\tpath = evil\n\turl = /tmp/evil.git\n')
    fake_commit = pygit2.Oid(hex="1" * 40)
    commit_tree(
        origin,
        raw_tree(
            origin,
            [(0o100644, b".gitmodules", gitmodules), (int(FileMode.COMMIT), b"evil", fake_commit)],
        ),
    )
    assert await refused(tmp_path, origin) == "BEM-317"


async def test_a_name_holding_a_slash_is_refused(tmp_path: Path, origin: pygit2.Repository) -> None:
    commit_tree(origin, raw_tree(origin, [(0o100644, b"a/b", blob(origin, b"x"))]))
    assert await refused(tmp_path, origin) in {"BEM-317"}


@pytest.mark.parametrize("name", [b"..", b".", b"a\\b", b"a\x01b"])
async def test_names_no_tool_could_address_are_refused(
    tmp_path: Path, origin: pygit2.Repository, name: bytes
) -> None:
    commit_tree(origin, raw_tree(origin, [(0o100644, name, blob(origin, b"x"))]))
    assert (await refused(tmp_path, origin)).startswith("BEM-30")


async def test_blob_sizes_are_bounded(tmp_path: Path, origin: pygit2.Repository) -> None:
    commit_tree(origin, raw_tree(origin, [(0o100644, b"big.bin", blob(origin, b"\0" * 5000))]))
    assert await refused(tmp_path, origin, max_blob_bytes=4096) == "BEM-318"


async def test_the_fetch_is_bounded(tmp_path: Path, origin: pygit2.Repository) -> None:
    noise = os.urandom(200_000)
    commit_tree(origin, raw_tree(origin, [(0o100644, b"noise.bin", blob(origin, noise))]))
    assert await refused(tmp_path, origin, max_fetch_bytes=50_000) == "BEM-318"


@pytest.fixture
def hostile_global_config(tmp_path: Path) -> Iterator[Path]:
    """A global git config whose filter drivers would leave a marker file if they ever ran."""
    marker = tmp_path / "filter-ran"
    home = tmp_path / "home"
    home.mkdir()
    command = f"sh -c 'touch {marker}; cat'"
    (home / ".gitconfig").write_text(
        '[filter "lfs"]\n'
        f"\tsmudge = {command}\n\tclean = {command}\n\tprocess = {command}\n\trequired = true\n"
        '[filter "evil"]\n'
        f"\tsmudge = {command}\n\tclean = {command}\n"
        "[core]\n\tautocrlf = true\n\thooksPath = /tmp\n"
    )
    level = pygit2.enums.ConfigLevel.GLOBAL
    previous = pygit2.settings.search_path[level]
    pygit2.settings.search_path[level] = str(home)
    try:
        yield marker
    finally:
        pygit2.settings.search_path[level] = previous


async def test_files_are_written_verbatim_no_filter_hook_lfs_or_eol_runs(
    tmp_path: Path, origin: pygit2.Repository, hostile_global_config: Path
) -> None:
    contents = {
        b".gitattributes": b"* text eol=crlf ident\n*.bin filter=lfs diff=lfs merge=lfs -text\n"
        b"*.md filter=evil\n",
        b".gitmodules": b'[submodule "x"]\n\tpath = x\n\turl = /tmp/x.git\n',
        b".lfsconfig": b"[lfs]\n\turl = http://127.0.0.1:9/\n",
        b"ident.txt": b"$Id$\nline one\nline two\n",
        b"notes.md": b"# Notes\n\nLF only\n",
        b"model.bin": b"version https://git-lfs.github.com/spec/v1\noid sha256:"
        + b"0" * 64
        + b"\nsize 12345\n",
    }
    entries = sorted((0o100644, name, blob(origin, data)) for name, data in contents.items())
    script = blob(origin, b"#!/bin/sh\necho hi\n")
    tools = raw_tree(origin, [(0o100755, b"run.sh", script)])
    commit = commit_tree(origin, raw_tree(origin, sorted([*entries, (0o40000, b"tools", tools)])))
    # The origin's own hooks never travel in a fetch.
    hook = Path(origin.path) / "hooks" / "post-checkout"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {hostile_global_config}\n")
    hook.chmod(0o755)

    manager = manager_for(tmp_path)
    try:
        ensured = await manager.ensure("s-hostile", branch=BRANCH, origin=origin.path.rstrip("/"))
        assert ensured.created
        assert ensured.info.branch == BRANCH and ensured.info.head == str(commit)
        tree_dir = tmp_path / "ws" / "s-hostile" / "tree"
        for name, data in contents.items():
            assert (tree_dir / name.decode()).read_bytes() == data, name
        run_sh = tree_dir / "tools" / "run.sh"
        assert run_sh.read_bytes() == b"#!/bin/sh\necho hi\n"
        assert os.stat(run_sh).st_mode & stat.S_IXUSR
        assert hostile_global_config.name not in os.listdir(hostile_global_config.parent)
        git_dir = tree_dir / ".git"
        hooks = os.listdir(git_dir / "hooks") if "hooks" in os.listdir(git_dir) else []
        assert [h for h in hooks if not h.endswith(".sample")] == []
        tree = await manager.get("s-hostile")
        status = await tree.git_status()
        assert status.clean and status.branch == BRANCH
        assert [e.id for e in await tree.git_log(5)] == [str(commit)]
        assert not (tree_dir / "x").exists()  # the submodule was never cloned
    finally:
        await manager.aclose()


async def test_the_whole_checkout_is_bounded(tmp_path: Path, origin: pygit2.Repository) -> None:
    # Well-compressed blobs: a small fetch that would expand to more than the bound.
    entries = [(0o100644, f"f{n}.txt".encode(), blob(origin, bytes([n]) * 3000)) for n in range(4)]
    commit_tree(origin, raw_tree(origin, entries))
    assert await refused(tmp_path, origin, max_checkout_bytes=10_000) == "BEM-318"
