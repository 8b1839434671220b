"""The agent layer across processes: the four services on NATS and Postgres, driven by the CLI.

The runner's built-in agents call the scriptable chat server; the deployment's agent-layer
defaults come from RIVERBEAM_AGENT_LAYER (an output guardrail and an approval policy). One
case per feature: structured output, a guardrail tripwire, a policy approval, a run time
limit, a turn's tool narrowing. Compaction: test_compaction_e2e.py; redaction as stored, the
session record and a resume's options: test_agent_records_e2e.py.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio
from e2e_kit import ChatProcess, CliResult, pg_schema, run_cli, running_stack

from riverbeam.client import RiverbeamClient
from riverbeam.types import AgentResult, StreamChunk
from services.cli._up import LocalStack
from tests.support.chat_server import call, delayed, text, tool_calls

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]
module_loop = pytest.mark.asyncio(loop_scope="module")

LAYER = {
    "guardrails": [
        {
            "kind": "deny_patterns",
            "name": "no-secrets",
            "keywords": ["TOPSECRET"],
            "stages": ["output"],
        }
    ],
    "tool_policies": [{"kind": "approve_tools", "tools": ["write_file"]}],
}


@dataclass(frozen=True, slots=True)
class Env:
    stack: LocalStack
    chat: ChatProcess

    def client(self) -> RiverbeamClient:
        return RiverbeamClient(self.stack.router, timeout_s=30.0)

    async def cli(self, *args: str) -> CliResult:
        return await run_cli(*args, router=self.stack.router)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, nats_url: str
) -> AsyncIterator[Env]:
    root = tmp_path_factory.mktemp("agent_layer")
    async with pg_schema(pg_url, "e2e_layer") as schema, ChatProcess(root / "chat") as chat:
        overrides = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "runner": {**chat.model_env(), "RIVERBEAM_AGENT_LAYER": json.dumps(LAYER)},
        }
        async with running_stack(
            database_url=pg_url, nats_url=nats_url, data_dir=root / "data", env_overrides=overrides
        ) as stack:
            yield Env(stack, chat)


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def fresh_script(env: Env) -> None:
    await env.chat.clear()


def frames_of(result: CliResult) -> list[StreamChunk]:
    return [StreamChunk.parse(line) for line in result.stdout.splitlines()]


@module_loop
async def test_structured_output_through_the_cli(env: Env) -> None:
    await env.chat.push(text("not json"), text('{"n": 3}'))
    schema = json.dumps(
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    )
    invoked = await env.cli(
        "invoke", "author", "count", "--no-stream", "--json", "--schema", schema
    )
    assert invoked.returncode == 0, invoked
    result = AgentResult.parse(invoked.stdout)
    assert result.output == {"n": 3}
    assert (result.metadata or {})["agent_layer"]["output"]["repairs"] == 1


@module_loop
async def test_a_deployment_output_guardrail_ends_the_stream(env: Env) -> None:
    await env.chat.push(text("here is TOPSECRET stuff"))
    invoked = await env.cli("invoke", "author", "tell", "--json")
    assert invoked.returncode == 4, invoked
    frames = frames_of(invoked)
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-206"
    assert not [f for f in frames if f.type == "chunk"]
    async with env.client() as client:
        run = await client.get_run(frames[-1].run_id or "")
    assert run.error_code == "BEM-206"
    events = (run.result.metadata if run.result else {}) or {}
    assert events["agent_layer"]["guardrails"][0]["name"] == "no-secrets"


@module_loop
async def test_a_deployment_policy_holds_write_file_for_approval(env: Env) -> None:
    session = str(uuid.uuid4())
    await env.chat.push(tool_calls([call("write_file", {"path": "a.md", "body": "x"})]))
    invoked = await env.cli("invoke", "author", "write it", "--session", session)
    assert invoked.returncode == 3, invoked  # interrupted: waiting for approval
    pending = await env.cli("pending", "--session", session, "--json")
    [action] = json.loads(pending.stdout)
    assert (action["tool"], action["status"]) == ("write_file", "pending")


@module_loop
async def test_a_request_time_limit_ends_the_run_with_215(env: Env) -> None:
    await env.chat.push(delayed(text("too late"), 30.0))
    invoked = await env.cli("invoke", "author", "slow", "--json", "--time-limit", "0.5")
    assert invoked.returncode == 4, invoked
    assert frames_of(invoked)[-1].error_code == "BEM-215"


@module_loop
async def test_a_turn_narrows_the_tools_the_model_is_shown(env: Env) -> None:
    await env.chat.push(text("ok"))
    invoked = await env.cli("invoke", "author", "hi", "--no-stream", "--no-tool", "git_push")
    assert invoked.returncode == 0, invoked
    (sent,) = (await env.chat.completions())[-1:]
    names = [t["function"]["name"] for t in sent["body"].get("tools", [])]
    assert "git_push" not in names and "write_file" in names
