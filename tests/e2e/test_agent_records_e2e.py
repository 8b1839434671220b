"""What the agent layer records, across processes (issue 12): the four services on NATS and
Postgres, driven by the CLI, the built-in `author` agent calling the scriptable chat server.

- an input redaction reaches the stored human message: nothing unredacted is in Postgres;
- a session configuration (`--for-session`) is stored on the session record and applies to
  later turns;
- a resume (`riverbeam approve`) runs with the interrupted run's options, recorded on both
  runs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import pytest
import pytest_asyncio
from e2e_kit import ChatProcess, CliResult, pg_schema, run_cli, running_stack

from riverbeam.client import RiverbeamClient
from riverbeam.types import RunOptions, StreamChunk, TurnConfig
from services.cli._up import LocalStack
from tests.support.chat_server import call, text, tool_calls

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]
module_loop = pytest.mark.asyncio(loop_scope="module")

LAYER = {
    "guardrails": [{"kind": "pii", "stages": ["input"]}],
    "tool_policies": [{"kind": "approve_tools", "tools": ["write_file"]}],
}


@dataclass(frozen=True, slots=True)
class Env:
    stack: LocalStack
    chat: ChatProcess
    pg_url: str
    schema: str

    def client(self) -> RiverbeamClient:
        return RiverbeamClient(self.stack.router, timeout_s=30.0)

    async def cli(self, *args: str) -> CliResult:
        return await run_cli(*args, router=self.stack.router)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, nats_url: str
) -> AsyncIterator[Env]:
    root = tmp_path_factory.mktemp("agent_records")
    async with pg_schema(pg_url, "e2e_records") as schema, ChatProcess(root / "chat") as chat:
        overrides = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "runner": {**chat.model_env(), "RIVERBEAM_AGENT_LAYER": json.dumps(LAYER)},
        }
        async with running_stack(
            database_url=pg_url, nats_url=nats_url, data_dir=root / "data", env_overrides=overrides
        ) as stack:
            yield Env(stack, chat, pg_url, schema)


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def fresh_script(env: Env) -> None:
    await env.chat.clear()


def tool_names(request: dict[str, object]) -> list[str]:
    body = request["body"]
    assert isinstance(body, dict)
    return [t["function"]["name"] for t in body.get("tools", [])]


@module_loop
async def test_an_input_redaction_is_what_postgres_stores(env: Env) -> None:
    session = str(uuid.uuid4())
    await env.chat.push(text("noted"))
    invoked = await env.cli(
        "invoke", "author", "mail ada@example.com", "--session", session, "--no-stream", "--json"
    )
    assert invoked.returncode == 0, invoked
    (sent,) = (await env.chat.completions())[-1:]
    assert "ada@example.com" not in json.dumps(sent["body"]) and "[email]" in json.dumps(sent)
    async with env.client() as client:
        messages = await client.list_messages(session)
    (human,) = [m for m in messages if m.role == "human"]
    assert human.text == "mail [email]"
    conn = await asyncpg.connect(env.pg_url)
    try:
        leaked = await conn.fetchval(
            f'SELECT count(*) FROM "{env.schema}".messages'
            " WHERE session_id = $1 AND content::text LIKE '%ada@example.com%'",
            session,
        )
    finally:
        await conn.close()
    assert leaked == 0


@module_loop
async def test_a_session_configuration_is_stored_on_the_session(env: Env) -> None:
    session = str(uuid.uuid4())
    await env.chat.push(text("one"), text("two"))
    first = await env.cli(
        "invoke", "author", "hi", "--session", session, "--no-stream",
        "--no-tool", "git_push", "--for-session",
    )  # fmt: skip
    assert first.returncode == 0, first
    async with env.client() as client:
        stored = (await client.get_session(session)).config
    assert stored == TurnConfig(exclude_tools=["git_push"])
    later = await env.cli("invoke", "author", "again", "--session", session, "--no-stream")
    assert later.returncode == 0, later
    (sent,) = (await env.chat.completions())[-1:]
    assert "git_push" not in tool_names(sent) and "write_file" in tool_names(sent)


@module_loop
async def test_a_resume_runs_with_the_interrupted_run_s_options(env: Env) -> None:
    session = str(uuid.uuid4())
    await env.chat.push(tool_calls([call("write_file", {"path": "a.md", "body": "x"})]))
    paused = await env.cli(
        "invoke", "author", "write it", "--session", session,
        "--time-limit", "45", "--no-tool", "git_push",
    )  # fmt: skip
    assert paused.returncode == 3, paused  # waiting for approval
    pending = await env.cli("pending", "--session", session, "--json")
    [action] = json.loads(pending.stdout)
    await env.chat.push(text("written"))
    approved = await env.cli("approve", action["interaction_id"], "--session", session, "--json")
    assert approved.returncode == 0, approved
    frames = [StreamChunk.parse(line) for line in approved.stdout.splitlines()]
    assert frames[-1].type == "done"
    (after,) = (await env.chat.completions())[-1:]
    assert "git_push" not in tool_names(after)  # the turn's narrowing holds after the resume
    expected = RunOptions(time_limit_s=45, turn_config=TurnConfig(exclude_tools=["git_push"]))
    async with env.client() as client:
        resumed = await client.get_run(frames[-1].run_id or "")
        first = await client.get_run(action["run_id"])
    assert first.options == expected and resumed.options == expected
    assert resumed.result is not None
    limits = (resumed.result.metadata or {})["agent_layer"]["limits"]
    assert limits["time_limit_s"] == 45
