"""updated_copy(model, update) is model.model_copy(update=update) for what sanitising copies (an
invoke, a resume, the identity) and for unset private values: the same values, fields set, extra
and private values, no container shared with the original (test_types_copying.py checks every
wire type)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, PrivateAttr

from riverbeam.types import (
    ActionResponseEnvelope,
    ContentPart,
    InvokeAuthContext,
    InvokeRequest,
    ResumePayload,
    updated_copy,
)

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
INTERACTION = "2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9"


class _Private(BaseModel):
    name: str
    _seen: int = PrivateAttr(default=0)
    _later: Any = PrivateAttr()


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str


def _state(model: BaseModel) -> tuple[Any, ...]:
    return (
        type(model),
        model.__dict__,
        model.__pydantic_fields_set__,
        model.__pydantic_extra__,
        getattr(model, "__pydantic_private__", None),
    )


def _models() -> list[tuple[BaseModel, dict[str, Any]]]:
    request = InvokeRequest(
        agent_name="a",
        content=[ContentPart.of_text("hi")],
        session_id=SESSION,
        metadata={"client": "bench"},
    )
    auth = InvokeAuthContext(user_id="u1", org_id="o1")
    resume = ResumePayload(
        agent_name="a",
        session_id=SESSION,
        interaction_id=INTERACTION,
        actions=[
            ActionResponseEnvelope(action_id=SESSION, kind="confirmation", request_id=SESSION)
        ],
    )
    private = _Private(name="p")
    private._seen = 3
    return [
        (request, {"metadata": None, "auth_context": auth, "request_id": SESSION}),
        (request, {}),
        (request, {"agent_name": "b"}),
        (resume, {"actions": [resume.actions[0].model_copy(update={"responder_id": "u1"})]}),
        (auth, {"profile_id": "p1"}),
        (private, {"name": "q"}),
        (_Extra(name="e", more=1), {"name": "f", "other": 2}),
    ]


@pytest.mark.parametrize(("model", "update"), _models())
def test_an_updated_copy_is_model_copy_with_the_update(
    model: BaseModel, update: dict[str, Any]
) -> None:
    ours = updated_copy(model, update)
    theirs = model.model_copy(update=update)

    assert _state(ours) == _state(theirs)
    assert ours == theirs
    # The containers the copy holds are its own; the values in them are shared, as in a
    # shallow copy.
    assert ours.__dict__ is not model.__dict__
    assert ours.__pydantic_fields_set__ is not model.__pydantic_fields_set__
    for name, value in model.__dict__.items():
        if name not in update:
            assert ours.__dict__[name] is value


def test_the_original_is_left_as_it_was() -> None:
    request, update = _models()[0]
    before = _state(request)
    dict_before, fields_before = dict(request.__dict__), set(request.__pydantic_fields_set__)

    updated_copy(request, update)

    assert _state(request) == before
    assert request.__dict__ == dict_before
    assert request.__pydantic_fields_set__ == fields_before
