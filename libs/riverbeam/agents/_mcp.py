"""MCP client tools: the tools of MCP servers (stdio or streamable HTTP) as Riverbeam Tools.

    hub = McpHub({"files": StdioMcpServer(kind="stdio", command="python", args=[...])})
    await hub.start()                    # connects each server and lists its tools
    tools = hub.tools("files")           # McpTool per tool, named `files__<tool>`
    ...
    await hub.aclose()

Each server has a supervisor task that owns its connection (the SDK's transports are anyio
task groups, entered and left in one task): it connects, initializes, lists the tools, and then
waits for a `notifications/tools/list_changed` (it lists again), a lost connection, or a failed
ping. A lost server is reconnected with exponential backoff (a stdio server is started again);
meanwhile its tools answer BEM-240. Nothing a server does raises out of the supervisor, so a
dying or babbling server never takes the runner down. `version` grows whenever any server's
tool list changes, so agents can rebuild their tool set.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from riverbeam.agents._config import HttpMcpServer, McpServerConfig, StdioMcpServer
from riverbeam.agents._config_file import expand_env
from riverbeam.agents._io import AgentInput
from riverbeam.agents._tool import ToolSpec
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["McpConnection", "McpHub", "McpTool", "mcp_tool_name"]

log = logging.getLogger("riverbeam.mcp")

_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_PING_INTERVAL_S = 5.0
_BACKOFF_START_S = 0.5
_BACKOFF_MAX_S = 30.0


def mcp_tool_name(server: str, tool: str) -> str:
    """`server__tool`, with characters a tool name may not have replaced and at most 64 long."""
    name = f"{server}__{_BAD_CHARS.sub('_', tool)}"
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(tool.encode()).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


def _hint(tool: Any, name: str) -> bool:
    """An MCP tool annotation (readOnlyHint, idempotentHint) that the server set to true.

    Hints are the server's word (the MCP spec says so): a deployment connects servers it
    trusts. Unset, false or no annotations: the tool is treated as having side effects.
    """
    annotations = getattr(tool, "annotations", None)
    return getattr(annotations, name, None) is True


@dataclass(frozen=True, slots=True)
class _Offered:
    """One tool a server offers, as the model sees it."""

    name: str  # namespaced
    mcp_name: str
    spec: ToolSpec


class McpConnection:
    """One MCP server: its supervisor, its current tools, and calls to them.

    Args:
        name: The server's name in the configuration (the tools' namespace).
        config: How to reach it.
        base_dir: Where a relative stdio `cwd` is resolved.
        env: The environment `${VAR}` reads from (default: os.environ).

    Raises:
        RiverbeamError: BEM-230 when a `${VAR}` in env or headers is not set.
    """

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        base_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        source = os.environ if env is None else env
        where = f"mcp_servers.{name}"
        if isinstance(config, StdioMcpServer):
            self._env = {
                k: expand_env(v, source, where=f"{where}.env.{k}") for k, v in config.env.items()
            }
            cwd = Path(config.cwd) if config.cwd else None
            if cwd is not None and not cwd.is_absolute():
                cwd = (base_dir or Path.cwd()) / cwd
            self._cwd = cwd
            self._headers: dict[str, str] = {}
        else:
            self._env = {}
            self._cwd = None
            self._headers = {
                k: expand_env(v, source, where=f"{where}.headers.{k}")
                for k, v in config.headers.items()
            }
        self._session: Any = None
        self._offered: dict[str, _Offered] = {}
        self.version = 0
        self.state = "starting"
        self.last_error: str | None = None
        self._ready = asyncio.Event()
        self._lost = asyncio.Event()
        self._list_changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._protocol_error: str | None = None
        self.connects = 0

    # ---- what it offers -------------------------------------------------------------------------
    def offered(self) -> list[_Offered]:
        return list(self._offered.values())

    def lookup(self, name: str) -> _Offered | None:
        return self._offered.get(name)

    # ---- lifecycle ------------------------------------------------------------------------------
    async def start(self) -> bool:
        """Start the supervisor; wait until the first listing or `startup_timeout_s`.

        Returns whether the server is ready; a server that is not keeps being retried.
        """
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp-{self.name}")
        try:
            async with asyncio.timeout(self.config.startup_timeout_s):
                await self._ready.wait()
        except TimeoutError:
            log.warning(
                "MCP server %s not ready after %gs (%s); retrying in the background",
                self.name,
                self.config.startup_timeout_s,
                self.last_error or "no answer",
            )
            return False
        return True

    async def aclose(self) -> None:
        """Stop the supervisor (a stdio server is stopped). Idempotent."""
        self._closing = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _supervise(self) -> None:
        backoff = _BACKOFF_START_S
        while not self._closing:
            try:
                await self._connect_once()
                backoff = _BACKOFF_START_S
            except asyncio.CancelledError:
                raise
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # the SDK raises ExceptionGroups from its task groups
                if self._closing:
                    return
                self.last_error = self._protocol_error or _describe(exc)
                log.warning("MCP server %s: %s", self.name, self.last_error)
            self._session = None
            self._ready.clear()
            if self._closing:
                return
            self.state = "down"
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX_S)

    async def _connect_once(self) -> None:
        from mcp import ClientSession

        async with self._transport() as (read, write):
            async with ClientSession(
                read,
                write,
                read_timeout_seconds=timedelta(seconds=self.config.startup_timeout_s),
                message_handler=self._on_message,
            ) as session:
                self._lost = asyncio.Event()  # one per connection: calls watch their own
                self._list_changed.clear()
                self._protocol_error = None
                async with asyncio.timeout(self.config.startup_timeout_s):
                    await session.initialize()
                    await self._refresh(session)
                self._session = session
                self.connects += 1
                self.state = "ready"
                self.last_error = None
                self._ready.set()
                log.info("MCP server %s: %d tools", self.name, len(self._offered))
                await self._watch(session)

    async def _watch(self, session: Any) -> None:
        """Until the connection is lost: re-list on list_changed, ping in between."""
        while True:
            lost = asyncio.ensure_future(self._lost.wait())
            changed = asyncio.ensure_future(self._list_changed.wait())
            try:
                done, _ = await asyncio.wait(
                    {lost, changed}, timeout=_PING_INTERVAL_S, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                lost.cancel()
                changed.cancel()
            if self._lost.is_set():
                raise ConnectionError(self.last_error or "connection lost")
            if self._list_changed.is_set():
                self._list_changed.clear()
                async with asyncio.timeout(self.config.startup_timeout_s):
                    await self._refresh(session)
                log.info(
                    "MCP server %s: tool list changed (%d tools)", self.name, len(self._offered)
                )
            elif not done:
                async with asyncio.timeout(self.config.timeout_s):
                    await session.send_ping()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        if isinstance(config, StdioMcpServer):
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            # `python` is the runner's own interpreter (its virtualenv need not be on PATH).
            command = sys.executable if config.command == "python" else config.command
            params = StdioServerParameters(
                command=command,
                args=list(config.args),
                env={**os.environ, **self._env},
                cwd=self._cwd,
            )
            async with stdio_client(params) as (read, write):
                yield read, write
        else:
            assert isinstance(config, HttpMcpServer)
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            async with create_mcp_http_client(headers=self._headers) as http:
                async with streamable_http_client(config.url, http_client=http) as streams:
                    yield streams[0], streams[1]

    async def _on_message(self, message: Any) -> None:
        import mcp.types as types

        if isinstance(message, Exception):
            # The transport could not read a message: the server is not speaking MCP.
            # Not MCP on the wire: drop the connection (in-flight calls get BEM-241) and
            # start again.
            self._protocol_error = (
                f"the server sent something that is not MCP: {_describe(message)}"
            )
            log.warning("MCP server %s: %s", self.name, self._protocol_error)
            self._lose(self._protocol_error)
            return
        root = getattr(message, "root", None)
        if isinstance(root, types.ToolListChangedNotification):
            self._list_changed.set()

    async def _refresh(self, session: Any) -> None:
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            import mcp.types as types

            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                break
        offered: dict[str, _Offered] = {}
        include = set(self.config.include) if self.config.include is not None else None
        confirm = set(self.config.confirm)
        for tool in tools:
            if include is not None and tool.name not in include:
                continue
            spec = self._spec(tool, confirm_all="*" in confirm or tool.name in confirm)
            if spec is None:
                continue
            if spec.name in offered:
                log.warning("MCP server %s: two tools map to %s; keeping one", self.name, spec.name)
                continue
            offered[spec.name] = _Offered(spec.name, tool.name, spec)
        if offered != self._offered:
            self._offered = offered
            self.version += 1

    def _spec(self, tool: Any, *, confirm_all: bool) -> ToolSpec | None:
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
        from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

        schema = tool.inputSchema if isinstance(tool.inputSchema, dict) else None
        try:
            if schema is None or schema.get("type", "object") != "object":
                raise SchemaError("not an object schema")
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            log.warning(
                "MCP server %s: tool %r has an invalid input schema (%s); left out",
                self.name,
                tool.name,
                exc.message,
            )
            return None
        return ToolSpec(
            name=mcp_tool_name(self.name, tool.name),
            description=tool.description or f"{tool.name} (MCP server {self.name})",
            parameters=schema,
            confirm_required=confirm_all,
            timeout_s=self.config.timeout_s,
            # The server's annotations (MCP ToolAnnotations): only an explicit true counts.
            read_only=_hint(tool, "readOnlyHint"),
            idempotent=_hint(tool, "idempotentHint"),
        )

    # ---- calls ----------------------------------------------------------------------------------
    async def call(self, name: str, args: dict[str, Any]) -> Any:
        """Call the tool offered as `name` (namespaced); its result for the model.

        Raises:
            RiverbeamError: BEM-240 when the server is not connected or the connection drops,
                BEM-243 when it no longer offers the tool, BEM-241 when the answer is not MCP.
        """
        import mcp.types as types
        from mcp.shared.exceptions import McpError

        offered = self._offered.get(name)
        session = self._session
        if session is None:
            raise RiverbeamError(
                ErrorCode.MCP_UNAVAILABLE,
                f"MCP server {self.name} is {self.state}"
                + (f": {self.last_error}" if self.last_error else ""),
                server=self.name,
                tool=name,
            )
        if offered is None:
            raise RiverbeamError(
                ErrorCode.MCP_TOOL_GONE,
                f"MCP server {self.name} no longer offers {name}",
                server=self.name,
                tool=name,
            )
        lost = self._lost
        try:
            result = await _unless(
                lost,
                session.call_tool(
                    offered.mcp_name,
                    args,
                    read_timeout_seconds=timedelta(seconds=self.config.timeout_s + 1.0),
                ),
            )
        except _Lost:
            code = ErrorCode.MCP_PROTOCOL if self._protocol_error else ErrorCode.MCP_UNAVAILABLE
            raise RiverbeamError(
                code,
                f"MCP server {self.name}: {self._protocol_error or self.last_error or 'lost'}"
                f" (during {offered.mcp_name})",
                server=self.name,
                tool=name,
            ) from None
        except McpError as exc:
            error = exc.error
            if error.code == types.CONNECTION_CLOSED:
                if self._protocol_error is not None:
                    raise RiverbeamError(
                        ErrorCode.MCP_PROTOCOL,
                        f"MCP server {self.name}: {self._protocol_error}",
                        server=self.name,
                        tool=name,
                    ) from None
                self._lose(f"connection closed during {offered.mcp_name}")
                raise RiverbeamError(
                    ErrorCode.MCP_UNAVAILABLE,
                    f"MCP server {self.name} went away during {offered.mcp_name}",
                    server=self.name,
                    tool=name,
                ) from None
            if error.code == 408 or "timed out" in error.message.lower():
                raise RiverbeamError(
                    ErrorCode.TOOL_TIMEOUT,
                    f"{name}: MCP server {self.name} did not answer in time",
                    server=self.name,
                    tool=name,
                ) from None
            return _error_result(f"{offered.mcp_name}: {error.message}", error.code)
        except (ConnectionError, OSError) as exc:
            self._lose(_describe(exc))
            raise RiverbeamError(
                ErrorCode.MCP_UNAVAILABLE,
                f"MCP server {self.name}: {_describe(exc)}",
                server=self.name,
                tool=name,
            ) from None
        except Exception as exc:
            if _is_closed(exc):
                self._lose(_describe(exc))
                raise RiverbeamError(
                    ErrorCode.MCP_UNAVAILABLE,
                    f"MCP server {self.name} is not connected",
                    server=self.name,
                    tool=name,
                ) from None
            raise RiverbeamError(
                ErrorCode.MCP_PROTOCOL,
                f"MCP server {self.name} answered {offered.mcp_name} with something that is "
                f"not MCP: {_describe(exc)}",
                server=self.name,
                tool=name,
            ) from None
        return _result(result)

    def _lose(self, why: str) -> None:
        """The connection is gone: no new calls on it; the supervisor reconnects."""
        self.last_error = why
        self._session = None
        self._ready.clear()
        self.state = "down"
        self._lost.set()


class McpTool:
    """One tool of an MCP server, as a Riverbeam Tool (its spec follows the server's list)."""

    def __init__(self, connection: McpConnection, offered: _Offered) -> None:
        self._connection = connection
        self._offered = offered

    @property
    def server(self) -> str:
        return self._connection.name

    @property
    def mcp_name(self) -> str:
        return self._offered.mcp_name

    def spec(self) -> ToolSpec:
        return self._offered.spec

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        return await self._connection.call(self._offered.name, args)


class McpHub:
    """The configured MCP servers of a runner.

    Args:
        servers: Name -> configuration.
        base_dir: Where relative stdio `cwd`s are resolved (the config file's directory).
        env: The environment `${VAR}` reads from.
    """

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        base_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._connections = {
            name: McpConnection(name, config, base_dir=base_dir, env=env)
            for name, config in servers.items()
        }

    def __contains__(self, name: object) -> bool:
        return name in self._connections

    def connection(self, name: str) -> McpConnection:
        return self._connections[name]

    @property
    def version(self) -> int:
        """Grows whenever a server's tool list changes."""
        return sum(c.version for c in self._connections.values())

    async def start(self) -> dict[str, bool]:
        """Connect every server at once; which were ready within their startup timeout."""
        names = list(self._connections)
        ready = await asyncio.gather(*(self._connections[n].start() for n in names))
        return dict(zip(names, ready, strict=True))

    def tools(self, server: str, names: Iterable[str] | None = None) -> list[McpTool]:
        """The server's tools now (all, or those whose MCP name is in `names`)."""
        connection = self._connections[server]
        wanted = set(names) if names is not None else None
        return [
            McpTool(connection, offered)
            for offered in connection.offered()
            if wanted is None or offered.mcp_name in wanted
        ]

    async def aclose(self) -> None:
        for connection in self._connections.values():
            await connection.aclose()


class _Lost(Exception):
    """The connection a call was made on is gone."""


async def _unless(lost: asyncio.Event, call: Any) -> Any:
    """Await `call`, unless the connection is lost first (then _Lost, and the call is cancelled)."""
    task = asyncio.ensure_future(call)
    watcher = asyncio.ensure_future(lost.wait())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        watcher.cancel()
    if not task.done():
        task.cancel()  # the SDK answers it with "connection closed" as it tears down
        raise _Lost
    return task.result()


def _result(result: Any) -> Any:
    """What the model sees of a CallToolResult."""
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    if result.isError:
        return _error_result("\n".join(texts) or "the tool failed", None)
    if result.structuredContent is not None:
        return result.structuredContent
    if len(texts) == len(result.content):
        return "\n".join(texts)
    return [block.model_dump(mode="json", exclude_none=True) for block in result.content]


def _error_result(message: str, mcp_code: int | None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": ErrorCode.MCP_TOOL_ERROR.code, "message": message}
    if mcp_code is not None:
        error["mcp_code"] = mcp_code
    return {"error": error}


def _is_closed(exc: BaseException) -> bool:
    import anyio

    return isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | EOFError)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
