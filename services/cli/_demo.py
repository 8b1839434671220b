"""`riverbeam up --demo`: a scripted local model and a local origin, so the README tour runs.

The demo model is an OpenAI-compatible chat-completions endpoint on 127.0.0.1 that plays one
script, decided from the conversation it is sent (it keeps no state): asked by the author
skill for anything, it writes CONTRIBUTING.md, stages and commits it, then asks to push (a
`git_push` call, which waits for approval), and after the push says so. Any other agent gets a
one-line answer saying what the demo can do. The origin is a bare repository in the demo's
folder, which the sandbox is told to allow.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

__all__ = ["DEMO_MODEL", "DEMO_TURN", "Demo", "demo_reply", "demo_try_lines"]

DEMO_MODEL = "demo-model"
DEMO_TURN = "Add a CONTRIBUTING.md and push it"
_CONTRIBUTING = "# Contributing\n\nRun `make test` before you send a change.\n"
_MAX_BODY = 8 * 1024 * 1024


def _call(name: str, args: Mapping[str, Any], index: int) -> dict[str, Any]:
    return {
        "id": f"call_{name}_{index}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(dict(args))},
    }


def _last_tool(messages: Sequence[Mapping[str, Any]]) -> tuple[str | None, str]:
    """The tool whose result ends the conversation, and that result's text."""
    last = messages[-1] if messages else {}
    if last.get("role") != "tool":
        return None, ""
    call_id = last.get("tool_call_id")
    for message in reversed(messages):
        for call in message.get("tool_calls") or ():
            if call.get("id") == call_id:
                return str(call.get("function", {}).get("name")), str(last.get("content") or "")
    return None, str(last.get("content") or "")


def _branch(result: str) -> str:
    """The branch a git_commit or git_push result names (the session's own branch)."""
    try:
        value = json.loads(result)
    except ValueError:
        return "the branch"
    branch = value.get("branch") if isinstance(value, dict) else None
    return branch if isinstance(branch, str) else "the branch"


def demo_reply(body: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The next assistant message for a chat-completions request: (text, tool calls)."""
    messages: list[Mapping[str, Any]] = list(body.get("messages") or [])
    tools = {t.get("function", {}).get("name") for t in body.get("tools") or ()}
    tool, result = _last_tool(messages)
    turn = len(messages)
    if tool is None:
        if not {"write_file", "git_add", "git_commit", "git_push"} <= tools:
            return (
                f'(demo model) I only play the README tour: riverbeam invoke author "{DEMO_TURN}"',
                [],
            )
        return "I'll add the file.", [
            _call("write_file", {"path": "CONTRIBUTING.md", "body": _CONTRIBUTING}, turn)
        ]
    if tool == "write_file":
        return "", [_call("git_add", {"path": "CONTRIBUTING.md"}, turn)]
    if tool == "git_add":
        return "", [_call("git_commit", {"message": "Add CONTRIBUTING.md"}, turn)]
    if tool == "git_commit":
        return f"Committed. May I push {_branch(result)}?", [_call("git_push", {}, turn)]
    if tool == "git_push" and '"remote_ref"' in result:
        return f"Pushed {_branch(result)} to origin: CONTRIBUTING.md is up for review.", []
    if tool == "git_push":
        return "Understood: nothing was pushed.", []
    return f"(demo model) {tool} returned; the tour is over.", []


def _words(value: Any) -> int:
    return len(json.dumps(value, default=str).split())


def _completion(body: Mapping[str, Any]) -> dict[str, Any]:
    text, calls = demo_reply(body)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    prompt = _words(body.get("messages"))
    completion = _words(message)
    return {
        "id": "demo",
        "object": "chat.completion",
        "model": str(body.get("model") or DEMO_MODEL),
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.1 with keep-alive: POST .../chat/completions gets a JSON completion."""
    try:
        while True:
            request_line = await reader.readline()
            if not request_line:
                return
            method, path, _ = request_line.decode("latin-1").split(" ", 2)
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if length > _MAX_BODY:
                return
            raw = await reader.readexactly(length) if length else b""
            if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
                status, payload = "200 OK", _completion(json.loads(raw or b"{}"))
            else:
                status, payload = "404 Not Found", {"error": {"message": f"no route {path}"}}
            data = json.dumps(payload).encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n".encode()
                + data
            )
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        return
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


class Demo:
    """The demo model (served from this process) and a bare origin, with the stack's settings.

    Args:
        folder: Where the origin goes (`<folder>/origins/origin.git`); a temporary folder,
            removed on exit, when None.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self._given = folder
        self._folder: Path | None = None
        self._server: asyncio.Server | None = None
        self.url = ""

    @property
    def origin(self) -> Path:
        if self._folder is None:
            raise RuntimeError("Demo not started")
        return self._folder / "origins" / "origin.git"

    def env_overrides(self) -> dict[str, dict[str, str]]:
        """What the sandbox and the runner need: the model settings, the origin it may push to."""
        return {
            "sandbox": {"RIVERBEAM_ALLOWED_ORIGIN_PREFIXES": json.dumps([str(self.origin)])},
            "runner": {
                "BEAM_API_KEY": "demo",
                "BEAM_API_BASE_URL": self.url,
                "BEAM_MODEL": DEMO_MODEL,
                "RIVERBEAM_WORKSPACE": "demo",
                "RIVERBEAM_WORKSPACE_ORIGIN": str(self.origin),
            },
        }

    async def __aenter__(self) -> Self:
        import pygit2

        self._folder = self._given or Path(tempfile.mkdtemp(prefix="riverbeam-demo-"))
        await asyncio.to_thread(pygit2.init_repository, str(self.origin), True)
        self._server = await asyncio.start_server(_handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        if self._given is None and self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def demo_try_lines(demo: Demo) -> list[str]:
    """What the banner suggests under --demo: the README tour's first command."""
    return [
        f'riverbeam invoke author "{DEMO_TURN}"',
        f"(the scripted model is {DEMO_MODEL} at {demo.url}; pushes go to {demo.origin})",
    ]
