"""Development mode: every call is accepted as one fixed principal, with no token."""

from __future__ import annotations

from collections.abc import Iterable

from riverbeam.auth._principal import Principal, Role

__all__ = ["DevAuthenticator", "dev_mode_warning"]


class DevAuthenticator:
    """Accepts every call, authenticated or not, as one configured principal.

    The principal always has the ``user`` role; any further role must be asked for. Never run
    it where the router is reachable by anyone but the developer.

    Args:
        subject: The principal's subject.
        org_id: The principal's organisation.
        roles: Roles granted on top of ``user``.
    """

    def __init__(
        self,
        *,
        subject: str = "dev",
        org_id: str | None = None,
        roles: Iterable[Role] = (),
    ) -> None:
        self._principal = Principal(
            subject=subject,
            org_id=org_id,
            roles=frozenset({Role.USER, *roles}),
            name="development mode",
            description="unauthenticated development principal",
        )

    def __repr__(self) -> str:
        return f"DevAuthenticator(principal={self._principal!r})"

    @property
    def principal(self) -> Principal:
        """The principal every call runs as."""
        return self._principal

    def authenticate(self, authorization: str | None) -> Principal:
        """The development principal, whatever the header says (it is not read)."""
        del authorization
        return self._principal


def dev_mode_warning(principal: Principal) -> str:
    """The banner a service logs at start-up when it runs in development mode."""
    roles = ", ".join(sorted(str(r) for r in principal.roles))
    line = "!" * 78
    return "\n".join(
        [
            line,
            "!! RIVERBEAM AUTHENTICATION IS OFF (development mode)",
            "!! Every call is accepted without a token, as:",
            f"!!   subject={principal.subject} org_id={principal.org_id or '-'} roles=[{roles}]",
            "!! Anyone who can reach this port can act with those roles.",
            "!! Never use development mode outside a developer's machine; configure a",
            "!! tokens file instead (see docs/auth.md).",
            line,
        ]
    )
