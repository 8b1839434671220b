"""Sanitising memory scopes: a backend's scopes stay in its organisation."""

from __future__ import annotations

import pytest

from riverbeam.auth import Principal, Role, sanitize_invoke
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._context import memory_scopes
from riverbeam.types import ContentPart, InvokeAuthContext, InvokePayload

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"


def payload(scopes: list[dict[str, str]]) -> InvokePayload:
    return InvokePayload(
        agent_name="assistant",
        session_id=SESSION,
        content=[ContentPart.of_text("hi")],
        auth_context=InvokeAuthContext(user_id="alice", org_id="acme"),
        metadata={"memory_scopes": scopes},
    )


def test_a_backend_keeps_only_scopes_of_its_own_org() -> None:
    backend = Principal("svc", org_id="other", roles=frozenset({Role.BACKEND}))
    cleaned = sanitize_invoke(
        payload(
            [
                {"name": "user", "id": "alice"},
                {"name": "user", "id": "alice", "org_id": "other"},
                {"name": "user", "id": "alice", "org_id": "acme"},
            ]
        ),
        backend,
    )
    # The backend acts in its own org (the claimed "acme" is replaced), and a scope naming
    # acme is dropped even though its id is the user's.
    assert cleaned.effective_org_id == "other"
    assert cleaned.request.metadata == {
        "memory_scopes": [
            {"name": "user", "id": "alice"},
            {"name": "user", "id": "alice", "org_id": "other"},
        ]
    }
    assert cleaned.stripped == ("memory_scopes[2]",)


def test_the_runtime_refuses_a_scope_of_another_org() -> None:
    metadata = {"memory_scopes": [{"name": "user", "id": "alice", "org_id": "acme"}]}
    assert memory_scopes(metadata, org_id="acme") == [("user", "alice")]
    for org in ("other", None):
        with pytest.raises(RiverbeamError) as info:
            memory_scopes(metadata, org_id=org)
        assert info.value.code is ErrorCode.INVALID_MEMORY_SCOPE
