"""Every fixture validates against the published JSON Schema of its type, and the schema refuses
the negative fixtures: a consumer in another language that validates with the schema agrees with
our parser."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from _wire_cases import INVALID, VALID, Case
from jsonschema import Draft202012Validator

from riverbeam.types import json_schema

# Negative fixtures the schema cannot refuse with the validators used here, and why.
SCHEMA_CANNOT_TELL: dict[str, str] = {
    "ActionResponseEnvelope__naive_responded_at": (
        "RFC 3339 date-time requires an offset, but the jsonschema package checks the"
        " date-time format only when rfc3339-validator is installed"
    ),
}


@cache
def _validator(type_name: str) -> Draft202012Validator:
    schema = json_schema(type_name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _errors(type_name: str, document: Any) -> list[str]:
    return [e.message for e in _validator(type_name).iter_errors(document)]


def _ids(cases: list[Case]) -> list[str]:
    return [c.path.stem for c in cases]


def test_exceptions_name_existing_fixtures() -> None:
    assert set(SCHEMA_CANNOT_TELL) <= {c.id for c in INVALID}


@pytest.mark.parametrize("case", VALID, ids=_ids(VALID))
def test_fixture_validates_against_its_schema(case: Case) -> None:
    assert _errors(case.type_name, case.document()) == []


@pytest.mark.parametrize("case", VALID, ids=_ids(VALID))
def test_our_output_validates_against_its_schema(case: Case) -> None:
    emitted = case.model.parse(case.document()).to_json_dict()
    assert _errors(case.type_name, emitted) == []


@pytest.mark.parametrize("case", INVALID, ids=_ids(INVALID))
def test_schema_refuses_negative_fixture(case: Case) -> None:
    errors = _errors(case.type_name, case.document())
    if case.id in SCHEMA_CANNOT_TELL:
        assert errors == []  # if this starts failing, the exception is no longer needed
    else:
        assert errors, f"the schema of {case.type_name} accepts {case.path.name}"
