"""Context compaction across processes: the four services on NATS and Postgres, the CLI.

The built-in `author` agent calls the scriptable chat server; its context budget is the
resolved model's max_tokens from the model list both router and runner read (issue 12):

- a long session over budget gets a stored `summary` message that later turns reuse;
- a provider's context-length error (BEM-084) compacts and retries once.

The chat server's replies report no prompt tokens, so the estimate is not recalibrated and
the sizes below hold: each question is 2000 one-token words, the agent's tool schemas cost
well under 2000 tokens.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from e2e_kit import ChatProcess, CliResult, pg_schema, run_cli, running_stack

from riverbeam.client import RiverbeamClient
from riverbeam.types import AgentResult, Message
from services.cli._up import LocalStack
from tests.support.chat_server import http_error, text

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]
module_loop = pytest.mark.asyncio(loop_scope="module")

# tight: 0.75 x 10667 = 8000 tokens for the prompt; three turns fit, the fourth does not.
MODELS = """\
models:
  - {name: tight, provider: custom, max_tokens: 10667}
  - {name: roomy, provider: custom, max_tokens: 1000000}
"""
WORDS = " ".join(["lorem"] * 2000)
NO_USAGE = {"prompt_tokens": 0, "completion_tokens": 1, "total_tokens": 1}


@dataclass(frozen=True, slots=True)
class Env:
    stack: LocalStack
    chat: ChatProcess

    async def turn(self, session: str, model: str, question: str) -> CliResult:
        result = await run_cli(
            "invoke", "author", question, "--session", session, "--model", model,
            "--no-stream", "--json", router=self.stack.router,
        )  # fmt: skip
        assert result.returncode == 0, result
        return result

    async def messages(self, session: str) -> list[Message]:
        async with RiverbeamClient(self.stack.router, timeout_s=30.0) as client:
            return await client.list_messages(session)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, nats_url: str
) -> AsyncIterator[Env]:
    root: Path = tmp_path_factory.mktemp("compaction")
    models = root / "models.yaml"
    models.write_text(MODELS)
    async with pg_schema(pg_url, "e2e_compact") as schema, ChatProcess(root / "chat") as chat:
        overrides = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "router": {"RIVERBEAM_MODELS_FILE": str(models)},
            "runner": {**chat.model_env(), "RIVERBEAM_MODELS_FILE": str(models)},
        }
        async with running_stack(
            database_url=pg_url, nats_url=nats_url, data_dir=root / "data", env_overrides=overrides
        ) as stack:
            yield Env(stack, chat)


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def fresh_script(env: Env) -> None:
    await env.chat.clear()


def _sent(request: dict[str, object]) -> str:
    body = request["body"]
    assert isinstance(body, dict)
    return str(body.get("messages"))


@module_loop
async def test_a_session_over_budget_gets_a_stored_summary_that_later_turns_reuse(
    env: Env,
) -> None:
    session = str(uuid.uuid4())
    for n in (1, 2, 3):
        await env.chat.push(text(f"a{n}", usage=NO_USAGE))
        await env.turn(session, "tight", f"q{n} {WORDS}")
    assert not [m for m in await env.messages(session) if m.type == "summary"]
    # The fourth turn is over budget: the model is asked for a summary first.
    await env.chat.push(text("SUMMARY-1", usage=NO_USAGE), text("a4", usage=NO_USAGE))
    fourth = AgentResult.parse((await env.turn(session, "tight", f"q4 {WORDS}")).stdout)
    assert fourth.text == "a4"
    compaction = (fourth.metadata or {})["agent_layer"]["compaction"]
    assert compaction["summarized_messages"] > 0
    (summary,) = [m for m in await env.messages(session) if m.type == "summary"]
    assert summary.role == "system" and "SUMMARY-1" in (summary.content[0].text or "")
    sent = await env.chat.completions()
    assert "q1 " in _sent(sent[-2]) and "SUMMARY-1" in _sent(sent[-1])
    assert "q1 " not in _sent(sent[-1])
    # A later turn sends the stored summary instead of what it covers: no second summary.
    await env.chat.push(text("a5", usage=NO_USAGE))
    await env.turn(session, "tight", "q5")
    last = (await env.chat.completions())[-1]
    assert "SUMMARY-1" in _sent(last) and "q1 " not in _sent(last)
    assert await env.chat.remaining() == 0
    assert len([m for m in await env.messages(session) if m.type == "summary"]) == 1


@module_loop
async def test_a_provider_context_length_error_compacts_and_retries_once(env: Env) -> None:
    session = str(uuid.uuid4())
    for n in (1, 2, 3, 4):
        await env.chat.push(text(f"a{n}", usage=NO_USAGE))
        await env.turn(session, "roomy", f"q{n} {WORDS}")
    # Within the roomy budget, but the provider refuses it: compact (a summary), retry once.
    await env.chat.push(
        http_error(400, "This model's maximum context length is 8192 tokens",
                   code="context_length_exceeded"),
        text("SUMMARY-2", usage=NO_USAGE),
        text("a5", usage=NO_USAGE),
    )  # fmt: skip
    fifth = AgentResult.parse((await env.turn(session, "roomy", "q5")).stdout)
    assert fifth.text == "a5"
    compaction = (fifth.metadata or {})["agent_layer"]["compaction"]
    assert compaction["provider_context_error"] is True
    (summary,) = [m for m in await env.messages(session) if m.type == "summary"]
    assert "SUMMARY-2" in (summary.content[0].text or "")
    refused, summarising, retried = (await env.chat.completions())[-3:]
    assert "q1 " in _sent(refused) and "q1 " in _sent(summarising)
    # The retry sends at most half of what was refused (the summary, trimmed when needed).
    assert "q1 " not in _sent(retried)
    assert len(_sent(retried)) * 2 <= len(_sent(refused)) + 2000


@module_loop
async def test_a_second_context_length_error_ends_the_run_with_084(env: Env) -> None:
    session = str(uuid.uuid4())
    for n in (1, 2, 3, 4):
        await env.chat.push(text(f"a{n}", usage=NO_USAGE))
        await env.turn(session, "roomy", f"q{n} {WORDS}")
    refusal = http_error(400, "maximum context length exceeded", code="context_length_exceeded")
    await env.chat.push(refusal, text("SUMMARY-3", usage=NO_USAGE), refusal)
    result = await run_cli(
        "invoke", "author", "q5", "--session", session, "--model", "roomy", "--json",
        router=env.stack.router,
    )  # fmt: skip
    assert result.returncode == 4, result
    assert '"BEM-084"' in result.stdout.splitlines()[-1]
