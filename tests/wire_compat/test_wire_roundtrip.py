"""The seed's JSON examples, locked: JSON -> pydantic -> protobuf -> pydantic -> JSON is lossless,
and a client that knows only the .proto and the protobuf JSON mapping can build every one."""

from __future__ import annotations

import json

import pytest
from _wire_cases import INVALID, VALID, Case, drop_paths, has_path
from google.protobuf import json_format

from riverbeam.core.errors import RiverbeamError, by_code
from riverbeam.types import WIRE_TYPES

# Every JSON example of seeds 001 and 002 (and the examples the brief asked for). Removing one
# of these files must fail the suite, not shrink it.
REQUIRED = {
    "InvokeRequest__seed001_invoke",
    "InvokeAuthContext__all_fields",
    "InvokeAuthContext__organization_id_alias",
    "ContentPart__seed001_text",
    "AgentResult__seed001_result",
    "StreamChunk__seed001_done_frame",
    "ActionResponseEnvelope__seed001_confirmation",
    "AgentResult__seed002_action_required",
    "ResumePayload__seed002_resume",
    "ModelConfig__openai_vision",
}

# Defaults the parser fills in and the dump always shows: the only keys the JSON that comes back
# may have beyond the fixture's.
FILLED: dict[str, frozenset[str]] = {
    "ResumePayload__seed002_resume": frozenset({"actions.0.responded_at"}),
    "ModelConfig__defaults": frozenset(
        {"modalities", "capabilities", "cost_per_1k_tokens", "max_tokens"}
    ),
}

# Accepted spellings that come back in their canonical form.
RENAMED: dict[str, dict[str, str]] = {
    "InvokeAuthContext__organization_id_alias": {"organization_id": "org_id"},
}

# Fixtures the protobuf JSON mapping cannot read as written, and why.
NOT_PROTO_JSON: dict[str, str] = {
    "InvokeAuthContext__organization_id_alias": (
        "organization_id is an alias our JSON parser accepts; the .proto names the field org_id"
    ),
}

# Fixtures the mapping reads, but into a different value, and why.
PROTO_JSON_DIFFERS: dict[str, str] = {
    "ModelConfig__defaults": (
        "modalities, max_tokens and cost_per_1k_tokens have no presence in proto3, so the seed's"
        " defaults ([text], 4096, 0.0) cannot travel: a protobuf client sets them explicitly"
    ),
}

# Negative fixtures a protobuf client cannot even express as invalid, and why.
PROTO_CANNOT_TELL: dict[str, str] = {
    "InvokeRequest__missing_content": "proto3 has no absent repeated field, only an empty one",
    "ResumePayload__missing_actions": "proto3 has no absent repeated field (BEM-067 at runtime)",
}


def _expected_json(case: Case) -> object:
    doc = case.document()
    for old, new in RENAMED.get(case.id, {}).items():
        doc[new] = doc.pop(old)
    return doc


def _ids(cases: list[Case]) -> list[str]:
    return [c.path.stem for c in cases]


def test_every_seed_example_is_a_fixture() -> None:
    assert REQUIRED <= {c.id for c in VALID}


def test_fixture_names_are_wire_types() -> None:
    for case in [*VALID, *INVALID]:
        assert case.type_name in WIRE_TYPES, case.path.name


def test_tables_name_existing_fixtures() -> None:
    valid = {c.id for c in VALID}
    invalid = {c.id for c in INVALID}
    assert set(FILLED) | set(RENAMED) | set(NOT_PROTO_JSON) | set(PROTO_JSON_DIFFERS) <= valid
    assert set(PROTO_CANNOT_TELL) <= invalid


@pytest.mark.parametrize("case", VALID, ids=_ids(VALID))
def test_json_proto_json_roundtrip(case: Case) -> None:
    model = case.model
    original = model.parse(case.document())

    msg = original.to_proto()
    assert isinstance(msg, model.proto_type())
    # Through the bytes too, as gRPC carries them.
    wire = type(msg).FromString(msg.SerializeToString())
    back = model.from_proto(wire)

    assert back == original
    out = back.to_json_dict()
    assert model.parse(out) == original
    assert model.parse(back.to_json()) == original
    assert json.loads(back.to_json()) == out

    filled = FILLED.get(case.id, frozenset())
    for path in filled:
        assert has_path(out, path), f"{path} is listed as filled in but is not in the output"
    assert drop_paths(out, filled) == _expected_json(case)


@pytest.mark.parametrize("case", VALID, ids=_ids(VALID))
def test_json_text_parses_like_the_object(case: Case) -> None:
    model = case.model
    from_text = model.parse(case.text())
    from_object = model.parse(case.document())
    filled = FILLED.get(case.id, frozenset())
    assert drop_paths(from_text.to_json_dict(), filled) == drop_paths(
        from_object.to_json_dict(), filled
    )


@pytest.mark.parametrize("case", VALID, ids=_ids(VALID))
def test_proto_json_mapping_reads_every_fixture(case: Case) -> None:
    """The polyglot promise: ParseDict with only the .proto builds the same value."""
    model = case.model
    proto_type = model.proto_type()
    ours = model.parse(case.document())
    filled = FILLED.get(case.id, frozenset())

    if case.id in NOT_PROTO_JSON:
        with pytest.raises(json_format.ParseError):
            json_format.ParseDict(case.document(), proto_type())
    else:
        msg = json_format.ParseDict(case.document(), proto_type())
        if case.id not in PROTO_JSON_DIFFERS:
            theirs = model.from_proto(msg)
            assert drop_paths(theirs.to_json_dict(), filled) == drop_paths(
                ours.to_json_dict(), filled
            )

    # What we emit is always readable by the mapping, and gives our own message.
    canonical = json_format.ParseDict(ours.to_json_dict(), proto_type())
    assert canonical == ours.to_proto()


@pytest.mark.parametrize("case", INVALID, ids=_ids(INVALID))
def test_negative_fixture_fails_with_its_code(case: Case) -> None:
    assert case.code is not None and by_code(case.code) is not None, case.code
    with pytest.raises(RiverbeamError) as from_object:
        case.model.parse(case.document())
    assert from_object.value.bem == case.code, from_object.value
    assert from_object.value.message.startswith(case.type_name)

    with pytest.raises(RiverbeamError) as from_text:
        case.model.parse(case.text())
    assert from_text.value.bem == case.code, from_text.value


@pytest.mark.parametrize("case", INVALID, ids=_ids(INVALID))
def test_negative_fixture_over_protobuf(case: Case) -> None:
    """A gRPC client sending the same bad value gets the same code, or cannot send it at all."""
    try:
        msg = json_format.ParseDict(case.document(), case.model.proto_type()())
    except json_format.ParseError:
        return  # the contract itself refuses it (unknown field, wrong JSON type, int32 range)
    if case.id in PROTO_CANNOT_TELL:
        case.model.from_proto(msg)
        return
    with pytest.raises(RiverbeamError) as caught:
        case.model.from_proto(msg)
    assert caught.value.bem == case.code, caught.value
