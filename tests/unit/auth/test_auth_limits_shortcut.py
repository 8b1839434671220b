"""validate_invoke_limits' shortcut (`_plainly_within`, which skips the per-field string and
content checks when they surely pass) refuses exactly what the full checks refuse: the same
error (BEM code, message, details) or the same pass, for any request and any limits."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riverbeam.auth import RequestLimits, _limits, validate_invoke_limits
from riverbeam.core.errors import RiverbeamError
from riverbeam.types import (
    ActionResponseEnvelope,
    ContentPart,
    InvokeAuthContext,
    InvokePayload,
    InvokeRequest,
    ResumePayload,
)

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
INTERACTION = "2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9"
ACTION = "9c1b2d3e-4f50-4a61-8273-849506172839"
REQUEST = "16d12ddc-651a-431d-997c-a756d5793ebf"

# ASCII, two-, three- and four-byte characters, and an unpaired surrogate (UTF-8 refuses it).
text = st.text(alphabet=st.sampled_from(["a", " ", "é", "日", "😀", "\ud800"]), max_size=8)
maybe_text = st.none() | text
small = st.integers(0, 12)
limits = st.builds(
    RequestLimits,
    max_content_bytes=st.integers(0, 40),
    max_parts=st.integers(0, 4),
    max_metadata_bytes=st.integers(0, 60),
    max_metadata_depth=st.integers(0, 3),
    max_actions=st.integers(0, 3),
    max_name_chars=small,
    max_token_chars=small,
    max_errors=st.integers(0, 3),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | text,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(text, inner, max_size=2),
    max_leaves=4,
)
metadata = st.none() | st.dictionaries(text, json_values, max_size=3)
parts = st.lists(
    st.builds(
        ContentPart.model_construct,
        type=st.just("text"),
        text=maybe_text,
        url=maybe_text,
        data=maybe_text,
        mime_type=maybe_text,
        metadata=st.none() | st.none() | metadata,
    ),
    max_size=5,
)
auths = st.none() | st.builds(
    InvokeAuthContext.model_construct,
    user_id=maybe_text,
    org_id=maybe_text,
    profile_id=maybe_text,
    mcp_token=maybe_text,
)
actions = st.lists(
    st.builds(
        ActionResponseEnvelope.model_construct,
        action_id=st.just(ACTION),
        kind=text,
        request_id=st.just(REQUEST),
        lc_action_id=maybe_text,
        responder_id=maybe_text,
        errors=st.lists(text, max_size=4),
        payload=st.none() | metadata,
    ),
    max_size=4,
)


@st.composite
def requests(draw: st.DrawFn) -> InvokePayload | ResumePayload:
    common: dict[str, Any] = {
        "session_id": SESSION,
        "content": draw(parts),
        "metadata": draw(metadata),
        "auth_context": draw(auths),
        "model_override": draw(maybe_text),
    }
    kind = draw(st.sampled_from([InvokePayload, InvokeRequest, ResumePayload]))
    if kind is ResumePayload:
        return ResumePayload.model_construct(
            agent_name=draw(maybe_text),
            interaction_id=INTERACTION,
            actions=draw(actions),
            **common,
        )
    fields = {"agent_name": draw(text), **common}
    if draw(st.booleans()):
        fields["response_schema"] = draw(st.dictionaries(text, json_values, max_size=2))
    if kind is InvokeRequest:
        fields["actions"] = draw(st.just([]) | actions)
    made: InvokePayload = kind.model_construct(**fields)
    return made


def _outcome(request: InvokePayload | ResumePayload, limits: RequestLimits) -> Any:
    try:
        validate_invoke_limits(request, limits)
    except RiverbeamError as err:
        return ("refused", err.code, str(err), err.details)
    except UnicodeEncodeError as err:
        return ("unencodable", str(err))
    return "passed"


@settings(
    max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(request=requests(), limits=limits)
def test_shortcut_refuses_what_the_full_checks_refuse(
    request: InvokePayload | ResumePayload, limits: RequestLimits, monkeypatch: pytest.MonkeyPatch
) -> None:
    shortcut = _outcome(request, limits)
    with monkeypatch.context() as patched:
        patched.setattr(_limits, "_plainly_within", lambda request, limits: False)
        full = _outcome(request, limits)
    assert shortcut == full


@settings(max_examples=1500, deadline=None)
@given(request=requests(), limits=limits)
def test_shortcut_only_passes_what_the_full_checks_pass(
    request: InvokePayload | ResumePayload, limits: RequestLimits
) -> None:
    try:
        within = _limits._plainly_within(request, limits)
    except UnicodeEncodeError:  # an unpaired surrogate in content the full checks reach too
        _limits._check_strings(request, limits)
        with pytest.raises(UnicodeEncodeError):
            _limits._check_content(request.content, limits)
        return
    if within:
        _limits._check_strings(request, limits)
        _limits._check_content(request.content, limits)


def test_the_usual_invoke_takes_the_shortcut() -> None:
    request = InvokeRequest(
        agent_name="assistant",
        content=[ContentPart.of_text("Hello there, ça va? 日本")],
        session_id=SESSION,
        metadata={"client": "web"},
        auth_context=InvokeAuthContext(user_id="alice", org_id="acme", mcp_token="t"),
    )
    assert _limits._plainly_within(request, RequestLimits())
