"""PostgreSQL makes the same jsonb of what _rows.dump writes as of what it wrote before
(json.dumps of model_dump(mode="json")), and _rows reads that jsonb back to the same models
(the same values, of the same types) as json.loads and model_validate did, for every sample
model and content list."""

from __future__ import annotations

import json
from typing import Any

import asyncpg
import pytest
from pydantic import BaseModel

from riverbeam.store import _rows
from riverbeam.types import ContentPart, TokenUsage
from tests.support.jsonb_samples import CONTENT_SAMPLES, MODEL_SAMPLES

pytestmark = pytest.mark.postgres

_SAME = "SELECT $1::jsonb::text AS new, $2::jsonb::text AS old, $1::jsonb = $2::jsonb AS equal"


@pytest.mark.parametrize("model", MODEL_SAMPLES, ids=lambda m: type(m).__name__)
async def test_a_model_is_stored_as_before(admin: asyncpg.Connection, model: BaseModel) -> None:
    old = json.dumps(model.model_dump(mode="json", exclude_none=True))
    row = await admin.fetchrow(_SAME, _rows.dump(model), old)
    assert row is not None
    assert row["new"] == row["old"]
    assert row["equal"] is True


@pytest.mark.parametrize("parts", CONTENT_SAMPLES, ids=lambda p: f"{len(p)} parts")
async def test_content_is_stored_as_before(
    admin: asyncpg.Connection, parts: list[ContentPart]
) -> None:
    old = json.dumps(
        [p.model_dump(mode="json", exclude_none=True) for p in parts], ensure_ascii=False
    )
    row = await admin.fetchrow(_SAME, _rows.dump_content(parts), old)
    assert row is not None
    assert row["new"] == row["old"]


def typed(value: Any) -> Any:
    """value with the type of every leaf beside it (1 == 1.0, but a float stays a float)."""
    if isinstance(value, BaseModel):
        return (type(value).__name__, sorted(value.model_fields_set), typed(dict(value)))
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(v) for v in value])
    return (type(value).__name__, value)


async def _stored(admin: asyncpg.Connection, text: str | None) -> str:
    stored: str = await admin.fetchval("SELECT $1::jsonb::text", text)
    return stored


@pytest.mark.parametrize("model", MODEL_SAMPLES, ids=lambda m: type(m).__name__)
async def test_a_model_reads_back_as_before(admin: asyncpg.Connection, model: BaseModel) -> None:
    text = await _stored(admin, _rows.dump(model))
    old = type(model).model_validate(json.loads(text))
    new = _rows._model(type(model), text)
    assert new == old
    assert typed(new) == typed(old)


@pytest.mark.parametrize("parts", CONTENT_SAMPLES, ids=lambda p: f"{len(p)} parts")
async def test_content_reads_back_as_before(
    admin: asyncpg.Connection, parts: list[ContentPart]
) -> None:
    text = await _stored(admin, _rows.dump_content(parts))
    old = [ContentPart.model_validate(p) for p in json.loads(text) or []]
    new = _rows._content(text)
    assert new == old  # (not always == parts: jsonb makes 1e16 an integer)
    assert typed(new) == typed(old)


@pytest.mark.parametrize("text", [None, "null"])
async def test_no_model_reads_as_none(text: str | None) -> None:
    assert _rows._model(TokenUsage, text) is None
    assert _rows._content(text) == []
