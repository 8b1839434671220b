"""The invoke Grant the gateway holds per caller identity is the one it would make anew, for
any sequence of callers: no caller is ever given another identity's grant."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riverbeam.auth import DevAuthenticator, Principal, Role, SanitizedInvoke, sanitize_invoke
from riverbeam.core.errors import RiverbeamError
from riverbeam.gateway import Gateway, _gateway
from riverbeam.routing import ModelList
from riverbeam.runtime import Grant
from riverbeam.store import InMemoryStore
from riverbeam.types import ContentPart, InvokeAuthContext, InvokeRequest

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"

names = st.sampled_from(["alice", "bob", "acme", "other"])
principals = st.builds(
    Principal,
    subject=names,
    org_id=st.none() | names,
    roles=st.frozensets(st.sampled_from(list(Role)), min_size=1),
)
calls = st.tuples(
    principals,
    st.none() | st.builds(InvokeAuthContext, user_id=st.none() | names, org_id=st.none() | names),
    st.booleans(),
)


def _gateway_under_test() -> Gateway:
    return Gateway(
        authenticator=DevAuthenticator(),
        runner=object(),  # type: ignore[arg-type]  # never called: only the grant is made
        store=InMemoryStore(),
        models=ModelList.default(),
    )


def _made_anew(principal: Principal, clean: SanitizedInvoke[Any]) -> Grant:
    """What the invoke path made on every call before grants were held."""
    return Grant(
        may_confirm=clean.may_confirm,
        subject=principal.subject,
        require_owner=None if principal.may_read_any_session() else clean.effective_user_id,
        require_org=None if principal.may_read_any_session() else clean.effective_org_id,
        session_config_narrows_only=not principal.may_act_for_users(),
    )


def _clean(principal: Principal, auth: InvokeAuthContext | None, confirm: bool) -> Any:
    request = InvokeRequest(
        agent_name="assistant",
        content=[ContentPart.of_text("hi")],
        session_id=SESSION,
        metadata={"confirm": confirm},
        auth_context=auth,
    )
    try:
        return sanitize_invoke(request, principal)
    except RiverbeamError:
        return None  # BEM-052: no grant is made


@settings(max_examples=300, deadline=None)
@given(sequence=st.lists(calls, min_size=1, max_size=12))
def test_held_grant_is_the_one_made_anew(
    sequence: list[tuple[Principal, InvokeAuthContext | None, bool]],
) -> None:
    gateway = _gateway_under_test()
    for principal, auth, confirm in sequence:
        clean = _clean(principal, auth, confirm)
        if clean is None:
            continue
        expected = _made_anew(principal, clean)
        for _ in range(2):  # made, then held
            grant = gateway._invoke_grant(principal, clean)
            assert grant == expected
            assert dataclasses.astuple(grant) == dataclasses.astuple(expected)


def test_grant_is_immutable_and_the_held_one_is_reused() -> None:
    gateway = _gateway_under_test()
    principal = Principal("alice", org_id="acme")
    clean = _clean(principal, None, False)
    first = gateway._invoke_grant(principal, clean)
    assert gateway._invoke_grant(principal, clean) is first
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.subject = "mallory"  # type: ignore[misc]


def test_held_grants_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_gateway, "_INVOKE_GRANTS_HELD", 3)
    gateway = _gateway_under_test()
    for n in range(10):
        principal = Principal(f"user-{n}", org_id="acme")
        clean = _clean(principal, None, False)
        assert gateway._invoke_grant(principal, clean) == _made_anew(principal, clean)
        assert len(gateway._invoke_grants) <= 3


class _Narrower(Principal):
    """A principal subclass that answers a check otherwise: its grant is never held."""

    def may_read_any_session(self) -> bool:
        return True


def test_a_principal_subclass_is_never_held() -> None:
    gateway = _gateway_under_test()
    plain = Principal("alice", org_id="acme")
    odd = _Narrower("alice", org_id="acme")
    clean = _clean(plain, None, False)
    assert gateway._invoke_grant(plain, clean).require_owner == "alice"
    assert gateway._invoke_grant(odd, clean).require_owner is None
    assert gateway._invoke_grant(odd, clean) == _made_anew(odd, clean)
