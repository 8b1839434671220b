"""PostgreSQL makes the same jsonb of what _rows.dump writes as of what it wrote before
(json.dumps of model_dump(mode="json")), for every sample model and content list."""

from __future__ import annotations

import json

import asyncpg
import pytest
from pydantic import BaseModel

from riverbeam.store import _rows
from riverbeam.types import ContentPart
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
