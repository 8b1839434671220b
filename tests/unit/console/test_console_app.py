"""The console app in process (httpx over ASGI) in front of the fake router (real gRPC).

What the console itself decides: how errors look, limits, CORS, auth header handling, the
pages it serves without anything from elsewhere; and that every call reaches the router with
the caller's token.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from riverbeam.console import STATIC_DIR, create_app
from riverbeam.core.settings import ConsoleSettings
from tests.unit.client.fake_router import FakeRiverbeam, serve_fake
from tests.unit.client.fake_world import INTERACTION_WAITING, RUN_WAITING, SESSION

TOKEN = "unit-test-token-0123456789"


@contextlib.asynccontextmanager
async def console(settings: ConsoleSettings) -> AsyncIterator[httpx.AsyncClient]:
    app: FastAPI = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
            yield http


@pytest.fixture
def fake() -> FakeRiverbeam:
    return FakeRiverbeam(token=TOKEN)


@pytest.fixture
async def http(fake: FakeRiverbeam) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        serve_fake(fake) as address,
        console(ConsoleSettings(router_url=address, max_request_bytes=4096)) as client,
    ):
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield client


async def test_calls_reach_the_router_with_the_callers_token(
    http: httpx.AsyncClient, fake: FakeRiverbeam
) -> None:
    response = await http.get(f"/v1/sessions/{SESSION}/messages", params={"page_size": 1})
    assert response.status_code == 200, response.text
    page = response.json()
    assert len(page["messages"]) == 1 and page["next_page_token"] == "1"
    assert fake.authorizations[-1] == f"Bearer {TOKEN}"
    assert fake.calls[-1][1].page_size == 1


async def test_the_tool_execution_ledger_of_a_run_and_an_interaction(
    http: httpx.AsyncClient, fake: FakeRiverbeam
) -> None:
    run = await http.get(f"/v1/runs/{RUN_WAITING}/tool-executions", params={"page_size": 5})
    assert run.status_code == 200, run.text
    page = run.json()
    assert [(e["seq"], e["tool"], e["status"]) for e in page["entries"]] == [
        (1, "write_file", "succeeded"),
        (2, "read_file", "failed"),
    ]
    assert page["next_page_token"] == "2"  # the fake serves two a page
    request = fake.calls[-1][1]
    assert (request.run_id, request.HasField("interaction_id")) == (RUN_WAITING, False)
    rest = await http.get(
        f"/v1/interactions/{INTERACTION_WAITING}/tool-executions",
        params={"page_token": "2"},
    )
    assert [e["tool"] for e in rest.json()["entries"]] == ["read_file", "git_push"]
    assert fake.calls[-1][1].interaction_id == INTERACTION_WAITING
    missing = await http.get("/v1/runs/00000000-0000-4000-8000-000000000000/tool-executions")
    assert missing.status_code == 404 and missing.json()["code"] == "BEM-028"


async def test_router_errors_keep_their_code_status_and_hint(http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/invoke", json={"agent_name": "missing", "content": "x"})
    assert response.status_code == 404
    problem = response.json()
    assert problem["code"] == "BEM-020" and problem["hint"] and problem["instance"] == "/v1/invoke"
    anonymous = await http.get("/v1/agents", headers={"Authorization": ""})
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "BEM-406"


async def test_no_router_is_503_without_its_address() -> None:
    async with console(ConsoleSettings(router_url="127.0.0.1:1")) as http:
        ready = await http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["code"] == "BEM-003"
        agents = await http.get("/v1/agents")
        assert agents.status_code == 503, agents.text
        assert "127.0.0.1:1" not in agents.text
        assert (await http.get("/healthz")).json() == {"status": "ok"}


async def test_a_streamed_body_over_the_limit_is_refused(http: httpx.AsyncClient) -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b'{"agent_name": "assistant", "content": "'
        for _ in range(10):
            yield b"x" * 1000
        yield b'"}'

    response = await http.post(
        "/v1/invoke", content=body(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413 and response.json()["code"] == "BEM-401"


async def test_validation_errors_name_the_field_not_the_input(http: httpx.AsyncClient) -> None:
    secret = "sk-do-not-echo-0123456789"
    response = await http.post(
        "/v1/invoke", json={"agent_name": "a", "content": "x", "session_id": secret}
    )
    assert response.status_code == 400
    problem = response.json()
    assert problem["code"] == "BEM-010" and problem["details"]["field"] == "session_id"
    assert secret not in response.text
    extra = await http.post("/v1/invoke", json={"agent_name": "a", "content": "x", "bogus": 1})
    assert extra.status_code == 400 and extra.json()["code"] == "BEM-002"


async def test_cors_when_configured() -> None:
    settings = ConsoleSettings(router_url="127.0.0.1:1", cors_origins=["https://app.example"])
    async with console(settings) as http:
        preflight = await http.options(
            "/chat",
            headers={
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://app.example"
        other = await http.options(
            "/chat",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert "access-control-allow-origin" not in other.headers


async def test_web_console_can_be_turned_off() -> None:
    async with console(ConsoleSettings(router_url="127.0.0.1:1", web_console=False)) as http:
        assert (await http.get("/")).json()["code"] == "BEM-400"
        assert (await http.get("/docs")).status_code == 200


def test_static_assets_reference_nothing_elsewhere() -> None:
    files = sorted(p for p in Path(STATIC_DIR).iterdir() if p.is_file())
    assert {p.name for p in files} >= {"index.html", "console.js", "console.css"}
    for path in files:
        text = path.read_text()
        assert not re.findall(r"https?://", text), f"{path.name} names another host"
        assert "localStorage.setItem" not in text and "document.cookie =" not in text


def test_openapi_documents_problems_not_422() -> None:
    schema = create_app(ConsoleSettings()).openapi()
    assert schema["openapi"].startswith("3.1")
    for path in schema["paths"].values():
        for operation in path.values():
            assert "422" not in operation["responses"]
    assert "HTTPValidationError" not in schema["components"]["schemas"]


async def test_with_tracing_on_the_trace_id_names_the_router_call_too(
    fake: FakeRiverbeam, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind

    from riverbeam.telemetry import configure_tracing, shutdown_tracing

    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    shutdown_tracing()
    exporter = InMemorySpanExporter()
    configure_tracing("riverbeam-console", enabled=True, exporter=exporter, set_global=False)
    try:
        async with (
            serve_fake(fake) as address,
            console(ConsoleSettings(router_url=address)) as http,
        ):
            response = await http.get("/v1/agents", headers={"Authorization": f"Bearer {TOKEN}"})
        trace_id = response.headers["x-trace-id"]
        spans = exporter.get_finished_spans()
        traced = [s for s in spans if format(s.context.trace_id, "032x") == trace_id]
        kinds = {(s.kind, s.name) for s in traced}
        assert (SpanKind.SERVER, "HTTP GET") in kinds
        assert any(kind is SpanKind.CLIENT for kind, _ in kinds), kinds  # the ListAgents call
    finally:
        shutdown_tracing()
    async with serve_fake(fake) as address, console(ConsoleSettings(router_url=address)) as http:
        off = await http.get("/v1/agents", headers={"Authorization": f"Bearer {TOKEN}"})
    assert "x-trace-id" not in off.headers
