"""Branch-name validation and the protected-ref skeleton."""

from __future__ import annotations

import pytest

from riverbeam.core.errors import RiverbeamError
from riverbeam.sandbox import ProtectedRefs, ref_skeleton, validate_branch_name

PROTECTED = ProtectedRefs(["main", "master"])


@pytest.mark.parametrize(
    "candidate",
    [
        "main",
        "MAIN",
        "refs/heads/main",
        "refs/heads//main",
        "HEAD:main",
        "+x:main",
        ":main",
        "main:x",
        "origin/main",
        "main.lock",
        "main^{}",
        "main~0",
        "main@{1}",
        " main ",
        "\uff4d\uff41\uff49\uff4e",
        "m\u0430in",
        "ma\u0456n",
        "ma\u200bin",
        "ma1n",
        "rnain",
        "master",
        "MASTER",
        "mast\u0435r",
        "refs/remotes/origin/master",
        "m\u00e1ster",
    ],
)
def test_protected_in_any_spelling(candidate: str) -> None:
    assert PROTECTED.matches(candidate)


@pytest.mark.parametrize(
    "candidate",
    ["feature", "maintenance", "domain", "mainline", "docs/main-page", "remaster", "mail", "x:y"],
)
def test_ordinary_names_are_not_protected(candidate: str) -> None:
    assert not PROTECTED.matches(candidate)


def test_skeleton_is_stable() -> None:
    assert ref_skeleton("main") == ref_skeleton("refs/heads/MAIN") == ref_skeleton("+ma1n")


@pytest.mark.parametrize(
    "name", ["feature", "docs/update-2", "release/1.2", "a", "A_b-c.d", "x" * 200]
)
def test_valid_branch_names(name: str) -> None:
    assert validate_branch_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "-x",
        ".x",
        "x.",
        "x/",
        "/x",
        "a..b",
        "a//b",
        "a/.b",
        "x.lock",
        "a/b.lock/c",
        "a@{b",
        "a b",
        "a:b",
        "a~1",
        "a^",
        "a?",
        "a*",
        "a[b",
        "a\\b",
        "HEAD",
        "head",
        "refs/heads/x",
        "heads/x",
        "tags/x",
        "remotes/x",
        "caf\u00e9",
        "x" * 201,
        None,
        3,
    ],
)
def test_invalid_branch_names(name: object) -> None:
    with pytest.raises(RiverbeamError) as info:
        validate_branch_name(name)
    assert info.value.bem == "BEM-325"


def test_protected_names_must_be_nonempty() -> None:
    with pytest.raises(ValueError):
        ProtectedRefs(["main", "/"])


def test_the_form_check_implies_libgit2s_rules() -> None:
    # A WorkspaceManager checks its base branch with check_branch_form at start-up (no
    # pygit2 loaded yet): every name it lets through must be one libgit2 accepts too.
    import itertools

    import pygit2

    from riverbeam.sandbox._refs import check_branch_form

    accepted = 0
    for length in range(1, 6):
        for letters in itertools.product("a0./-_L", repeat=length):
            name = "".join(letters)
            try:
                check_branch_form(name)
            except RiverbeamError:
                continue
            accepted += 1
            assert pygit2.reference_is_valid_name(f"refs/heads/{name}"), name
            assert validate_branch_name(name) == name
    for name in ("a.lock/b", "a/.b", "a..b", "a//b", "a/", "a.", "HEAD", "refs/x", "-a", "a@{1}"):
        with pytest.raises(RiverbeamError):
            check_branch_form(name)
    assert accepted > 1000
