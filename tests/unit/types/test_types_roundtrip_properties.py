"""Property tests: any valid wire value survives protobuf (object and bytes) and JSON unchanged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any, get_args

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riverbeam.types import (
    ActionRequired,
    ActionResponseEnvelope,
    AgentMessage,
    AgentResult,
    ContentPart,
    ContentType,
    FrameType,
    InvokeAuthContext,
    InvokeRequest,
    MessageRole,
    MessageType,
    ModelConfig,
    Provider,
    StreamChunk,
    TokenUsage,
    ToolCallRecord,
    WireModel,
)
from riverbeam.types._base import INT32_MAX

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Free-form JSON: Struct numbers are doubles, exact for integers up to 2**53.
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=3)

texts = st.text(max_size=16)
names = st.text(min_size=1, max_size=16)
uuids = st.uuids().map(str)
finite = st.floats(allow_nan=False, allow_infinity=False)
offsets = st.builds(
    timezone, st.integers(min_value=-23 * 60, max_value=23 * 60).map(lambda m: timedelta(minutes=m))
)
times = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(9000, 1, 1), timezones=offsets | st.just(UTC)
)


def opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


content_parts = st.builds(
    ContentPart,
    type=st.sampled_from(get_args(ContentType)),
    text=opt(texts),
    url=opt(texts),
    data=opt(texts),
    mime_type=opt(st.sampled_from(["image/png", "audio/ogg", "video/mp4", "text/plain"]) | texts),
    media_id=opt(uuids),
    metadata=opt(json_objects),
)
token_usages = st.builds(
    TokenUsage,
    prompt_tokens=st.integers(0, INT32_MAX),
    completion_tokens=st.integers(0, INT32_MAX),
    total_tokens=st.integers(0, INT32_MAX),
)
tool_calls = st.builds(
    ToolCallRecord,
    tool_name=names,
    args=json_objects,
    tool_call_id=opt(texts),
    result=json_values,
    latency_ms=opt(finite),
)
actions_required = st.builds(
    ActionRequired,
    action_id=uuids,
    kind=names,
    tool=names,
    args=json_objects,
    tool_call_id=opt(texts),
)
agent_results = st.builds(
    AgentResult,
    content=st.lists(content_parts, max_size=3),
    agent_name=names,
    model_used=opt(texts),
    session_id=opt(texts),
    request_id=opt(texts),
    interaction_id=opt(texts),
    run_id=opt(texts),
    token_usage=opt(token_usages),
    tool_calls=st.lists(tool_calls, max_size=2),
    metadata=opt(json_objects),
    latency_ms=opt(finite),
    interrupted=st.booleans(),
    action_required=st.lists(actions_required, max_size=2),
)
agent_messages = st.builds(
    AgentMessage,
    role=st.sampled_from(get_args(MessageRole)),
    type=st.sampled_from(get_args(MessageType)),
    content=st.lists(content_parts, max_size=2),
    id=opt(texts),
    timestamp=opt(times),
    agent_name=opt(texts),
    session_id=opt(texts),
    interaction_id=opt(texts),
    run_id=opt(texts),
    step_id=opt(texts),
    tool_call_id=opt(texts),
    tool_name=opt(texts),
    tool_args=opt(json_objects),
    tool_result=json_values,
    tool_calls=st.lists(tool_calls, max_size=2),
    is_delta=st.booleans(),
    phase=opt(st.sampled_from(["final", "thinking"])),
)
stream_chunks = st.builds(
    StreamChunk,
    type=st.sampled_from(get_args(FrameType)),
    data=opt(agent_messages),
    result=opt(agent_results),
    error=opt(texts),
    agent_name=opt(texts),
    agent_id=opt(texts),
    session_id=opt(texts),
    interaction_id=opt(texts),
    run_id=opt(texts),
    step_id=opt(texts),
    message_id=opt(texts),
    id=opt(texts),
    timestamp=opt(times),
    seq=opt(st.integers(1, INT32_MAX)),
    request_id=opt(texts),
    error_code=opt(st.sampled_from(["BEM-087", "BEM-086"])),
)
envelopes = st.builds(
    ActionResponseEnvelope,
    action_id=uuids,
    kind=names,
    request_id=uuids,
    status=st.sampled_from(["submitted", "cancelled", "expired", "invalid"]),
    payload=opt(json_objects),
    errors=st.lists(texts, max_size=2),
    responder_id=opt(texts),
    responded_at=times,
    lc_action_id=opt(texts),
)
invoke_requests = st.builds(
    InvokeRequest,
    agent_name=names,
    content=st.lists(content_parts, max_size=3),
    session_id=uuids,
    model_override=opt(texts),
    metadata=opt(json_objects),
    interaction_id=opt(uuids),
    request_id=opt(uuids),
    stream=st.booleans(),
    actions=st.lists(envelopes, max_size=2),
    auth_context=opt(
        st.builds(
            InvokeAuthContext,
            user_id=opt(texts),
            profile_id=opt(texts),
            org_id=opt(texts),
            mcp_token=opt(texts),
        )
    ),
)
model_configs = st.builds(
    ModelConfig,
    name=names,
    provider=st.sampled_from(get_args(Provider)),
    modalities=st.lists(st.sampled_from(["text", "image", "audio", "video"]), max_size=4),
    capabilities=st.lists(texts, max_size=3),
    cost_per_1k_tokens=st.floats(min_value=0, allow_infinity=False),
    max_tokens=st.integers(1, INT32_MAX),
    api_key=opt(texts),
    provider_config=json_values,
    extra=json_values,
)


def _assert_roundtrips(value: WireModel) -> None:
    model = type(value)
    msg = value.to_proto()
    assert model.from_proto(msg) == value
    assert model.from_proto(type(msg).FromString(msg.SerializeToString())) == value
    assert model.parse(value.to_json_dict()) == value
    assert model.parse(value.to_json()) == value
    assert model.from_proto(msg).to_json_dict() == value.to_json_dict()


@PROPERTY
@given(content_parts)
def test_content_part_roundtrips(value: ContentPart) -> None:
    _assert_roundtrips(value)


@PROPERTY
@given(agent_results)
def test_agent_result_roundtrips(value: AgentResult) -> None:
    _assert_roundtrips(value)


@PROPERTY
@given(stream_chunks)
def test_stream_chunk_roundtrips(value: StreamChunk) -> None:
    _assert_roundtrips(value)


@PROPERTY
@given(invoke_requests)
def test_invoke_request_roundtrips(value: InvokeRequest) -> None:
    _assert_roundtrips(value)


@PROPERTY
@given(model_configs)
def test_model_config_roundtrips(value: ModelConfig) -> None:
    _assert_roundtrips(value)
