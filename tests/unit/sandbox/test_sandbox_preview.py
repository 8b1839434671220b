"""Approval previews on real repositories, and approved calls bound to the previewed state."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from sandbox_kit import GitSetup, make_git

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox import SandboxLimits, SandboxRoot, WorkingTree
from riverbeam.sandbox._preview import ABSENT, bound_diff


def _commit(git: GitSetup, path: str, body: str, message: str) -> str:
    git.tree.write_file(path, body)
    git.tree.add(path)
    return git.tree.commit(message).id


def _outside_push(git: GitSetup, path: str, body: str) -> str:
    """Move the local branch the way a person with a shell would: a commit made outside."""
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    parent = repo.head.peel(pygit2.Commit)
    blob = repo.create_blob(body.encode())
    builder = repo.TreeBuilder(parent.tree)
    builder.insert(path, blob, pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("Someone", "someone@example.com")
    oid = repo.create_commit("HEAD", sig, sig, "outside\n", builder.write(), [parent.id])
    return str(oid)


def _track_main(git: GitSetup) -> None:
    """What a clone has: the origin's main as a remote-tracking ref."""
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    repo.references.create("refs/remotes/origin/main", repo.references["refs/heads/main"].target)


def test_a_push_preview_lists_the_commits_and_the_diff_the_origin_lacks(git: GitSetup) -> None:
    _track_main(git)
    first = _commit(git, "docs/a.md", "alpha\n", "Add a")
    second = _commit(git, "docs/a.md", "alpha\nbeta\n", "Extend a")
    preview = git.tree.preview_push(None)
    assert preview.tool == "git_push"
    assert [c.id for c in preview.commits] == [second, first]
    assert [c.summary for c in preview.commits] == ["Extend a", "Add a"]
    assert preview.commits[0].author == "Riverbeam Agent <agent@riverbeam.invalid>"
    # Against what the origin has (main): the new file, not the README it already holds.
    assert "+++ b/docs/a.md" in preview.diff
    assert "+beta" in preview.diff
    assert "README.md" not in preview.diff
    assert preview.state.branch == "feature"
    assert preview.state.head == second
    assert preview.state.origin == ABSENT
    assert preview.summary == "2 commits to feature (new on origin), 1 file changed"
    assert not preview.truncated and preview.diff_bytes == len(preview.diff.encode())


def test_after_a_push_the_preview_is_against_the_pushed_tip(git: GitSetup) -> None:
    _track_main(git)
    pushed = _commit(git, "a.txt", "one\n", "One")
    git.tree.push("feature")
    after = _commit(git, "a.txt", "one\ntwo\n", "Two")
    preview = git.tree.preview_push("feature")
    assert [c.id for c in preview.commits] == [after]
    assert preview.state.origin == pushed
    assert "-one" not in preview.diff and "+two" in preview.diff
    assert preview.summary == "1 commit to feature, 1 file changed"


def test_a_preview_is_cut_at_the_limit_with_a_marker(tmp_path: Path) -> None:
    git = make_git(tmp_path, SandboxLimits(max_preview_bytes=300))
    try:
        _commit(git, "big.txt", "".join(f"line {i}\n" for i in range(500)), "Big")
        preview = git.tree.preview_push(None)
        assert preview.truncated
        assert len(preview.diff.encode()) < 300 + 80
        assert preview.diff.endswith(f"of {preview.diff_bytes} bytes]\n")
        assert preview.diff_bytes > 3000
        wrote = git.tree.preview_write("big.txt", "x\n" * 2000)
        assert wrote.truncated and "[... preview truncated" in wrote.diff
    finally:
        git.tree.close()


def test_bound_diff_cuts_at_a_line_end() -> None:
    text, cut, size = bound_diff("aaaa\nbbbb\ncccc\n", 12)
    assert cut and size == 15
    assert text == "aaaa\nbbbb\n[... preview truncated: showing 10 of 15 bytes]\n"
    assert bound_diff("short\n", 12) == ("short\n", False, 6)


def test_a_write_preview_shows_a_new_file_as_new(git: GitSetup) -> None:
    preview = git.tree.preview_write("notes/new.md", "hello\n")
    assert preview.tool == "write_file"
    assert "new file mode" in preview.diff and "--- /dev/null" in preview.diff
    assert "+hello" in preview.diff
    assert preview.state.path == "notes/new.md" and preview.state.blob == ABSENT
    assert preview.summary == "new file notes/new.md (6 bytes)"


def test_a_write_preview_diffs_the_current_content(git: GitSetup) -> None:
    preview = git.tree.preview_write("README.md", "# project\nmore\n")
    assert "--- a/README.md" in preview.diff and "+more" in preview.diff
    assert preview.state.blob == str(pygit2.hash(b"# project\n"))
    assert preview.summary == "README.md: +1 -0 lines"


def test_an_approved_write_is_refused_when_the_file_moved(git: GitSetup) -> None:
    preview = git.tree.preview_write("README.md", "approved\n")
    git.tree.write_file("README.md", "someone else\n")
    with pytest.raises(RiverbeamError) as info:
        git.tree.write_file("README.md", "approved\n", preview.state.blob)
    assert info.value.code is ErrorCode.ACTION_STATE_MOVED
    assert info.value.details["expected"] == preview.state.blob
    assert (git.work_dir / "README.md").read_text() == "someone else\n"
    fresh = git.tree.preview_write("README.md", "approved\n")
    git.tree.write_file("README.md", "approved\n", fresh.state.blob)
    assert (git.work_dir / "README.md").read_text() == "approved\n"


def test_an_approved_new_file_is_refused_when_one_appeared(git: GitSetup) -> None:
    preview = git.tree.preview_write("new.txt", "mine\n")
    git.tree.write_file("new.txt", "theirs\n")
    with pytest.raises(RiverbeamError) as info:
        git.tree.write_file("new.txt", "mine\n", preview.state.blob)
    assert info.value.code is ErrorCode.ACTION_STATE_MOVED
    assert info.value.details["actual"] != ABSENT
    assert (git.work_dir / "new.txt").read_text() == "theirs\n"


def test_an_approved_push_is_refused_when_the_branch_moved(git: GitSetup) -> None:
    _commit(git, "a.txt", "one\n", "One")
    preview = git.tree.preview_push("feature")
    moved = _outside_push(git, "b.txt", "sneaked in\n")
    with pytest.raises(RiverbeamError) as info:
        git.tree.push("feature", preview.state.head, preview.state.origin)
    assert info.value.code is ErrorCode.ACTION_STATE_MOVED
    assert info.value.details["actual"] == moved
    assert "refs/heads/feature" not in git.remote_refs()
    fresh = git.tree.preview_push("feature")
    assert fresh.state.head == moved and fresh.commits[0].id == moved
    assert "+sneaked in" in fresh.diff
    git.tree.push("feature", fresh.state.head, fresh.state.origin)
    assert git.remote_refs()["refs/heads/feature"] == moved


def test_an_approved_push_is_refused_when_the_origin_moved(git: GitSetup) -> None:
    base = _commit(git, "a.txt", "one\n", "One")
    git.tree.push("feature")
    _commit(git, "a.txt", "one\ntwo\n", "Two")
    preview = git.tree.preview_push("feature")
    assert preview.state.origin == base
    # Someone else fast-forwards origin's feature to a commit the workspace also has.
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    head = repo.references["refs/heads/feature"].target
    repo.remotes.create_anonymous(str(git.origin_dir)).push(
        ["refs/heads/feature:refs/heads/feature"]
    )
    assert git.remote_refs()["refs/heads/feature"] == str(head)
    with pytest.raises(RiverbeamError) as info:
        git.tree.push("feature", preview.state.head, preview.state.origin)
    assert info.value.code is ErrorCode.ACTION_STATE_MOVED
    assert info.value.details["expected"] == base
    # The refusal taught the workspace the origin's tip: the fresh preview is against it.
    assert git.tree.preview_push("feature").state.origin == str(head)


def test_a_malformed_expectation_is_refused(git: GitSetup) -> None:
    with pytest.raises(RiverbeamError) as info:
        git.tree.push("feature", "not-an-oid", None)
    assert info.value.code is ErrorCode.PREVIEW_UNSUPPORTED
    with pytest.raises(RiverbeamError) as info:
        git.tree.write_file("a.txt", "x", "HEAD")
    assert info.value.code is ErrorCode.PREVIEW_UNSUPPORTED
    assert not (git.work_dir / "a.txt").exists()


def test_a_preview_refuses_protected_branches(git: GitSetup) -> None:
    with pytest.raises(RiverbeamError) as info:
        git.tree.preview_push("main")
    assert info.value.code is ErrorCode.PUSH_PROTECTED


async def test_the_async_tree_previews_in_a_worker_thread(tmp_path: Path) -> None:
    tree = WorkingTree(SandboxRoot(tmp_path / "w", create=True))
    await tree.init()
    await tree.write_file("a.txt", "one\n")
    preview = await tree.preview_action("write_file", path="a.txt", body="two\n")
    assert "-one" in preview.diff and "+two" in preview.diff
    with pytest.raises(RiverbeamError) as info:
        await tree.preview_action("git_commit")
    assert info.value.code is ErrorCode.PREVIEW_UNSUPPORTED
    await tree.aclose()


def test_a_long_push_lists_fifty_commits_and_says_there_are_more(git: GitSetup) -> None:
    _track_main(git)
    ids = [_commit(git, "n.txt", f"{i}\n", f"Commit {i}") for i in range(55)]
    preview = git.tree.preview_push(None)
    assert len(preview.commits) == 50 and preview.commits_truncated
    assert preview.commits[0].id == ids[-1]
    assert preview.summary.startswith("55 commits to feature")
