"""`POST /chat` read by the real `ai` npm package (tests/interop/chat/chat.mjs).

The script uses the AI SDK's DefaultChatTransport (the transport `useChat` runs on), which
validates every chunk against the SDK's UI message chunk schema, and readUIMessageStream,
which assembles the UIMessage a `useChat` front end would render.

Needs node and npm: without them the module skips, except in CI (CI=true) where that is a
failure. `npm ci` installs the locked dependencies, skipped while a stamp matches the lockfile.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from console_kit import ALICE_TOKEN, WRONG_TOKEN, ConsoleEnv

from tests.conftest import missing_service
from tests.support.chat_server import call, text, tool_calls

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.nats,
    pytest.mark.postgres,
    pytest.mark.asyncio(loop_scope="package"),
]

CHAT_DIR = Path(__file__).resolve().parents[2] / "interop" / "chat"
STAMP = CHAT_DIR / "node_modules" / ".riverbeam-lock-stamp"


def _lock_digest() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((CHAT_DIR / name).read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def node() -> str:
    """node, with the `ai` package installed from the committed lockfile."""
    node_bin, npm_bin = shutil.which("node"), shutil.which("npm")
    if node_bin is None or npm_bin is None:
        missing_service("node and npm are needed for the AI SDK chat test")
    assert node_bin is not None and npm_bin is not None
    if not STAMP.exists() or STAMP.read_text() != _lock_digest():
        env = {**os.environ, "npm_config_audit": "false", "npm_config_fund": "false"}
        proc = subprocess.run(
            [npm_bin, "ci", "--no-audit", "--no-fund"],
            cwd=CHAT_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, f"npm ci failed:\n{proc.stdout}\n{proc.stderr}"
        STAMP.write_text(_lock_digest())
    return node_bin


async def _chat(node: str, url: str, token: str, agent: str, prompt: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        node, "chat.mjs", url, token, agent, f"chat-{uuid.uuid4().hex[:10]}", prompt,
        cwd=str(CHAT_DIR),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    lines = out.decode().strip().splitlines()
    assert lines, f"chat.mjs printed nothing (exit {proc.returncode}):\n{err.decode()}"
    result: dict[str, Any] = json.loads(lines[-1])
    return result


async def test_use_chat_client_gets_text_deltas_and_finish(
    node: str, console_env: ConsoleEnv
) -> None:
    await console_env.chat.clear()
    result = await _chat(node, console_env.url, ALICE_TOKEN, "assistant", "hello from node")
    assert result["ok"], result
    message = result["message"]
    assert message["role"] == "assistant"
    texts = [p["text"] for p in message["parts"] if p["type"] == "text"]
    assert texts == ["Echo: hello from node"]
    assert result["chunks"][0] == "start" and result["chunks"][-1] == "finish"
    assert "text-delta" in result["chunks"]
    metadata = message["metadata"]
    assert metadata["model_used"] and metadata["interrupted"] is False
    assert uuid.UUID(metadata["run_id"]) and uuid.UUID(message["id"])


async def test_use_chat_client_renders_tool_calls_and_results(
    node: str, console_env: ConsoleEnv
) -> None:
    await console_env.chat.clear()
    await console_env.chat.push(
        tool_calls(
            [call("write_file", {"path": "notes/chat.md", "body": "from useChat\n"})],
            text="Writing.",
        ),
        text("Wrote notes/chat.md."),
    )
    result = await _chat(node, console_env.url, ALICE_TOKEN, "author", "write a note")
    assert result["ok"], result
    parts = result["message"]["parts"]
    [tool] = [p for p in parts if p["type"] == "tool-write_file"]
    assert tool["state"] == "output-available"
    assert tool["input"] == {"path": "notes/chat.md", "body": "from useChat\n"}
    assert tool["output"]["path"] == "notes/chat.md"
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts == ["Writing.", "Wrote notes/chat.md."]
    assert "tool-input-available" in result["chunks"]
    assert "tool-output-available" in result["chunks"]


async def test_use_chat_client_sees_errors(node: str, console_env: ConsoleEnv) -> None:
    unknown = await _chat(node, console_env.url, ALICE_TOKEN, "no-such-agent", "hi")
    assert not unknown["ok"] and "BEM-020" in unknown["error"], unknown
    wrong = await _chat(node, console_env.url, WRONG_TOKEN, "assistant", "hi")
    assert not wrong["ok"] and "BEM-050" in wrong["error"], wrong
