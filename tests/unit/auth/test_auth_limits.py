"""Request size and nesting limits."""

from __future__ import annotations

import random
from typing import Any

import pytest

from riverbeam.auth import DEFAULT_LIMITS, RequestLimits, validate_invoke_limits
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import (
    ActionResponseEnvelope,
    ContentPart,
    InvokePayload,
    InvokeRequest,
    ResumePayload,
)

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
INTERACTION = "2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9"
ACTION = "9c1b2d3e-4f50-4a61-8273-849506172839"
REQUEST = "16d12ddc-651a-431d-997c-a756d5793ebf"


def invoke(parts: list[ContentPart] | None = None, metadata: Any = None) -> InvokePayload:
    return InvokePayload(
        agent_name="a",
        content=parts if parts is not None else [ContentPart.of_text("hi")],
        session_id=SESSION,
        metadata=metadata,
    )


def action(payload: Any = None) -> ActionResponseEnvelope:
    return ActionResponseEnvelope(
        action_id=ACTION, kind="confirmation", request_id=REQUEST, payload=payload
    )


def resume(actions: list[ActionResponseEnvelope]) -> ResumePayload:
    return ResumePayload(
        agent_name="a", session_id=SESSION, interaction_id=INTERACTION, actions=actions
    )


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


def refused(request: Any, limits: RequestLimits = DEFAULT_LIMITS) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as info:
        validate_invoke_limits(request, limits)
    return info.value


def test_defaults() -> None:
    assert DEFAULT_LIMITS == RequestLimits(
        max_content_bytes=1024 * 1024,
        max_parts=64,
        max_metadata_bytes=64 * 1024,
        max_metadata_depth=16,
        max_actions=64,
    )


def test_an_ordinary_request_passes() -> None:
    validate_invoke_limits(invoke(metadata={"source": "web", "capabilities": ["vision"]}))
    validate_invoke_limits(resume([action({"approved": True})]))


# ---- content --------------------------------------------------------------------------------


def test_parts_at_the_limit_pass_and_one_more_fails() -> None:
    validate_invoke_limits(invoke([ContentPart.of_text("x")] * 64))
    err = refused(invoke([ContentPart.of_text("x")] * 65))
    assert err.code is ErrorCode.CONTENT_TOO_LARGE
    assert err.details == {"field": "content", "limit": "64", "actual": "65"}


def test_content_bytes_count_text_url_data_and_part_metadata() -> None:
    limits = RequestLimits(max_content_bytes=100)
    parts = [
        ContentPart(type="text", text="a" * 40),
        ContentPart(type="image_url", url="u" * 30),
        ContentPart(type="image_base64", data="d" * 20, mime_type="image/png"),
    ]
    validate_invoke_limits(invoke(parts), limits)  # 90 bytes
    parts.append(ContentPart(type="text", text="", metadata={"k": "v" * 5}))  # +13 -> 103
    err = refused(invoke(parts), limits)
    assert err.code is ErrorCode.CONTENT_TOO_LARGE
    assert err.details["actual"] == "103"


def test_content_bytes_are_utf8_bytes_not_characters() -> None:
    limits = RequestLimits(max_content_bytes=10)
    validate_invoke_limits(invoke([ContentPart.of_text("a" * 10)]), limits)
    assert refused(invoke([ContentPart.of_text("é" * 6)]), limits).code is (
        ErrorCode.CONTENT_TOO_LARGE
    )


def test_default_content_limit_is_one_mebibyte() -> None:
    validate_invoke_limits(invoke([ContentPart.of_text("x" * (1 << 20))]))
    err = refused(invoke([ContentPart.of_text("x" * (1 << 19))] * 2 + [ContentPart.of_text("y")]))
    assert err.code is ErrorCode.CONTENT_TOO_LARGE
    assert err.bem == "BEM-012"


def test_part_metadata_depth_is_limited() -> None:
    part = ContentPart(type="text", text="x", metadata=nested(17))
    err = refused(invoke([part]))
    assert err.code is ErrorCode.METADATA_TOO_LARGE
    assert err.details["field"] == "content[0].metadata"


# ---- metadata -------------------------------------------------------------------------------


def test_metadata_size() -> None:
    limits = RequestLimits(max_metadata_bytes=20)
    validate_invoke_limits(invoke(metadata={"k": "v" * 12}), limits)  # {"k":"vvvvvvvvvvvv"} = 20
    err = refused(invoke(metadata={"k": "v" * 13}), limits)
    assert err.code is ErrorCode.METADATA_TOO_LARGE
    assert err.bem == "BEM-013"
    assert err.details == {"field": "metadata", "limit": "20", "actual": "21"}


def test_default_metadata_limit_is_64_kib() -> None:
    validate_invoke_limits(invoke(metadata={"k": "v" * (64 * 1024 - 10)}))
    assert refused(invoke(metadata={"k": "v" * (64 * 1024)})).code is (ErrorCode.METADATA_TOO_LARGE)


def test_metadata_depth() -> None:
    validate_invoke_limits(invoke(metadata=nested(16)))
    err = refused(invoke(metadata=nested(17)))
    assert err.code is ErrorCode.METADATA_TOO_LARGE
    assert "nested more than 16 levels" in err.message


def test_lists_count_as_levels() -> None:
    limits = RequestLimits(max_metadata_depth=3)
    validate_invoke_limits(invoke(metadata={"a": [[1]]}), limits)
    assert refused(invoke(metadata={"a": [[[1]]]}), limits).code is ErrorCode.METADATA_TOO_LARGE


def test_very_deep_metadata_is_refused_without_recursing() -> None:
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"k": deep}
    request = invoke().model_copy(update={"metadata": deep})
    assert refused(request).code is ErrorCode.METADATA_TOO_LARGE


# ---- actions --------------------------------------------------------------------------------


def test_action_count() -> None:
    validate_invoke_limits(resume([action()] * 64))
    err = refused(resume([action()] * 65))
    assert err.code is ErrorCode.METADATA_TOO_LARGE
    assert err.details["field"] == "actions"


def test_action_payload_size_and_depth() -> None:
    limits = RequestLimits(max_metadata_bytes=30, max_metadata_depth=2)
    err = refused(resume([action(), action({"k": "v" * 40})]), limits)
    assert err.details["field"] == "actions[1].payload"
    err = refused(resume([action({"a": {"b": {"c": 1}}})]), limits)
    assert err.code is ErrorCode.METADATA_TOO_LARGE
    assert err.details["field"] == "actions[0].payload"


def test_invoke_request_actions_are_checked_too() -> None:
    request = InvokeRequest(
        agent_name="a",
        content=[ContentPart.of_text("x")],
        session_id=SESSION,
        actions=[action()] * 3,
    )
    assert refused(request, RequestLimits(max_actions=2)).details["field"] == "actions"


def test_uuid_checks_stay_with_the_wire_types() -> None:
    with pytest.raises(RiverbeamError) as info:
        InvokePayload.parse({"agent_name": "a", "content": [], "session_id": "nope"})
    assert info.value.code is ErrorCode.INVALID_UUID
    with pytest.raises(RiverbeamError) as info:
        ActionResponseEnvelope.parse(
            {"action_id": "nope", "kind": "confirmation", "request_id": REQUEST}
        )
    assert info.value.code is ErrorCode.ACTION_ID_NOT_UUID


def test_the_flat_size_bound_is_never_below_the_encoded_size() -> None:
    from riverbeam.auth._limits import _compact_json, _flat_size_bound

    generator = random.Random(16)
    alphabet = [chr(c) for c in range(128)]
    scalars: list[Any] = [True, False, None, 0, -1, 2**53, -(2**63), 1.5, -2.2250738585072014e-308]
    scalars += [float("inf"), float("-inf"), float("nan"), 1e308, -0.0]
    for _ in range(2000):
        value: dict[str, Any] = {}
        for _ in range(generator.randrange(0, 8)):
            key = "".join(generator.choices(alphabet, k=generator.randrange(0, 12)))
            if generator.random() < 0.5:
                value[key] = "".join(generator.choices(alphabet, k=generator.randrange(0, 40)))
            else:
                value[key] = generator.choice(scalars)
        bound = _flat_size_bound(value)
        assert bound is not None
        assert bound >= len(_compact_json(value)), value
    # Anything else is measured by encoding it.
    others: list[Any] = [{"k": "é"}, {"é": 1}, {"k": [1]}, {"k": {}}, {1: 1}, [1], "s"]
    for other in others:
        assert _flat_size_bound(other) is None


def test_flat_metadata_at_the_limit_passes_and_a_byte_more_is_refused() -> None:
    # {"k":"..."} is 8 bytes around the value.
    limits = RequestLimits(max_metadata_bytes=100)
    validate_invoke_limits(invoke(metadata={"k": "x" * 92}), limits)
    err = refused(invoke(metadata={"k": "x" * 93}), limits)
    assert err.code is ErrorCode.METADATA_TOO_LARGE
    assert err.details["actual"] == "101"
    # Small enough that its bound is within the limit: passes without being measured.
    validate_invoke_limits(invoke(metadata={"k": "x" * 10, "n": 1.5, "b": None}), limits)


def test_small_flat_metadata_is_not_encoded_to_be_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from riverbeam.auth import _limits

    encoded: list[Any] = []
    real = _limits._compact_json

    def counting(value: Any) -> bytes:
        encoded.append(value)
        return real(value)

    monkeypatch.setattr(_limits, "_compact_json", counting)
    validate_invoke_limits(invoke(metadata={"client": "bench", "locale": "en-GB", "n": 2}))
    assert encoded == []
    validate_invoke_limits(invoke(metadata={"client": {"name": "bench"}}))
    assert encoded == [{"client": {"name": "bench"}}]


def test_flat_metadata_is_one_level_deep() -> None:
    validate_invoke_limits(invoke(metadata={"k": "v"}), RequestLimits(max_metadata_depth=1))
    err = refused(invoke(metadata={"k": "v"}), RequestLimits(max_metadata_depth=0))
    assert err.code is ErrorCode.METADATA_TOO_LARGE
    assert err.details["field"] == "metadata"
    assert "nested more than 0 levels" in err.message
