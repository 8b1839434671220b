"""Authentication, roles and request sanitising for the router.

Pure logic, no network: the router's servicer authenticates the ``authorization`` metadata
with an `Authenticator`, cleans the request with `sanitize_invoke` / `sanitize_resume`,
checks sizes with `validate_invoke_limits`, then session ownership with
`check_session_owner` and approvals with `check_may_approve`. See docs/auth.md.
"""

from riverbeam.auth._dev import DevAuthenticator, dev_mode_warning
from riverbeam.auth._limits import (
    DEFAULT_LIMITS,
    RequestLimits,
    check_string,
    validate_invoke_limits,
)
from riverbeam.auth._mode import Authenticator, AuthMode, authenticator_for
from riverbeam.auth._ownership import (
    SessionAccess,
    check_may_approve,
    check_session_owner,
    session_not_found,
)
from riverbeam.auth._principal import PRIVILEGED_METADATA_KEYS, Principal, Role
from riverbeam.auth._sanitize import SanitizedInvoke, sanitize_invoke, sanitize_resume
from riverbeam.auth._tokens import TokenAuthenticator, generate_token, hash_token

__all__ = [
    "DEFAULT_LIMITS",
    "PRIVILEGED_METADATA_KEYS",
    "AuthMode",
    "Authenticator",
    "DevAuthenticator",
    "Principal",
    "RequestLimits",
    "Role",
    "SanitizedInvoke",
    "SessionAccess",
    "TokenAuthenticator",
    "authenticator_for",
    "check_may_approve",
    "check_session_owner",
    "check_string",
    "dev_mode_warning",
    "generate_token",
    "hash_token",
    "sanitize_invoke",
    "sanitize_resume",
    "session_not_found",
    "validate_invoke_limits",
]
