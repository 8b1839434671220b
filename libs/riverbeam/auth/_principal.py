"""Roles, the authenticated principal, and what each role may do.

The roles matrix (docs/auth.md shows it as a table):

- ``user``: the baseline. Acts as itself only; may set no privileged metadata key.
- ``backend``: may act for any user of its organisation (its ``auth_context.user_id`` is kept);
  may set ``memory_scopes``, restricted to scopes naming the user it acts for or that user's
  organisation.
- ``approver``: may approve any user's pending actions (within its organisation); may set
  ``confirm``.
- ``admin``: everything: acts for anyone, approves anything, reads any session, sets every
  privileged key unrestricted.

Roles add up: a token with ``[backend, approver]`` gets both rows.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["PRIVILEGED_METADATA_KEYS", "Principal", "Role"]


class Role(enum.StrEnum):
    """What a caller is trusted with."""

    USER = "user"
    BACKEND = "backend"
    APPROVER = "approver"
    ADMIN = "admin"


PRIVILEGED_METADATA_KEYS: frozenset[str] = frozenset(
    {"confirm", "sandbox_root", "protected_refs", "memory_scopes"}
)
"""Metadata keys that change what a run may read or do; stripped unless a role allows them."""

_METADATA_ROLES: dict[str, frozenset[Role]] = {
    "confirm": frozenset({Role.APPROVER, Role.ADMIN}),
    "sandbox_root": frozenset({Role.ADMIN}),
    "protected_refs": frozenset({Role.ADMIN}),
    # A backend's scopes are further restricted by the sanitiser to the user it acts for.
    "memory_scopes": frozenset({Role.BACKEND, Role.ADMIN}),
}
# The role sets the checks below ask about, made once (they run several times an invoke).
_ACTS_FOR_USERS = frozenset({Role.BACKEND, Role.ADMIN})
_APPROVES_ANY = frozenset({Role.APPROVER, Role.ADMIN})


def canonical_metadata_key(key: str) -> str | None:
    """The privileged key `key` names (case and surrounding blanks ignored), or None."""
    folded = key.strip().casefold()
    return folded if folded in PRIVILEGED_METADATA_KEYS else None


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller.

    Attributes:
        subject: The caller's stable id; the user id of everything it does as itself.
        org_id: The caller's organisation, or None for an unscoped caller.
        roles: What the caller is trusted with (at least one role).
        name: A display name, for logs.
        description: Free text, for operators.
    """

    subject: str
    org_id: str | None = None
    roles: frozenset[Role] = frozenset({Role.USER})
    name: str | None = None
    description: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.subject, str) or not self.subject.strip():
            raise ValueError("a principal needs a non-empty subject")
        roles = frozenset(Role(r) for r in self.roles)
        if not roles:
            raise ValueError("a principal needs at least one role")
        object.__setattr__(self, "roles", roles)
        if self.org_id == "":
            object.__setattr__(self, "org_id", None)

    def has(self, role: Role) -> bool:
        """Whether the principal holds `role`."""
        return role in self.roles

    def may_act_for_users(self) -> bool:
        """Whether the caller's ``auth_context.user_id`` is honoured (backend or admin)."""
        return not self.roles.isdisjoint(_ACTS_FOR_USERS)

    def may_approve_any(self) -> bool:
        """Whether the caller may approve other users' actions (approver or admin)."""
        return not self.roles.isdisjoint(_APPROVES_ANY)

    def may_read_any_session(self) -> bool:
        """Whether the caller may read and continue any user's session (admin)."""
        return Role.ADMIN in self.roles

    def may_set_privileged_metadata(self, key: str) -> bool:
        """Whether the caller may set metadata `key`.

        Keys outside PRIVILEGED_METADATA_KEYS are always allowed. A backend's
        ``memory_scopes`` are allowed but further restricted by the sanitiser.

        Args:
            key: A metadata key; privileged keys match case-insensitively.

        Returns:
            True when the key may be kept in the caller's request.
        """
        canonical = canonical_metadata_key(key)
        if canonical is None:
            return True
        return not self.roles.isdisjoint(_METADATA_ROLES[canonical])
