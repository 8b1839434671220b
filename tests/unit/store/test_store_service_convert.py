"""The store servicer's protobuf helpers."""

from __future__ import annotations

from google.protobuf import struct_pb2

from riverbeam.v1 import records_pb2
from riverbeam.v1 import store_service_pb2 as pb
from services.store._convert import enum_name, optional, struct_or_none, value_or_none


def test_structs_keep_integers() -> None:
    request = pb.RememberRequest()
    assert struct_or_none(request, "metadata") is None
    request.metadata.update({"n": 2, "x": 2.5, "deep": [{"k": 1}], "big": 2.0**60})
    got = struct_or_none(request, "metadata")
    assert got == {"n": 2, "x": 2.5, "deep": [{"k": 1}], "big": 2.0**60}
    assert isinstance(got and got["n"], int) and isinstance(got and got["big"], float)


def test_values_and_optionals() -> None:
    request = pb.RecordActionOutcomeRequest(action_id="a")
    assert value_or_none(request, "result") is None and optional(request, "error") is None
    request.result.CopyFrom(struct_pb2.Value(number_value=3))
    request.error = ""
    assert value_or_none(request, "result") == 3 and optional(request, "error") == ""


def test_enum_names() -> None:
    assert (
        enum_name(records_pb2.RunStatus, records_pb2.RUN_STATUS_INTERRUPTED, "RUN_STATUS_")
        == "interrupted"
    )
    assert enum_name(records_pb2.RunStatus, 0, "RUN_STATUS_") == "unspecified"
    assert enum_name(records_pb2.RunStatus, 99, "RUN_STATUS_") == ""
