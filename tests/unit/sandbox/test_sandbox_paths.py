"""The hostile-path corpus: every path an attacker might send, and the code it must fail with."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_kit import CANARY_TEXT, Jail

from riverbeam.core.errors import RiverbeamError
from riverbeam.sandbox import SandboxRoot, is_git_alias, parse_path

# Rejected before any filesystem access, whatever the operation.
PARSE_CORPUS: list[tuple[object, str]] = [
    # BEM-300 absolute
    ("/etc/passwd", "BEM-300"),
    ("/", "BEM-300"),
    ("//etc/passwd", "BEM-300"),
    ("/root/../etc", "BEM-300"),
    ("/proc/self/environ", "BEM-300"),
    ("/dev/zero", "BEM-300"),
    ("C:/Windows/win.ini", "BEM-300"),
    ("c:secret", "BEM-300"),
    # BEM-301 parent components and what lenient systems read as one
    ("..", "BEM-301"),
    ("../outside/secret.txt", "BEM-301"),
    ("docs/../../outside/secret.txt", "BEM-301"),
    ("a/b/../../..", "BEM-301"),
    ("docs/..", "BEM-301"),
    ("./..", "BEM-301"),
    ("...", "BEM-301"),
    (".. ", "BEM-301"),
    ("docs/.../x", "BEM-301"),
    ("\uff0e\uff0e/outside/secret.txt", "BEM-301"),
    ("\u2024\u2024/outside/secret.txt", "BEM-301"),
    ("\ufe52\ufe52/x", "BEM-301"),
    # BEM-302 forbidden characters
    ("a\x00b", "BEM-302"),
    ("docs/readme.md\x00.png", "BEM-302"),
    ("a\nb", "BEM-302"),
    ("a\rb", "BEM-302"),
    ("a\tb", "BEM-302"),
    ("a\x1bb", "BEM-302"),
    ("a\x7fb", "BEM-302"),
    ("x\x85y", "BEM-302"),
    ("..\\outside\\secret.txt", "BEM-302"),
    ("docs\\readme.md", "BEM-302"),
    ("a\u200bb", "BEM-302"),
    ("\u200b", "BEM-302"),
    (".gi\u200bt/config", "BEM-302"),
    ("a\u200db", "BEM-302"),
    ("a\u2060b", "BEM-302"),
    ("a\u202eb", "BEM-302"),
    ("a\ufeffb", "BEM-302"),
    ("a\u00a0b", "BEM-302"),
    ("a\u3000b", "BEM-302"),
    ("a\u2028b", "BEM-302"),
    ("\udcff", "BEM-302"),
    ("a\u3164b", "BEM-302"),
    ("\u2800", "BEM-302"),
    ("file\ufe0f.txt", "BEM-302"),
    ("a\U000e0041b", "BEM-302"),
    ("a\u180eb", "BEM-302"),
    ("\ue000", "BEM-302"),
    ("a\u034fb", "BEM-302"),
    (".git\u00a0/config", "BEM-302"),
    # BEM-303 empty
    ("", "BEM-303"),
    ("docs//readme.md", "BEM-303"),
    ("docs/", "BEM-303"),
    ("./", "BEM-303"),
    (" ", "BEM-303"),
    ("a/ /b", "BEM-303"),
    (". .", "BEM-303"),
    ("./././.", "BEM-303"),
    # BEM-304 too long
    ("a" * 256, "BEM-304"),
    ("x/" * 2048 + "x", "BEM-304"),
    ("\u00e9" * 128, "BEM-304"),
    ("d/" + "a" * 300, "BEM-304"),
    ("a" * 100_000, "BEM-304"),
    # BEM-306 the git directory, in every spelling
    (".git", "BEM-306"),
    (".git/config", "BEM-306"),
    (".git/hooks/pre-commit", "BEM-306"),
    (".GIT/config", "BEM-306"),
    (".Git", "BEM-306"),
    (".git /config", "BEM-306"),
    (".git./config", "BEM-306"),
    (".git . ./HEAD", "BEM-306"),
    ("git~1/config", "BEM-306"),
    ("GIT~1", "BEM-306"),
    ("sub/.git/hooks/pre-commit", "BEM-306"),
    ("docs/.git", "BEM-306"),
    (".git::$INDEX_ALLOCATION/config", "BEM-306"),
    ("\uff0egit/config", "BEM-306"),
    ("\uff0e\uff47\uff49\uff54/config", "BEM-306"),
    (".\uff27\uff29\uff34", "BEM-306"),
    ("./.git/config", "BEM-306"),
    # BEM-002 not a string at all
    (None, "BEM-002"),
    (123, "BEM-002"),
    (b"docs/readme.md", "BEM-002"),
    (["docs", "readme.md"], "BEM-002"),
]

# Valid as strings, refused once the filesystem is consulted (see the `planted` fixture).
READ_CORPUS: list[tuple[str, str]] = [
    ("link_out/secret.txt", "BEM-305"),
    ("link_out", "BEM-305"),
    ("link_file", "BEM-305"),
    ("link_rel/secret.txt", "BEM-305"),
    ("link_rel/dir/secret.txt", "BEM-305"),
    ("link_abs_dir/secret.txt", "BEM-305"),
    ("link_in/readme.md", "BEM-305"),
    ("docs/link_up/outside/secret.txt", "BEM-305"),
    ("dangling", "BEM-305"),
    ("loop", "BEM-305"),
    ("loop/x", "BEM-305"),
    ("hard.txt", "BEM-307"),
    ("h1", "BEM-307"),
    ("fifo", "BEM-309"),
    ("docs", "BEM-309"),
    ("emptydir", "BEM-309"),
    ("file.txt/x", "BEM-309"),
    ("missing.txt", "BEM-308"),
    ("docs/missing/x", "BEM-308"),
]

WRITE_CORPUS: list[tuple[str, str]] = [
    ("link_out/new.txt", "BEM-305"),
    ("link_out/secret.txt", "BEM-305"),
    ("link_out/sub/new.txt", "BEM-305"),
    ("link_file", "BEM-305"),
    ("link_rel/pwn.txt", "BEM-305"),
    ("link_in/new.txt", "BEM-305"),
    ("dangling", "BEM-305"),
    ("loop", "BEM-305"),
    ("hard.txt", "BEM-307"),
    ("h2", "BEM-307"),
    ("docs", "BEM-309"),
    ("file.txt/x", "BEM-309"),
    ("fifo", "BEM-309"),
]

LIST_CORPUS: list[tuple[str, str]] = [
    ("link_out", "BEM-305"),
    ("link_rel/dir", "BEM-305"),
    ("link_in", "BEM-305"),
    ("file.txt", "BEM-309"),
    ("missing", "BEM-308"),
]


ROOT_FORMS = ("", "./././.")


def test_corpus_is_large_enough() -> None:
    assert len(PARSE_CORPUS) + len(READ_CORPUS) + len(WRITE_CORPUS) + len(LIST_CORPUS) >= 60
    assert len(PARSE_CORPUS) >= 60


@pytest.fixture
def planted(jail: Jail) -> Jail:
    """A root with symlinks, hard links, a FIFO and a .git directory planted in it."""
    r = jail.root_dir
    (r / "docs").mkdir()
    (r / "docs" / "readme.md").write_text("hello\n")
    (r / "file.txt").write_text("file\n")
    (r / "emptydir").mkdir()
    (r / ".git").mkdir()
    (r / ".git" / "config").write_text("[core]\n")
    (r / "sub" / ".git" / "hooks").mkdir(parents=True)
    os.symlink(jail.outside, r / "link_out")
    os.symlink(jail.canary, r / "link_file")
    os.symlink("../outside", r / "link_rel")
    os.symlink(str(jail.outside), r / "link_abs_dir")
    os.symlink("docs", r / "link_in")
    os.symlink("../..", r / "docs" / "link_up")
    os.symlink("/nonexistent/target", r / "dangling")
    os.symlink("loop", r / "loop")
    os.link(jail.canary, r / "hard.txt")
    (r / "h1").write_text("twin\n")
    os.link(r / "h1", r / "h2")
    os.mkfifo(r / "fifo")
    return jail


@pytest.mark.parametrize(
    ("path", "code"), PARSE_CORPUS, ids=[repr(p)[:40] for p, _ in PARSE_CORPUS]
)
def test_parse_corpus_fails_everywhere(planted: Jail, path: object, code: str) -> None:
    before = planted.outside_state()
    inside = sorted(os.listdir(planted.root_dir))
    root = planted.root
    calls = [
        lambda: root.read(path, limit=1024),  # type: ignore[arg-type]
        lambda: root.write(path, b"pwned", max_bytes=1024),  # type: ignore[arg-type]
        lambda: root.remove(path),  # type: ignore[arg-type]
    ]
    if path not in ROOT_FORMS:  # these name the root itself where a directory is wanted
        calls.append(lambda: root.kind(path))  # type: ignore[arg-type]
        calls.append(lambda: root.scan(path, max_entries=10))  # type: ignore[arg-type]
    for call in calls:
        with pytest.raises(RiverbeamError) as info:
            call()
        assert info.value.bem == code
    planted.assert_canary_intact(before)
    assert sorted(os.listdir(planted.root_dir)) == inside


@pytest.mark.parametrize(("path", "code"), READ_CORPUS)
def test_read_corpus(planted: Jail, path: str, code: str) -> None:
    before = planted.outside_state()
    with pytest.raises(RiverbeamError) as info:
        planted.root.read(path, limit=1 << 20)
    assert info.value.bem == code
    planted.assert_canary_intact(before)


@pytest.mark.parametrize(("path", "code"), WRITE_CORPUS)
def test_write_corpus(planted: Jail, path: str, code: str) -> None:
    before = planted.outside_state()
    with pytest.raises(RiverbeamError) as info:
        planted.root.write(path, b"pwned\n", max_bytes=1024)
    assert info.value.bem == code
    planted.assert_canary_intact(before)
    leftovers = [p for p in os.listdir(planted.root_dir) if p.startswith(".riverbeam-tmp-")]
    assert leftovers == []


@pytest.mark.parametrize(("path", "code"), LIST_CORPUS)
def test_list_corpus(planted: Jail, path: str, code: str) -> None:
    with pytest.raises(RiverbeamError) as info:
        planted.root.scan(path, max_entries=100)
    assert info.value.bem == code


def test_write_too_large(planted: Jail) -> None:
    with pytest.raises(RiverbeamError) as info:
        planted.root.write("big.txt", b"x" * 1025, max_bytes=1024)
    assert info.value.bem == "BEM-314"
    assert not (planted.root_dir / "big.txt").exists()


def test_listing_never_follows_or_shows_planted_entries(planted: Jail) -> None:
    scan = planted.root.scan("", max_entries=100)
    assert [f.path for f in scan.files] == ["docs/readme.md", "file.txt"]
    assert scan.skipped >= 8  # links, hard links, fifo, .git


def test_hard_linked_canary_is_never_read(planted: Jail) -> None:
    with pytest.raises(RiverbeamError) as info:
        planted.root.read("hard.txt", limit=1 << 20)
    assert info.value.bem == "BEM-307"
    assert CANARY_TEXT not in str(info.value).encode()


def test_root_itself_is_configuration(tmp_path: Path) -> None:
    with pytest.raises(RiverbeamError) as info:
        SandboxRoot(tmp_path / "nope")
    assert info.value.bem == "BEM-308"
    (tmp_path / "f").write_text("x")
    with pytest.raises(RiverbeamError) as info:
        SandboxRoot(tmp_path / "f")
    assert info.value.bem == "BEM-309"
    with SandboxRoot(tmp_path / "made", create=True) as root:
        assert root.kind("") == "dir"


@pytest.mark.parametrize(
    "name",
    [".git", ".GIT", ".git ", ".git.", ".git. .", "git~1", "GIT~12", ".git::$DATA", "\uff0egit"],
)
def test_git_aliases(name: str) -> None:
    assert is_git_alias(name)


@pytest.mark.parametrize(
    "name", [".gitignore", ".github", "git", "gitx", ".gitmodules", "my.git", "git~"]
)
def test_not_git_aliases(name: str) -> None:
    assert not is_git_alias(name)


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("a", ("a",)),
        ("./a/./b", ("a", "b")),
        ("docs/intro.md", ("docs", "intro.md")),
        ("caf\u00e9/na\u00efve.txt", ("caf\u00e9", "na\u00efve.txt")),
        (".gitignore", (".gitignore",)),
        ("file name.txt", ("file name.txt",)),
        ("~", ("~",)),
        ("a" * 255, ("a" * 255,)),
    ],
)
def test_valid_paths(path: str, parts: tuple[str, ...]) -> None:
    assert parse_path(path) == parts


def test_root_forms() -> None:
    assert parse_path("", allow_root=True) == ()
    assert parse_path(".", allow_root=True) == ()
    assert parse_path("./.", allow_root=True) == ()
