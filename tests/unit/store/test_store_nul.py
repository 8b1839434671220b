"""nul_safe and scrub decide every value as the slower walk they replaced did: the same
arguments reach the method (the same objects when nothing changed), the same refusals."""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import RootModel

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import NewMessage, _nul
from riverbeam.store._nul import NUL, REPLACEMENT, nul_safe, scrub
from riverbeam.types import AgentResult, ContentPart, TokenUsage


def reference_has_nul(value: Any) -> bool:
    """_nul._has_nul before (one call per value)."""
    kind = type(value)
    if kind is str:
        return NUL in value
    if kind in _nul._PLAIN:
        return False
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, dict):
        return any(reference_has_nul(k) or reference_has_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(reference_has_nul(v) for v in value)
    if isinstance(value, _nul.BaseModel):
        fields = value.__dict__
        return any(reference_has_nul(fields.get(n)) for n in type(value).__pydantic_fields__)
    return False


def reference_wrapper_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """What the wrapper passed on before (or the refusal it raised)."""
    out = dict(kwargs)
    for name, value in kwargs.items():
        if name in _nul._NAMES:
            _nul._refuse_nul(name, value)
        else:
            out[name] = value if not reference_has_nul(value) else _nul._scrub(value)[0]
    return out


class Text(str):
    """A str subclass: takes the isinstance path, not the exact-type one."""


class Items(list[str]):
    """A list subclass."""


class Tag(RootModel[str]):
    """A model whose one value is its root."""


def _samples() -> list[Any]:
    usage = TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3)
    clean = AgentResult(agent_name="a", content=[ContentPart.of_text("hi")], token_usage=usage)
    return [
        None,
        0,
        1.5,
        True,
        datetime(2026, 1, 1, tzinfo=UTC),
        timedelta(seconds=3),
        "",
        "plain",
        f"a{NUL}b",
        Text("sub"),
        Text(f"sub{NUL}"),
        [],
        ["a", None, 1, ["b", {"c": "d"}]],
        ["a", None, 1, ["b", {"c": f"d{NUL}"}]],
        ("x", (None, f"{NUL}")),
        {"k": "v", "n": None, "l": [1, 2]},
        {f"k{NUL}": "v"},
        {"k": {"deeper": [f"{NUL}"]}},
        {1: "int key", None: "none key"},
        usage,
        clean,
        clean.model_copy(update={"metadata": {"m": [None, f"x{NUL}"]}}),
        clean.model_copy(update={"content": [ContentPart.of_text(f"hi{NUL}")]}),
        [NewMessage(role="ai", content=[ContentPart.of_text("ok")])],
        [NewMessage(role="ai", content=[ContentPart.of_text(f"o{NUL}k")])],
        object(),
        # Subclasses of the containers, keys that are no strings, a model inside a dict: each
        # kind of walk, decided by type once and looked up after.
        OrderedDict([("k", f"v{NUL}")]),
        OrderedDict([("k", "v")]),
        Items(["a", f"b{NUL}"]),
        Items(["a", "b"]),
        {("t", f"{NUL}"): 1},
        {("t", "u"): 1, 2.5: None},
        {"m": clean.model_copy(update={"handoff_to": f"h{NUL}"})},
        {"m": clean},
        Tag(f"t{NUL}"),
        Tag("t"),
        [Tag("a"), (Tag(f"{NUL}"),)],
    ]


@pytest.mark.parametrize("value", _samples(), ids=lambda v: type(v).__name__)
def test_has_nul_decides_as_before(value: Any) -> None:
    assert _nul._has_nul(value) is reference_has_nul(value)


@pytest.mark.parametrize("value", _samples(), ids=lambda v: type(v).__name__)
def test_scrub_returns_what_it_returned_before(value: Any) -> None:
    new = scrub(value)
    old = value if not reference_has_nul(value) else _nul._scrub(value)[0]
    assert new == old
    assert type(new) is type(old)
    if not reference_has_nul(value):
        assert new is value  # nothing copied


async def _passed(**kwargs: Any) -> dict[str, Any]:
    @nul_safe
    async def method(**seen: Any) -> dict[str, Any]:
        return seen

    return await method(**kwargs)


@pytest.mark.parametrize("value", _samples(), ids=lambda v: type(v).__name__)
async def test_a_free_argument_reaches_the_method_as_before(value: Any) -> None:
    seen = await _passed(content=value, run_id="r")
    expected = reference_wrapper_kwargs({"content": value, "run_id": "r"})
    assert seen == expected
    assert type(seen["content"]) is type(expected["content"])
    if not reference_has_nul(value):
        assert seen["content"] is value
    if isinstance(value, str) and NUL in value:
        assert seen["content"] == value.replace(NUL, REPLACEMENT)


@pytest.mark.parametrize(
    "value", ["x", None, 3, f"x{NUL}", [f"a{NUL}"], ["a", "b"], Text(f"{NUL}")]
)
async def test_a_name_is_refused_or_passed_as_before(value: Any) -> None:
    try:
        expected: Any = reference_wrapper_kwargs({"session_id": value})
    except RiverbeamError as err:
        expected = err
    if isinstance(expected, RiverbeamError):
        with pytest.raises(RiverbeamError) as info:
            await _passed(session_id=value)
        assert info.value.code is ErrorCode.NUL_IN_TEXT is expected.code
        assert info.value.details == expected.details
    else:
        seen = await _passed(session_id=value)
        assert seen == expected
        assert seen["session_id"] is value


async def test_a_value_outside_the_fields_changes_nothing() -> None:
    """model_copy(update=...) can put a key that is no field into a model's __dict__. _has_nul
    reads __dict__ and may see it, but the scrub changes fields only: the same object reaches
    the method, as when _has_nul looked at the fields alone."""
    odd = TokenUsage(total_tokens=3).model_copy(update={"not_a_field": f"x{NUL}"})
    assert scrub(odd) is odd
    assert (await _passed(content=odd))["content"] is odd
    listed = [odd]
    assert scrub(listed) is listed


@pytest.mark.parametrize("name", sorted(_nul._NAMES))
async def test_every_name_with_a_nul_is_refused_and_every_other_text_normalised(name: str) -> None:
    with pytest.raises(RiverbeamError) as info:
        await _passed(**{"content": f"c{NUL}", name: f"x{NUL}y"})
    assert info.value.code is ErrorCode.NUL_IN_TEXT
    assert info.value.details == {"field": name}
    with pytest.raises(RiverbeamError) as listed:
        await _passed(**{name: ["ok", f"x{NUL}"]})
    assert listed.value.details == {"field": name}
    seen = await _passed(**{"content": f"c{NUL}", "error_message": NUL, name: "x"})
    assert seen == {"content": f"c{REPLACEMENT}", "error_message": REPLACEMENT, name: "x"}
