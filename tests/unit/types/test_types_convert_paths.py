"""The direct protobuf conversion against the json_format path it replaced (the reference).

For valid values of every wire type the direct path must handle the value itself (no fallback)
and give the very message ParseDict gives, and back the very dict MessageToDict and its fix-ups
give (same keys, order, values and types; a Timestamp may come as the datetime its text
validates to). For arbitrary messages, what a hostile client may send, and for values that slip
past validation, from_proto / to_proto must end as the reference does: the same model, or the
same error.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, ClassVar
from unittest import mock

import pytest
from _wire_values import VALUES, json_values, messages, mutated
from google.protobuf import struct_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, field_serializer

from riverbeam.core import RiverbeamError
from riverbeam.types import (
    WIRE_TYPES,
    Action,
    AgentResult,
    ContentPart,
    InvokePayload,
    ModelConfig,
    Run,
    StreamChunk,
    TokenUsage,
    ToolCallRecord,
    WireModel,
    _convert,
    _convert_from,
    _convert_to,
    _invoke,
)
from riverbeam.types._base import UtcDatetime
from riverbeam.v1 import records_pb2, types_pb2

PATHS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = sorted(WIRE_TYPES)
_UTC_DATETIME: TypeAdapter[datetime] = TypeAdapter(UtcDatetime)


def _same(direct: Any, reference: Any, path: str = "") -> None:
    """direct == reference, with types, key order and the sign of zero; a datetime stands for
    the text of the same instant."""
    if isinstance(direct, datetime) and isinstance(reference, str):
        assert direct.tzinfo is UTC, path
        assert _UTC_DATETIME.validate_python(reference) == direct, path
        return
    assert type(direct) is type(reference), (path, direct, reference)
    if isinstance(direct, dict):
        assert list(direct) == list(reference), path
        for key in direct:
            _same(direct[key], reference[key], f"{path}.{key}")
    elif isinstance(direct, list):
        assert len(direct) == len(reference), path
        for i, (a, b) in enumerate(zip(direct, reference, strict=True)):
            _same(a, b, f"{path}[{i}]")
    elif isinstance(direct, float):
        assert direct == reference and math.copysign(1, direct) == math.copysign(1, reference), path
    else:
        assert direct == reference, path


def _fields_set(value: Any) -> Any:
    """Which fields each nested model was given: validation of both dicts must agree on it."""
    if isinstance(value, BaseModel):
        return {k: _fields_set(getattr(value, k)) for k in sorted(value.model_fields_set)}
    if isinstance(value, list):
        return [_fields_set(v) for v in value]
    return None


class _FrozenClock(datetime):
    """ActionResponseEnvelope.responded_at defaults to now: the same now for both paths."""

    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return datetime(2026, 6, 9, 9, 46, 1, 566411, tzinfo=tz)


def _outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        with mock.patch.object(_invoke, "datetime", _FrozenClock):
            result = call()
    except RiverbeamError as exc:
        return ("error", exc.bem, exc.message, exc.details)
    except Exception as exc:
        return ("raised", type(exc), str(exc))
    if isinstance(result, WireModel):
        return ("model", result, result.to_json(), _fields_set(result))
    return ("message", result, result.SerializeToString(deterministic=True))


def _same_message(direct: Any, reference: Any) -> None:
    assert direct == reference
    assert direct.SerializeToString(deterministic=True) == reference.SerializeToString(
        deterministic=True
    )


def _in_place(value: WireModel) -> Any:
    """What to_proto_in makes of a new message of the value's type."""
    target = value.proto_type()()
    value.to_proto_in(target)
    return target


def _assert_paths_agree(value: WireModel) -> None:
    cls = type(value)
    reference = _convert._to_proto_json(value)
    direct = _convert_to.to_message(value)
    assert direct is not None, "the direct path fell back on a valid value"
    _same_message(direct, reference)
    assert value.to_proto() == reference
    _same_message(_in_place(value), reference)

    for msg in (reference, type(reference).FromString(reference.SerializeToString())):
        data = _convert_from.to_dict(cls, msg)
        assert data is not None, "the direct path fell back on a valid message"
        _same(data, _convert._proto_dict_json(cls, msg))
        assert _outcome(lambda m=msg: cls.from_proto(m)) == _outcome(  # type: ignore[misc]
            lambda m=msg: _convert._from_proto_json(cls, m)  # type: ignore[misc]
        )


def test_every_wire_type_has_values() -> None:
    assert set(VALUES) == set(WIRE_TYPES)


@pytest.mark.parametrize("name", NAMES)
@PATHS
@given(data=st.data())
def test_direct_path_is_the_json_format_path(name: str, data: st.DataObject) -> None:
    value = data.draw(VALUES[name], label=name)
    assert isinstance(value, WIRE_TYPES[name])
    _assert_paths_agree(value)


@pytest.mark.parametrize("name", NAMES)
@PATHS
@given(data=st.data())
def test_from_proto_of_any_message_ends_as_before(name: str, data: st.DataObject) -> None:
    cls = WIRE_TYPES[name]
    msg = data.draw(messages(cls.proto_type()) | mutated(name), label="message")
    direct = _convert_from.to_dict(cls, msg)
    if direct is not None:
        _same(direct, _convert._proto_dict_json(cls, msg))
    assert _outcome(lambda: cls.from_proto(msg)) == _outcome(
        lambda: _convert._from_proto_json(cls, msg)
    )


def test_to_json_is_the_compact_json_dumps() -> None:
    # model_dump_json() would write 1e-05 as 0.00001: the frames on NATS keep Python's text.
    record = ToolCallRecord(tool_name="t", latency_ms=1e-05, result=[2.5e-07, "é\n"])
    assert record.to_json() == '{"tool_name":"t","result":[2.5e-07,"é\\n"],"latency_ms":1e-05}'


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_to_json_text_is_unchanged(name: str, data: st.DataObject) -> None:
    value = data.draw(VALUES[name], label=name)
    expected = json.dumps(value.to_json_dict(), separators=(",", ":"), ensure_ascii=False)
    assert value.to_json() == expected


# ---- values the direct path leaves to the reference -------------------------------------------


def _run() -> Run:
    return Run(
        run_id="r",
        interaction_id="i",
        session_id="s",
        agent_name="a",
        status="running",
        started_at=datetime(2026, 6, 9, tzinfo=UTC),
    )


def _tampered(value: WireModel, field: str, bad: Any) -> WireModel:
    # Assignment is not validated: a value the model would refuse can reach to_proto.
    object.__setattr__(value, field, bad)
    return value


@pytest.mark.parametrize(
    ("build", "field", "bad"),
    [
        (TokenUsage, "prompt_tokens", 2**31),
        (TokenUsage, "prompt_tokens", -(2**31) - 1),
        (TokenUsage, "prompt_tokens", True),
        (TokenUsage, "prompt_tokens", 3.0),
        (lambda: AgentResult(agent_name="a"), "latency_ms", math.nan),
        (lambda: AgentResult(agent_name="a"), "latency_ms", math.inf),
        (lambda: ModelConfig(name="m", provider="openai"), "cost_per_1k_tokens", -math.inf),
        (lambda: ModelConfig(name="m", provider="openai"), "cost_per_1k_tokens", None),
        (lambda: AgentResult(agent_name="a"), "metadata", {"x": math.nan}),
        (lambda: AgentResult(agent_name="a"), "metadata", {1: "one"}),
        (lambda: AgentResult(agent_name="a"), "metadata", {"t": (1, 2)}),
        (lambda: AgentResult(agent_name="a"), "metadata", {"big": 2**2000}),
        (lambda: AgentResult(agent_name="a"), "metadata", {"s": "\ud800"}),
        (lambda: AgentResult(agent_name="a"), "agent_name", "\udc00"),
        (lambda: AgentResult(agent_name="a"), "content", ["text"]),
        (lambda: AgentResult(agent_name="a"), "content", None),
        (lambda: AgentResult(agent_name="a"), "metadata", {}),
        (lambda: AgentResult(agent_name="a"), "interrupted", 1),
        (lambda: ToolCallRecord(tool_name="t"), "result", {"when": datetime(2026, 1, 1)}),
        (lambda: ToolCallRecord(tool_name="t"), "result", {"s": {1, 2}}),
        (lambda: ToolCallRecord(tool_name="t"), "result", []),
        (lambda: StreamChunk(type="chunk"), "timestamp", datetime(2026, 1, 1)),
        (lambda: StreamChunk(type="chunk"), "seq", "7"),
        (lambda: StreamChunk(type="chunk"), "data", ContentPart(type="text")),
        (_run, "status", "RUNNING"),
        (_run, "status", "paused"),
        (_run, "status", 1),
    ],
)
def test_to_proto_of_a_value_past_validation_ends_as_before(
    build: Callable[[], WireModel], field: str, bad: Any
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns while dumping a value of a wrong type
        assert _outcome(_tampered(build(), field, bad).to_proto) == _outcome(
            lambda: _convert._to_proto_json(_tampered(build(), field, bad))
        )
        assert _outcome(lambda: _in_place(_tampered(build(), field, bad))) == _outcome(
            lambda: _convert._to_proto_json(_tampered(build(), field, bad))
        )


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


@pytest.mark.parametrize("depth", [10, 40, 44, 45, 46, 47, 48, 49, 50, 60, 120])
def test_deep_free_form_values_end_as_before(depth: int) -> None:
    # ParseDict refuses a value nested 100 messages deep; the direct path leaves those to it.
    record = ToolCallRecord(tool_name="t", result=_nested(depth), args={"deep": _nested(depth)})
    assert _outcome(record.to_proto) == _outcome(lambda: _convert._to_proto_json(record))
    msg = _convert._to_proto_json(ToolCallRecord(tool_name="t", result=_nested(min(depth, 40))))
    assert _outcome(lambda: ToolCallRecord.from_proto(msg)) == _outcome(
        lambda: _convert._from_proto_json(ToolCallRecord, msg)
    )


def test_direct_path_handles_the_common_shapes() -> None:
    # Empty containers sent as present values, the epoch, -0.0, unicode keys.
    record = ToolCallRecord(tool_name="t", result={}, args={"": -0.0, "é": [[], {}]})
    _assert_paths_agree(record)
    _assert_paths_agree(ToolCallRecord(tool_name="t", result=[]))
    _assert_paths_agree(StreamChunk(type="chunk", timestamp=datetime(1970, 1, 1, tzinfo=UTC)))
    _assert_paths_agree(AgentResult(agent_name="a", latency_ms=-0.0))
    _assert_paths_agree(ModelConfig(name="m", provider="openai", extra=None))


# ---- messages the direct path leaves to the reference -----------------------------------------


def test_non_finite_struct_numbers_fail_as_before() -> None:
    msg = types_pb2.ContentPart(type="text")
    msg.metadata.update({"x": math.nan})
    assert _convert_from.to_dict(ContentPart, msg) is None
    ours = _outcome(lambda: ContentPart.from_proto(msg))
    assert ours[:2] == ("error", "BEM-016")
    assert ours == _outcome(lambda: _convert._from_proto_json(ContentPart, msg))


@pytest.mark.parametrize(
    ("seconds", "nanos"),
    [(253402300800, 0), (-62135596801, 0), (0, 1_000_000_000), (0, -1)],
)
def test_timestamps_out_of_range_fail_as_before(seconds: int, nanos: int) -> None:
    msg = types_pb2.StreamChunk(type="chunk")
    msg.timestamp.seconds = seconds
    msg.timestamp.nanos = nanos
    ours = _outcome(lambda: StreamChunk.from_proto(msg))
    assert ours[:2] == ("error", "BEM-016")
    assert ours == _outcome(lambda: _convert._from_proto_json(StreamChunk, msg))


@pytest.mark.parametrize("nanos", [1, 999, 123_456_789, 999_999_999])
def test_sub_microsecond_times_are_read_as_before(nanos: int) -> None:
    msg = types_pb2.StreamChunk(type="chunk")
    msg.timestamp.seconds = 1_780_000_000
    msg.timestamp.nanos = nanos
    direct = _convert_from.to_dict(StreamChunk, msg)
    assert direct is not None
    assert direct["timestamp"] == msg.timestamp.ToJsonString()  # the text, as validation read it
    back = StreamChunk.from_proto(msg)
    assert back == _convert._from_proto_json(StreamChunk, msg)
    assert back.timestamp is not None and back.timestamp.microsecond == nanos // 1000


def test_enums_from_any_number_end_as_before() -> None:
    for number in (-1, 0, 1, 5, 6, 99):
        msg = records_pb2.Run(run_id="r", interaction_id="i", session_id="s", agent_name="a")
        msg.started_at.seconds = 1
        msg.status = number  # type: ignore[assignment]
        assert _outcome(lambda m=msg: Run.from_proto(m)) == _outcome(  # type: ignore[misc]
            lambda m=msg: _convert._from_proto_json(Run, m)  # type: ignore[misc]
        )
    action = Action(
        action_id="a",
        session_id="s",
        interaction_id="i",
        run_id="r",
        tool="t",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    ).to_proto()
    action.outcome = 42
    assert _outcome(lambda: Action.from_proto(action))[:2] == ("error", "BEM-014")


def test_a_model_reading_another_models_message() -> None:
    # InvokePayload reads an InvokeRequest: unset resume fields are dropped, set ones refused.
    msg = types_pb2.InvokeRequest(
        agent_name="a", session_id="5f8915eb-31eb-4f8a-9517-e2c15ce7bc41", interaction_id=""
    )
    assert _convert_from.to_dict(InvokePayload, msg) is not None
    assert InvokePayload.from_proto(msg) == _convert._from_proto_json(InvokePayload, msg)
    msg.interaction_id = "x"
    assert _outcome(lambda: InvokePayload.from_proto(msg)) == _outcome(
        lambda: _convert._from_proto_json(InvokePayload, msg)
    )
    assert _outcome(lambda: InvokePayload.from_proto(msg))[:2] == ("error", "BEM-016")


def test_an_unset_value_reads_as_null() -> None:
    msg = types_pb2.ToolCallRecord(tool_name="t")
    msg.result.CopyFrom(struct_pb2.Value())  # present, with no kind
    assert msg.HasField("result")
    assert ToolCallRecord.from_proto(msg) == _convert._from_proto_json(ToolCallRecord, msg)


@settings(max_examples=60, deadline=None)
@given(json_values)
def test_free_form_values_agree(value: Any) -> None:
    _assert_paths_agree(ToolCallRecord(tool_name="t", result=value))


# ---- models the plans refuse: the reference path converts them --------------------------------


class _EnumNamesAString(WireModel):
    _proto = types_pb2.ContentPart
    _proto_enums: ClassVar[Mapping[str, str]] = {"type": "PART_"}  # the hooks rewrite it

    type: str


class _SerializesItsOwnWay(WireModel):
    _proto = types_pb2.ContentPart

    type: str

    @field_serializer("type")
    def _shout(self, value: str) -> str:
        return value.upper()


@pytest.mark.parametrize("cls", [_EnumNamesAString, _SerializesItsOwnWay])
def test_models_the_plans_do_not_cover_convert_as_before(cls: type[WireModel]) -> None:
    value = cls.model_validate({"type": "text"})
    assert _convert_to.to_message(value) is None
    assert value.to_proto() == _convert._to_proto_json(value)
    _same_message(_in_place(value), _convert._to_proto_json(value))
    msg = types_pb2.ContentPart(type="PART_TEXT")
    if cls is _EnumNamesAString:
        assert _convert_from.to_dict(cls, msg) is None
    assert _outcome(lambda: cls.from_proto(msg)) == _outcome(
        lambda: _convert._from_proto_json(cls, msg)
    )


def test_a_compiled_plan_sets_a_field_no_attribute_syntax_can_name() -> None:
    # No wire type has such a field; the generated code goes through setattr for one.
    step = _convert_to._Step
    fill = _convert_to._compiled(
        (
            step("from", _convert_to._STR, False, None),
            step("class", _convert_to._ENUM, False, ("KIND_", {"KIND_A": 1})),
            step("plain", _convert_to._INT, False, None),
            step("unset", _convert_to._STR, False, None),
        )
    )
    target = SimpleNamespace()
    fill(target, SimpleNamespace(**{"from": "x", "class": "a", "plain": 3, "unset": None}), 1)
    assert vars(target) == {"from": "x", "class": 1, "plain": 3}
    with pytest.raises(_convert.Fallback):
        fill(SimpleNamespace(), SimpleNamespace(**{"from": 1, "class": "a", "plain": 3}), 1)
    with pytest.raises(KeyError):
        fill(SimpleNamespace(), SimpleNamespace(**{"from": "x", "class": "b", "plain": 3}), 1)


def test_to_proto_in_makes_the_field_present_as_assigning_its_message_does() -> None:
    usage = TokenUsage()  # its message has no field set
    parent = types_pb2.AgentResult()
    usage.to_proto_in(parent.token_usage)
    assert parent.HasField("token_usage")
    _same_message(parent, types_pb2.AgentResult(token_usage=usage.to_proto()))
    run = Run.model_validate(
        {"run_id": "r", "interaction_id": "i", "session_id": "s", "agent_name": "a",
         "status": "running", "started_at": "2026-01-01T00:00:00Z"}
    )  # fmt: skip
    holder = records_pb2.Run()
    with pytest.raises(TypeError):
        run.to_proto_in(holder.token_usage)  # a message of another type
    assert not holder.HasField("token_usage")
