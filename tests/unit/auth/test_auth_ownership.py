"""Session ownership and approval rights."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from riverbeam.auth import (
    Principal,
    Role,
    SessionAccess,
    check_may_approve,
    check_session_owner,
    session_not_found,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import Session

U, B, AP, AD = Role.USER, Role.BACKEND, Role.APPROVER, Role.ADMIN
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def session(user_id: str | None = "alice", org_id: str | None = "acme") -> Session:
    return Session(
        session_id="5f8915eb-31eb-4f8a-9517-e2c15ce7bc41",
        user_id=user_id,
        org_id=org_id,
        created_at=NOW,
        last_active_at=NOW,
    )


def who(*roles: Role, subject: str = "alice", org: str | None = "acme") -> Principal:
    return Principal(subject=subject, org_id=org, roles=frozenset(roles))


def refused(
    stored: Session | None,
    user: str,
    caller: Principal,
    *,
    org: str | None = "acme",
    access: SessionAccess = SessionAccess.INVOKE,
) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as info:
        check_session_owner(stored, user, caller, effective_org_id=org, access=access)
    return info.value


# ---- sessions -------------------------------------------------------------------------------


@pytest.mark.parametrize("access", list(SessionAccess))
def test_owner_may_use_its_session(access: SessionAccess) -> None:
    check_session_owner(session(), "alice", who(U), effective_org_id="acme", access=access)


def test_a_new_session_is_allowed_for_invoke() -> None:
    check_session_owner(None, "alice", who(U))


@pytest.mark.parametrize("access", [SessionAccess.READ, SessionAccess.RESUME])
def test_a_missing_session_is_not_found_for_read_and_resume(access: SessionAccess) -> None:
    assert refused(None, "alice", who(U), access=access).code is ErrorCode.SESSION_NOT_FOUND


@pytest.mark.parametrize("access", list(SessionAccess))
def test_another_users_session_looks_exactly_like_a_missing_one(access: SessionAccess) -> None:
    foreign = refused(session(user_id="bob"), "alice", who(U), access=access)
    missing = refused(None, "alice", who(U), access=SessionAccess.READ)
    assert foreign.code is missing.code is ErrorCode.SESSION_NOT_FOUND
    assert foreign.to_dict() == missing.to_dict() == session_not_found().to_dict()
    assert "bob" not in str(foreign)


def test_same_user_id_in_another_org_is_not_the_owner() -> None:
    err = refused(session(org_id="other-org"), "alice", who(U), org="acme")
    assert err.code is ErrorCode.SESSION_NOT_FOUND


@pytest.mark.parametrize(("stored_org", "org"), [(None, "acme"), ("acme", None), (None, None)])
def test_an_unscoped_side_does_not_constrain_the_org(
    stored_org: str | None, org: str | None
) -> None:
    check_session_owner(session(org_id=stored_org), "alice", who(U, org=org), effective_org_id=org)


def test_a_session_without_a_user_belongs_to_no_one_but_admins() -> None:
    assert refused(session(user_id=None), "alice", who(U)).code is ErrorCode.SESSION_NOT_FOUND
    check_session_owner(session(user_id=None), "root", who(AD, subject="root"))


@pytest.mark.parametrize("access", list(SessionAccess))
def test_admin_may_use_any_session(access: SessionAccess) -> None:
    check_session_owner(
        session(user_id="bob", org_id="other"), "root", who(AD, subject="root"), access=access
    )


def test_backend_acting_for_the_owner_passes_and_for_another_user_does_not() -> None:
    backend = who(B, subject="svc")
    check_session_owner(session(), "alice", backend, effective_org_id="acme")
    err = refused(session(), "bob", backend)
    assert err.code is ErrorCode.SESSION_NOT_FOUND
    # Acting as itself, a backend owns only its own sessions.
    assert refused(session(), "svc", backend).code is ErrorCode.SESSION_NOT_FOUND


def test_approver_may_resume_sessions_of_its_org_but_not_read_or_invoke_them() -> None:
    ann = who(AP, subject="ann")
    check_session_owner(session(user_id="bob"), "ann", ann, access=SessionAccess.RESUME)
    for access in (SessionAccess.READ, SessionAccess.INVOKE):
        err = refused(session(user_id="bob"), "ann", ann, access=access)
        assert err.code is ErrorCode.SESSION_NOT_FOUND
    err = refused(session(user_id="bob", org_id="other"), "ann", ann, access=SessionAccess.RESUME)
    assert err.code is ErrorCode.SESSION_NOT_FOUND


# ---- approvals ------------------------------------------------------------------------------


def test_the_owner_may_approve() -> None:
    check_may_approve("alice", who(U), "alice")


def test_someone_else_may_not() -> None:
    with pytest.raises(RiverbeamError) as info:
        check_may_approve("bob", who(U), "alice")
    assert info.value.code is ErrorCode.APPROVAL_DENIED
    assert info.value.bem == "BEM-053"


def test_an_action_without_an_owner_needs_an_approver() -> None:
    with pytest.raises(RiverbeamError) as info:
        check_may_approve(None, who(U), "alice")
    assert info.value.code is ErrorCode.APPROVAL_DENIED
    check_may_approve(None, who(AP), "alice")


def test_approver_of_the_same_org_may_approve() -> None:
    check_may_approve("bob", who(AP, subject="ann"), "ann", owner_org_id="acme")
    check_may_approve("bob", who(AP, subject="ann"), "ann")


def test_approver_of_another_org_may_not() -> None:
    with pytest.raises(RiverbeamError) as info:
        check_may_approve("bob", who(AP, subject="ann"), "ann", owner_org_id="other")
    assert info.value.code is ErrorCode.APPROVAL_DENIED


def test_unscoped_approver_may_approve_any_org() -> None:
    check_may_approve("bob", who(AP, subject="ann", org=None), "ann", owner_org_id="other")


def test_admin_may_approve_anything() -> None:
    check_may_approve("bob", who(AD, subject="root"), "root", owner_org_id="other")


def test_backend_approves_only_for_the_user_it_acts_for() -> None:
    backend = who(B, subject="svc")
    check_may_approve("bob", backend, "bob")
    with pytest.raises(RiverbeamError) as info:
        check_may_approve("bob", backend, "svc")
    assert info.value.code is ErrorCode.APPROVAL_DENIED
