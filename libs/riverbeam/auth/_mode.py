"""The authentication mode, chosen explicitly, and the authenticator it builds."""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from riverbeam.auth._dev import DevAuthenticator
from riverbeam.auth._principal import Principal, Role
from riverbeam.core.errors import ErrorCode, RiverbeamError

if TYPE_CHECKING:  # the tokens file's reader is imported by the mode that reads one
    from riverbeam.auth._tokens import TokenAuthenticator

__all__ = ["AuthMode", "Authenticator", "authenticator_for"]


class Authenticator(Protocol):
    """Turns an ``authorization`` header value into a principal."""

    def authenticate(self, authorization: str | None) -> Principal:
        """The caller's principal; raises RiverbeamError BEM-050 when there is none."""
        ...


class AuthMode(enum.StrEnum):
    """How the router authenticates. There is no implicit fallback from one to the other."""

    TOKENS = "tokens"
    DEV = "dev"


def authenticator_for(
    mode: AuthMode,
    *,
    tokens_file: str | os.PathLike[str] | None = None,
    dev_subject: str = "dev",
    dev_org_id: str | None = None,
    dev_roles: Iterable[Role] = (),
) -> TokenAuthenticator | DevAuthenticator:
    """Build the authenticator of a mode.

    Args:
        mode: TOKENS (needs `tokens_file`) or DEV (refuses a `tokens_file`, so a deployment
            that configured tokens never silently runs unauthenticated).
        tokens_file: The tokens file, for TOKENS.
        dev_subject: The development principal's subject, for DEV.
        dev_org_id: The development principal's organisation, for DEV.
        dev_roles: Roles the development principal gets on top of ``user``, for DEV.

    Raises:
        RiverbeamError: The mode and its settings do not fit, or the tokens file is invalid.
    """
    if mode is AuthMode.TOKENS:
        if tokens_file is None:
            raise RiverbeamError(
                ErrorCode.TOKENS_FILE_INVALID,
                "auth mode 'tokens' needs a tokens file; use mode 'dev' only for development",
            )
        from riverbeam.auth._tokens import TokenAuthenticator

        return TokenAuthenticator.from_file(tokens_file)
    if tokens_file is not None:
        raise RiverbeamError(
            ErrorCode.TOKENS_FILE_INVALID,
            "auth mode 'dev' ignores tokens; remove the tokens file or use mode 'tokens'",
        )
    return DevAuthenticator(subject=dev_subject, org_id=dev_org_id, roles=dev_roles)
