"""The test MCP server (tests/support/mcp_server.py) as stdio and streamable-HTTP servers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from riverbeam.agents import HttpMcpServer, StdioMcpServer

REPO_ROOT = Path(__file__).resolve().parents[3]
GUARD_S = 30.0


def server_env() -> dict[str, str]:
    paths = [str(REPO_ROOT / "libs"), str(REPO_ROOT)]
    existing = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*paths, *([existing] if existing else [])])}


def stdio_config(**fields: Any) -> StdioMcpServer:
    values: dict[str, Any] = {
        "kind": "stdio",
        "command": "python",
        "args": ["-m", "tests.support.mcp_server"],
        "env": server_env(),
        "cwd": str(REPO_ROOT),
        "timeout_s": 10.0,
        "startup_timeout_s": GUARD_S,
        **fields,
    }
    return StdioMcpServer(**values)


@contextlib.asynccontextmanager
async def http_server(token: str | None = None) -> AsyncIterator[str]:
    """The test server over streamable HTTP on a free port; yields its URL. Killed afterwards."""
    env = {**os.environ, **server_env()}
    if token:
        env["MCP_TEST_TOKEN"] = token
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.mcp_server",
        "--http",
        stdout=asyncio.subprocess.PIPE,
        env=env,
        cwd=str(REPO_ROOT),
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(GUARD_S):
            line = (await proc.stdout.readline()).decode()
        assert line.startswith("MCP "), line
        yield line.split()[1]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()


def http_config(url: str, **fields: Any) -> HttpMcpServer:
    values: dict[str, Any] = {
        "kind": "http",
        "url": url,
        "timeout_s": 10.0,
        "startup_timeout_s": GUARD_S,
        **fields,
    }
    return HttpMcpServer(**values)


async def eventually(check: Any, *, guard_s: float = GUARD_S) -> None:
    """Poll `check()` until it is true (a guard against hanging, not a speed threshold)."""
    async with asyncio.timeout(guard_s):
        while not check():  # noqa: ASYNC110 - polling another object's state
            await asyncio.sleep(0.05)
