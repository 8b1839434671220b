"""wire_agents: the built-in set, a deployment's hook, and the model client from BEAM_* vars."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from riverbeam.agents import EchoClient, OpenAiCompatible, RigAgentRunner, builtin_skills
from riverbeam.agents._io import AgentInput
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import RunnerSettings, SandboxSettings
from riverbeam.runtime import JetStreamSinks, RiverBeam, wire_agents
from riverbeam.sandbox import SANDBOX_TOOL_NAMES, WorkspacesClient
from riverbeam.server import GrpcServer, open_channel
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection, StreamConfig
from riverbeam.types import ContentPart, StreamAck
from services.sandbox.app import build as build_sandbox
from tests.integration.runtime.rt_kit import GUARD_S, assert_gap_free, collect, text_request
from tests.support.chat_server import ChatServer, text

SKILLS = ["author", "consume", "summarize", "commit-notes", "review", "gfs-publish"]


@pytest.fixture
async def sandbox_url(tmp_path: Path) -> AsyncIterator[str]:
    settings = SandboxSettings(listen="127.0.0.1:0", workspace_base=tmp_path / "workspaces")
    async with (
        build_sandbox(settings) as app,
        GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server,
    ):
        yield server.address


def settings(**values: object) -> RunnerSettings:
    base: dict[str, object] = {"store_url": None, "sandbox_url": None, "agents": None}
    base.update(values)
    return RunnerSettings(**base)  # type: ignore[arg-type]


async def test_default_wiring_is_assistant_and_the_six_skills(sandbox_url: str) -> None:
    assert [s.name for s in builtin_skills()] == SKILLS
    beam = RiverBeam()
    closers = await wire_agents(beam, settings(sandbox_url=sandbox_url), env={})
    try:
        assert sorted(a.name for a in beam.list_agents()) == sorted(["assistant", *SKILLS])
        registry = beam.registry()
        author = registry.get("author")
        assert isinstance(author, RigAgentRunner)
        # No BEAM_API_KEY: the built-in agents answer with EchoClient.
        assert isinstance(author.client, EchoClient)
        # The author gets the nine sandbox tools, each call in its run's own workspace: none
        # is made at start-up (the per-session workspace is made on the run's first call).
        assert [t.name for t in author.tool_specs] == list(SANDBOX_TOOL_NAMES)
        channel = open_channel(sandbox_url)
        try:
            assert (await WorkspacesClient(channel).list()).workspaces == []
            session = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
            run = AgentInput(
                content=[ContentPart.of_text("hi")],
                session_id=session,
                run_id="40744652-2720-4b10-86ee-7333c1be8165",
                agent_name="author",
            )
            status = await author.tool("git_status").tool.invoke({}, run)  # type: ignore[union-attr]
            assert status["branch"] == f"riverbeam/s-{session}"
            names = [w.name for w in (await WorkspacesClient(channel).list()).workspaces]
            assert names == [f"s-{session}"]
        finally:
            await channel.close(None)
        # Each skill keeps only the tools its allowlist names.
        summarize = registry.get("summarize")
        assert isinstance(summarize, RigAgentRunner)
        assert [t.name for t in summarize.tool_specs] == [
            "list_tree",
            "read_file",
            "git_diff",
            "git_log",
        ]
    finally:
        for close in closers:
            await close()


async def test_the_shared_policy_is_an_explicit_opt_in(sandbox_url: str) -> None:
    beam = RiverBeam()
    chosen = settings(sandbox_url=sandbox_url, workspace_policy="shared", workspace="team")
    closers = await wire_agents(beam, chosen, env={})
    try:
        channel = open_channel(sandbox_url)
        try:
            info = await WorkspacesClient(channel).get("team")
        finally:
            await channel.close(None)
        assert (info.name, info.branch) == ("team", "riverbeam/work")
    finally:
        for close in closers:
            await close()
    # A shared name may not be one a per-session or per-user workspace could have.
    with pytest.raises(RiverbeamError) as raised:
        await wire_agents(
            RiverBeam(),
            settings(sandbox_url=sandbox_url, workspace_policy="shared", workspace="s-x"),
            env={},
        )
    assert raised.value.bem == "BEM-331"


async def test_hook_from_riverbeam_agents_adds_to_the_builtin_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RIVERBEAM_AGENTS", "tests.integration.runtime.rt_hooks:only_one")
    from_env = RunnerSettings(store_url=None, sandbox_url=None)
    assert from_env.agents == "tests.integration.runtime.rt_hooks:only_one"
    beam = RiverBeam()
    assert await wire_agents(beam, from_env, env={}) == []
    assert sorted(a.name for a in beam.list_agents()) == sorted(["assistant", *SKILLS, "solo"])
    # A config file that keeps no built-in agent leaves the hook's alone.
    config = tmp_path / "riverbeam.yaml"
    config.write_text("builtin_agents: false\n")
    beam = RiverBeam()
    await wire_agents(beam, from_env.model_copy(update={"config": config}), env={})
    assert [a.name for a in beam.list_agents()] == ["solo"]

    for bad in ("no_colon", "tests.integration.runtime.rt_hooks:missing", "nowhere.at.all:f"):
        with pytest.raises(RiverbeamError) as info:
            await wire_agents(RiverBeam(), settings(agents=bad), env={})
        assert info.value.code is ErrorCode.INVALID_ARGUMENT


@pytest.mark.nats
async def test_builtin_author_calls_the_model_named_by_beam_env(
    store: BeamStore, nats: NatsConnection
) -> None:
    async with ChatServer([text("Hello from the model.")], api_key="test-key") as server:
        env = {
            "BEAM_API_KEY": "test-key",
            "BEAM_API_BASE_URL": server.url,
            "BEAM_MODEL": "test-model",
        }
        beam = RiverBeam(store=store, sinks=JetStreamSinks(nats.js, StreamConfig()))
        closers = await wire_agents(beam, settings(), env=env)
        try:
            author = beam.registry().get("author")
            assert isinstance(author, RigAgentRunner)
            assert isinstance(author.client, OpenAiCompatible)
            assert author.client.endpoint == f"{server.url}/chat/completions"
            ack = await beam.invoke(text_request("author", "say hello", stream=True))
            assert isinstance(ack, StreamAck)
            frames = await collect(nats.js, ack.request_id, guard_s=GUARD_S)
            await beam.wait_idle()
        finally:
            await beam.aclose(grace_s=1)
            for close in closers:
                await close()

    assert_gap_free(frames)
    done = frames[-1]
    assert done.type == "done" and done.result is not None
    assert done.result.text == "Hello from the model."
    (sent,) = server.completions
    assert sent.headers.get("authorization") == "Bearer test-key"
    assert sent.body["model"] == "test-model"
    assert sent.body["messages"][0]["role"] == "system"
    assert "git working tree" in sent.body["messages"][0]["content"]
    assert sent.body["messages"][-1] == {"role": "user", "content": "say hello"}
