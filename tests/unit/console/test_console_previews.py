"""The console's JSON endpoints pass an action's preview through (inbox and GetAction), and
the web console renders it (summary, commits, a diff with classed lines)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from riverbeam.console import STATIC_DIR, create_app
from riverbeam.core.settings import ConsoleSettings
from riverbeam.types import ActionPreview
from tests.unit.client.fake_router import ACTION_PENDING, FakeRiverbeam, serve_fake
from tests.unit.client.fake_world import SESSION

TOKEN = "unit-test-token-0123456789"
HEAD = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
PREVIEW = ActionPreview.model_validate(
    {
        "tool": "git_push",
        "summary": "1 commit to docs/update, 1 file changed",
        "commits": [{"id": HEAD, "summary": "Add the intro", "author": "Agent <a@x.invalid>"}],
        "diff": "--- a/intro.md\n+++ b/intro.md\n@@ -1 +1,2 @@\n # Intro\n+More.\n",
        "diff_bytes": 57,
        "state": {"branch": "docs/update", "head": HEAD, "origin": "absent"},
    }
)


@contextlib.asynccontextmanager
async def _console(fake: FakeRiverbeam) -> AsyncIterator[httpx.AsyncClient]:
    async with serve_fake(fake) as address:
        app: FastAPI = create_app(ConsoleSettings(router_url=address))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
                http.headers["Authorization"] = f"Bearer {TOKEN}"
                yield http


@pytest.fixture
def fake() -> FakeRiverbeam:
    fake = FakeRiverbeam(token=TOKEN)
    fake.actions = [
        a.model_copy(update={"preview": PREVIEW}) if a.action_id == ACTION_PENDING else a
        for a in fake.actions
    ]
    return fake


async def test_the_inbox_and_get_action_carry_the_preview(fake: FakeRiverbeam) -> None:
    async with _console(fake) as http:
        inbox = await http.get("/v1/inbox", params={"session_id": SESSION})
        assert inbox.status_code == 200, inbox.text
        (listed,) = [a for a in inbox.json()["actions"] if a["action_id"] == ACTION_PENDING]
        assert ActionPreview.model_validate(listed["preview"]) == PREVIEW
        one = (await http.get(f"/v1/actions/{ACTION_PENDING}")).json()
        assert one["preview"]["state"] == {
            "branch": "docs/update",
            "head": HEAD,
            "origin": "absent",
        }
        assert one["preview"]["commits"][0]["summary"] == "Add the intro"


async def test_the_openapi_document_describes_the_preview(fake: FakeRiverbeam) -> None:
    async with _console(fake) as http:
        schemas = (await http.get("/openapi.json")).json()["components"]["schemas"]
    assert "preview" in schemas["Action"]["properties"]
    assert {"summary", "commits", "diff", "state"} <= set(schemas["ActionPreview"]["properties"])


def test_the_web_console_renders_previews() -> None:
    script = (STATIC_DIR / "console.js").read_text()
    assert "function previewView(preview)" in script
    for name in ("preview-summary", "diff-add", "diff-del", "commits"):
        assert name in script
    css = (STATIC_DIR / "console.css").read_text()
    assert ".diff-add" in css and ".diff-del" in css
