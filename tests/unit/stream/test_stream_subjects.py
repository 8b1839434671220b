"""Subjects, message ids and the stream settings."""

from __future__ import annotations

import uuid

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream import (
    StreamConfig,
    cancel_subject_for,
    msg_id_for,
    request_id_token,
    subject_for,
)

RID = "16d12ddc-651a-431d-997c-a756d5793ebf"


def test_subjects_of_a_request() -> None:
    assert subject_for(RID) == f"riverbeam.stream.{RID}"
    assert cancel_subject_for(RID) == f"riverbeam.control.cancel.{RID}"
    assert msg_id_for(RID, 7) == f"{RID}:7"
    assert subject_for(RID, prefix="tenant1.frames") == f"tenant1.frames.{RID}"


def test_request_id_is_canonicalised() -> None:
    assert request_id_token(RID.upper()) == RID
    assert subject_for(RID.upper()) == subject_for(RID)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "*",
        ">",
        "a.b",
        "riverbeam.stream.>",
        f"{RID}.x",
        f"{RID[:-1]}*",
        f"{RID[:-1]}>",
        f" {RID[1:]}",
        f"{RID[:8]} {RID[9:]}",
        f"{RID}\n",
        f"{{{RID}}}",
        f"urn:uuid:{RID}",
        uuid.UUID(RID).hex,
        "16d12ddc651a-431d-997c-a756d5793eb-f",  # hyphens in the wrong places
        "zzzzzzzz-651a-431d-997c-a756d5793ebf",
        None,
        123,
        uuid.UUID(RID),
    ],
)
def test_anything_but_a_uuid_is_refused(bad: object) -> None:
    for make in (subject_for, cancel_subject_for, request_id_token):
        with pytest.raises(RiverbeamError) as info:
            make(bad)  # type: ignore[arg-type]
        assert info.value.code is ErrorCode.INVALID_UUID
        assert info.value.details["field"] == "request_id"


def test_stream_config_defaults() -> None:
    config = StreamConfig()
    assert config.name == "RIVERBEAM_STREAM"
    assert config.subject_prefix == "riverbeam.stream"
    assert config.subjects == ["riverbeam.stream.>"]
    assert config.max_age_s == 24 * 3600
    assert config.duplicate_window_s == 120
    assert config.max_bytes is None
    assert config.replicas == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"name": "has.dot"},
        {"name": "has space"},
        {"name": "star*"},
        {"name": ""},
        {"subject_prefix": "riverbeam.*"},
        {"subject_prefix": "riverbeam.>"},
        {"subject_prefix": "riverbeam..stream"},
        {"subject_prefix": ""},
        {"max_age_s": 0},
        {"duplicate_window_s": 0},
        {"max_age_s": 60, "duplicate_window_s": 120},
        {"max_bytes": 0},
        {"replicas": 0},
    ],
)
def test_stream_config_refuses_bad_settings(kwargs: dict[str, object]) -> None:
    with pytest.raises(RiverbeamError) as info:
        StreamConfig(**kwargs)  # type: ignore[arg-type]
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
