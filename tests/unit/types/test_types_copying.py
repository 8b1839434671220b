"""deep_copy and copy_maker: equal to the original, of the same type, sharing no mutable value
with it (nor, for copy_maker, with one another)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, PrivateAttr, RootModel

from riverbeam.types import WIRE_TYPES, ContentPart, Message, deep_copy
from riverbeam.types._copying import copy_maker, updated_copy
from tests.support.copy_calls import copying_calls
from tests.unit.types._wire_values import VALUES

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_ATOMIC = (str, int, float, bool, bytes, type(None))


def _shared_mutables(a: Any, b: Any, path: str = "$") -> list[str]:
    """Paths where a and b hold the very same mutable object."""
    if isinstance(a, _ATOMIC) or type(a).__module__ in ("datetime", "uuid", "decimal"):
        return []
    found = [path] if a is b else []
    if isinstance(a, BaseModel):
        for name in a.__dict__:
            found += _shared_mutables(a.__dict__[name], b.__dict__[name], f"{path}.{name}")
    elif isinstance(a, dict):
        for key in a:
            found += _shared_mutables(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, list | tuple):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found += _shared_mutables(x, y, f"{path}[{i}]")
    return found


@pytest.mark.parametrize("name", sorted(VALUES))
def test_a_deep_copy_equals_the_value_and_shares_nothing_mutable(name: str) -> None:
    @PROPERTY
    @given(VALUES[name])
    def check(value: Any) -> None:
        copied = deep_copy(value)
        assert type(copied) is type(value)
        assert copied == value
        assert copied.model_fields_set == value.model_fields_set
        assert copied.model_dump(mode="json") == value.model_dump(mode="json")
        assert _shared_mutables(copied, value) == []
        assert copied == value.model_copy(deep=True)

    check()


def test_every_wire_type_has_values_for_the_property() -> None:
    assert set(WIRE_TYPES) <= set(VALUES)


@given(st.text(), st.dictionaries(st.text(), st.lists(st.integers())))
def test_changing_the_copy_leaves_the_original_alone(text: str, meta: dict[str, list[int]]) -> None:
    original = Message(
        message_id="m",
        session_id="s",
        seq=1,
        role="ai",
        content=[ContentPart(type="text", text=text)],
        metadata={"nested": meta},
        created_at="2026-01-01T00:00:00Z",  # type: ignore[arg-type]
    )
    before = original.model_dump()
    copied = deep_copy(original)
    copied.content[0].text = text + "!"
    copied.content.append(ContentPart(type="text", text="more"))
    assert copied.metadata is not None
    copied.metadata["nested"]["new"] = [1]
    for values in copied.metadata["nested"].values():
        values.append(0)
    assert original.model_dump() == before


@pytest.mark.parametrize("name", sorted(VALUES))
def test_each_copy_of_a_maker_equals_the_value_and_shares_nothing_mutable(name: str) -> None:
    @PROPERTY
    @given(VALUES[name])
    def check(value: Any) -> None:
        make = copy_maker(value)
        first, second = make(), make()
        for copied in (first, second):
            assert type(copied) is type(value)
            assert copied == value
            assert copied.model_fields_set == value.model_fields_set
            assert copied.model_dump(mode="json") == value.model_dump(mode="json")
            assert copied == deep_copy(value)
            assert _shared_mutables(copied, value) == []
        assert _shared_mutables(first, second) == []

    check()


@given(st.text(), st.dictionaries(st.text(), st.lists(st.integers())))
def test_changing_a_made_copy_changes_neither_the_model_nor_the_next_copy(
    text: str, meta: dict[str, list[int]]
) -> None:
    original = Message(
        message_id="m",
        session_id="s",
        seq=1,
        role="ai",
        content=[ContentPart(type="text", text=text)],
        metadata={"nested": meta, "plain": "x"},
        created_at="2026-01-01T00:00:00Z",  # type: ignore[arg-type]
    )
    before = original.model_dump()
    make = copy_maker(original)
    copied = make()
    copied.content[0].text = text + "!"
    copied.content.append(ContentPart(type="text", text="more"))
    assert copied.metadata is not None
    copied.metadata["nested"]["new"] = [1]
    copied.metadata["plain"] = "changed"
    for values in copied.metadata["nested"].values():
        values.append(0)
    copied.model_fields_set.add("tool_name")
    assert original.model_dump() == before
    again = make()
    assert again == original and again.model_fields_set == original.model_fields_set
    assert list(again.metadata or {}) == ["nested", "plain"]  # the keys keep their order


class _Loose(BaseModel):
    model_config = {"extra": "allow"}

    tags: list[str] = []
    pair: tuple[list[int], str] = ([], "")
    _seen: dict[str, list[int]] = PrivateAttr(default_factory=dict)


def test_a_maker_copies_extra_and_private_values_and_tuples_too() -> None:
    value = _Loose(tags=["a"], pair=([1], "x"), more={"deep": [1, 2]}, also=[{"k": [3]}])
    value._seen["n"] = [4]
    make = copy_maker(value)
    first, second = make(), make()
    for copied in (first, second):
        assert copied == value == deep_copy(value)
        assert copied.__pydantic_extra__ == value.__pydantic_extra__
        assert copied._seen == {"n": [4]}
        assert _shared_mutables(copied, value) == []
        assert copied.__pydantic_extra__ is not None and value.__pydantic_extra__ is not None
        assert (
            copied.__pydantic_extra__["more"]["deep"]
            is not value.__pydantic_extra__["more"]["deep"]
        )
        assert copied._seen["n"] is not value._seen["n"]
    first._seen["n"].append(5)
    assert make()._seen == {"n": [4]}


def test_a_message_with_text_parts_is_copied_by_one_call() -> None:
    # A held message's content (parts whose values are all shared) is made inside the
    # message's own plan: the old plans called a function per model, per dict and per list
    # (five calls for a message of one text part, eight for two).
    message = Message(
        message_id="m",
        session_id="s",
        seq=1,
        role="ai",
        content=[ContentPart.of_text("a"), ContentPart.of_text("b")],
        created_at="2026-01-01T00:00:00Z",  # type: ignore[arg-type]
    )
    make = copy_maker(message)
    assert copying_calls(make, 10) == 10
    copied = make()
    assert copied == message and _shared_mutables(copied, message) == []
    copied.content[0].text = "changed"
    copied.content[1].model_fields_set.add("url")
    assert make() == message and make().content[1].model_fields_set == {"type", "text"}


class _Tag(RootModel[str]):
    pass


class _Tagged(BaseModel):
    tags: list[_Tag]


def test_leaves_are_filled_through_their_own_class_slots() -> None:
    # RootModel's class attributes `__pydantic_extra__ = None` and `__pydantic_private__ = None`
    # are no slots: setting through them put both into the copy's __dict__ (old code).
    value = _Tagged(tags=[_Tag("a"), _Tag("b")])
    make = copy_maker(value)
    for copied in (make(), make(), deep_copy(value)):
        assert copied == value and copied.tags[0].root == "a"
        assert copied.tags[1].model_fields_set == value.tags[1].model_fields_set
        assert copied.tags[0].__dict__ == {"root": "a"}
        assert _shared_mutables(copied, value) == []


def _slots(model: BaseModel) -> tuple[Any, ...]:
    """Everything of a model that model_copy sets: its type, __dict__ (in order), fields set,
    extra and private values."""
    return (
        type(model),
        list(model.__dict__.items()),
        model.__pydantic_fields_set__,
        model.__pydantic_extra__,
        getattr(model, "__pydantic_private__", None),
    )


@pytest.mark.parametrize("name", sorted(VALUES))
@PROPERTY
@given(data=st.data())
def test_updated_copy_is_model_copy_with_the_update(name: str, data: st.DataObject) -> None:
    value = data.draw(VALUES[name])
    fields = sorted(type(value).model_fields)
    changed = data.draw(st.lists(st.sampled_from(fields), unique=True)) if fields else []
    update = {field: data.draw(st.none() | st.text(max_size=3)) for field in changed}
    expected = value.model_copy(update=update)
    got = updated_copy(value, update)
    assert _slots(got) == _slots(expected)
    assert got is not value and got.__dict__ is not value.__dict__
    assert got.__pydantic_fields_set__ is not value.__pydantic_fields_set__


def test_updated_copy_copies_the_private_values_and_leaves_extra_to_model_copy() -> None:
    class Private(BaseModel):
        tags: list[str] = []
        _seen: dict[str, int] = PrivateAttr(default_factory=dict)

    value = Private(tags=["a"])
    value._seen["n"] = 1
    got = updated_copy(value, {"tags": ["b"]})
    assert _slots(got) == _slots(value.model_copy(update={"tags": ["b"]}))
    # A shallow copy, as model_copy's: its own private dict, holding the same values.
    assert got.__pydantic_private__ is not value.__pydantic_private__
    assert got._seen is value._seen
    assert got.tags == ["b"] and value.tags == ["a"] and got.model_fields_set == {"tags"}
    # An unknown name of a model that allows extra fields is filed as extra, as model_copy does.
    loose = _Loose(tags=["a"], more=1)
    got_loose = updated_copy(loose, {"tags": ["b"], "other": 2})
    assert _slots(got_loose) == _slots(loose.model_copy(update={"tags": ["b"], "other": 2}))
    assert got_loose.__pydantic_extra__ == {"more": 1, "other": 2}
    tag = _Tag("a")
    assert _slots(updated_copy(tag, {"root": "b"})) == _slots(tag.model_copy(update={"root": "b"}))
