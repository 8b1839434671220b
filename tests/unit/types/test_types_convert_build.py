"""Models built straight from a message (_convert_build) against validating the dict (the
reference): where the build path answers, it gives the very model validation gives (the same
class, field values of the same types in the same order, the same fields set, all the way
down); where it cannot vouch for a message it gives up, and from_proto ends as before.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from _wire_values import VALUES, messages, mutated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, field_validator
from pydantic_core import PydanticCustomError

from riverbeam.core import RiverbeamError
from riverbeam.types import (
    WIRE_TYPES,
    Action,
    ActionResponseEnvelope,
    AgentResult,
    ContentPart,
    Interaction,
    InvokeRequest,
    Message,
    Run,
    Session,
    TokenUsage,
    ToolCallRecord,
    TurnConfig,
    WireModel,
    _convert,
    _convert_build,
    _convert_from,
    _invoke,
)
from riverbeam.v1 import records_pb2, types_pb2

PATHS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = sorted(WIRE_TYPES)
T0 = datetime(2026, 6, 9, 9, 46, 1, 566411, tzinfo=UTC)
SID = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"


def _same_value(built: Any, validated: Any, path: str) -> None:
    assert type(built) is type(validated), (path, built, validated)
    if isinstance(built, BaseModel):
        _same_model(built, validated, path)
    elif isinstance(built, list):
        assert len(built) == len(validated), path
        for i, (a, b) in enumerate(zip(built, validated, strict=True)):
            _same_value(a, b, f"{path}[{i}]")
    elif isinstance(built, dict):
        assert list(built) == list(validated), path
        for key in built:
            _same_value(built[key], validated[key], f"{path}.{key}")
    elif isinstance(built, float):
        assert built == validated or (math.isnan(built) and math.isnan(validated)), path
        assert math.copysign(1, built) == math.copysign(1, validated), path
    elif isinstance(built, datetime):
        assert built == validated and built.tzinfo is validated.tzinfo, path
    else:
        assert built == validated, path


def _same_model(built: Any, validated: Any, path: str = "") -> None:
    assert type(built) is type(validated), path
    assert list(built.__dict__) == list(validated.__dict__), path
    assert built.model_fields_set == validated.model_fields_set, path
    assert type(built.__pydantic_fields_set__) is type(validated.__pydantic_fields_set__), path
    assert built.__pydantic_extra__ == validated.__pydantic_extra__, path
    assert built.__pydantic_private__ == validated.__pydantic_private__, path
    for key, value in built.__dict__.items():
        _same_value(value, validated.__dict__[key], f"{path}.{key}")
    assert built == validated


def _reference(cls: type[WireModel], msg: Any) -> Any:
    try:
        return _convert._from_proto_json(cls, msg)
    except RiverbeamError as exc:
        return exc


class _FrozenClock(datetime):
    """ActionResponseEnvelope.responded_at defaults to now: the same now for both paths."""

    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return datetime(2026, 6, 9, 9, 46, 1, 566411, tzinfo=tz)


def _agrees(cls: type[WireModel], msg: Any) -> Any:
    """The built model (checked against the reference), or None when the build gave up."""
    with mock.patch.object(_invoke, "datetime", _FrozenClock):
        built = _convert_build.build(cls, msg)
        if built is not None:
            reference = _reference(cls, msg)
            assert not isinstance(reference, RiverbeamError), f"built what is refused: {reference}"
            _same_model(built, reference)
            assert cls.from_proto(msg) == built
    return built


@pytest.mark.parametrize("name", NAMES)
@PATHS
@given(data=st.data())
def test_built_values_are_the_validated_values(name: str, data: st.DataObject) -> None:
    value = data.draw(VALUES[name], label=name)
    msg = value.to_proto()
    for m in (msg, type(msg).FromString(msg.SerializeToString())):
        _agrees(type(value), m)


@pytest.mark.parametrize("name", NAMES)
@PATHS
@given(data=st.data())
def test_any_message_is_built_as_validated_or_left_to_validation(
    name: str, data: st.DataObject
) -> None:
    cls = WIRE_TYPES[name]
    msg = data.draw(messages(cls.proto_type()) | mutated(name), label="message")
    _agrees(cls, msg)


# ---- the records the services send each other are built ---------------------------------------


def _session(**extra: Any) -> Session:
    return Session(session_id=SID, user_id="dev", created_at=T0, last_active_at=T0, **extra)


def _records() -> list[WireModel]:
    usage = TokenUsage(prompt_tokens=3, completion_tokens=4, total_tokens=7)
    result = AgentResult(
        agent_name="assistant",
        content=[ContentPart.of_text("Echo: hi")],
        token_usage=usage,
        latency_ms=0.42,
        tool_calls=[ToolCallRecord(tool_name="t", args={"n": 1.5}, result=[1, "x", None])],
        metadata={"k": {"nested": [True, 2]}},
    )
    run = Run(
        run_id="r",
        interaction_id="i",
        session_id=SID,
        agent_name="assistant",
        status="running",
        request_id="q",
        started_at=T0,
        lease_owner="runner-1",
        lease_expires_at=T0,
        lease_epoch=1,
        agent_version="0.1.0",
    )
    return [
        _session(),
        _session(metadata={"client": "bench"}, last_seq=0, org_id="o"),
        Interaction(
            interaction_id="i",
            session_id=SID,
            agent_name="assistant",
            status="in_progress",
            created_at=T0,
            updated_at=T0,
            agent_version="0.1.0",
        ),
        run,
        run.model_copy(
            update={"status": "completed", "finished_at": T0, "model_used": "m", "holders": []}
        ),
        run.model_copy(update={"result": result, "token_usage": usage, "holders": ["a", "b"]}),
        Message(
            message_id="m",
            session_id=SID,
            interaction_id="i",
            run_id="r",
            seq=1,
            role="human",
            content=[ContentPart.of_text("hi"), ContentPart(type="media_ref", media_id=SID)],
            created_at=T0,
        ),
        Message(
            message_id="m2",
            session_id=SID,
            seq=0,
            role="tool",
            type="tool_result",
            tool_name="t",
            tool_args={"path": "a"},
            tool_result={"ok": True},
            created_at=T0,
        ),
        Action(
            action_id=SID,
            session_id=SID,
            interaction_id="i",
            run_id="r",
            tool="git_push",
            args={"remote": "origin"},
            status="resolved",
            created_at=T0,
            resolved_at=T0,
            outcome="approved_ran",
            result=3,
            response=ActionResponseEnvelope(
                action_id=SID, kind="confirmation", request_id=SID, responded_at=T0
            ),
        ),
        InvokeRequest(
            agent_name="assistant",
            content=[ContentPart.of_text("hi")],
            session_id=SID,
            request_id=SID,
            metadata={"client": "bench"},
            auth_context={"user_id": "dev", "org_id": "o"},
            time_limit_s=2.5,
            token_budget=10,
        ),
    ]


@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_records_between_services_are_built(record: WireModel) -> None:
    msg = record.to_proto()
    built = _agrees(type(record), msg)
    assert built is not None, "a record the services send was validated, not built"
    assert built == record
    # It behaves as a validated one: copied with an update, dumped, converted back.
    first = next(iter(type(record).model_fields))
    copy = built.model_copy(update={first: getattr(record, first)})
    assert first in copy.model_fields_set and copy == record
    assert built.to_json() == record.to_json() and built.to_proto() == msg


# ---- what the build leaves to validation ------------------------------------------------------


def _run_msg() -> Any:
    msg = records_pb2.Run(run_id="r", interaction_id="i", session_id="s", agent_name="a")
    msg.status = records_pb2.RUN_STATUS_RUNNING
    msg.started_at.seconds = 1_780_000_000
    return msg


def _tweak(msg: Any, change: Any) -> Any:
    change(msg)
    return msg


_DOUBTFUL: list[tuple[type[WireModel], Any]] = [
    (Run, _tweak(_run_msg(), lambda m: setattr(m.started_at, "nanos", 1))),
    (Run, _tweak(_run_msg(), lambda m: setattr(m, "status", 42))),
    (Run, _tweak(_run_msg(), lambda m: setattr(m, "status", 0))),
    (Run, _tweak(_run_msg(), lambda m: setattr(m, "run_id", ""))),
    (Run, _tweak(_run_msg(), lambda m: m.ClearField("started_at"))),
    (Run, _tweak(_run_msg(), lambda m: m.options.turn_config.SetInParent())),
    (Run, _tweak(_run_msg(), lambda m: setattr(m.token_usage, "prompt_tokens", -1))),
    (Run, _tweak(_run_msg(), lambda m: setattr(m.result, "latency_ms", math.nan))),
    (
        Message,
        records_pb2.Message(message_id="m", session_id="s", seq=-1, role="human"),
    ),
    (Message, records_pb2.Message(message_id="m", session_id="s", role="robot")),
    (ContentPart, types_pb2.ContentPart(type="media_ref", media_id="not-a-uuid")),
    (ContentPart, types_pb2.ContentPart(type="sticker")),
    (Action, records_pb2.Action(action_id="a", session_id="s", kind="")),
    (
        Session,
        _tweak(
            records_pb2.Session(session_id="s"),
            lambda m: m.config.include_tools.append("t"),
        ),
    ),
]


@pytest.mark.parametrize(("cls", "msg"), _DOUBTFUL)
def test_doubtful_messages_are_validated(cls: type[WireModel], msg: Any) -> None:
    assert _convert_build.build(cls, msg) is None
    ours: Any
    try:
        ours = cls.from_proto(msg)
    except RiverbeamError as exc:
        ours = (exc.bem, exc.message)
    reference = _reference(cls, msg)
    if isinstance(reference, RiverbeamError):
        assert ours == (reference.bem, reference.message)
    else:
        assert ours == reference


def _stamps(msg: Any) -> None:
    msg.created_at.seconds = 0  # the epoch: present though all zero
    msg.last_active_at.SetInParent()


@pytest.mark.parametrize(
    ("cls", "msg"),
    [
        # Canonical lowercase: the UUID validator runs on what is built.
        (ContentPart, types_pb2.ContentPart(type="media_ref", media_id=SID.upper())),
        # {} metadata is held as None, but was given.
        (
            ContentPart,
            _tweak(types_pb2.ContentPart(type="text"), lambda m: m.metadata.SetInParent()),
        ),
        (AgentResult, types_pb2.AgentResult(agent_name="a", latency_ms=-0.0)),
        (AgentResult, types_pb2.AgentResult(agent_name="a", latency_ms=3.0)),
        (Session, _tweak(records_pb2.Session(session_id="s"), _stamps)),
    ],
)
def test_edge_values_are_built_as_validated(cls: type[WireModel], msg: Any) -> None:
    built = _agrees(cls, msg)
    assert built is not None


def test_built_metadata_and_media_ids_follow_the_validators() -> None:
    part = ContentPart.from_proto(types_pb2.ContentPart(type="media_ref", media_id=SID.upper()))
    assert part.media_id == SID
    msg = types_pb2.ContentPart(type="text")
    msg.metadata.SetInParent()
    built = _convert_build.build(ContentPart, msg)
    assert built is not None and built.metadata is None and "metadata" in built.model_fields_set


# ---- models it has no plan for ----------------------------------------------------------------


class _Checked(WireModel):
    _proto = types_pb2.ToolDecision

    policy: str
    action: str
    message: str | None = None

    @field_validator("policy")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class _Strict(WireModel):
    model_config = ConfigDict(strict=True)
    _proto = types_pb2.ToolDecision

    policy: str
    action: str
    message: str | None = None


@pytest.mark.parametrize("cls", [_Checked, _Strict, TurnConfig])
def test_models_with_more_than_plain_fields_are_validated(cls: type[WireModel]) -> None:
    msg = cls.proto_type()()
    assert _convert_build.build(cls, msg) is None
    if cls is _Checked:
        decision = types_pb2.ToolDecision(policy="p", action="a")
        assert _Checked.from_proto(decision).policy == "P"


def test_a_timestamp_is_read_as_its_instant_however_full_the_shared_cache() -> None:
    stamp = types_pb2.StreamChunk().timestamp
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for seconds in range(_convert_from._STAMPS_MAX * 2 + 3):
        stamp.seconds, stamp.nanos = seconds, 5000 * (seconds % 7)
        got = _convert_from._time(stamp, True)
        assert got == epoch + timedelta(seconds=seconds, microseconds=5 * (seconds % 7))
        assert got.tzinfo is UTC
        assert len(_convert_from._STAMPS) <= _convert_from._STAMPS_MAX


# ---- the generated functions: both ways of reading a message ----------------------------------


def _builder(cls: type[WireModel], listed: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A new plan's function for cls, finding the set fields with ListFields or a getattr each."""
    monkeypatch.setattr(_convert_build, "LISTED", listed)
    monkeypatch.setattr(_convert_build, "_PLANS", _convert.PlanCache())  # nested ones too
    return _convert_build._plan(cls, cls.proto_type().DESCRIPTOR, top=True)


def _both_agree(cls: type[WireModel], msg: Any, builders: dict[bool, Any]) -> list[Any]:
    """What each way builds (None: refused), each checked against validation."""
    out = []
    for builder in builders.values():
        with mock.patch.object(_invoke, "datetime", _FrozenClock):
            try:
                built = builder(msg)
            except Exception:  # as build(): Fallback, or an annotation's validator refusing
                built = None
            reference = _reference(cls, msg)
        if built is not None:
            assert not isinstance(reference, RiverbeamError), f"built what is refused: {reference}"
            _same_model(built, reference)
        out.append(built)
    return out


def _has_plan(name: str) -> bool:
    cls = WIRE_TYPES[name]
    return _convert_build._plan(cls, cls.proto_type().DESCRIPTOR, top=True) is not None


PLANNED = [name for name in NAMES if _has_plan(name)]


def test_most_wire_types_are_built() -> None:
    assert len(PLANNED) >= 20, PLANNED  # a plan check gone wrong would leave this test empty


@pytest.mark.parametrize("name", PLANNED)
@PATHS
@given(data=st.data())
def test_both_ways_of_reading_build_what_validation_gives(name: str, data: st.DataObject) -> None:
    cls = WIRE_TYPES[name]
    with pytest.MonkeyPatch.context() as patch:
        builders = {listed: _builder(cls, listed, patch) for listed in (True, False)}
    assert all(builders.values()), "a plan for one way and not the other"
    value = data.draw(VALUES[name], label=name)
    msg = data.draw(messages(cls.proto_type()) | mutated(name), label="message")
    for m in (value.to_proto(), msg):
        listed, read = _both_agree(cls, m, builders)
        assert (listed is None) == (read is None), (listed, read)


@pytest.mark.parametrize("listed", [True, False])
@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_records_are_built_either_way(
    record: WireModel, listed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    cls = type(record)
    builder = _builder(cls, listed, monkeypatch)
    msg = record.to_proto()
    (built,) = _both_agree(cls, msg, {listed: builder})
    assert built == record


@pytest.mark.parametrize("listed", [True, False])
def test_doubtful_messages_are_refused_either_way(
    listed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for cls, msg in _DOUBTFUL:
        with pytest.raises((_convert.Fallback, PydanticCustomError)):  # UUIDStr's, say
            _builder(cls, listed, monkeypatch)(msg)


def test_timestamps_read_through_the_shared_cache_are_their_instants() -> None:
    # Build and dict paths look a stamp up in _convert_from._STAMPS first: what is there, and
    # what is not (emptied when full, or nanoseconds), is still the stamp's instant.
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    msg = _run_msg()
    for seconds in range(_convert_from._STAMPS_MAX + 5):
        for nanos in (0, 7000, 7001):
            msg.started_at.seconds, msg.started_at.nanos = seconds, nanos
            want = epoch + timedelta(seconds=seconds, microseconds=nanos // 1000)
            built = _convert_build.build(Run, msg)
            data = _convert_from.to_dict(Run, msg)
            assert data is not None
            if nanos % 1000:
                assert built is None and data["started_at"] == msg.started_at.ToJsonString()
                continue
            assert built is not None and built.started_at == want
            assert built.started_at.tzinfo is UTC and data["started_at"] == want


class _Keywords:
    """A message-like object whose fields no attribute syntax can name."""

    def __init__(self, **values: Any) -> None:
        for name, value in values.items():
            setattr(self, name, value)

    def HasField(self, name: str) -> bool:
        return name == "class"


def test_a_generated_read_gets_fields_no_attribute_syntax_can_name() -> None:
    step = _convert_from._Step
    read = _convert_from._compiled(
        (
            step("from", _convert_from._STR, None, False),
            step("class", _convert_from._OPT, None, False),
            step("import", _convert_from._INT, None, False),
        )
    )
    assert read(_Keywords(**{"from": "x", "class": "", "import": 0})) == {
        "from": "x",
        "class": "",  # present, though falsy
        "import": 0,  # a printed default, after the set fields
    }
    assert list(read(_Keywords(**{"from": "", "class": "", "import": 2}))) == ["class", "import"]
