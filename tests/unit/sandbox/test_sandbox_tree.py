"""WorkingTree behaviour: files, status, diff, log, add, commit, checkout, bounds, async wrapper."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
from pathlib import Path

import pygit2
import pytest
from sandbox_kit import GitSetup, make_git

from riverbeam.core.errors import RiverbeamError
from riverbeam.sandbox import GitIdentity, SandboxLimits, SandboxRoot, WorkingTree, WorkingTreeOps
from riverbeam.sandbox._tree import WorkingTreeCore


def _code(call: object) -> str:
    with pytest.raises(RiverbeamError) as info:
        call()  # type: ignore[operator]
    return info.value.bem


def test_files_roundtrip(git: GitSetup) -> None:
    tree = git.tree
    assert tree.write_file("docs/guide/intro.md", "hello\n").bytes_written == 6
    assert tree.read_file("docs/guide/intro.md").text == "hello\n"
    assert tree.read_file("./docs/guide/intro.md").path == "docs/guide/intro.md"
    assert tree.list_tree().files == ("README.md", "docs/guide/intro.md")
    assert tree.list_tree("docs").files == ("docs/guide/intro.md",)
    assert tree.list_tree(".").path == ""
    tree.write_file("docs/guide/intro.md", "replaced\n")
    assert (git.work_dir / "docs/guide/intro.md").read_text() == "replaced\n"
    assert not [
        p for p in os.listdir(git.work_dir / "docs/guide") if p.startswith(".riverbeam-tmp")
    ]


def test_write_keeps_the_executable_bit(git: GitSetup) -> None:
    script = git.work_dir / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    git.tree.write_file("run.sh", "#!/bin/sh\necho hi\n")
    assert os.stat(script).st_mode & 0o111
    git.tree.add("run.sh")
    index = pygit2.Repository(str(git.work_dir / ".git")).index
    assert index["run.sh"].mode == pygit2.enums.FileMode.BLOB_EXECUTABLE


def test_write_rejects_non_text(git: GitSetup) -> None:
    assert _code(lambda: git.tree.write_file("a.txt", b"bytes")) == "BEM-002"  # type: ignore[arg-type]
    assert _code(lambda: git.tree.write_file("a.txt", "\udcff")) == "BEM-002"


def test_binary_file_is_not_dumped(git: GitSetup) -> None:
    (git.work_dir / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    content = git.tree.read_file("blob.bin")
    assert content.binary and content.text == "[binary file, 30 bytes]"


def test_huge_read_is_truncated_without_loading_the_file(tmp_path: Path) -> None:
    setup = make_git(tmp_path, SandboxLimits(max_read_bytes=1024))
    big = setup.work_dir / "big.log"
    with big.open("wb") as fh:
        fh.write(b"line of log\n" * (8 * 1024 * 1024 // 12))
    tracemalloc.start()
    try:
        content = setup.tree.read_file("big.log")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert content.truncated and content.size == big.stat().st_size
    assert content.text.startswith("line of log\n")
    assert content.text.endswith(f"[... truncated: showing the first 1024 of {content.size} bytes]")
    assert peak < 256 * 1024
    setup.tree.close()


def test_huge_diff_is_truncated_patch_by_patch(tmp_path: Path) -> None:
    limits = SandboxLimits(max_diff_bytes=4000, max_diff_file_bytes=64 * 1024)
    setup = make_git(tmp_path, limits)
    tree = setup.tree
    for i in range(100):
        tree.write_file(f"files/f{i:03}.txt", f"original {i}\n" * 5)
    tree.add("files")
    tree.commit("many files")
    for i in range(100):
        tree.write_file(f"files/f{i:03}.txt", f"changed {i}\n" * 5)
    big = setup.work_dir / "files" / "huge.bin"
    big.write_bytes(b"y" * (6 * 1024 * 1024))
    tree.add("files/huge.bin")
    big.write_bytes(b"z" * (6 * 1024 * 1024))
    tracemalloc.start()
    try:
        diff = tree.diff()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    text = diff.staged + diff.unstaged
    assert diff.truncated
    assert "[diff truncated at 4000 bytes;" in text
    assert len(text.encode()) < 4000 + 200
    assert diff.files == 102  # huge.bin staged (added) and unstaged (modified), 100 modified
    assert "file too large to diff" in diff.staged
    # The 6 MiB working-tree file was never read whole: hashing streams, the diff skips it.
    assert peak < 2 * 1024 * 1024
    setup.tree.close()


def test_status_reports_every_kind_of_change(git: GitSetup) -> None:
    tree = git.tree
    tree.write_file("keep.txt", "keep\n")
    tree.write_file("gone.txt", "gone\n")
    tree.write_file("edit.txt", "v1\n")
    tree.add("")
    tree.commit("base")
    assert tree.status().clean
    tree.write_file("edit.txt", "v2\n")
    (git.work_dir / "gone.txt").unlink()
    tree.write_file("new.txt", "new\n")
    tree.write_file("staged.txt", "staged\n")
    tree.add("staged.txt")
    os.symlink("/etc/passwd", git.work_dir / "keep.txt.link")
    (git.work_dir / "keep.txt").unlink()
    os.symlink("/etc/passwd", git.work_dir / "keep.txt")
    status = tree.status()
    assert status.branch == "feature" and status.head
    got = {e.path: (e.staged, e.unstaged) for e in status.entries}
    assert got == {
        "edit.txt": ("", "modified"),
        "gone.txt": ("", "deleted"),
        "keep.txt": ("", "typechange"),
        "new.txt": ("", "untracked"),
        "staged.txt": ("added", ""),
    }
    assert not status.clean


def test_add_stages_files_directories_and_deletions(git: GitSetup) -> None:
    tree = git.tree
    tree.write_file("a/one.txt", "1")
    tree.write_file("a/two.txt", "2")
    tree.write_file("b.txt", "b")
    assert tree.add("a").paths == ("a/one.txt", "a/two.txt")
    assert tree.add("a").count == 0  # unchanged: nothing restaged
    tree.commit("a")
    (git.work_dir / "a" / "one.txt").unlink()
    assert tree.add("a/one.txt").paths == ("a/one.txt",)
    assert tree.add(".").paths == ("b.txt",)
    assert {e.path: e.staged for e in tree.status().entries} == {
        "a/one.txt": "deleted",
        "b.txt": "added",
    }
    assert _code(lambda: tree.add("missing.txt")) == "BEM-308"
    os.symlink("/etc", git.work_dir / "etc")
    assert _code(lambda: tree.add("etc")) == "BEM-305"
    assert _code(lambda: tree.add("etc/passwd")) == "BEM-305"
    assert _code(lambda: tree.add(".git")) == "BEM-306"
    assert "etc" not in {e.path for e in tree.status().entries if e.staged}


def test_add_refuses_files_above_the_stage_limit(tmp_path: Path) -> None:
    setup = make_git(tmp_path, SandboxLimits(max_stage_bytes=100))
    (setup.work_dir / "big.txt").write_bytes(b"x" * 101)
    assert _code(lambda: setup.tree.add("big.txt")) == "BEM-314"
    assert _code(lambda: setup.tree.add("")) == "BEM-314"
    setup.tree.close()


def test_commit_rules(git: GitSetup) -> None:
    tree = git.tree
    assert _code(lambda: tree.commit("nothing")) == "BEM-321"
    tree.write_file("a.txt", "a")
    tree.add("a.txt")
    for message in ("", "   \n", "a\x00b", "red \x1b[31malert", "bell\x07", 7):
        assert _code(lambda m=message: tree.commit(m)) == "BEM-002"  # type: ignore[misc]
    info = tree.commit("Add a\n\nLonger body.")
    assert info.branch == "feature" and info.summary == "Add a"
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    commit = repo[info.id]
    assert isinstance(commit, pygit2.Commit)
    assert (commit.author.name, commit.author.email) == (GitIdentity().name, GitIdentity().email)
    assert commit.committer.email == GitIdentity().email


def test_log(git: GitSetup) -> None:
    tree = git.tree
    for i in range(5):
        tree.write_file("n.txt", str(i))
        tree.add("n.txt")
        tree.commit(f"commit {i}")
    log = tree.log()
    assert [e.summary for e in log[:3]] == ["commit 4", "commit 3", "commit 2"]
    assert len(log) == 6
    assert len(tree.log(2)) == 2
    for bad in (0, -1, True, "5"):
        assert _code(lambda b=bad: tree.log(b)) == "BEM-002"  # type: ignore[misc]


def test_log_of_an_unborn_branch_is_empty(tmp_path: Path) -> None:
    tree = WorkingTreeCore(SandboxRoot(tmp_path))
    tree.init()
    assert tree.log() == []
    assert tree.status().head is None
    tree.close()


def test_checkout_switches_files_through_the_root(git: GitSetup) -> None:
    tree = git.tree
    tree.write_file("only-feature.txt", "f")
    tree.write_file("README.md", "# changed on feature\n")
    tree.add("")
    tree.commit("feature files")
    assert tree.checkout_branch("other", create=True) == "other"
    tree.write_file("only-other/x.txt", "o")
    tree.add("")
    tree.commit("other files")
    assert tree.checkout_branch("feature") == "feature"
    assert sorted(tree.list_tree().files) == ["README.md", "only-feature.txt"]
    assert not (git.work_dir / "only-other").exists()
    assert tree.status().clean
    assert tree.checkout_branch("other") == "other"
    assert (git.work_dir / "only-other/x.txt").read_text() == "o"
    assert tree.status().clean


def test_checkout_refusals(git: GitSetup) -> None:
    tree = git.tree
    for name in ("main", "MASTER", "refs/heads/main", "m\u0430in"):
        assert _code(lambda n=name: tree.checkout_branch(n)) == "BEM-323"
        assert _code(lambda n=name: tree.checkout_branch(n, True)) == "BEM-323"
    for name in ("", "-x", "a..b", "HEAD", "x.lock", "a b", "refs/x", 5):
        assert _code(lambda n=name: tree.checkout_branch(n, True)) == "BEM-325"  # type: ignore[misc]
    assert _code(lambda: tree.checkout_branch("nope")) == "BEM-325"
    tree.checkout_branch("other", create=True)
    tree.write_file("README.md", "dirty\n")
    assert _code(lambda: tree.checkout_branch("feature")) == "BEM-327"
    tree.add("README.md")
    assert _code(lambda: tree.checkout_branch("feature")) == "BEM-327"


def test_checkout_refuses_to_overwrite_untracked_files(git: GitSetup) -> None:
    tree = git.tree
    tree.checkout_branch("other", create=True)
    tree.write_file("clash.txt", "tracked on other")
    tree.add("clash.txt")
    tree.commit("clash")
    tree.checkout_branch("feature")
    tree.write_file("clash.txt", "untracked here")
    assert _code(lambda: tree.checkout_branch("other")) == "BEM-327"
    assert (git.work_dir / "clash.txt").read_text() == "untracked here"


def test_checkout_create_on_an_unborn_head(tmp_path: Path) -> None:
    tree = WorkingTreeCore(SandboxRoot(tmp_path))
    tree.init("main")
    assert tree.checkout_branch("work", create=True) == "work"
    tree.write_file("a", "a")
    tree.add("a")
    assert tree.commit("first on work").branch == "work"
    tree.close()


def test_list_tree_is_bounded(tmp_path: Path) -> None:
    setup = make_git(tmp_path, SandboxLimits(max_list_entries=10))
    for i in range(25):
        (setup.work_dir / f"f{i:02}").write_text("x")
    listing = setup.tree.list_tree()
    assert listing.truncated and len(listing.files) == 10
    setup.tree.close()


async def test_async_wrapper_serialises_calls(tmp_path: Path) -> None:
    tree = WorkingTree(tmp_path)
    assert isinstance(tree, WorkingTreeOps)
    await tree.init()
    await tree.write_file("seed.txt", "seed")
    await tree.git_add("seed.txt")
    await tree.initial_commit()
    await tree.checkout_branch("work", create=True)

    async def one(i: int) -> None:
        await tree.write_file(f"f{i}.txt", str(i))

    await asyncio.gather(*(one(i) for i in range(20)))
    staged = await tree.git_add("")
    assert staged.count == 20
    await tree.git_commit("twenty files")
    assert len(await tree.git_log()) == 2
    assert (await tree.git_status()).clean
    assert (await tree.git_diff()).files == 0
    assert len((await tree.list_tree()).files) == 21
    assert (await tree.read_file("f7.txt")).text == "7"
    assert tree.protected_refs == ("main", "master")
    await tree.aclose()


def _foreign_branch(git: GitSetup, name: str, entries: dict[str, tuple[bytes, int]]) -> None:
    """A branch made outside the sandbox, with whatever tree entries it likes."""
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    builder = repo.TreeBuilder(repo.head.peel(pygit2.Commit).tree)
    for entry_name, (data, mode) in entries.items():
        builder.insert(entry_name, repo.create_blob(data), mode)
    sig = pygit2.Signature("someone", "someone@example.com")
    repo.create_commit(
        f"refs/heads/{name}", sig, sig, "foreign", builder.write(), [repo.head.target]
    )


def test_checkout_of_a_hostile_branch_changes_nothing(git: GitSetup) -> None:
    blob = int(pygit2.enums.FileMode.BLOB)
    link = int(pygit2.enums.FileMode.LINK)
    _foreign_branch(git, "invisible", {"ok.txt": (b"ok", blob), "a\u200bb": (b"x", blob)})
    _foreign_branch(git, "linked", {"ok.txt": (b"ok", blob), "etc": (b"/etc", link)})
    before = sorted(os.listdir(git.work_dir))
    assert _code(lambda: git.tree.checkout_branch("invisible")) == "BEM-302"
    assert _code(lambda: git.tree.checkout_branch("linked")) == "BEM-320"
    assert sorted(os.listdir(git.work_dir)) == before
    assert git.tree.status().branch == "feature"
