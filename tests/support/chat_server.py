"""A scriptable OpenAI-compatible chat-completions server for tests: real HTTP on 127.0.0.1.

    async with ChatServer([text("hi"), http_error(429, retry_after=0), tool_calls(...)]) as server:
        client = OpenAiCompatible(server.url, "test-key", "m")   # server.url ends in /v1
        ...
        server.requests                                          # what the client sent

    python -m tests.support.chat_server --port 0 --script replies.json
        prints the base URL on its first line, serves until SIGINT/SIGTERM.

Each POST .../chat/completions takes the next reply from the script (a queue). A request with
"stream": true gets server-sent events (text and tool-call arguments split across chunks,
usage in a final chunk when stream_options.include_usage is set, then [DONE]); otherwise one
JSON body. With the queue empty it echoes the last user message (or, when_empty="error", 500).

Replies are JSON-able dicts, made by the builders below:

    text(content, usage=None, model=None)          an assistant answer
    tool_calls([call("name", {...}), ...], text="")  tool calls; arguments are streamed in
                                                     pieces of `arg_chunk` characters
    http_error(status, message, retry_after=None, code=None)
    stall()        accept the request, never answer (until the client goes away)
    drop()         close the connection without answering
    raw(body, status=200, content_type="application/json")
    sse(events)    the given data payloads as events, verbatim ("[DONE]" is not added)
    cut(reply, after=N)  stream `reply` but drop the connection after N events
    delayed(reply, delay_s)  answer with `reply` after `delay_s` seconds; when the client goes
                     away first, nothing is sent (any reply may carry a "delay_s" key)

For a server in another process: POST /_script appends replies (a JSON list), GET /_script says
how many are left ({"remaining": n}), DELETE /_script empties the script, GET /_requests lists
the requests received.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import signal
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from pathlib import Path
from types import TracebackType
from typing import Any, Self

__all__ = [
    "ChatServer",
    "RecordedRequest",
    "call",
    "cut",
    "delayed",
    "drop",
    "http_error",
    "raw",
    "sse",
    "stall",
    "text",
    "tool_calls",
]

Reply = dict[str, Any]


# ---- reply builders ----------------------------------------------------------------------------
def text(
    content: str,
    *,
    usage: dict[str, int] | None = None,
    model: str | None = None,
    chunks: Sequence[str] | None = None,
    finish_reason: str = "stop",
) -> Reply:
    """An assistant answer. `chunks` sets how the text is split when streamed (default: words)."""
    reply: Reply = {"text": content, "finish_reason": finish_reason}
    if usage is not None:
        reply["usage"] = usage
    if model is not None:
        reply["model"] = model
    if chunks is not None:
        reply["chunks"] = list(chunks)
    return reply


def call(
    name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None
) -> dict[str, Any]:
    """One tool call for tool_calls(); arguments may be given as raw text."""
    entry: dict[str, Any] = {"name": name, "arguments": {} if arguments is None else arguments}
    if id is not None:
        entry["id"] = id
    return entry


def tool_calls(
    calls: Sequence[dict[str, Any]],
    *,
    text: str = "",
    usage: dict[str, int] | None = None,
    model: str | None = None,
    arg_chunk: int = 7,
) -> Reply:
    """Tool calls (made with call()), optionally with text; arguments stream in pieces."""
    reply: Reply = {"tool_calls": list(calls), "text": text, "arg_chunk": arg_chunk}
    if usage is not None:
        reply["usage"] = usage
    if model is not None:
        reply["model"] = model
    return reply


def http_error(
    status: int,
    message: str = "error",
    *,
    retry_after: str | float | None = None,
    code: str | None = None,
    body: Any = None,
) -> Reply:
    """An HTTP error with an OpenAI-style body ({"error": {"message", "type", "code"}})."""
    payload = (
        body if body is not None else {"error": {"message": message, "type": "error", "code": code}}
    )
    reply: Reply = {"status": status, "body": payload}
    if retry_after is not None:
        reply["headers"] = {"Retry-After": str(retry_after)}
    return reply


def stall() -> Reply:
    """Never answer."""
    return {"stall": True}


def drop() -> Reply:
    """Close the connection without answering."""
    return {"drop": True}


def raw(body: str, *, status: int = 200, content_type: str = "application/json") -> Reply:
    """A body sent verbatim."""
    return {"raw": body, "status": status, "content_type": content_type}


def sse(events: Sequence[str | dict[str, Any]]) -> Reply:
    """Server-sent events with the given data payloads (dicts are JSON-encoded), verbatim."""
    return {"sse": [e if isinstance(e, str) else json.dumps(e) for e in events]}


def cut(reply: Reply, *, after: int) -> Reply:
    """Stream `reply` but drop the connection after `after` events."""
    return {**reply, "cut_after": after}


def delayed(reply: Reply, delay_s: float) -> Reply:
    """Answer with `reply` after `delay_s` seconds; nothing when the client leaves first."""
    if delay_s < 0:
        raise ValueError("delay_s must be >= 0")
    return {**reply, "delay_s": delay_s}


# ---- the server --------------------------------------------------------------------------------
@dataclass(slots=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None


@dataclass(slots=True)
class _Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class ChatServer:
    """The server. Start it with `async with` (or start()/close()); it listens on 127.0.0.1.

    Args:
        script: Replies, in order.
        api_key: When set, requests without "Authorization: Bearer <api_key>" get 401.
        port: 0 picks a free port.
        when_empty: "echo" (answer with the last user message) or "error" (500).
        model: Model name reported when the request names none.
    """

    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        when_empty: str = "echo",
        model: str = "chat-server",
    ) -> None:
        self._script: deque[Reply] = deque(script)
        self.api_key = api_key
        self.host = host
        self.port = port
        self.when_empty = when_empty
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._server: asyncio.Server | None = None
        self._handlers: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self._closing = asyncio.Event()
        self._arrived = asyncio.Condition()

    @property
    def url(self) -> str:
        """The base URL for a client: http://127.0.0.1:<port>/v1."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def completions(self) -> list[RecordedRequest]:
        """The chat-completions requests received, in order."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def remaining(self) -> int:
        return len(self._script)

    async def wait_for_completions(self, count: int) -> None:
        """Wait until `count` chat-completions requests have arrived."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.completions) >= count)

    def push(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self._script.extend(replies)

    async def start(self) -> None:
        """Listen (on a free port when port is 0)."""
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and end every open connection. Idempotent."""
        self._closing.set()
        server, self._server = self._server, None
        if server is not None:
            server.close()
        # Closing the transports ends each handler normally (EOF); cancelling them would
        # make asyncio log the cancelled connection callbacks.
        for writer in list(self._handlers.values()):
            writer.close()
        if self._handlers:
            await asyncio.gather(*self._handlers, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ---- connections ---------------------------------------------------------------------------
    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers[task] = writer
        try:
            while not self._closing.is_set():
                request = await _read_request(reader)
                if request is None:
                    break
                if not await self._serve(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._handlers.pop(task, None)

    async def _serve(
        self, request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must close."""
        body: Any = None
        if request.body:
            try:
                body = json.loads(request.body)
            except ValueError:
                body = request.body.decode("utf-8", "replace")
        path = request.path.split("?", 1)[0]
        self.requests.append(RecordedRequest(request.method, path, dict(request.headers), body))
        async with self._arrived:
            self._arrived.notify_all()
        if path == "/_script" and request.method == "POST":
            if not isinstance(body, list) or not all(isinstance(r, dict) for r in body):
                await _send_json(writer, 400, {"error": {"message": "expected a list of replies"}})
                return True
            self.push(*body)
            await _send(writer, 204, b"", "application/json")
            return True
        if path == "/_script" and request.method == "GET":
            await _send_json(writer, 200, {"remaining": self.remaining})
            return True
        if path == "/_script" and request.method == "DELETE":
            self._script.clear()
            await _send(writer, 204, b"", "application/json")
            return True
        if path == "/_requests":
            data = json.dumps([asdict(r) for r in self.requests]).encode()
            await _send(writer, 200, data, "application/json")
            return True
        if path.endswith("/models") and request.method == "GET":
            await _send_json(
                writer, 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]}
            )
            return True
        if not (path.endswith("/chat/completions") and request.method == "POST"):
            await _send_json(
                writer, 404, {"error": {"message": f"no route {request.method} {path}"}}
            )
            return True
        if (
            self.api_key is not None
            and request.headers.get("authorization") != f"Bearer {self.api_key}"
        ):
            await _send_json(
                writer, 401, {"error": {"message": "invalid api key", "code": "invalid_api_key"}}
            )
            return True
        if not isinstance(body, dict):
            await _send_json(writer, 400, {"error": {"message": "body must be a JSON object"}})
            return True
        return await self._reply(self._next(body), body, reader, writer)

    def _next(self, body: dict[str, Any]) -> Reply:
        if self._script:
            return self._script.popleft()
        if self.when_empty == "error":
            return http_error(500, "script exhausted")
        return text(_last_user_text(body.get("messages") or []))

    async def _reply(
        self,
        reply: Reply,
        body: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        delay = float(reply.get("delay_s") or 0)
        if delay > 0 and not await _pause(reader, delay, self._closing):
            return False  # the client went away (or the server is closing) during the delay
        if reply.get("drop"):
            return False
        if reply.get("stall"):
            await _wait_for_eof(reader, self._closing)
            return False
        if "status" in reply and "raw" not in reply:
            await _send_json(writer, int(reply["status"]), reply.get("body"), reply.get("headers"))
            return True
        if "raw" in reply:
            data = str(reply["raw"]).encode()
            await _send(writer, int(reply.get("status", 200)), data, str(reply.get("content_type")))
            return True
        if "sse" in reply:
            return await _stream(writer, list(reply["sse"]), reply.get("cut_after"))
        model = reply.get("model") or body.get("model") or self.model
        usage = reply.get("usage") or _usage(body, reply)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = _chunks(reply, model, usage if include_usage else None)
            return await _stream(writer, [*events, "[DONE]"], reply.get("cut_after"))
        await _send_json(writer, 200, _completion(reply, model, usage))
        return True


# ---- HTTP/1.1 plumbing -------------------------------------------------------------------------
async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    line = await reader.readline()
    if not line or not line.strip():
        return None
    parts = line.decode("latin-1").split()
    if len(parts) < 2:
        return None
    request = _Request(method=parts[0].upper(), path=parts[1])
    while True:
        header = await reader.readline()
        if not header or header in (b"\r\n", b"\n"):
            break
        name, _, value = header.decode("latin-1").partition(":")
        request.headers[name.strip().lower()] = value.strip()
    if request.headers.get("transfer-encoding", "").lower() == "chunked":
        pieces: list[bytes] = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                break
            pieces.append(await reader.readexactly(size))
            await reader.readline()
        request.body = b"".join(pieces)
    elif "content-length" in request.headers:
        request.body = await reader.readexactly(int(request.headers["content-length"]))
    return request


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send(
    writer: asyncio.StreamWriter,
    status: int,
    data: bytes,
    content_type: str,
    extra: dict[str, str] | None = None,
) -> None:
    headers = {"Content-Type": content_type, "Content-Length": str(len(data)), **(extra or {})}
    writer.write(_head(status, headers) + data)
    await writer.drain()


async def _send_json(
    writer: asyncio.StreamWriter, status: int, body: Any, extra: dict[str, str] | None = None
) -> None:
    await _send(writer, status, json.dumps(body).encode(), "application/json", extra)


async def _stream(writer: asyncio.StreamWriter, events: list[str], cut_after: int | None) -> bool:
    writer.write(
        _head(
            200,
            {
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "Transfer-Encoding": "chunked",
            },
        )
    )
    for index, event in enumerate(events):
        if cut_after is not None and index >= cut_after:
            await writer.drain()
            return False
        data = f"data: {event}\n\n".encode()
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True


async def _pause(reader: asyncio.StreamReader, delay_s: float, closing: asyncio.Event) -> bool:
    """Wait `delay_s`; False as soon as the client closes its side or the server closes.

    The reader is only looked at, never read from, so nothing the client sends is lost.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + delay_s
    while True:
        if reader.at_eof() or reader.exception() is not None or closing.is_set():
            return False
        remaining = deadline - loop.time()
        if remaining <= 0:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(closing.wait(), min(remaining, 0.05))


async def _wait_for_eof(reader: asyncio.StreamReader, closing: asyncio.Event) -> None:
    eof = asyncio.ensure_future(reader.read())
    closed = asyncio.ensure_future(closing.wait())
    try:
        await asyncio.wait({eof, closed}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (eof, closed):
            task.cancel()
        await asyncio.gather(eof, closed, return_exceptions=True)


# ---- chat-completions bodies -------------------------------------------------------------------
def _last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    prompt = sum(
        len(str(m.get("content") or "").split())
        for m in body.get("messages") or []
        if isinstance(m, dict)
    )
    completion = len(str(reply.get("text") or "").split()) + 10 * len(reply.get("tool_calls") or [])
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _call_id(entry: dict[str, Any], index: int) -> str:
    return str(entry.get("id") or f"call_{index}")


def _arguments(entry: dict[str, Any]) -> str:
    arguments = entry.get("arguments", {})
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _completion(reply: Reply, model: str, usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("text") or None}
    calls = reply.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                "id": _call_id(c, i),
                "type": "function",
                "function": {"name": c["name"], "arguments": _arguments(c)},
            }
            for i, c in enumerate(calls)
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else reply.get("finish_reason", "stop"),
            }
        ],
        "usage": usage,
    }


def _chunks(reply: Reply, model: str, usage: dict[str, int] | None) -> list[str]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return json.dumps(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    events = [chunk({"role": "assistant", "content": ""})]
    content = str(reply.get("text") or "")
    pieces = reply.get("chunks")
    if pieces is None:
        pieces = _split_words(content)
    events += [chunk({"content": piece}) for piece in pieces if piece]
    calls = reply.get("tool_calls") or []
    size = max(1, int(reply.get("arg_chunk", 7)))
    for index, entry in enumerate(calls):
        head = {
            "index": index,
            "id": _call_id(entry, index),
            "type": "function",
            "function": {"name": entry["name"], "arguments": ""},
        }
        events.append(chunk({"tool_calls": [head]}))
        arguments = _arguments(entry)
        for start in range(0, len(arguments), size):
            piece = {"index": index, "function": {"arguments": arguments[start : start + size]}}
            events.append(chunk({"tool_calls": [piece]}))
    events.append(chunk({}, "tool_calls" if calls else str(reply.get("finish_reason", "stop"))))
    if usage is not None:
        events.append(
            json.dumps(
                {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
            )
        )
    return events


def _split_words(content: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", content)


# ---- standalone --------------------------------------------------------------------------------
async def _main(args: argparse.Namespace, script: list[Reply]) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with ChatServer(
        script, api_key=args.api_key, host=args.host, port=args.port, when_empty=args.when_empty
    ) as server:
        print(server.url, flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A scriptable chat-completions server for tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="a JSON file holding a list of replies")
    parser.add_argument("--api-key", default=None, help="require this bearer token")
    parser.add_argument("--when-empty", choices=("echo", "error"), default="echo")
    args = parser.parse_args(argv)
    script: list[Reply] = json.loads(Path(args.script).read_text()) if args.script else []
    asyncio.run(_main(args, script))


if __name__ == "__main__":
    main(sys.argv[1:])
