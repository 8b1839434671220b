"""Hypothesis strategies: valid values of every wire type, and arbitrary protobuf messages.

VALUES[name] builds WIRE_TYPES[name] through its constructor (so through validation), over
wide ranges: the whole datetime range in any offset, -0.0 and huge floats, integers past 2**53,
"" wherever a string may be empty, control characters. messages(proto class) fills any subset of
a message's fields with any value its type can hold, valid for the model or not: what a hostile
gRPC client can send; mutated(name) changes a few fields of a valid value's message.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Literal, get_args

from google.protobuf import struct_pb2
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import strategies as st

from riverbeam.types import (
    Action,
    ActionOutcome,
    ActionPreview,
    ActionRequired,
    ActionResponseEnvelope,
    ActionResponseStatus,
    ActionStatus,
    AgentMessage,
    AgentMetadata,
    AgentResult,
    ContentPart,
    ContentType,
    FrameType,
    Interaction,
    InteractionStatus,
    InvokeAuthContext,
    InvokePayload,
    InvokeRequest,
    MemoryEntry,
    Message,
    MessageRole,
    MessageType,
    Modality,
    ModelConfig,
    Provider,
    ResumePayload,
    Run,
    RunOptions,
    RunStatus,
    Session,
    StreamAck,
    StreamChunk,
    TokenUsage,
    ToolCallRecord,
    ToolDecision,
    ToolExecution,
    ToolExecutionStatus,
    TurnConfig,
    _convert,
)
from riverbeam.types._base import INT32_MAX
from riverbeam.types._result import PreviewCommit, PreviewState

__all__ = ["VALUES", "json_values", "messages", "mutated"]

S = st.SearchStrategy

# ---- valid values -----------------------------------------------------------------------------

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1e-05, 2.5e-07, 1e16, 2.0**53, 3.0, 1.7976931348623157e308])
    | st.text(max_size=10)
)
json_values: S[Any] = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
json_objects: S[dict[str, Any]] = st.dictionaries(st.text(max_size=6), json_values, max_size=4)

texts = st.text(max_size=12)
names = st.text(min_size=1, max_size=12)
uuids = st.uuids().map(str) | st.uuids().map(lambda u: str(u).upper())
finite = st.floats(allow_nan=False, allow_infinity=False)
_offsets = st.builds(
    timezone,
    st.integers(min_value=-23 * 60, max_value=23 * 60).map(lambda m: timedelta(minutes=m)),
)
# Every instant a Timestamp can hold to the microsecond, given in any offset.
times = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=_offsets | st.just(UTC)
) | st.sampled_from(
    [
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime.max.replace(tzinfo=UTC),
    ]
)
int32s = st.integers(0, INT32_MAX)


def opt(strategy: S[Any]) -> S[Any]:
    return st.none() | strategy


def one_of(literal: Any) -> S[Any]:
    return st.sampled_from(get_args(literal))


content_parts = st.builds(
    ContentPart,
    type=one_of(ContentType),
    text=opt(texts),
    url=opt(texts),
    data=opt(texts),
    mime_type=opt(st.sampled_from(["image/png", "audio/ogg", "video/mp4"]) | texts),
    media_id=opt(uuids),
    metadata=opt(json_objects),
)
contents = st.lists(content_parts, max_size=3)
token_usages = st.builds(
    TokenUsage, prompt_tokens=int32s, completion_tokens=int32s, total_tokens=int32s
)
tool_decisions = st.builds(ToolDecision, policy=names, action=names, message=opt(texts))
turn_configs = st.builds(
    TurnConfig,
    include_tools=st.lists(names, max_size=2),
    exclude_tools=st.lists(names, max_size=2),
    prepend_instructions=opt(texts),
    append_instructions=opt(texts),
)
run_options = st.builds(
    RunOptions,
    response_schema=opt(json_objects),
    time_limit_s=opt(st.floats(min_value=0.001, max_value=1e6)),
    token_budget=opt(st.integers(min_value=1, max_value=INT32_MAX)),
    turn_config=opt(turn_configs),
)
tool_calls = st.builds(
    ToolCallRecord,
    tool_name=names,
    args=json_objects,
    tool_call_id=opt(texts),
    result=json_values,
    latency_ms=opt(finite),
    decisions=st.lists(tool_decisions, max_size=2),
)
previews = st.builds(
    ActionPreview,
    tool=names,
    summary=texts,
    commits=st.lists(st.builds(PreviewCommit, id=texts, summary=texts, author=texts), max_size=2),
    diff=texts,
    truncated=st.booleans(),
    diff_bytes=int32s,
    state=st.builds(
        PreviewState,
        branch=opt(texts),
        head=opt(texts),
        origin=opt(texts),
        path=opt(texts),
        blob=opt(texts),
    ),
    commits_truncated=st.booleans(),
)
actions_required = st.builds(
    ActionRequired,
    action_id=uuids,
    kind=names,
    tool=names,
    args=json_objects,
    tool_call_id=opt(texts),
    preview=opt(previews),
)
agent_results = st.builds(
    AgentResult,
    content=contents,
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
    output=json_values,
)
agent_messages = st.builds(
    AgentMessage,
    role=one_of(MessageRole),
    type=one_of(MessageType),
    content=contents,
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
    preview=opt(previews),
)
auth_contexts = st.builds(
    InvokeAuthContext,
    user_id=opt(texts),
    profile_id=opt(texts),
    org_id=opt(texts),
    mcp_token=opt(texts),
)
envelopes = st.builds(
    ActionResponseEnvelope,
    action_id=uuids,
    kind=names,
    request_id=uuids,
    status=one_of(ActionResponseStatus),
    payload=opt(json_objects),
    errors=st.lists(texts, max_size=2),
    responder_id=opt(texts),
    responded_at=times,
    lc_action_id=opt(texts),
)
_invoke_fields: dict[str, S[Any]] = {
    "agent_name": names,
    "content": contents,
    "session_id": uuids,
    "model_override": opt(texts),
    "metadata": opt(json_objects),
    "request_id": opt(uuids),
    "stream": st.booleans(),
    "auth_context": opt(auth_contexts),
    "response_schema": opt(json_objects),
    "time_limit_s": opt(st.floats(min_value=0.001, max_value=1e6)),
    "token_budget": opt(st.integers(1, INT32_MAX)),
    "turn_config": opt(turn_configs),
    "session_config": opt(turn_configs),
}

VALUES: dict[str, S[Any]] = {
    "Action": st.builds(
        Action,
        action_id=names,
        session_id=names,
        interaction_id=names,
        run_id=names,
        kind=names,
        tool=names,
        args=json_objects,
        tool_call_id=opt(texts),
        status=one_of(ActionStatus),
        created_at=times,
        resolved_at=opt(times),
        response=opt(envelopes),
        outcome=opt(one_of(ActionOutcome)),
        result=json_values,
        error=opt(texts),
        agent_name=opt(texts),
        user_id=opt(texts),
        preview=opt(previews),
    ),
    "ActionPreview": previews,
    "ActionRequired": actions_required,
    "ActionResponseEnvelope": envelopes,
    "AgentMessage": agent_messages,
    "AgentMetadata": st.builds(
        AgentMetadata,
        name=names,
        description=opt(texts),
        supported_modalities=st.lists(one_of(Modality), max_size=4),
        output_modalities=st.lists(one_of(Modality), max_size=4),
        tags=st.lists(texts, max_size=3),
        version=opt(texts),
        agent_id=opt(texts),
    ),
    "AgentResult": agent_results,
    "ContentPart": content_parts,
    "Interaction": st.builds(
        Interaction,
        interaction_id=names,
        session_id=names,
        agent_name=names,
        status=one_of(InteractionStatus),
        created_at=times,
        updated_at=times,
    ),
    "InvokeAuthContext": auth_contexts,
    "InvokePayload": st.builds(InvokePayload, **_invoke_fields),
    "InvokeRequest": st.builds(
        InvokeRequest,
        **_invoke_fields,
        interaction_id=opt(uuids),
        actions=st.lists(envelopes, max_size=2),
    ),
    "MemoryEntry": st.builds(
        MemoryEntry,
        scope_name=st.text(min_size=1, max_size=128),
        scope_id=st.text(min_size=1, max_size=256),
        entry_id=names,
        content=names,
        metadata=opt(json_objects),
        created_at=times,
    ),
    "Message": st.builds(
        Message,
        message_id=names,
        session_id=names,
        interaction_id=opt(texts),
        run_id=opt(texts),
        seq=int32s,
        role=one_of(MessageRole),
        type=one_of(Literal["message", "action_result", "tool_result"]),
        content=contents,
        tool_call_id=opt(texts),
        tool_name=opt(texts),
        tool_args=opt(json_objects),
        tool_result=json_values,
        metadata=opt(json_objects),
        created_at=times,
    ),
    "ModelConfig": st.builds(
        ModelConfig,
        name=names,
        provider=one_of(Provider),
        modalities=st.lists(one_of(Modality), max_size=4),
        capabilities=st.lists(texts, max_size=3),
        cost_per_1k_tokens=st.floats(min_value=0, allow_infinity=False),
        max_tokens=st.integers(1, INT32_MAX),
        api_key=opt(texts),
        provider_config=json_values,
        extra=json_values,
    ),
    "ResumePayload": st.builds(
        ResumePayload,
        agent_name=names,
        session_id=uuids,
        interaction_id=uuids,
        content=contents,
        actions=st.lists(envelopes, max_size=2),
        auth_context=opt(auth_contexts),
        metadata=opt(json_objects),
        request_id=opt(uuids),
        model_override=opt(texts),
    ),
    "Run": st.builds(
        Run,
        run_id=names,
        interaction_id=names,
        session_id=names,
        agent_name=names,
        status=one_of(RunStatus),
        request_id=opt(texts),
        started_at=times,
        finished_at=opt(times),
        error_code=opt(texts),
        error_message=opt(texts),
        token_usage=opt(token_usages),
        model_used=opt(texts),
        lease_owner=opt(texts),
        lease_expires_at=opt(times),
        result=opt(agent_results),
        options=opt(run_options),
    ),
    "RunOptions": run_options,
    "Session": st.builds(
        Session,
        session_id=names,
        user_id=opt(texts),
        profile_id=opt(texts),
        org_id=opt(texts),
        created_at=times,
        last_active_at=times,
        metadata=opt(json_objects),
        last_seq=int32s,
        config=opt(turn_configs),
    ),
    "StreamAck": st.builds(
        StreamAck,
        request_id=names,
        interaction_id=names,
        session_id=names,
        subject=names,
        stream_name=names,
        run_id=opt(texts),
    ),
    "StreamChunk": st.builds(
        StreamChunk,
        type=one_of(FrameType),
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
        error_code=opt(texts),
    ),
    "TokenUsage": token_usages,
    "ToolCallRecord": tool_calls,
    "ToolDecision": tool_decisions,
    "ToolExecution": st.builds(
        ToolExecution,
        execution_id=names,
        tool_call_id=opt(texts),
        run_id=names,
        interaction_id=names,
        session_id=names,
        seq=st.integers(1, INT32_MAX),
        tool=names,
        args=json_objects,
        status=one_of(ToolExecutionStatus),
        read_only=st.booleans(),
        idempotent=st.booleans(),
        action_id=opt(texts),
        result_digest=opt(texts),
        result_preview=opt(texts),
        error_code=opt(texts),
        error_message=opt(texts),
        runner_id=opt(texts),
        lease_epoch=opt(st.integers(1, INT32_MAX)),
        requested_at=times,
        started_at=opt(times),
        finished_at=opt(times),
    ),
    "TurnConfig": turn_configs,
}
"""A strategy of valid values for every key of WIRE_TYPES."""


# ---- arbitrary messages -----------------------------------------------------------------------

_FD = FieldDescriptor
_WORDS = st.sampled_from(
    [
        "",
        "a",
        "text",
        "ai",
        "chunk",
        "submitted",
        "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41",
        "5F8915EB-31EB-4F8A-9517-E2C15CE7BC41",
    ]
)
_strings = _WORDS | st.text(max_size=8)
_numbers = st.floats() | st.integers(-(2**60), 2**60).map(float) | st.sampled_from([-0.0, 2.0**53])
_raw_json: S[Any] = st.recursive(
    st.none() | st.booleans() | _numbers | _strings,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_strings, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _values(draw: st.DrawFn) -> struct_pb2.Value:
    out = struct_pb2.Value()
    if draw(st.integers(0, 9)) == 0:
        return out  # no kind set at all
    holder = struct_pb2.Struct()
    holder.update({"v": draw(_raw_json)})  # NaN and infinities included
    out.CopyFrom(holder.fields["v"])
    return out


@st.composite
def messages(draw: st.DrawFn, proto: type[Any], depth: int = 0) -> Any:
    """A message of type proto with any subset of its fields set to any value of their type."""
    msg = proto()
    for field in proto.DESCRIPTOR.fields:
        if not draw(st.booleans()):
            continue
        count = draw(st.integers(0, 2)) if field.is_repeated else 1
        for _ in range(count):
            _set(draw, msg, field, depth)
    return msg


@st.composite
def mutated(draw: st.DrawFn, name: str) -> Any:
    """The message of a valid value of wire type name, with a few fields cleared or changed."""
    value = draw(VALUES[name])
    msg = _convert._to_proto_json(value)
    fields = list(msg.DESCRIPTOR.fields)
    for field in draw(st.lists(st.sampled_from(fields), max_size=3)):
        if draw(st.booleans()):
            msg.ClearField(field.name)
        else:
            _set(draw, msg, field, 2)
    return msg


def _set(draw: st.DrawFn, msg: Any, field: Any, depth: int) -> None:
    name = field.name
    if field.type == _FD.TYPE_MESSAGE:
        full_name = field.message_type.full_name
        target = getattr(msg, name).add() if field.is_repeated else getattr(msg, name)
        if full_name == "google.protobuf.Struct":
            target.SetInParent()
            for key in draw(st.lists(_strings, max_size=3)):
                target.fields[key].CopyFrom(draw(_values()))
        elif full_name == "google.protobuf.Value":
            target.CopyFrom(draw(_values()))
        elif full_name == "google.protobuf.Timestamp":
            target.seconds = draw(
                st.integers(-62135596800, 253402300799)
                | st.integers(-(2**40), 2**40)
                | st.sampled_from([0, -62135596801, 253402300800])
            )
            target.nanos = draw(
                st.integers(0, 999_999).map(lambda us: us * 1000)
                | st.integers(0, 999).map(lambda ms: ms * 1_000_000)
                | st.integers(-5, 1_000_000_005)
            )
        elif depth >= 3:
            target.SetInParent()
        else:
            target.CopyFrom(draw(messages(type(target), depth + 1)))
        return
    if field.type == _FD.TYPE_STRING:
        value: Any = draw(_strings)
    elif field.type == _FD.TYPE_BOOL:
        value = draw(st.booleans())
    elif field.type == _FD.TYPE_INT32:
        value = draw(st.integers(-(2**31), 2**31 - 1) | st.sampled_from([0, 1, -1]))
    elif field.type == _FD.TYPE_DOUBLE:
        value = draw(_numbers)
    elif field.type == _FD.TYPE_ENUM:
        value = draw(st.integers(-1, len(field.enum_type.values) + 1))
    else:
        raise AssertionError(f"no strategy for {field.full_name}")
    if field.is_repeated:
        getattr(msg, name).append(value)
    else:
        setattr(msg, name, value)
