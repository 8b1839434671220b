"""The workspace policy: which workspace and branch a run gets, and how names are derived."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from riverbeam.agents._io import AgentInput
from riverbeam.core.errors import RiverbeamError
from riverbeam.sandbox import (
    DEFAULT_PROTECTED_REFS,
    WORKSPACE_NAME,
    EnsuredWorkspace,
    Placement,
    ProtectedRefs,
    RunWorkspaces,
    WorkspaceInfo,
    place_run,
    session_placement,
    shared_placement,
    user_placement,
    validate_branch_name,
)
from riverbeam.types import ContentPart, InvokeAuthContext

PROTECTED = ProtectedRefs(DEFAULT_PROTECTED_REFS)

SESSION_IDS = [
    "0b5d3a52-9d61-4c1e-8f43-2f6c1e7a9b10",  # a fresh uuid4, fixed so every collection agrees
    "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41",
    "ABC",  # upper case: hashed, never lowercased (ABC and abc are two sessions)
    "abc",
    "x" * 61,
    "x" * 62,
    "a/b",
    "../../etc",
    ".git",
    "s\u200bx",
    "\u0430bc",  # Cyrillic a
    "-leading",
    "_x",
    " ",
    "h-" + "0" * 40,
]


@pytest.mark.parametrize("session_id", SESSION_IDS)
def test_session_names_fit_and_branches_are_valid(session_id: str) -> None:
    placement = session_placement(session_id)
    assert WORKSPACE_NAME.fullmatch(placement.workspace), placement
    assert placement.branch == f"riverbeam/{placement.workspace}"
    assert validate_branch_name(placement.branch) == placement.branch
    assert not PROTECTED.matches(placement.branch)
    assert session_placement(session_id) == placement  # deterministic


def test_session_names_never_collide() -> None:
    names = {session_placement(s).workspace for s in SESSION_IDS}
    assert len(names) == len(SESSION_IDS)


def test_a_short_lowercase_session_id_is_used_as_is_and_others_are_hashed() -> None:
    sid = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
    assert session_placement(sid) == Placement(f"s-{sid}", f"riverbeam/s-{sid}")
    assert session_placement("ABC").workspace.startswith("sh-")
    assert session_placement("ABC") != session_placement("abc")
    # A raw id shaped like a hashed name still lands under s-, never on the hashed name.
    hashed = session_placement("ABC").workspace
    assert session_placement(hashed[len("sh-") :]).workspace != hashed
    assert session_placement(hashed).workspace == f"s-{hashed}"


def test_empty_session_is_refused() -> None:
    with pytest.raises(RiverbeamError) as info:
        session_placement("")
    assert info.value.bem == "BEM-331"


def test_user_workspaces_are_keyed_by_organisation() -> None:
    acme = user_placement("acme", "alice")
    other = user_placement("other", "alice")
    assert acme != other
    assert acme == user_placement("acme", "alice")
    assert acme.workspace.startswith("u-") and WORKSPACE_NAME.fullmatch(acme.workspace)
    # Ambiguous concatenations stay apart, and no organisation is not the empty one.
    assert user_placement("a", "b:c") != user_placement("a:b", "c")
    assert user_placement(None, "alice") != user_placement("", "alice")
    assert user_placement("acme", "alice").workspace != session_placement("alice").workspace


def test_place_run_by_policy() -> None:
    sid = str(uuid.uuid4())
    shared = shared_placement("default", "riverbeam/work", PROTECTED)
    common: dict[str, Any] = {"session_id": sid, "user_id": "alice", "org_id": "acme"}
    assert place_run("session", **common) == session_placement(sid)
    assert place_run("user", **common) == user_placement("acme", "alice")
    # No user: the run keeps to its session's workspace, never a shared one.
    assert place_run("user", session_id=sid, user_id=None, org_id="acme") == session_placement(sid)
    assert place_run("shared", **common, shared=shared) == shared
    with pytest.raises(RiverbeamError) as info:
        place_run("shared", **common)  # no opt-in
    assert info.value.bem == "BEM-331"
    with pytest.raises(RiverbeamError):
        place_run("everyone", **common)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "branch", "code"),
    [
        ("s-x", "riverbeam/work", "BEM-331"),
        ("sh-x", "riverbeam/work", "BEM-331"),
        ("u-x", "riverbeam/work", "BEM-331"),
        ("Default", "riverbeam/work", "BEM-312"),
        ("default", "main", "BEM-323"),
        ("default", "bad..branch", "BEM-325"),
    ],
)
def test_bad_shared_workspaces(name: str, branch: str, code: str) -> None:
    with pytest.raises(RiverbeamError) as info:
        shared_placement(name, branch, PROTECTED)
    assert info.value.bem == code


class FakeWorkspaces:
    def __init__(self) -> None:
        self.ensured: list[tuple[str, str | None, str | None]] = []

    async def ensure(
        self, name: str, *, branch: str | None = None, origin: str | None = None
    ) -> EnsuredWorkspace:
        self.ensured.append((name, branch, origin))
        return EnsuredWorkspace(
            WorkspaceInfo(name=name, origin=origin, branch=branch, head=None), True
        )

    async def open_tree(self, name: str) -> Any:
        return name


def _input(session_id: str, run_id: str, user: str | None = None, org: str | None = None) -> Any:
    return AgentInput(
        content=[ContentPart.of_text("hi")],
        session_id=session_id,
        run_id=run_id,
        agent_name="author",
        auth_context=InvokeAuthContext(user_id=user, org_id=org),
    )


async def test_run_workspaces_ensure_once_per_run_and_place_by_policy() -> None:
    fake = FakeWorkspaces()
    runs = RunWorkspaces(fake, origin="/srv/origin.git")
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    placed, tree = await runs.tree_for_run(_input(a, "r1"))
    assert placed == session_placement(a) and tree == placed.workspace
    await runs.tree_for_run(_input(a, "r1"))
    await runs.tree_for_run(_input(a, "r2"))
    await runs.tree_for_run(_input(b, "r3"))
    assert fake.ensured == [
        (session_placement(a).workspace, session_placement(a).branch, "/srv/origin.git"),
        (session_placement(a).workspace, session_placement(a).branch, "/srv/origin.git"),
        (session_placement(b).workspace, session_placement(b).branch, "/srv/origin.git"),
    ]

    per_user = RunWorkspaces(fake, policy="user")
    one, _ = await per_user.tree_for_run(_input(a, "r4", "alice", "acme"))
    two, _ = await per_user.tree_for_run(_input(b, "r5", "alice", "acme"))
    three, _ = await per_user.tree_for_run(_input(b, "r6", "alice", "other"))
    assert one == two == user_placement("acme", "alice") and three != one


def test_shared_policy_needs_the_shared_workspace() -> None:
    with pytest.raises(RiverbeamError) as info:
        RunWorkspaces(FakeWorkspaces(), policy="shared")
    assert info.value.bem == "BEM-331"
    shared = shared_placement("default", "riverbeam/work", PROTECTED)
    runs = RunWorkspaces(FakeWorkspaces(), policy="shared", shared=shared)
    assert runs.placement(_input(str(uuid.uuid4()), "r")) == shared
