"""The console's HTTP API over real HTTP, in front of the four services on NATS and Postgres.

Every endpoint goes through the console process to the router with a real bearer token; the
frames' SSE is compared with what a live NATS subscriber got on the request's subject.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

import httpx
import pytest
from console_kit import ALICE_TOKEN, WRONG_TOKEN, ConsoleEnv, sse_events
from e2e_kit import assert_sequenced, nats_tap

from riverbeam.types import StreamChunk
from riverbeam.v1 import riverbeam_service_pb2
from tests.support.chat_server import call, text, tool_calls

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.nats,
    pytest.mark.postgres,
    pytest.mark.asyncio(loop_scope="package"),
]

# Each RPC of RiverbeamService and the HTTP operation that serves it.
RPC_ROUTES = {
    "Invoke": ("post", "/v1/invoke"),
    "Resume": ("post", "/v1/resume"),
    "Cancel": ("post", "/v1/requests/{request_id}/cancel"),
    "ListAgents": ("get", "/v1/agents"),
    "GetAgent": ("get", "/v1/agents/{name}"),
    "ListModels": ("get", "/v1/models"),
    "GetSession": ("get", "/v1/sessions/{session_id}"),
    "ListMessages": ("get", "/v1/sessions/{session_id}/messages"),
    "GetInteraction": ("get", "/v1/interactions/{interaction_id}"),
    "GetRun": ("get", "/v1/runs/{run_id}"),
    "GetAction": ("get", "/v1/actions/{action_id}"),
    "ListPendingActions": ("get", "/v1/inbox"),
    "GetUsage": ("get", "/v1/usage"),
    "ListToolExecutions": ("get", "/v1/runs/{run_id}/tool-executions"),
    "FollowStream": ("get", "/v1/requests/{request_id}/frames"),
    "InvokeStream": ("post", "/v1/invoke/stream"),
    "ResumeStream": ("post", "/v1/resume/stream"),
}


def assert_problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == status and problem["code"] == code, problem
    assert problem["type"] == f"urn:riverbeam:error:{code}"
    assert problem["title"] and problem["detail"]
    return problem


async def test_openapi_3_1_documents_every_rpc(console_env: ConsoleEnv) -> None:
    async with console_env.http() as http:
        doc = (await http.get("/openapi.json")).json()
    assert doc["openapi"].startswith("3.1")
    rpcs = riverbeam_service_pb2.DESCRIPTOR.services_by_name["RiverbeamService"].methods_by_name
    assert set(rpcs) == set(RPC_ROUTES), "a new RPC needs its HTTP endpoint (and this table)"
    for method, path in RPC_ROUTES.values():
        operation = doc["paths"][path][method]
        assert "401" in operation["responses"] and "404" in operation["responses"]
    # The bodies are the wire types: Run in the document is the pydantic Run's schema.
    assert {"Run", "Session", "Action", "StreamAck", "AgentResult", "Problem"} <= set(
        doc["components"]["schemas"]
    )
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


async def test_docs_page_loads_only_assets_the_console_serves(console_env: ConsoleEnv) -> None:
    async with console_env.http(token=None) as http:
        page = await http.get("/docs")
        assert page.status_code == 200
        urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page.text)
        assert urls, page.text
        assert not [u for u in urls if "//" in u], "the docs page references another host"
        for url in urls:
            asset = await http.get(url)
            assert asset.status_code == 200, url
        home = await http.get("/")
        assert home.status_code == 200 and "Riverbeam console" in home.text
        assert "default-src 'self'" in home.headers["content-security-policy"]
        for url in re.findall(r"""(?:src|href)=["'](/[^"']+)["']""", home.text):
            assert (await http.get(url)).status_code == 200, url


async def test_invoke_stream_sends_the_ack_then_the_nats_frames(
    console_env: ConsoleEnv, nats_url: str
) -> None:
    request_id = str(uuid.uuid4())
    body = {"agent_name": "assistant", "content": "one call", "request_id": request_id}
    async with nats_tap(nats_url, request_id) as tap, console_env.http() as http:
        response = await http.post("/v1/invoke/stream", json=body)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        ack, *events = sse_events(response.text)
        await tap.wait_terminal()
        assert ack["event"] == "ack" and json.loads(ack["data"])["request_id"] == request_id
        assert all("event" not in e for e in events)
        assert [e["data"] for e in events] == tap.raw
        frames = [StreamChunk.parse(e["data"]) for e in events]
        assert_sequenced(frames)
        assert frames[-1].type == "done" and frames[-1].result is not None
        assert frames[-1].result.text == "Echo: one call"
        # A refused invoke is a problem document, not a stream: the id was used.
        again = await http.post("/v1/invoke/stream", json=body)
        assert_problem(again, 409, "BEM-031")
        unknown = await http.post("/v1/invoke/stream", json={**body, "agent_name": "nobody"})
        assert_problem(unknown, 404, "BEM-020")


async def test_sse_frames_are_the_nats_frames_and_resume_after_last_event_id(
    console_env: ConsoleEnv, nats_url: str
) -> None:
    request_id = str(uuid.uuid4())
    async with nats_tap(nats_url, request_id) as tap, console_env.http() as http:
        ack = await http.post(
            "/v1/invoke",
            json={
                "agent_name": "assistant",
                "content": "frames please",
                "stream": True,
                "request_id": request_id,
            },
        )
        assert ack.status_code == 200, ack.text
        assert ack.json()["request_id"] == request_id
        response = await http.get(f"/v1/requests/{request_id}/frames")
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response.text)
        await tap.wait_terminal()
        # Byte for byte the JSON published on riverbeam.stream.<request_id>.
        assert [e["data"] for e in events] == tap.raw
        frames = [StreamChunk.parse(e["data"]) for e in events]
        assert_sequenced(frames)
        assert [e["id"] for e in events] == [str(f.seq) for f in frames]
        assert frames[-1].type == "done" and frames[-1].result is not None
        assert frames[-1].result.text == "Echo: frames please"

        resumed = await http.get(
            f"/v1/requests/{request_id}/frames", headers={"Last-Event-ID": "1"}
        )
        assert [e["data"] for e in sse_events(resumed.text)] == tap.raw[1:]
        by_query = await http.get(f"/v1/requests/{request_id}/frames?after_seq=1")
        assert [e["data"] for e in sse_events(by_query.text)] == tap.raw[1:]
        # Reconnecting after the terminal frame: 204, so an EventSource stops reconnecting.
        last = str(frames[-1].seq)
        ended = await http.get(f"/v1/requests/{request_id}/frames", headers={"Last-Event-ID": last})
        assert ended.status_code == 204 and ended.text == ""
        bad = await http.get(f"/v1/requests/{request_id}/frames", headers={"Last-Event-ID": "x"})
        assert_problem(bad, 400, "BEM-402")


async def test_invoke_then_read_every_record(console_env: ConsoleEnv) -> None:
    session_id = str(uuid.uuid4())
    async with console_env.http() as http:
        result = await http.post(
            "/v1/invoke",
            json={"agent_name": "assistant", "content": "hello records", "session_id": session_id},
        )
        assert result.status_code == 200, result.text
        body = result.json()
        assert body["content"] == [{"type": "text", "text": "Echo: hello records"}]
        assert body["session_id"] == session_id and not body["interrupted"]

        session = (await http.get(f"/v1/sessions/{session_id}")).json()
        assert session["session_id"] == session_id and session["user_id"] == "alice"
        page = (await http.get(f"/v1/sessions/{session_id}/messages?page_size=1")).json()
        assert len(page["messages"]) == 1 and page["next_page_token"]
        rest = await http.get(
            f"/v1/sessions/{session_id}/messages",
            params={"page_size": 10, "page_token": page["next_page_token"]},
        )
        messages = page["messages"] + rest.json()["messages"]
        assert [m["role"] for m in messages] == ["human", "ai"]
        run = (await http.get(f"/v1/runs/{body['run_id']}")).json()
        assert run["status"] == "completed" and run["request_id"] == body["request_id"]
        interaction = (await http.get(f"/v1/interactions/{body['interaction_id']}")).json()
        assert interaction["status"] == "completed" and interaction["session_id"] == session_id
        agent = (await http.get("/v1/agents/assistant")).json()
        assert agent["name"] == "assistant"
        models = (await http.get("/v1/models")).json()["models"]
        assert models and all("api_key" not in m for m in models)
        cancelled = await http.post(f"/v1/requests/{body['request_id']}/cancel", json={})
        assert cancelled.json() == {"cancelled": False}  # it finished already


async def test_errors_are_problem_documents_with_catalog_codes(console_env: ConsoleEnv) -> None:
    async with console_env.http() as http:
        unknown = await http.post("/v1/invoke", json={"agent_name": "nope", "content": "x"})
        problem = assert_problem(unknown, 404, "BEM-020")
        assert problem["title"] == "agent not registered" and "riverbeam agents" in problem["hint"]
        assert_problem(await http.get("/v1/no/such/thing"), 404, "BEM-400")
        assert_problem(await http.delete("/v1/agents"), 405, "BEM-404")
        assert_problem(
            await http.post(
                "/v1/invoke", content=b"{not json", headers={"content-type": "application/json"}
            ),
            400,
            "BEM-403",
        )
        assert_problem(
            await http.post("/v1/invoke", content=b"hi", headers={"content-type": "text/plain"}),
            415,
            "BEM-405",
        )
        assert_problem(await http.post("/v1/invoke", json={"content": "x"}), 400, "BEM-011")
        status, problem = await _declared_too_large(console_env.url)
        assert status == 413 and problem["code"] == "BEM-401", problem
        assert_problem(await http.get("/v1/sessions/not-a-uuid"), 400, "BEM-010")
        assert_problem(await http.get(f"/v1/sessions/{uuid.uuid4()}"), 404, "BEM-025")
        assert_problem(await http.get("/v1/actions/nope"), 400, "BEM-063")
    async with console_env.http(token=None) as anonymous:
        missing = await anonymous.get("/v1/agents")
        assert_problem(missing, 401, "BEM-050")
        assert missing.headers["www-authenticate"] == "Bearer"
    async with console_env.http(token=WRONG_TOKEN) as wrong:
        assert_problem(await wrong.get("/v1/agents"), 401, "BEM-050")
    async with console_env.http(token=None) as basic:
        response = await basic.get("/v1/agents", headers={"Authorization": "Basic YTpi"})
        assert_problem(response, 401, "BEM-406")


async def _declared_too_large(url: str) -> tuple[int, dict[str, Any]]:
    """POST with a Content-Length over the limit and no body: refused before any is read."""
    address = httpx.URL(url)
    reader, writer = await asyncio.open_connection(address.host, address.port)
    try:
        writer.write(
            b"POST /v1/invoke HTTP/1.1\r\nHost: console\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + ALICE_TOKEN.encode() + b"\r\n"
            b"Content-Length: 3000000\r\n\r\n"
        )
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))  # type: ignore[union-attr]
        body = await reader.readexactly(length)
    finally:
        writer.close()
    return int(head.split()[1]), json.loads(body)


async def test_cors_is_off_unless_configured(console_env: ConsoleEnv) -> None:
    async with console_env.http(token=None) as http:
        preflight = await http.options(
            "/v1/agents",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
        )
        assert "access-control-allow-origin" not in preflight.headers
        plain = await http.get("/healthz", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in plain.headers


async def script_a_held_push(console_env: ConsoleEnv, name: str) -> None:
    """The author writes notes/<name>.md, commits it, asks to push, and (declined) says so."""
    await console_env.chat.clear()
    await console_env.chat.push(
        tool_calls([call("write_file", {"path": f"notes/{name}.md", "body": f"via {name}\n"})]),
        tool_calls([call("git_add", {"path": f"notes/{name}.md"})]),
        tool_calls([call("git_commit", {"message": f"Add {name} notes"})]),
        tool_calls([call("git_push", {})], text="May I push?"),
        text("Understood, not pushed."),
    )


async def test_author_push_declined_over_http_runs_nothing(console_env: ConsoleEnv) -> None:
    await script_a_held_push(console_env, "http")
    session_id = str(uuid.uuid4())
    async with console_env.http() as http:
        result = await http.post(
            "/v1/invoke",
            json={"agent_name": "author", "content": "write and publish", "session_id": session_id},
        )
        body = result.json()
        assert body["interrupted"], body
        inbox = (await http.get("/v1/inbox", params={"session_id": session_id})).json()
        [action] = inbox["actions"]
        assert (action["tool"], action["status"]) == ("git_push", "pending")
        # What approving would push, from the sandbox: the commit and the diff (issue 13).
        preview = action["preview"]
        assert preview["tool"] == "git_push"
        assert preview["commits"][0]["summary"] == "Add http notes"
        assert "+via http" in preview["diff"]
        assert action["args"]["expect"]["head"] == preview["state"]["head"]
        ack = await http.post(
            f"/v1/actions/{action['action_id']}/decline", json={"reason": "not today"}
        )
        assert ack.status_code == 200, ack.text
        frames = [
            StreamChunk.parse(e["data"])
            for e in sse_events(
                (await http.get(f"/v1/requests/{ack.json()['request_id']}/frames")).text
            )
        ]
        assert frames[-1].type == "done" and frames[-1].result is not None
        assert frames[-1].result.text == "Understood, not pushed."
        declined = (await http.get(f"/v1/actions/{action['action_id']}")).json()
        assert (declined["status"], declined["outcome"]) == ("cancelled", "declined")
        # The tool-execution ledger: every call of the first run, the decline in the second.
        ledger = (await http.get(f"/v1/runs/{body['run_id']}/tool-executions")).json()
        assert [(e["tool"], e["status"]) for e in ledger["entries"]] == [
            ("write_file", "succeeded"),
            ("git_add", "succeeded"),
            ("git_commit", "succeeded"),
            ("git_push", "held"),
        ]
        assert ledger["entries"][3]["action_id"] == action["action_id"]
        everything = await http.get(
            f"/v1/interactions/{body['interaction_id']}/tool-executions", params={"page_size": 4}
        )
        page = everything.json()
        assert len(page["entries"]) == 4 and page["next_page_token"]
        rest = await http.get(
            f"/v1/interactions/{body['interaction_id']}/tool-executions",
            params={"page_token": page["next_page_token"]},
        )
        [last] = rest.json()["entries"]
        assert (last["tool"], last["status"], last["run_id"]) == (
            "git_push",
            "denied",
            ack.json()["run_id"],
        )
        again = await http.post(f"/v1/actions/{action['action_id']}/approve", json={})
        assert_problem(again, 400, "BEM-066")
    import pygit2

    origin = pygit2.Repository(str(console_env.origin))
    assert origin.references.get("refs/heads/riverbeam/work") is None  # nothing was pushed


@pytest.mark.parametrize(
    "endpoint", ["/v1/resume/stream", "/v1/actions/{action_id}/decline/stream"]
)
async def test_a_streamed_answer_sends_the_ack_then_the_resumed_runs_frames(
    console_env: ConsoleEnv, endpoint: str
) -> None:
    await script_a_held_push(console_env, "sse")
    session_id = str(uuid.uuid4())
    async with console_env.http() as http:
        result = await http.post(
            "/v1/invoke",
            json={"agent_name": "author", "content": "write and publish", "session_id": session_id},
        )
        paused = result.json()
        assert paused["interrupted"], paused
        [action] = (await http.get("/v1/inbox", params={"session_id": session_id})).json()[
            "actions"
        ]
        body: dict[str, Any] = {"reason": "not today"}
        if endpoint == "/v1/resume/stream":
            body = {
                "session_id": session_id,
                "interaction_id": paused["interaction_id"],
                "actions": [
                    {
                        "action_id": action["action_id"],
                        "kind": "confirmation",
                        "request_id": str(uuid.uuid4()),
                        "status": "cancelled",
                        "payload": {"approved": False, "reason": "not today"},
                    }
                ],
            }
        url = endpoint.format(action_id=action["action_id"])
        response = await http.post(url, json=body)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        ack, *events = sse_events(response.text)
        assert ack["event"] == "ack"
        request_id = json.loads(ack["data"])["request_id"]
        frames = [StreamChunk.parse(e["data"]) for e in events]
        assert_sequenced(frames)
        assert {f.request_id for f in frames} == {request_id}
        assert frames[-1].type == "done" and frames[-1].result is not None
        assert frames[-1].result.text == "Understood, not pushed."
        declined = (await http.get(f"/v1/actions/{action['action_id']}")).json()
        assert (declined["status"], declined["outcome"]) == ("cancelled", "declined")
        # The same answer again is refused as a problem document: nothing is answered twice.
        again = await http.post(url, json=body)
        assert_problem(again, 400, "BEM-066")


async def test_no_token_in_the_console_log(console_env: ConsoleEnv) -> None:
    async with console_env.http(token=WRONG_TOKEN) as http:
        await http.get("/v1/agents")
    log = console_env.stack.log_path("console").read_text()
    assert "GET /v1/agents" in log  # access lines are there
    assert ALICE_TOKEN not in log and WRONG_TOKEN not in log
    assert json.dumps(ALICE_TOKEN)[1:-1] not in log
