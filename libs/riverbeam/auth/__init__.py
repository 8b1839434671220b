"""Authentication, roles and request sanitising for the router.

Pure logic, no network: the router's servicer authenticates the ``authorization`` metadata
with an `Authenticator`, cleans the request with `sanitize_invoke` / `sanitize_resume`,
checks sizes with `validate_invoke_limits`, then session ownership with
`check_session_owner` and approvals with `check_may_approve`. See docs/auth.md.
"""

import typing as _typing

from riverbeam._lazy import lazy_exports as _lazy_exports

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

if _typing.TYPE_CHECKING:
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

# Each name's module, imported on first use (PEP 562): importing this package costs only
# what the caller then uses.
_LAZY: dict[str, str | tuple[str, str]] = {
    "DevAuthenticator": "riverbeam.auth._dev",
    "dev_mode_warning": "riverbeam.auth._dev",
    "DEFAULT_LIMITS": "riverbeam.auth._limits",
    "RequestLimits": "riverbeam.auth._limits",
    "check_string": "riverbeam.auth._limits",
    "validate_invoke_limits": "riverbeam.auth._limits",
    "Authenticator": "riverbeam.auth._mode",
    "AuthMode": "riverbeam.auth._mode",
    "authenticator_for": "riverbeam.auth._mode",
    "SessionAccess": "riverbeam.auth._ownership",
    "check_may_approve": "riverbeam.auth._ownership",
    "check_session_owner": "riverbeam.auth._ownership",
    "session_not_found": "riverbeam.auth._ownership",
    "PRIVILEGED_METADATA_KEYS": "riverbeam.auth._principal",
    "Principal": "riverbeam.auth._principal",
    "Role": "riverbeam.auth._principal",
    "SanitizedInvoke": "riverbeam.auth._sanitize",
    "sanitize_invoke": "riverbeam.auth._sanitize",
    "sanitize_resume": "riverbeam.auth._sanitize",
    "TokenAuthenticator": "riverbeam.auth._tokens",
    "generate_token": "riverbeam.auth._tokens",
    "hash_token": "riverbeam.auth._tokens",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
