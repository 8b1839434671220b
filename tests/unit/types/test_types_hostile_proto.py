"""Protobuf messages that no JSON can express are bad input (BEM-016), never an internal error."""

from __future__ import annotations

import math

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ActionResponseEnvelope, InvokeRequest
from riverbeam.v1 import types_pb2


def test_out_of_range_timestamp() -> None:
    msg = types_pb2.ActionResponseEnvelope(
        action_id="9c1b2d3e-4f50-4a61-8273-849506172839",
        kind="confirmation",
        request_id="2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9",
    )
    msg.responded_at.seconds = 2**62  # far past year 9999
    with pytest.raises(RiverbeamError) as info:
        ActionResponseEnvelope.from_proto(msg)
    assert info.value.code is ErrorCode.INVALID_DOCUMENT


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_non_finite_number_in_metadata(number: float) -> None:
    msg = types_pb2.InvokeRequest(
        agent_name="assistant", session_id="5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
    )
    msg.content.add(type="text", text="hi")
    msg.metadata["x"] = number
    with pytest.raises(RiverbeamError) as info:
        InvokeRequest.from_proto(msg)
    assert info.value.code is ErrorCode.INVALID_DOCUMENT
