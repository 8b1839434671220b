"""The defaults of seed 001, and the org_id alias."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riverbeam.core import RiverbeamError
from riverbeam.types import (
    ActionRequired,
    ActionResponseEnvelope,
    AgentMessage,
    AgentMetadata,
    AgentResult,
    InvokeAuthContext,
    InvokePayload,
    InvokeRequest,
    ModelConfig,
    ResumePayload,
    TokenUsage,
)
from riverbeam.types._base import _UUID_PATTERN, _canonical_uuid

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
INTERACTION = "40744652-2720-4b10-86ee-7333c1be8165"
ACTION = "9c1b2d3e-4f50-4a61-8273-849506172839"
REQUEST = "2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9"


def _envelope(**extra: object) -> ActionResponseEnvelope:
    return ActionResponseEnvelope.parse(
        {"action_id": ACTION, "kind": "confirmation", "request_id": REQUEST, **extra}
    )


def test_invoke_request_defaults() -> None:
    req = InvokeRequest.parse({"agent_name": "a", "content": [], "session_id": SESSION})
    assert req.stream is False
    assert req.actions == []
    assert req.interaction_id is None and req.request_id is None
    assert req.metadata is None and req.auth_context is None and req.model_override is None


def test_envelope_status_defaults_to_submitted() -> None:
    assert _envelope().status == "submitted"


def test_envelope_responded_at_defaults_to_now_and_is_aware() -> None:
    before = datetime.now(UTC)
    env = _envelope()
    after = datetime.now(UTC)
    assert env.responded_at.tzinfo is not None
    assert env.responded_at.utcoffset() == timedelta(0)
    assert before <= env.responded_at <= after
    assert env.to_json_dict()["responded_at"].endswith("Z")


def test_envelope_keeps_a_given_time_and_offset() -> None:
    env = _envelope(responded_at="2026-06-09T11:46:01.566411+02:00")
    assert env.responded_at == datetime(2026, 6, 9, 9, 46, 1, 566411, tzinfo=UTC)


def test_envelope_refuses_a_naive_time() -> None:
    with pytest.raises(RiverbeamError) as caught:
        _envelope(responded_at="2026-06-09T09:46:01")
    assert caught.value.bem == "BEM-016"


def test_model_config_defaults() -> None:
    model = ModelConfig.parse({"name": "llama3", "provider": "ollama"})
    assert model.modalities == ["text"]
    assert model.capabilities == []
    assert model.cost_per_1k_tokens == 0.0
    assert model.max_tokens == 4096
    assert model.api_key is None and model.provider_config is None and model.extra is None
    # Each model gets its own list.
    other = ModelConfig.parse({"name": "b", "provider": "ollama"})
    assert model.modalities is not other.modalities


def test_agent_defaults() -> None:
    result = AgentResult.parse({"agent_name": "a"})
    assert result.content == [] and result.tool_calls == [] and result.action_required == []
    assert result.interrupted is False and result.token_usage is None
    assert TokenUsage() == TokenUsage(prompt_tokens=0, completion_tokens=0, total_tokens=0)
    assert ActionRequired.parse({"action_id": ACTION, "tool": "git_push"}).kind == "confirmation"
    message = AgentMessage.parse({"role": "ai"})
    assert message.type == "message" and message.is_delta is False
    meta = AgentMetadata.parse({"name": "a"})
    assert meta.supported_modalities == ["text"] and meta.output_modalities == ["text"]


@pytest.mark.parametrize("key", ["org_id", "organization_id"])
def test_org_id_alias(key: str) -> None:
    ctx = InvokeAuthContext.parse({"user_id": "u1", key: "acme"})
    assert ctx.org_id == "acme"
    assert ctx.to_json_dict() == {"user_id": "u1", "org_id": "acme"}


def test_org_id_alias_in_python_and_nested() -> None:
    assert InvokeAuthContext(org_id="acme").org_id == "acme"
    req = InvokeRequest.parse(
        {
            "agent_name": "a",
            "content": [],
            "session_id": SESSION,
            "auth_context": {"organization_id": "acme"},
        }
    )
    assert req.auth_context == InvokeAuthContext(org_id="acme")


def test_org_id_given_twice_is_refused() -> None:
    with pytest.raises(RiverbeamError) as caught:
        InvokeAuthContext.parse({"org_id": "a", "organization_id": "b"})
    assert caught.value.bem == "BEM-016"


def test_uuids_are_kept_canonical() -> None:
    req = InvokeRequest.parse({"agent_name": "a", "content": [], "session_id": SESSION.upper()})
    assert req.session_id == SESSION


def test_invoke_payload_has_no_resume_fields() -> None:
    doc = {"agent_name": "a", "content": [], "session_id": SESSION}
    for field, value in (("interaction_id", INTERACTION), ("actions", [])):
        with pytest.raises(RiverbeamError) as caught:
            InvokePayload.parse({**doc, field: value})
        assert caught.value.bem == "BEM-016"


def test_resume_runs_as_a_streaming_invoke() -> None:
    resume = ResumePayload.parse(
        {
            "agent_name": "author",
            "session_id": SESSION,
            "interaction_id": INTERACTION,
            "actions": [{"action_id": ACTION, "kind": "confirmation", "request_id": REQUEST}],
        }
    )
    assert resume.content == []
    req = resume.as_invoke_request(request_id=REQUEST)
    assert req.stream is True
    assert req.interaction_id == INTERACTION and req.request_id == REQUEST
    assert req.actions == resume.actions


@pytest.mark.parametrize(
    "value",
    [
        SESSION + "\n",
        " " + SESSION,
        "urn:uuid:" + SESSION,
        "{" + SESSION + "}",
        SESSION.replace("-", ""),
        SESSION[:8] + SESSION[9:] + "-",  # 36 characters, a hyphen out of place
        "",
    ],
)
def test_only_the_hyphenated_uuid_form_is_accepted(value: str) -> None:
    with pytest.raises(RiverbeamError) as caught:
        InvokeRequest.parse({"agent_name": "a", "content": [], "session_id": value})
    assert caught.value.bem == "BEM-010"


@settings(max_examples=200, deadline=None)
@given(st.from_regex(_UUID_PATTERN, fullmatch=True))
def test_a_uuid_is_kept_as_uuid_formats_it(value: str) -> None:
    # The validator lowercases the hyphenated form instead of parsing and formatting it.
    assert _canonical_uuid(value) == str(uuid.UUID(value))
    req = InvokeRequest.parse({"agent_name": "a", "content": [], "session_id": value})
    assert req.session_id == str(uuid.UUID(value))
