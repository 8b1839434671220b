"""The public surfaces of riverbeam.routing and riverbeam.auth."""

from __future__ import annotations

import importlib

import pytest

EXPECTED = {
    "riverbeam.routing": {
        "DEFAULT_MODEL_NAME",
        "ModelList",
        "ModelRouter",
        "RoutingDecision",
        "RoutingReason",
        "check_agent_accepts",
        "default_model",
        "is_placeholder",
        "token_cost",
    },
    "riverbeam.auth": {
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
        "dev_mode_warning",
        "generate_token",
        "hash_token",
        "sanitize_invoke",
        "sanitize_resume",
        "session_not_found",
        "check_string",
        "validate_invoke_limits",
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_all_is_the_public_surface(name: str) -> None:
    module = importlib.import_module(name)
    assert set(module.__all__) == EXPECTED[name]
    assert sorted(module.__all__) == list(module.__all__) or len(module.__all__) == len(
        set(module.__all__)
    )
    for attr in module.__all__:
        assert getattr(module, attr) is not None
    public = {n for n in dir(module) if not n.startswith("_")}
    # Only the private implementation modules are visible besides __all__.
    assert public - set(module.__all__) == set()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_public_callables_have_docstrings(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        value = getattr(module, attr)
        if callable(value):
            assert value.__doc__, f"{name}.{attr} has no docstring"
