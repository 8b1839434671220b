"""A small MCP server (the SDK's FastMCP) for tests, over stdio or streamable HTTP.

    python -m tests.support.mcp_server                    # stdio
    python -m tests.support.mcp_server --http --port 0    # prints "MCP http://127.0.0.1:N/mcp"

With MCP_TEST_TOKEN set, the HTTP server answers 401 unless `Authorization: Bearer <token>`.

Tools: echo, add, slow (sleeps), fail (reports an error), crash (the process exits), garbage
(writes a line that is not JSON-RPC to stdout, then answers), pid, grow (adds a tool named
`extra_<n>` and sends notifications/tools/list_changed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ToolAnnotations

server = FastMCP("riverbeam-test", log_level="WARNING")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool(annotations=ToolAnnotations(idempotentHint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


@server.tool()
def fail(reason: str = "it failed") -> str:
    """Always fails."""
    raise ValueError(reason)


@server.tool()
def crash() -> str:
    """The server process exits at once."""
    os._exit(3)


@server.tool()
def garbage() -> str:
    """Writes a line that is not JSON-RPC to stdout (stdio only), then answers."""
    sys.stdout.write("this is not json-rpc\n")
    sys.stdout.flush()
    return "ok"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


_grown = 0


@server.tool()
async def grow(ctx: Context[Any, Any, Any]) -> str:
    """Add a tool and tell the client the list changed."""
    global _grown
    _grown += 1
    number = _grown

    def extra(x: int = 0) -> int:
        return x + number

    name = f"extra_{number}"
    server.add_tool(extra, name=name, description=f"Added by grow #{number}")
    await ctx.session.send_tool_list_changed()
    return name


def _serve_http(port: int) -> None:
    import uvicorn
    from starlette.types import ASGIApp, Receive, Scope, Send

    token = os.environ.get("MCP_TEST_TOKEN")
    inner = server.streamable_http_app()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if token and scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != f"Bearer {token}":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await inner(scope, receive, send)

    asgi: ASGIApp = app
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    bound = sock.getsockname()[1]
    config = uvicorn.Config(asgi, log_level="warning", lifespan="on")
    print(f"MCP http://127.0.0.1:{bound}/mcp", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.http:
        _serve_http(args.port)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
