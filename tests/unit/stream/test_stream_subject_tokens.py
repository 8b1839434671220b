"""request_id_token's fast path gives exactly what parsing the id as a uuid.UUID gives."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from riverbeam.core.errors import RiverbeamError
from riverbeam.stream import request_id_token
from riverbeam.stream._subjects import _parsed_token

_HEX_AND_LOOKALIKES = "0123456789abcdefABCDEF-gGxX_ {}:.*>\n\u0660\u0661\uff10\uff21\u212a\u0130"


def _outcome(make: object, value: object) -> tuple[object, ...]:
    try:
        token = make(value)  # type: ignore[operator]
    except RiverbeamError as err:
        return ("refused", err.code, err.message, dict(err.details))
    return ("token", type(token), token)


def _same(value: object) -> None:
    assert _outcome(request_id_token, value) == _outcome(_parsed_token, value)


@st.composite
def _mixed_case_uuids(draw: st.DrawFn) -> str:
    text = str(uuid.UUID(int=draw(st.integers(0, 2**128 - 1))))
    flips = draw(st.lists(st.booleans(), min_size=36, max_size=36))
    return "".join(c.upper() if flip else c for c, flip in zip(text, flips, strict=True))


@st.composite
def _mutated_uuids(draw: st.DrawFn) -> str:
    chars = list(draw(_mixed_case_uuids()))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.integers(0, len(chars)))
        how = draw(st.sampled_from(["replace", "insert", "delete"]))
        char = draw(st.sampled_from(_HEX_AND_LOOKALIKES) | st.characters())
        if how == "insert":
            chars.insert(where, char)
        elif chars and where < len(chars):
            if how == "replace":
                chars[where] = char
            else:
                del chars[where]
    return "".join(chars)


class _Text(str):
    pass


@settings(max_examples=400, deadline=None)
@given(_mixed_case_uuids())
def test_every_hyphenated_uuid_gives_the_parsed_token(value: str) -> None:
    _same(value)
    assert request_id_token(value) == str(uuid.UUID(value))


@settings(max_examples=1000, deadline=None)
@given(
    _mutated_uuids()
    | st.text(_HEX_AND_LOOKALIKES, min_size=30, max_size=40)
    | st.text(min_size=36, max_size=36)
    | st.text()
)
def test_anything_else_is_answered_as_the_parse_answers(value: str) -> None:
    _same(value)


@settings(max_examples=100, deadline=None)
@given(_mixed_case_uuids() | _mutated_uuids())
def test_a_str_subclass_is_answered_as_the_parse_answers(value: str) -> None:
    _same(_Text(value))


def test_values_that_are_not_text_are_refused_alike() -> None:
    rid = uuid.uuid4()
    for value in (None, 123, rid, rid.bytes, str(rid).encode(), [str(rid)]):
        _same(value)
