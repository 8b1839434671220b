"""Protobuf conversion: proto3's unset values, enums of the records, and errors."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from riverbeam.core import RiverbeamError
from riverbeam.types import (
    Action,
    AgentMessage,
    AgentResult,
    ContentPart,
    Interaction,
    InvokePayload,
    InvokeRequest,
    ModelConfig,
    ResumePayload,
    Run,
    Session,
    StreamChunk,
    TokenUsage,
)
from riverbeam.v1 import records_pb2, riverbeam_service_pb2, types_pb2

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
INTERACTION = "40744652-2720-4b10-86ee-7333c1be8165"
ACTION = "9c1b2d3e-4f50-4a61-8273-849506172839"
REQUEST = "2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9"
NOW = datetime(2026, 6, 9, 9, 46, 1, 566411, tzinfo=UTC)


def _code(call: object) -> str:
    assert callable(call)
    with pytest.raises(RiverbeamError) as caught:
        call()
    return caught.value.bem


def test_proto_types() -> None:
    assert InvokeRequest.proto_type() is types_pb2.InvokeRequest
    assert InvokePayload.proto_type() is types_pb2.InvokeRequest
    assert ResumePayload.proto_type() is riverbeam_service_pb2.ResumeRequest
    assert Run.proto_type() is records_pb2.Run


def test_missing_strings_over_protobuf_are_missing_fields() -> None:
    # proto3 sends an absent string as "": the caller gets "missing", not "not a UUID".
    no_interaction = riverbeam_service_pb2.ResumeRequest(agent_name="author", session_id=SESSION)
    assert _code(lambda: ResumePayload.from_proto(no_interaction)) == "BEM-062"
    no_session = riverbeam_service_pb2.ResumeRequest(
        agent_name="author", interaction_id=INTERACTION
    )
    assert _code(lambda: ResumePayload.from_proto(no_session)) == "BEM-011"
    no_agent = types_pb2.InvokeRequest(session_id=SESSION)
    assert _code(lambda: InvokeRequest.from_proto(no_agent)) == "BEM-011"
    assert _code(lambda: ContentPart.from_proto(types_pb2.ContentPart())) == "BEM-011"


def test_unset_strings_take_their_default() -> None:
    msg = types_pb2.AgentMessage(role="ai")  # type left unset
    assert AgentMessage.from_proto(msg).type == "message"
    result = types_pb2.AgentResult(
        agent_name="a",
        action_required=[types_pb2.ActionRequired(action_id=ACTION, tool="git_push")],
    )
    assert AgentResult.from_proto(result).action_required[0].kind == "confirmation"


def test_optional_strings_keep_an_explicit_empty_value() -> None:
    part = ContentPart(type="text", text="")
    assert ContentPart.from_proto(part.to_proto()).text == ""
    msg = types_pb2.InvokeRequest(agent_name="a", session_id=SESSION, interaction_id="", content=[])
    assert _code(lambda: InvokeRequest.from_proto(msg)) == "BEM-010"


def test_invoke_payload_reads_an_invoke_request_without_resume_fields() -> None:
    payload = InvokePayload(agent_name="a", content=[], session_id=SESSION, stream=True)
    assert InvokePayload.from_proto(payload.to_proto()) == payload
    msg = payload.to_proto()
    msg.actions.add(action_id=ACTION, kind="confirmation", request_id=REQUEST)
    assert _code(lambda: InvokePayload.from_proto(msg)) == "BEM-016"


def test_bad_values_from_protobuf_get_their_codes() -> None:
    frame = types_pb2.StreamChunk(type="progress")
    assert _code(lambda: StreamChunk.from_proto(frame)) == "BEM-014"
    answer = types_pb2.ActionResponseEnvelope(
        action_id="a1", kind="confirmation", request_id=REQUEST
    )
    req = types_pb2.InvokeRequest(agent_name="a", session_id=SESSION, actions=[answer])
    assert _code(lambda: InvokeRequest.from_proto(req)) == "BEM-063"
    bad_session = types_pb2.InvokeRequest(agent_name="a", session_id="nope")
    assert _code(lambda: InvokeRequest.from_proto(bad_session)) == "BEM-010"


def test_record_enums_map_to_proto_enums() -> None:
    run = Run(
        run_id="r",
        interaction_id=INTERACTION,
        session_id=SESSION,
        agent_name="a",
        status="interrupted",
        started_at=NOW,
    )
    msg = run.to_proto()
    assert msg.status == records_pb2.RUN_STATUS_INTERRUPTED
    assert Run.from_proto(msg) == run
    action = Action(
        action_id=ACTION,
        session_id=SESSION,
        interaction_id=INTERACTION,
        run_id="r",
        tool="git_push",
        created_at=NOW,
        outcome="approved_ran",
    )
    msg = action.to_proto()
    assert msg.status == records_pb2.ACTION_STATUS_PENDING
    assert msg.outcome == records_pb2.ACTION_OUTCOME_APPROVED_RAN
    assert Action.from_proto(msg) == action
    msg.outcome = records_pb2.ACTION_OUTCOME_UNSPECIFIED
    assert Action.from_proto(msg).outcome is None


def test_unspecified_required_enum_is_missing() -> None:
    msg = records_pb2.Interaction(interaction_id=INTERACTION, session_id=SESSION, agent_name="a")
    msg.created_at.FromDatetime(NOW)
    msg.updated_at.FromDatetime(NOW)
    assert _code(lambda: Interaction.from_proto(msg)) == "BEM-011"


def test_record_times_must_be_aware() -> None:
    # A naive time has no place on the wire: protobuf Timestamps are UTC instants.
    with pytest.raises(ValidationError):
        Session(session_id=SESSION, created_at=datetime(2026, 1, 1), last_active_at=NOW)
    session = Session(session_id=SESSION, created_at=NOW, last_active_at=NOW, last_seq=3)
    assert Session.from_proto(session.to_proto()) == session


def test_struct_numbers_come_back_as_json_numbers() -> None:
    part = ContentPart(type="text", metadata={"n": 3, "x": 1.5, "deep": [{"k": 2}]})
    back = ContentPart.from_proto(part.to_proto())
    assert back.metadata == {"n": 3, "x": 1.5, "deep": [{"k": 2}]}
    assert isinstance(back.metadata["n"], int)


def test_integers_are_bounded_by_int32() -> None:
    with pytest.raises(ValidationError):
        TokenUsage(prompt_tokens=2**31)
    with pytest.raises(ValidationError):
        StreamChunk(type="chunk", seq=2**31)
    with pytest.raises(ValidationError):
        ModelConfig(name="m", provider="openai", max_tokens=2**31)
    usage = TokenUsage(prompt_tokens=2**31 - 1)
    assert TokenUsage.from_proto(usage.to_proto()) == usage


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_floats_are_refused(value: float) -> None:
    # JSON has no Infinity or NaN; they would silently become null.
    assert _code(lambda: AgentResult.parse({"agent_name": "a", "latency_ms": value})) == "BEM-016"


def test_to_proto_failures_are_catalog_errors() -> None:
    # A value that slips past validation (assignment is not validated) still gives a BEM code.
    usage = TokenUsage()
    usage.prompt_tokens = 2**40
    assert _code(usage.to_proto) == "BEM-016"


def test_times_are_held_in_utc() -> None:
    frame = StreamChunk.parse({"type": "chunk", "timestamp": "2026-06-09T11:46:01.5+02:00"})
    assert frame.timestamp is not None and frame.timestamp.tzinfo is UTC
    assert frame.to_json_dict()["timestamp"] == "2026-06-09T09:46:01.500000Z"
    back = StreamChunk.from_proto(frame.to_proto())
    assert back.to_json_dict() == frame.to_json_dict()


def test_a_time_outside_the_utc_range_is_refused() -> None:
    doc = {"type": "chunk", "timestamp": "0001-01-01T00:30:00+01:00"}
    assert _code(lambda: StreamChunk.parse(doc)) == "BEM-016"
