"""MCP client tools against a real MCP server process (the SDK's FastMCP), stdio and HTTP."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from riverbeam.agents import (
    McpHub,
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
    mcp_tool_name,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import RiverBeam
from riverbeam.types import AgentResult
from tests.integration.mcp.mcp_kit import eventually, http_config, http_server, stdio_config

BASE_TOOLS = ["add", "crash", "echo", "fail", "garbage", "grow", "pid", "slow"]


def by_name(hub: McpHub, server: str) -> dict[str, Any]:
    return {tool.spec().name: tool for tool in hub.tools(server)}


def request(agent: str, text: str) -> dict[str, Any]:
    import uuid

    return {
        "agent_name": agent,
        "content": [{"type": "text", "text": text}],
        "session_id": str(uuid.uuid4()),
    }


def test_tool_names_are_namespaced_and_valid() -> None:
    assert mcp_tool_name("files", "read") == "files__read"
    assert mcp_tool_name("files", "dir/read.v2") == "files__dir_read_v2"
    long = mcp_tool_name("files", "x" * 100)
    assert len(long) == 64 and long.startswith("files__xxx")
    assert long != mcp_tool_name("files", "x" * 101)


async def test_stdio_tools_are_listed_namespaced_and_called() -> None:
    hub = McpHub({"t": stdio_config(confirm=["add"])})
    try:
        assert await hub.start() == {"t": True}
        tools = by_name(hub, "t")
        assert sorted(tools) == [f"t__{n}" for n in BASE_TOOLS]
        add = tools["t__add"].spec()
        assert add.confirm_required and not tools["t__echo"].spec().confirm_required
        assert add.parameters["required"] == ["a", "b"]
        assert add.timeout_s == 10.0
        # The servers' annotations declare what a call does (the ledger and recovery use it).
        echo = tools["t__echo"].spec()
        assert (echo.read_only, echo.idempotent) == (True, False)
        assert (add.read_only, add.idempotent) == (False, True)
        fail = tools["t__fail"].spec()
        assert not fail.read_only and not fail.idempotent and not fail.rerun_safe
        assert await tools["t__add"].invoke({"a": 2, "b": 3}, None) == {"result": 5}
        # An MCP tool error is shown to the model, with its code.
        failed = await tools["t__fail"].invoke({"reason": "nope"}, None)
        assert failed["error"]["code"] == "BEM-242" and "nope" in failed["error"]["message"]
    finally:
        await hub.aclose()


async def test_include_offers_only_the_named_tools() -> None:
    hub = McpHub({"t": stdio_config(include=["echo", "add"])})
    try:
        await hub.start()
        assert sorted(by_name(hub, "t")) == ["t__add", "t__echo"]
        assert [t.mcp_name for t in hub.tools("t", ["echo"])] == ["echo"]
    finally:
        await hub.aclose()


async def test_a_dead_server_is_bem_240_and_comes_back_with_backoff() -> None:
    hub = McpHub({"t": stdio_config()})
    try:
        await hub.start()
        tools = by_name(hub, "t")
        first = (await tools["t__pid"].invoke({}, None))["result"]
        with pytest.raises(RiverbeamError) as info:
            await tools["t__crash"].invoke({}, None)
        assert info.value.code is ErrorCode.MCP_UNAVAILABLE
        connection = hub.connection("t")
        await eventually(lambda: connection.state == "ready" and connection.connects == 2)
        second = (await tools["t__pid"].invoke({}, None))["result"]
        assert second != first
        # Killed from outside, too.
        os.kill(second, signal.SIGKILL)
        await eventually(lambda: connection.connects == 3)
        assert (await tools["t__echo"].invoke({"text": "back"}, None)) == {"result": "back"}
    finally:
        await hub.aclose()


async def test_a_server_that_answers_garbage_is_bem_241_and_is_restarted() -> None:
    hub = McpHub({"t": stdio_config()})
    try:
        await hub.start()
        tools = by_name(hub, "t")
        with pytest.raises(RiverbeamError) as info:
            await tools["t__garbage"].invoke({}, None)
        assert info.value.code is ErrorCode.MCP_PROTOCOL
        assert "not MCP" in info.value.message
        connection = hub.connection("t")
        await eventually(lambda: connection.state == "ready" and connection.connects == 2)
        assert (await tools["t__echo"].invoke({"text": "ok"}, None)) == {"result": "ok"}
    finally:
        await hub.aclose()


async def test_a_server_that_cannot_start_does_not_raise() -> None:
    hub = McpHub(
        {"t": stdio_config(command="/nonexistent/mcp-server", args=[], startup_timeout_s=1.0)}
    )
    try:
        assert await hub.start() == {"t": False}
        assert hub.tools("t") == []
        assert hub.connection("t").last_error
    finally:
        await hub.aclose()


async def test_a_tool_added_on_the_server_appears_after_list_changed() -> None:
    hub = McpHub({"t": stdio_config()})
    try:
        await hub.start()
        version = hub.version
        added = await by_name(hub, "t")["t__grow"].invoke({}, None)
        assert added == {"result": "extra_1"}
        await eventually(lambda: hub.version != version)
        tools = by_name(hub, "t")
        assert "t__extra_1" in tools
        assert await tools["t__extra_1"].invoke({"x": 4}, None) == {"result": 5}
    finally:
        await hub.aclose()


async def test_http_server_with_headers_from_the_environment() -> None:
    async with http_server(token="s3cret") as url:
        hub = McpHub(
            {"web": http_config(url, headers={"Authorization": "Bearer ${MCP_TOKEN}"})},
            env={"MCP_TOKEN": "s3cret"},
        )
        try:
            assert await hub.start() == {"web": True}
            tools = by_name(hub, "web")
            assert sorted(tools) == [f"web__{n}" for n in BASE_TOOLS]
            assert await tools["web__add"].invoke({"a": 1, "b": 1}, None) == {"result": 2}
            version = hub.version
            await tools["web__grow"].invoke({}, None)
            await eventually(lambda: hub.version != version)
            assert "web__extra_1" in by_name(hub, "web")
        finally:
            await hub.aclose()
        # The wrong token: refused, reported, and no exception out of start().
        wrong = McpHub(
            {"web": http_config(url, headers={"Authorization": "Bearer x"}, startup_timeout_s=2.0)}
        )
        try:
            assert await wrong.start() == {"web": False}
            assert "401" in (wrong.connection("web").last_error or "")
        finally:
            await wrong.aclose()


def test_an_unset_variable_in_headers_is_bem_230() -> None:
    with pytest.raises(RiverbeamError) as info:
        McpHub(
            {"web": http_config("http://127.0.0.1:1/mcp", headers={"A": "${NOPE_NOT_SET}"})}, env={}
        )
    assert info.value.code is ErrorCode.CONFIG_INVALID
    assert "NOPE_NOT_SET" in info.value.message


async def test_an_agent_validates_arguments_times_out_and_holds_confirmed_calls() -> None:
    hub = McpHub({"t": stdio_config(confirm=["add"], timeout_s=1.0)})
    try:
        await hub.start()
        client = ScriptedClient(
            [
                ToolCalls([PendingToolCall("t__echo", {"text": 5})]),  # wrong type: BEM-090
                ToolCalls([PendingToolCall("t__slow", {"seconds": 30})]),  # BEM-091
                ToolCalls([PendingToolCall("t__echo", {"text": "fine"})]),
                Text("done"),
                ToolCalls([PendingToolCall("t__add", {"a": 1, "b": 2})]),  # held for approval
            ]
        )
        agent = RigAgentRunner.new(
            "mcp-user", client, hub.tools("t"), None, options=RigOptions(tool_errors="model")
        )
        beam = RiverBeam()
        beam.register_agent(agent)
        result = await beam.invoke(request("mcp-user", "go"))
        assert isinstance(result, AgentResult) and result.text == "done"
        outcomes = [(c.tool_name, c.result) for c in result.tool_calls]
        assert outcomes[0][1]["error"]["code"] == "BEM-090"
        assert outcomes[1][1]["error"]["code"] == "BEM-091"
        assert outcomes[2] == ("t__echo", {"result": "fine"})
        held = await beam.invoke(request("mcp-user", "add"))
        assert isinstance(held, AgentResult) and held.interrupted
        assert [a.tool for a in held.action_required] == ["t__add"]
        # The server is still there after the timeout.
        assert await by_name(hub, "t")["t__echo"].invoke({"text": "x"}, None) == {"result": "x"}
    finally:
        await hub.aclose()
