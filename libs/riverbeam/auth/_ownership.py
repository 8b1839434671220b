"""Who may use a session, and who may answer a pending action."""

from __future__ import annotations

import enum

from riverbeam.auth._principal import Principal, Role
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import Session

__all__ = ["SessionAccess", "check_may_approve", "check_session_owner", "session_not_found"]


class SessionAccess(enum.StrEnum):
    """What a request wants to do with a session."""

    INVOKE = "invoke"
    """Start or continue a conversation: an unknown session id starts a new session."""
    READ = "read"
    """Read the session or its records: the session must exist."""
    RESUME = "resume"
    """Answer pending actions in it: the session must exist; approvers may too."""


def session_not_found() -> RiverbeamError:
    """The one answer for a session that does not exist *or* is not the caller's."""
    return RiverbeamError(ErrorCode.SESSION_NOT_FOUND, "session not found", field="session_id")


def _same_org(a: str | None, b: str | None) -> bool:
    # An unscoped side (None) does not constrain: single-tenant deployments set no org ids.
    return a is None or b is None or a == b


def check_session_owner(
    session: Session | None,
    effective_user_id: str,
    principal: Principal,
    *,
    effective_org_id: str | None = None,
    access: SessionAccess = SessionAccess.INVOKE,
) -> None:
    """Refuse a session that is not the effective user's, exactly as if it did not exist.

    Allowed: a new session (`session` None) for INVOKE; the owner (same user id, and the same
    org when both sides have one); an admin for any access; an approver of the same org for
    RESUME. A stored session without a user id belongs to nobody but admins.

    Args:
        session: The stored session, or None when the store has none with that id.
        effective_user_id: Who the request acts for (`SanitizedInvoke.effective_user_id`).
        principal: The authenticated caller.
        effective_org_id: The effective user's organisation, if known.
        access: What the request does with the session.

    Raises:
        RiverbeamError: BEM-025 (SESSION_NOT_FOUND), the same error a missing session gets.
    """
    if session is None:
        if access is SessionAccess.INVOKE:
            return
        raise session_not_found()
    if principal.may_read_any_session():
        return
    if (
        session.user_id is not None
        and session.user_id == effective_user_id
        and _same_org(session.org_id, effective_org_id)
    ):
        return
    if (
        access is SessionAccess.RESUME
        and Role.APPROVER in principal.roles
        and _same_org(session.org_id, principal.org_id)
    ):
        return
    raise session_not_found()


def check_may_approve(
    owner_user_id: str | None,
    principal: Principal,
    effective_user_id: str,
    *,
    owner_org_id: str | None = None,
) -> None:
    """Refuse to answer an action (or resume an interaction) the caller may not approve.

    Allowed: the owner (the effective user is the user the action was raised for), an admin,
    and an approver whose organisation is the owner's (or either is unscoped).

    Args:
        owner_user_id: The user the action or interaction belongs to (``Action.user_id``).
        principal: The authenticated caller.
        effective_user_id: Who the request acts for.
        owner_org_id: The owner's organisation, if known.

    Raises:
        RiverbeamError: BEM-053 (APPROVAL_DENIED).
    """
    if owner_user_id is not None and owner_user_id == effective_user_id:
        return
    if Role.ADMIN in principal.roles:
        return
    if Role.APPROVER in principal.roles and _same_org(owner_org_id, principal.org_id):
        return
    raise RiverbeamError(
        ErrorCode.APPROVAL_DENIED,
        "only the owner, an approver or an admin may answer this action",
        field="actions",
    )
