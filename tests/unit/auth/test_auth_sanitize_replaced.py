"""SanitizedInvoke as sanitising makes it (by its slots, `replaced` without comparing the same
object): the same value its dataclass constructor gives, and `replaced` exactly the fields
whose cleaned value differs (`!=`) from the caller's, for any request and principal."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riverbeam.auth import Principal, Role, SanitizedInvoke, sanitize_invoke, sanitize_resume
from riverbeam.core.errors import RiverbeamError
from riverbeam.types import (
    ActionResponseEnvelope,
    ContentPart,
    InvokeAuthContext,
    InvokePayload,
    InvokeRequest,
    ResumePayload,
    TurnConfig,
)

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
INTERACTION = "2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9"
ACTION = "9c1b2d3e-4f50-4a61-8273-849506172839"
REQUEST = "16d12ddc-651a-431d-997c-a756d5793ebf"

# Every field sanitising may set; any other is the caller's object, as it came.
CANDIDATES = ("metadata", "auth_context", "turn_config", "session_config", "actions", "request_id")

names = st.sampled_from(["alice", "bob", "acme", "other", "", "Alice"])
maybe_name = st.none() | names
auths = st.none() | st.builds(
    InvokeAuthContext, user_id=maybe_name, org_id=maybe_name, profile_id=maybe_name,
    mcp_token=maybe_name,
)  # fmt: skip
keys = st.sampled_from(
    ["client", "confirm", " Confirm ", "sandbox_root", "protected_refs", "memory_scopes", "k"]
)
scopes = st.lists(
    st.fixed_dictionaries({"name": st.just("notes"), "id": names}, optional={"org_id": names}),
    max_size=3,
)
values = st.none() | st.booleans() | st.integers(-3, 3) | names | scopes
metadata = st.none() | st.dictionaries(keys, values, max_size=4)
configs = st.none() | st.builds(
    TurnConfig,
    prepend_instructions=st.none() | st.sampled_from(["", "be terse"]),
    append_instructions=st.none() | st.sampled_from(["", "sign off"]),
    include_tools=st.lists(st.sampled_from(["a", "b"]), max_size=2),
)
principals = st.builds(
    Principal,
    subject=names.filter(bool),
    org_id=st.none() | names.filter(bool),
    roles=st.frozensets(st.sampled_from(list(Role)), min_size=1),
)
answer = st.builds(
    ActionResponseEnvelope,
    action_id=st.just(ACTION),
    kind=st.just("confirmation"),
    request_id=st.just(REQUEST),
    responder_id=maybe_name,
)
actions = st.lists(answer, max_size=2)


@st.composite
def invokes(draw: st.DrawFn) -> InvokePayload:
    kind = draw(st.sampled_from([InvokePayload, InvokeRequest]))
    fields: dict[str, Any] = {
        "agent_name": "kb-assistant",
        "content": [ContentPart.of_text("hi")],
        "session_id": SESSION,
        "metadata": draw(metadata),
        "auth_context": draw(auths),
        "turn_config": draw(configs),
        "session_config": draw(configs),
        "request_id": draw(st.none() | st.just(REQUEST)),
    }
    if kind is InvokeRequest:
        fields["actions"] = draw(actions)
    return kind(**fields)


def _expect_same(clean: SanitizedInvoke[Any], sent: Any) -> None:
    assert type(clean) is SanitizedInvoke
    made = SanitizedInvoke(**{f.name: getattr(clean, f.name) for f in dataclasses.fields(clean)})
    assert clean == made
    assert hash(clean.replaced) == hash(made.replaced)
    assert clean.replaced == {
        k for k in CANDIDATES if getattr(clean.request, k, None) != getattr(sent, k, None)
    }
    assert clean.effective_user_id == clean.request.auth_context.user_id
    with pytest.raises(dataclasses.FrozenInstanceError):
        clean.stripped = ()  # type: ignore[misc]


@settings(max_examples=400, deadline=None)
@given(request=invokes(), principal=principals, request_id=st.none() | st.just(ACTION))
def test_sanitize_invoke_replaced_is_every_changed_field(
    request: InvokePayload, principal: Principal, request_id: str | None
) -> None:
    try:
        clean = sanitize_invoke(request, principal, request_id=request_id)
    except RiverbeamError:
        return  # BEM-052: refused before anything is made
    _expect_same(clean, request)


@settings(max_examples=200, deadline=None)
@given(
    principal=principals,
    auth=auths,
    meta=metadata,
    answers=st.lists(answer, min_size=1, max_size=2),
)
def test_sanitize_resume_replaced_is_every_changed_field(
    principal: Principal,
    auth: InvokeAuthContext | None,
    meta: dict[str, Any] | None,
    answers: list[ActionResponseEnvelope],
) -> None:
    request = ResumePayload(
        agent_name="kb-assistant",
        session_id=SESSION,
        interaction_id=INTERACTION,
        actions=answers,
        metadata=meta,
        auth_context=auth,
    )
    try:
        clean = sanitize_resume(request, principal)
    except RiverbeamError:
        return
    _expect_same(clean, request)
