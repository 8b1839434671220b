"""One stack for the console tests: NATS, the four services on Postgres, and the console.

The router authenticates with a tokens file (no dev mode), the runner's agents talk to the
scriptable chat-completions server, and the author workspace pushes to a local bare origin.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pygit2
import pytest
import pytest_asyncio
from e2e_kit import GUARD_S, ChatProcess, pg_schema, running_stack

from services.cli._up import LocalStack

ALICE_TOKEN = "alice-console-token-0123456789"
"""A user's plaintext token (the tokens file holds it; tests send it as a bearer token)."""
WRONG_TOKEN = "not-a-token-anyone-has-0000"


@dataclass(frozen=True, slots=True)
class ConsoleEnv:
    stack: LocalStack
    chat: ChatProcess
    origin: Path

    @property
    def url(self) -> str:
        url = self.stack.console_url
        assert url is not None
        return url

    def http(self, token: str | None = ALICE_TOKEN) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=GUARD_S, trust_env=False
        )


def sse_events(body: str) -> list[dict[str, str]]:
    """The events of a text/event-stream body (comments skipped)."""
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        event: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            event[field] = f"{event[field]}\n{value}" if field in event else value
        if "data" in event:
            events.append(event)
    return events


def write_tokens(path: Path) -> Path:
    path.write_text(
        json.dumps({"tokens": [{"token": ALICE_TOKEN, "subject": "alice", "roles": ["user"]}]})
    )
    return path


@pytest_asyncio.fixture(scope="package", loop_scope="package")
async def console_env(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, nats_url: str
) -> AsyncIterator[ConsoleEnv]:
    root = tmp_path_factory.mktemp("console")
    origin = root / "origins" / "origin.git"
    pygit2.init_repository(str(origin), bare=True)
    tokens = write_tokens(root / "tokens.json")
    async with pg_schema(pg_url, "e2e_console") as schema, ChatProcess(root / "chat") as chat:
        overrides = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "sandbox": {"RIVERBEAM_ALLOWED_ORIGIN_PREFIXES": json.dumps([str(origin)])},
            "runner": {
                **chat.model_env(),
                "RIVERBEAM_WORKSPACE": "default",
                "RIVERBEAM_WORKSPACE_ORIGIN": str(origin),
            },
            "router": {"RIVERBEAM_DEV_MODE": "false", "RIVERBEAM_TOKENS_FILE": str(tokens)},
        }
        async with running_stack(
            database_url=pg_url,
            nats_url=nats_url,
            data_dir=root / "data",
            env_overrides=overrides,
            console_port=0,
        ) as stack:
            yield ConsoleEnv(stack, chat, origin)
