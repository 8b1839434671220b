"""Serialization: the pydantic wire models' protobuf and JSON conversions vs raw protobuf.

Baseline: SerializeToString of the protobuf message the model converts to. Then
ParseFromString, the model's to_proto / from_proto (JSON dict <-> json_format, see
libs/riverbeam/types/_base.py), to_json / parse, the parts of to_proto and from_proto taken
apart, and bench/_direct.py: a sketch converting field by field without JSON, checked to give
the same message and model back.
"""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from bench._direct import from_proto_direct, to_proto_direct
from bench._kit import Case, compare, per_call_sync
from bench._payloads import chunk_frame, done_frame, invoke_request_model
from riverbeam.types import WireModel

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _cases(model: WireModel) -> list[Case]:
    cls = type(model)
    message = model.to_proto()
    wire = message.SerializeToString()
    text = model.to_json()
    same_text = model.model_dump_json() == text
    as_dict = model.to_json_dict()
    proto_dict = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    # The sketch is only worth timing if it does the same job.
    assert to_proto_direct(model) == message
    assert from_proto_direct(cls, message) == cls.from_proto(message) == model

    def parse_wire() -> object:
        out = message.__class__()
        out.ParseFromString(wire)
        return out

    def parse_dict() -> object:
        out = message.__class__()
        json_format.ParseDict(as_dict, out)
        return out

    fast, slow = 100, 10
    return [
        Case(
            f"protobuf SerializeToString ({len(wire)} B)",
            per_call_sync(message.SerializeToString, batch=fast),
            baseline=True,
        ),
        Case("protobuf ParseFromString", per_call_sync(parse_wire, batch=fast)),
        Case(
            "model.to_proto()",
            per_call_sync(model.to_proto, batch=slow),
            note="model_dump + json_format.ParseDict",
        ),
        Case("  part: model.to_json_dict()", per_call_sync(model.to_json_dict, batch=slow)),
        Case("  part: json_format.ParseDict", per_call_sync(parse_dict, batch=slow)),
        Case(
            "Model.from_proto(msg)",
            per_call_sync(lambda: cls.from_proto(message), batch=slow),
            note="MessageToDict + fix-ups + validate",
        ),
        Case(
            "  part: json_format.MessageToDict",
            per_call_sync(
                lambda: json_format.MessageToDict(
                    message,
                    preserving_proto_field_name=True,
                    always_print_fields_with_no_presence=True,
                ),
                batch=slow,
            ),
        ),
        Case(
            "  part: model_validate(dict)",
            per_call_sync(lambda: cls.model_validate(proto_dict), batch=slow),
        ),
        Case(
            f"model.to_json() ({len(text)} B)",
            per_call_sync(model.to_json, batch=slow),
            note="the NATS frame format",
        ),
        Case(
            "model.model_dump_json()",
            per_call_sync(model.model_dump_json, batch=slow),
            note="same text as to_json()" if same_text else "differs from to_json()",
        ),
        Case("Model.parse(json)", per_call_sync(lambda: cls.parse(text), batch=slow)),
        Case(
            "sketch: to_proto_direct(model)",
            per_call_sync(lambda: to_proto_direct(model), batch=slow),
            note="bench/_direct.py, same message",
        ),
        Case(
            "sketch: from_proto_direct(Model, msg)",
            per_call_sync(lambda: from_proto_direct(cls, message), batch=slow),
            note="bench/_direct.py, same model",
        ),
    ]


@pytest.mark.parametrize(
    ("label", "build"),
    [
        ("InvokeRequest", invoke_request_model),
        ("StreamChunk (chunk frame)", chunk_frame),
        ("StreamChunk (done frame with AgentResult)", done_frame),
    ],
)
async def test_serialization(label: str, build: object) -> None:
    assert callable(build)
    model: WireModel = build()
    await compare(
        f"4. Serialization: {label}",
        _cases(model),
        n=300,
        warmup=10,
        budget_s=1.5,
        caption="CPU only; each sample averages a batch of calls",
    )
