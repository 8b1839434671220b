"""The hostile-push corpus, against a real bare origin: nothing protected ever moves."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from sandbox_kit import GitSetup, make_git

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox import OriginPolicy, ProtectedRefs, SandboxRoot
from riverbeam.sandbox._push import _PushGuard
from riverbeam.sandbox._tree import WorkingTreeCore

# (ref argument, expected code). Every one must leave origin untouched.
PUSH_CORPUS: list[tuple[object, str]] = [
    ("main", "BEM-328"),
    ("master", "BEM-328"),
    ("MAIN", "BEM-328"),
    ("Main", "BEM-328"),
    ("MaStEr", "BEM-328"),
    ("refs/heads/main", "BEM-328"),
    ("refs/heads//main", "BEM-328"),
    ("/refs/heads/main", "BEM-328"),
    ("refs//heads/main", "BEM-328"),
    ("heads/main", "BEM-328"),
    ("refs/remotes/origin/main", "BEM-328"),
    ("origin/main", "BEM-328"),
    ("refs/tags/main", "BEM-328"),
    ("HEAD:main", "BEM-328"),
    ("HEAD:refs/heads/main", "BEM-328"),
    ("feature:main", "BEM-328"),
    ("feature:refs/heads/main", "BEM-328"),
    ("refs/heads/feature:refs/heads/main", "BEM-328"),
    ("+feature:main", "BEM-328"),
    ("+refs/heads/feature:refs/heads/master", "BEM-328"),
    ("+main", "BEM-328"),
    (":main", "BEM-328"),
    (":refs/heads/main", "BEM-328"),
    ("main:feature", "BEM-328"),
    ("main:main", "BEM-328"),
    ("feature main", "BEM-328"),
    ("main ", "BEM-328"),
    (" main", "BEM-328"),
    ("main\t", "BEM-328"),
    ("main\n", "BEM-328"),
    ("main.lock", "BEM-328"),
    ("main/", "BEM-328"),
    ("main.", "BEM-328"),
    ("main^{}", "BEM-328"),
    ("main~0", "BEM-328"),
    ("main@{0}", "BEM-328"),
    ("ma\u200bin", "BEM-328"),
    ("\u202emain", "BEM-328"),
    ("main\ufeff", "BEM-328"),
    ("\uff4d\uff41\uff49\uff4e", "BEM-328"),  # fullwidth
    ("\U0001d426\U0001d41a\U0001d422\U0001d427", "BEM-328"),  # mathematical bold
    ("m\u0430in", "BEM-328"),  # Cyrillic a
    ("ma\u0456n", "BEM-328"),  # Cyrillic i
    ("\u043caster", "BEM-328"),  # Cyrillic m
    ("mast\u0435r", "BEM-328"),  # Cyrillic e
    ("ma\u0301in", "BEM-328"),  # combining accent
    ("m\u00e1in", "BEM-328"),  # precomposed accent
    ("ma1n", "BEM-328"),
    ("rnain", "BEM-328"),
    ("MAIN:MAIN", "BEM-328"),
    # Not protected, but not a plain branch either.
    ("feature:other", "BEM-325"),
    ("+feature", "BEM-325"),
    ("refs/heads/feature", "BEM-325"),
    ("feature..x", "BEM-325"),
    ("-feature", "BEM-325"),
    ("feature.lock", "BEM-325"),
    ("@{-1}", "BEM-325"),
    ("feat ure", "BEM-325"),
    ("feature\x00", "BEM-325"),
    ("HEAD", "BEM-325"),
    ("nonexistent", "BEM-325"),
    ("x" * 300, "BEM-325"),
    (42, "BEM-325"),
    (["main"], "BEM-325"),
]


def test_push_corpus_is_large_enough() -> None:
    assert len(PUSH_CORPUS) >= 30


@pytest.fixture(scope="module")
def shared_git(tmp_path_factory: pytest.TempPathFactory) -> GitSetup:
    setup = make_git(tmp_path_factory.mktemp("push"))
    setup.tree.write_file("feature.txt", "on feature\n")
    setup.tree.add("feature.txt")
    setup.tree.commit("feature work")
    return setup


@pytest.mark.parametrize(("ref", "code"), PUSH_CORPUS, ids=[repr(r)[:40] for r, _ in PUSH_CORPUS])
def test_hostile_push(shared_git: GitSetup, ref: object, code: str) -> None:
    before = shared_git.remote_refs()
    with pytest.raises(RiverbeamError) as info:
        shared_git.tree.push(ref)  # type: ignore[arg-type]
    assert info.value.bem == code
    assert shared_git.remote_refs() == before


def test_push_current_branch_reaches_origin(git: GitSetup) -> None:
    git.tree.write_file("a.txt", "a\n")
    git.tree.add("a.txt")
    commit = git.tree.commit("a")
    result = git.tree.push()
    assert result.branch == "feature" and result.remote_ref == "refs/heads/feature"
    refs = git.remote_refs()
    assert refs["refs/heads/feature"] == commit.id
    # main on origin is exactly where a person put it.
    assert refs["refs/heads/main"] != commit.id
    # Pushing again is a no-op, not an error.
    assert git.tree.push("feature").commit == commit.id


def test_push_when_head_is_on_a_protected_branch(git: GitSetup) -> None:
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    repo.set_head("refs/heads/main")  # as if someone had switched outside the tools
    before = git.remote_refs()
    for ref in (None, "", "HEAD", "@", "head"):
        with pytest.raises(RiverbeamError) as info:
            git.tree.push(ref)
        assert info.value.bem == "BEM-328"
    with pytest.raises(RiverbeamError) as info:
        git.tree.commit("on main")
    assert info.value.bem == "BEM-322"
    assert git.remote_refs() == before


def test_symbolic_ref_to_main_is_protected(git: GitSetup) -> None:
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    repo.references.create("refs/heads/alias", "refs/heads/main")
    repo.references.create("refs/heads/alias2", "refs/heads/alias")
    before = git.remote_refs()
    for ref in ("alias", "alias2"):
        with pytest.raises(RiverbeamError) as info:
            git.tree.push(ref)
        assert info.value.bem == "BEM-328"
    with pytest.raises(RiverbeamError) as info:
        git.tree.checkout_branch("alias")
    assert info.value.bem == "BEM-323"
    # HEAD -> alias -> main: committing would move main.
    repo.set_head("refs/heads/alias")
    git.tree.write_file("x.txt", "x")
    git.tree.add("x.txt")
    with pytest.raises(RiverbeamError) as info:
        git.tree.commit("sneaky")
    assert info.value.bem == "BEM-322"
    assert git.remote_refs() == before


def test_symbolic_ref_to_an_ordinary_branch_is_refused(git: GitSetup) -> None:
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    repo.references.create("refs/heads/other", "refs/heads/feature")
    with pytest.raises(RiverbeamError) as info:
        git.tree.push("other")
    assert info.value.bem == "BEM-325"


def test_remote_refusal_is_330(git: GitSetup) -> None:
    git.tree.write_file("a.txt", "a\n")
    git.tree.add("a.txt")
    git.tree.commit("a")
    git.tree.push()
    # Someone else moves origin's feature to an unrelated commit.
    origin = git.origin
    sig = pygit2.Signature("other", "other@example.com")
    tree_id = origin.TreeBuilder().write()
    foreign = origin.create_commit(None, sig, sig, "foreign", tree_id, [])
    origin.references["refs/heads/feature"].set_target(foreign)
    git.tree.write_file("b.txt", "b\n")
    git.tree.add("b.txt")
    git.tree.commit("b")
    with pytest.raises(RiverbeamError) as info:
        git.tree.push()
    assert info.value.bem == "BEM-330"
    assert git.remote_refs()["refs/heads/feature"] == str(foreign)


def test_repository_config_cannot_redirect_the_push(git: GitSetup, tmp_path: Path) -> None:
    elsewhere_dir = tmp_path / "elsewhere.git"
    elsewhere = pygit2.init_repository(str(elsewhere_dir), bare=True)
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    repo.remotes.set_url("origin", str(elsewhere_dir))
    repo.remotes.set_push_url("origin", str(elsewhere_dir))
    git.tree.push()
    assert "refs/heads/feature" in git.remote_refs()
    assert list(elsewhere.references) == []


def test_insteadof_rewrite_is_refused(git: GitSetup, tmp_path: Path) -> None:
    elsewhere_dir = tmp_path / "elsewhere.git"
    elsewhere = pygit2.init_repository(str(elsewhere_dir), bare=True)
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    repo.config[f"url.{elsewhere_dir}.pushInsteadOf"] = str(git.origin_dir)
    repo.config[f"url.{elsewhere_dir}.insteadOf"] = str(git.origin_dir)
    with pytest.raises(RiverbeamError) as info:
        git.tree.push()
    assert info.value.bem == "BEM-329"
    assert list(elsewhere.references) == []


def test_no_origin_and_disallowed_origin(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    tree = WorkingTreeCore(SandboxRoot(work), origin_policy=OriginPolicy([f"{tmp_path}/allowed/"]))
    tree.init()
    tree.write_file("a", "a")
    tree.add("a")
    tree.initial_commit()
    tree.checkout_branch("feature", create=True)
    with pytest.raises(RiverbeamError) as info:
        tree.push()
    assert info.value.bem == "BEM-324"
    for url in (
        f"{tmp_path}/other.git",
        "https://evil.example.com/x.git",
        f"{tmp_path}/allowed/../x",
    ):
        with pytest.raises(RiverbeamError) as info:
            tree.add_origin(url)
        assert info.value.bem == "BEM-329"
    tree.close()


def test_commit_on_protected_branch_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    tree = WorkingTreeCore(SandboxRoot(work))
    tree.init("main")
    tree.write_file("a", "a")
    tree.add("a")
    tree.initial_commit()
    tree.write_file("b", "b")
    tree.add("b")
    with pytest.raises(RiverbeamError) as info:
        tree.commit("straight to main")
    assert info.value.bem == "BEM-322"
    with pytest.raises(RiverbeamError) as info:
        tree.initial_commit()
    assert info.value.bem == "BEM-326"
    tree.close()


class _Update:
    def __init__(self, src: str, dst: str, old: str = "0" * 40, new: str = "1" * 40) -> None:
        self.src_refname = src
        self.dst_refname = dst
        self.src = old
        self.dst = new


@pytest.mark.parametrize(
    "update",
    [
        _Update("refs/heads/feature", "refs/heads/main"),
        _Update("refs/heads/main", "refs/heads/feature"),
        _Update("refs/heads/feature", "refs/heads/other"),
        _Update("refs/heads/feature", "refs/heads/feature", new="0" * 40),
        _Update("refs/heads/feature", "refs/heads/MAIN"),
    ],
)
def test_negotiation_rechecks_every_update(git: GitSetup, update: _Update) -> None:
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    guard = _PushGuard("refs/heads/feature", ProtectedRefs(["main", "master"]), repo)
    with pytest.raises(RiverbeamError) as info:
        guard.push_negotiation([update])  # type: ignore[list-item]
    assert info.value.bem == "BEM-328"


def test_negotiation_refuses_a_forced_update(git: GitSetup) -> None:
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    head = str(repo.head.target)
    guard = _PushGuard("refs/heads/feature", ProtectedRefs(["main"]), repo)
    unrelated = "2" * 40
    with pytest.raises(RiverbeamError) as info:
        guard.push_negotiation(
            [_Update("refs/heads/feature", "refs/heads/feature", unrelated, head)]
        )  # type: ignore[list-item]
    assert info.value.bem == "BEM-330"


def test_push_offers_no_credentials(git: GitSetup) -> None:
    repo = pygit2.Repository(str(git.work_dir / ".git"))
    guard = _PushGuard("refs/heads/feature", ProtectedRefs(["main"]), repo)
    with pytest.raises(RiverbeamError) as info:
        guard.credentials(
            "https://example.com/x.git", "git", pygit2.enums.CredentialType.USERPASS_PLAINTEXT
        )
    assert info.value.bem == ErrorCode.PUSH_REJECTED.code
