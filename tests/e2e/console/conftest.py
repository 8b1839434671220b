"""One stack for the console tests: NATS, the four services on Postgres, and the console.

The router authenticates with a tokens file (no dev mode), the runner's agents talk to the
scriptable chat-completions server, and the author workspace pushes to a local bare origin.

The browser is Debian's /usr/bin/chromium driven by Playwright, never one Playwright downloads.
Where it is missing the fixture installs it with apt-get when it can (root with apt), else the
browser tests skip with a message; with CI=true a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pygit2
import pytest
import pytest_asyncio
from console_kit import ConsoleEnv, write_tokens
from e2e_kit import ChatProcess, pg_schema, running_stack

from tests.conftest import missing_service

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


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


def _install_chromium() -> None:
    """apt-get install chromium, when this process may (root, with apt-get)."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        subprocess.run(args, env=env, capture_output=True, timeout=900, check=False)


@pytest.fixture(scope="package")
def chromium() -> Path:
    """Debian's chromium (installed once when missing and possible)."""
    if not CHROMIUM.exists():
        _install_chromium()
    if not CHROMIUM.exists():
        missing_service(
            f"{CHROMIUM} not found: `apt-get install chromium` (as root) for the browser tests"
        )
    return CHROMIUM


@pytest_asyncio.fixture(scope="package", loop_scope="package")
async def browser(chromium: Path) -> AsyncIterator[object]:
    playwright_api = pytest.importorskip("playwright.async_api")
    async with playwright_api.async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield browser
        finally:
            await browser.close()
