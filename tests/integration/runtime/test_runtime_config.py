"""The runner service with riverbeam.yaml: an MCP server's tool and a sandbox tool in one run.

Real NATS, the store service over both stores (memory and Postgres), the sandbox service, a
real MCP server process (stdio) and a chat-completions server playing the model.
"""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from riverbeam.core.settings import SandboxSettings
from riverbeam.runtime import Grant, RunnerClient
from riverbeam.sandbox import WorkspacesClient
from riverbeam.server import GrpcServer, open_channel
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection
from riverbeam.types import InvokeRequest, ModelConfig, StreamAck
from services.sandbox.app import build as build_sandbox
from tests.integration.mcp.mcp_kit import REPO_ROOT, server_env
from tests.integration.runtime.rt_kit import (
    assert_gap_free,
    collect,
    runner_service,
    runner_settings,
    store_service,
    text_request,
)
from tests.support.chat_server import ChatServer, call, text, tool_calls

pytestmark = pytest.mark.nats


@pytest.fixture
async def sandbox_url(tmp_path: Path) -> AsyncIterator[str]:
    settings = SandboxSettings(listen="127.0.0.1:0", workspace_base=tmp_path / "workspaces")
    async with (
        build_sandbox(settings) as app,
        GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server,
    ):
        yield server.address


def write_config(tmp_path: Path) -> Path:
    path = tmp_path / "riverbeam.yaml"
    pythonpath = server_env()["PYTHONPATH"]
    path.write_text(
        textwrap.dedent(
            f"""\
            builtin_agents: [assistant]
            workspace: {{policy: shared, name: configured}}
            mcp_servers:
              calc:
                kind: stdio
                command: python
                args: [-m, tests.support.mcp_server]
                cwd: {REPO_ROOT}
                env: {{PYTHONPATH: "{pythonpath}"}}
                include: [add]
            agents:
              - name: calculator
                description: Adds numbers and looks at files
                version: "1.4"
                model: big-model
                instructions: You add numbers with calc__add.
                tools: [list_tree, {{kind: mcp, server: calc}}]
            """
        )
    )
    return path


async def test_a_configured_agent_uses_mcp_and_sandbox_tools_through_the_runner(
    tmp_path: Path,
    store: BeamStore,
    nats: NatsConnection,
    nats_url: str,
    sandbox_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = [
        tool_calls([call("calc__add", {"a": 20, "b": 22}), call("list_tree", {})]),
        text("20 + 22 = 42"),
    ]
    async with ChatServer(script, api_key="k") as model:
        monkeypatch.setenv("BEAM_API_KEY", "k")
        monkeypatch.setenv("BEAM_API_BASE_URL", model.url)
        async with store_service(store) as store_url:
            settings = runner_settings(
                nats_url,
                store_url,
                agents=None,
                sandbox_url=sandbox_url,
                config=write_config(tmp_path),
            )
            async with runner_service(settings) as address:
                client = RunnerClient(address)
                try:
                    agents = {a.name: a for a in await client.list_agents()}
                    assert sorted(agents) == ["assistant", "calculator"]
                    calculator = agents["calculator"]
                    assert calculator.model == "big-model" and calculator.version == "1.4"
                    ack = await client.run_invoke(
                        InvokeRequest.parse(text_request("calculator", "20+22?", stream=True)),
                        model=ModelConfig(name="big-model", provider="custom"),
                        grant=Grant(may_confirm=False),
                    )
                    assert isinstance(ack, StreamAck)
                    frames = await collect(nats.js, ack.request_id)
                finally:
                    await client.aclose()
            channel = open_channel(sandbox_url)
            try:
                assert (await WorkspacesClient(channel).get("configured")).name == "configured"
            finally:
                await channel.close(None)
    assert_gap_free(frames)
    results = {
        f.data.tool_name: f.data.tool_result
        for f in frames
        if f.data is not None and f.data.type == "tool_result"
    }
    assert results["calc__add"] == {"result": 42}
    assert isinstance(results["list_tree"], dict | list)
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "20 + 22 = 42"
    sent = model.completions[0].body
    assert [t["function"]["name"] for t in sent["tools"]] == ["list_tree", "calc__add"]
    assert sent["messages"][0] == {"role": "system", "content": "You add numbers with calc__add."}
    assert sent["model"] == "big-model"
    run = await store.get_run(run_id=frames[-1].result.run_id or "")
    assert run.status == "completed"
