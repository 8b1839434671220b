"""Development mode and the explicit choice of mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from riverbeam.auth import (
    Authenticator,
    AuthMode,
    DevAuthenticator,
    Role,
    TokenAuthenticator,
    authenticator_for,
    dev_mode_warning,
    hash_token,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError


def test_dev_principal_is_a_plain_user_by_default() -> None:
    dev = DevAuthenticator()
    principal = dev.authenticate(None)
    assert principal.subject == "dev"
    assert principal.roles == frozenset({Role.USER})
    assert not principal.may_act_for_users()
    assert not principal.may_approve_any()


def test_dev_roles_are_added_on_request() -> None:
    dev = DevAuthenticator(subject="me", org_id="lab", roles=[Role.BACKEND, Role.APPROVER])
    principal = dev.authenticate("Bearer whatever")
    assert principal.subject == "me" and principal.org_id == "lab"
    assert principal.roles == frozenset({Role.USER, Role.BACKEND, Role.APPROVER})
    assert dev.principal is principal


@pytest.mark.parametrize("header", [None, "", "Bearer x", "garbage"])
def test_dev_accepts_any_header(header: str | None) -> None:
    assert DevAuthenticator().authenticate(header).subject == "dev"


def test_warning_is_loud_and_names_the_identity() -> None:
    principal = DevAuthenticator(subject="me", roles=[Role.ADMIN]).principal
    text = dev_mode_warning(principal)
    assert "AUTHENTICATION IS OFF" in text
    assert "subject=me" in text
    assert "admin, user" in text
    assert "docs/auth.md" in text
    assert text.splitlines()[0] == "!" * 78


def test_tokens_mode_loads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(f"- token_sha256: {hash_token('a-long-enough-token-xyz')}\n  subject: a\n")
    auth = authenticator_for(AuthMode.TOKENS, tokens_file=path)
    assert isinstance(auth, TokenAuthenticator)
    assert auth.authenticate("Bearer a-long-enough-token-xyz").subject == "a"
    with pytest.raises(RiverbeamError) as info:
        auth.authenticate(None)
    assert info.value.code is ErrorCode.UNAUTHENTICATED


def test_tokens_mode_needs_a_file_and_never_falls_back_to_dev() -> None:
    with pytest.raises(RiverbeamError, match="needs a tokens file"):
        authenticator_for(AuthMode.TOKENS)


def test_dev_mode_refuses_a_tokens_file(tmp_path: Path) -> None:
    with pytest.raises(RiverbeamError, match="mode 'dev' ignores tokens"):
        authenticator_for(AuthMode.DEV, tokens_file=tmp_path / "tokens.yaml")


def test_dev_mode_builds_the_dev_authenticator() -> None:
    auth = authenticator_for(
        AuthMode.DEV, dev_subject="me", dev_org_id="lab", dev_roles=[Role.APPROVER]
    )
    assert isinstance(auth, DevAuthenticator)
    assert auth.principal.roles == frozenset({Role.USER, Role.APPROVER})
    assert auth.principal.org_id == "lab"


def test_modes_parse_from_strings() -> None:
    assert AuthMode("dev") is AuthMode.DEV
    assert AuthMode("tokens") is AuthMode.TOKENS


def test_both_authenticators_satisfy_the_protocol() -> None:
    implementations: list[Authenticator] = [
        DevAuthenticator(),
        TokenAuthenticator({hash_token("t" * 20): DevAuthenticator().principal}),
    ]
    assert [type(a).__name__ for a in implementations] == [
        "DevAuthenticator",
        "TokenAuthenticator",
    ]
