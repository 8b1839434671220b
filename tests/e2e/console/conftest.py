"""One stack for the console tests: NATS, the four services on Postgres, and the console.

The router authenticates with a tokens file (no dev mode), the runner's agents talk to the
scriptable chat-completions server, and the author workspace pushes to a local bare origin.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pygit2
import pytest
import pytest_asyncio
from console_kit import ConsoleEnv, write_tokens
from e2e_kit import ChatProcess, pg_schema, running_stack


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
