"""The console in front of an in-memory store and a dev-mode router (what `make up` runs).

No token is sent: the dev-mode router accepts the call, and the console forwards it as is;
the web console works the same way without signing in.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio
from console_kit import sse_events
from e2e_kit import GUARD_S, assert_sequenced, running_stack

from riverbeam.types import StreamChunk
from services.cli._up import LocalStack

# The package's loop: the browser (conftest.py) lives in it.
pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.asyncio(loop_scope="package")]


@pytest_asyncio.fixture(scope="module", loop_scope="package")
async def memory_stack(
    tmp_path_factory: pytest.TempPathFactory, nats_url: str
) -> AsyncIterator[LocalStack]:
    root = tmp_path_factory.mktemp("console-memory")
    async with running_stack(nats_url=nats_url, data_dir=root / "data", console_port=0) as stack:
        yield stack


async def test_dev_mode_invoke_frames_and_records_in_memory(memory_stack: LocalStack) -> None:
    assert memory_stack.console_url is not None
    session_id = str(uuid.uuid4())
    async with httpx.AsyncClient(
        base_url=memory_stack.console_url, timeout=GUARD_S, trust_env=False
    ) as http:
        assert (await http.get("/readyz")).json() == {"status": "ok"}
        ack = await http.post(
            "/v1/invoke",
            json={
                "agent_name": "assistant",
                "content": [{"type": "text", "text": "in memory"}],
                "session_id": session_id,
                "stream": True,
            },
        )
        assert ack.status_code == 200, ack.text
        frames = [
            StreamChunk.parse(e["data"])
            for e in sse_events(
                (await http.get(f"/v1/requests/{ack.json()['request_id']}/frames")).text
            )
        ]
        assert_sequenced(frames)
        assert frames[-1].result is not None and frames[-1].result.text == "Echo: in memory"
        session = (await http.get(f"/v1/sessions/{session_id}")).json()
        assert session["user_id"] == "dev" and session["last_seq"] == 2
        messages = (await http.get(f"/v1/sessions/{session_id}/messages")).json()["messages"]
        assert [m["role"] for m in messages] == ["human", "ai"]
        assert (await http.get("/v1/inbox")).json() == {"actions": [], "next_page_token": ""}


async def test_web_console_in_dev_mode_needs_no_sign_in(
    memory_stack: LocalStack, browser: object
) -> None:
    url = memory_stack.console_url
    assert url is not None
    context = await browser.new_context()  # type: ignore[attr-defined]
    context.set_default_timeout(60_000)  # a guard against a hang
    try:
        page = await context.new_page()
        await page.goto(url + "/")
        await page.wait_for_selector("body[data-ready=true]")
        assert "dev mode" in await page.inner_text("#auth-mode")
        assert await page.is_hidden("#problem")
        await page.select_option("#agent", "assistant")
        await page.fill("#prompt", "no token needed")
        await page.click("#send")
        summary = await page.wait_for_selector("#summary .done-summary")
        assert "completed" in await summary.inner_text()
        assert await page.inner_text("#reply") == "Echo: no token needed"
    finally:
        await context.close()
