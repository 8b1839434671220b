"""Roles and the principal's permission matrix."""

from __future__ import annotations

import pytest

from riverbeam.auth import PRIVILEGED_METADATA_KEYS, Principal, Role

U, B, AP, AD = Role.USER, Role.BACKEND, Role.APPROVER, Role.ADMIN

# The documented matrix (docs/auth.md): role -> privileged keys it may set.
MATRIX: dict[Role, set[str]] = {
    U: set(),
    B: {"memory_scopes"},
    AP: {"confirm"},
    AD: {"confirm", "sandbox_root", "protected_refs", "memory_scopes"},
}


def p(*roles: Role, org: str | None = "acme") -> Principal:
    return Principal(subject="s-1", org_id=org, roles=frozenset(roles))


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("key", sorted(PRIVILEGED_METADATA_KEYS))
def test_metadata_matrix(role: Role, key: str) -> None:
    assert p(role).may_set_privileged_metadata(key) is (key in MATRIX[role])


def test_privileged_keys_match_case_insensitively_and_ignore_blanks() -> None:
    user = p(U)
    for key in ("Confirm", " CONFIRM ", "Sandbox_Root", "memory_SCOPES", "protected_refs\t"):
        assert not user.may_set_privileged_metadata(key)
    assert p(AD).may_set_privileged_metadata("SANDBOX_ROOT")


def test_ordinary_keys_are_always_allowed() -> None:
    for role in Role:
        assert p(role).may_set_privileged_metadata("source")
        assert p(role).may_set_privileged_metadata("capabilities")
        assert p(role).may_set_privileged_metadata("confirmed")


@pytest.mark.parametrize(
    ("roles", "act", "approve", "read_any"),
    [
        ({U}, False, False, False),
        ({B}, True, False, False),
        ({AP}, False, True, False),
        ({AD}, True, True, True),
        ({B, AP}, True, True, False),
    ],
)
def test_capabilities(roles: set[Role], act: bool, approve: bool, read_any: bool) -> None:
    principal = p(*roles)
    assert principal.may_act_for_users() is act
    assert principal.may_approve_any() is approve
    assert principal.may_read_any_session() is read_any


def test_roles_add_up() -> None:
    both = p(B, AP)
    assert both.may_set_privileged_metadata("confirm")
    assert both.may_set_privileged_metadata("memory_scopes")
    assert not both.may_set_privileged_metadata("sandbox_root")


def test_principal_defaults_and_coercion() -> None:
    principal = Principal(subject="alice")
    assert principal.roles == frozenset({U})
    assert principal.org_id is None
    coerced = Principal(subject="a", org_id="", roles=frozenset({"backend"}))  # type: ignore[arg-type]
    assert coerced.roles == frozenset({B})
    assert coerced.org_id is None
    assert coerced.has(B) and not coerced.has(U)


@pytest.mark.parametrize("subject", ["", "   "])
def test_principal_needs_a_subject(subject: str) -> None:
    with pytest.raises(ValueError, match="subject"):
        Principal(subject=subject)


def test_principal_needs_a_role() -> None:
    with pytest.raises(ValueError, match="role"):
        Principal(subject="a", roles=frozenset())


def test_unknown_role_is_refused() -> None:
    with pytest.raises(ValueError):
        Principal(subject="a", roles=frozenset({"root"}))  # type: ignore[arg-type]


def test_principal_is_immutable_and_hashable() -> None:
    principal = p(U)
    with pytest.raises(AttributeError):
        principal.subject = "other"  # type: ignore[misc]
    assert {principal, p(U)} == {principal}
