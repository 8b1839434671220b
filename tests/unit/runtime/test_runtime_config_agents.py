"""Agents from riverbeam.yaml, wired into an in-process RiverBeam with a scripted model."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from riverbeam.agents import PendingToolCall, ScriptedClient, Text, ToolCalls, load_config
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import RunnerSettings
from riverbeam.runtime import RiverBeam, wire_agents
from riverbeam.types import AgentResult
from tests.unit.runtime.runtime_kit import text_request

BUILTINS = ["assistant", "author", "commit-notes", "consume", "gfs-publish", "review", "summarize"]


def settings(tmp_path: Path, text: str | None, **fields: Any) -> RunnerSettings:
    config = None
    if text is not None:
        config = tmp_path / "riverbeam.yaml"
        config.write_text(textwrap.dedent(text))
    return RunnerSettings(sandbox_url=None, store_url=None, config=config, **fields)


async def wired(
    tmp_path: Path, text: str | None, steps: list[Any] | None = None, **fields: Any
) -> tuple[RiverBeam, ScriptedClient]:
    beam = RiverBeam()
    client = ScriptedClient(steps or [])
    await wire_agents(beam, settings(tmp_path, text, **fields), client=client)
    return beam, client


async def test_without_a_file_the_built_in_agents_are_served(tmp_path: Path) -> None:
    beam, _ = await wired(tmp_path, None)
    assert [a.name for a in beam.list_agents()] == BUILTINS


async def test_a_configured_agent_runs_with_its_prompt_tools_and_metadata(tmp_path: Path) -> None:
    beam, client = await wired(
        tmp_path,
        """
        agents:
          - name: shouter
            description: Shouts
            version: "3.2"
            tags: [loud]
            modalities: [text, image]
            model: big
            instructions: You shout.
            tools:
              - {kind: python, entry: "tests.unit.runtime.config_tools:Shout"}
        """,
        [ToolCalls([PendingToolCall("shout", {"text": "hi"})]), Text("HI it is")],
    )
    assert [a.name for a in beam.list_agents()] == sorted([*BUILTINS, "shouter"])
    meta = next(a for a in beam.list_agents() if a.name == "shouter")
    assert meta.description == "Shouts" and meta.version == "3.2" and meta.model == "big"
    assert meta.tags == ["rig", "config", "loud"]  # no skill: tag for instructions alone
    assert meta.supported_modalities == ["text", "image"]
    result = await beam.invoke(text_request("shouter", "shout hi"))
    assert isinstance(result, AgentResult)
    assert result.text == "HI it is"
    assert [(c.tool_name, c.result) for c in result.tool_calls] == [("shout", "HI")]
    first = client.calls[0]
    assert first.messages[0] == {"role": "system", "content": "You shout."}
    assert [t.name for t in first.tools] == ["shout"]


async def test_entry_points_may_be_instances_factories_or_classes(tmp_path: Path) -> None:
    beam, client = await wired(
        tmp_path,
        """
        builtin_agents: false
        agents:
          - name: a
            instructions: x
            tools:
              - {kind: python, entry: "tests.unit.runtime.config_tools:INSTANCE"}
          - name: b
            instructions: x
            tools: [{kind: python, entry: "tests.unit.runtime.config_tools:make_tools"}]
        """,
        [Text("ok"), Text("ok")],
    )
    assert [a.name for a in beam.list_agents()] == ["a", "b"]
    for name in ("a", "b"):
        await beam.invoke(text_request(name, "x"))
    assert [[t.name for t in call.tools] for call in client.calls] == [["shout"], ["shout"]]


async def test_a_skill_gives_its_prompt_and_instructions_follow(tmp_path: Path) -> None:
    beam, client = await wired(
        tmp_path,
        """
        builtin_agents: [assistant]
        agents:
          - {name: brief-summary, skill: summarize, instructions: At most two sentences.}
        """,
        [Text("short")],
    )
    assert [a.name for a in beam.list_agents()] == ["assistant", "brief-summary"]
    await beam.invoke(text_request("brief-summary", "sum up"))
    system = client.calls[0].messages[0]["content"]
    assert system.startswith("You write short, faithful summaries")
    assert system.endswith("At most two sentences.")


async def test_a_configured_agent_replaces_the_built_in_of_that_name(tmp_path: Path) -> None:
    beam, client = await wired(
        tmp_path, "agents:\n  - {name: consume, instructions: Mine.}\n", [Text("mine")]
    )
    assert beam.list_agents()[[a.name for a in beam.list_agents()].index("consume")].tags[-1] == (
        "config"
    )
    await beam.invoke(text_request("consume", "q"))
    assert client.calls[0].messages[0]["content"].endswith("Mine.")


async def test_confirm_and_deny_policies_shape_the_tools(tmp_path: Path) -> None:
    beam, client = await wired(
        tmp_path,
        """
        builtin_agents: false
        agents:
          - name: careful
            instructions: x
            tools: [remember, {kind: python, entry: "tests.unit.runtime.config_tools:Shout"}]
            policies:
              - {kind: confirm, tools: [shout]}
              - {kind: deny, tools: [remember]}
        """,
        [ToolCalls([PendingToolCall("shout", {"text": "hi"})])],
    )
    result = await beam.invoke(text_request("careful", "shout"))
    assert isinstance(result, AgentResult)
    assert [t.name for t in client.calls[0].tools] == ["shout"]
    assert client.calls[0].tools[0].confirm_required
    assert result.interrupted and [a.tool for a in result.action_required] == ["shout"]


async def test_limits_reach_the_tool_loop(tmp_path: Path) -> None:
    beam, _ = await wired(
        tmp_path,
        """
        builtin_agents: false
        agents:
          - name: brief
            instructions: x
            tools: [{kind: python, entry: "tests.unit.runtime.config_tools:Shout"}]
            limits: {max_rounds: 1}
        """,
        [ToolCalls([PendingToolCall("shout", {"text": "a"})])] * 3,
    )
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request("brief", "x"))
    assert info.value.code is ErrorCode.AGENT_ERROR_FRAME
    assert "BEM-088" in str(info.value.details) or "rounds" in info.value.message


@pytest.mark.parametrize(
    ("agent", "code", "field"),
    [
        ("{name: a, skill: nonsense}", ErrorCode.CONFIG_UNKNOWN_NAME, "agents[0].skill"),
        (
            "{name: a, instructions: x, tools: [{kind: mcp, server: nowhere}]}",
            ErrorCode.CONFIG_UNKNOWN_NAME,
            "agents[0].tools[0].server",
        ),
        (
            "{name: a, instructions: x, tools: [read_file]}",
            ErrorCode.CONFIG_UNKNOWN_NAME,
            "agents[0].tools[0]",
        ),
        (
            "{name: a, instructions: x, tools: [{kind: python, entry: 'no_such_mod:X'}]}",
            ErrorCode.CONFIG_ENTRY_POINT,
            "agents[0].tools[0].entry",
        ),
        (
            "{name: a, instructions: x, tools: [{kind: python, entry: "
            "'tests.unit.runtime.config_tools:NOT_A_TOOL'}]}",
            ErrorCode.CONFIG_ENTRY_POINT,
            "agents[0].tools[0].entry",
        ),
        # The agent layer's sections: invalid values are BEM-230 naming the field.
        (
            "{name: a, instructions: x, guardrails: [{kind: max_input_chars, limit: 0}]}",
            ErrorCode.CONFIG_INVALID,
            "agents[0].guardrails[0].limit",
        ),
        (
            "{name: a, instructions: x, guardrails: [{kind: pii, detect: [ssn]}]}",
            ErrorCode.CONFIG_INVALID,
            "agents[0].guardrails[0].detect[0]",
        ),
        (
            "{name: a, instructions: x, guardrails: [{kind: deny_patterns, patterns: ['(']}]}",
            ErrorCode.CONFIG_INVALID,
            "agents[0].guardrails[0].patterns",
        ),
        (
            "{name: a, instructions: x, output: {kind: json_schema, schema: {type: 12}}}",
            ErrorCode.CONFIG_INVALID,
            "agents[0].output.schema",
        ),
        (
            "{name: a, instructions: x, limits: {max_tokens: 0}}",
            ErrorCode.CONFIG_INVALID,
            "agents[0].limits.max_tokens",
        ),
        (
            "{name: a, instructions: x, policies: [{kind: max_tool_calls, limit: -1}]}",
            ErrorCode.CONFIG_INVALID,
            "agents[0].policies[0].limit",
        ),
        (
            "{name: a, instructions: x, policies: [{kind: approve_tools}]}",
            ErrorCode.CONFIG_INVALID,
            "agents[0].policies[0].tools",
        ),
        (
            "{name: a, instructions: x, guardrails: [{kind: python, entry: "
            "'tests.unit.runtime.config_tools:NOT_A_TOOL'}]}",
            ErrorCode.CONFIG_ENTRY_POINT,
            "agents[0].guardrails[0].entry",
        ),
        (
            "{name: a, instructions: x, policies: [{kind: python, entry: "
            "'tests.unit.runtime.config_tools:Shout'}]}",
            ErrorCode.CONFIG_ENTRY_POINT,
            "agents[0].policies[0].entry",
        ),
        (
            "{name: a, instructions: x, model: nope}",
            ErrorCode.CONFIG_UNKNOWN_NAME,
            "agents[0].model",
        ),
    ],
)
async def test_references_are_checked_at_start_naming_the_line(
    tmp_path: Path, agent: str, code: ErrorCode, field: str
) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: small, provider: custom}\n")
    with pytest.raises(RiverbeamError) as info:
        await wired(tmp_path, f"builtin_agents: false\nagents:\n  - {agent}\n", models_file=models)
    err = info.value
    assert err.code is code, err
    assert err.details["field"] == field
    assert err.details["line"] == "3"
    assert err.details["file"].endswith("riverbeam.yaml")


async def test_two_agents_with_one_name_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RiverbeamError) as info:
        await wired(
            tmp_path, "agents:\n  - {name: a, instructions: x}\n  - {name: a, instructions: y}\n"
        )
    assert info.value.code is ErrorCode.AGENT_ALREADY_REGISTERED
    assert info.value.details["line"] == "3"


async def test_an_unknown_built_in_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RiverbeamError) as info:
        await wired(tmp_path, "builtin_agents: [assistant, nobody]\n")
    assert info.value.code is ErrorCode.CONFIG_UNKNOWN_NAME
    assert info.value.details["field"] == "builtin_agents[1]"


HOOK = """\
from riverbeam.agents import RigAgentRunner, ScriptedClient, Text


def register(beam):
    beam.register_agent(RigAgentRunner.new("hooked", ScriptedClient([Text("from the hook")]), []))
"""


async def test_the_hook_adds_agents_and_finds_modules_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_agents_hook.py").write_text(HOOK)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    beam, _ = await wired(
        tmp_path,
        "builtin_agents: [assistant]\nagents:\n  - {name: mine, instructions: x}\n",
        agents="my_agents_hook:register",
    )
    assert [a.name for a in beam.list_agents()] == ["assistant", "hooked", "mine"]
    result = await beam.invoke(text_request("hooked", "x"))
    assert isinstance(result, AgentResult) and result.text == "from the hook"


async def test_a_workspace_section_names_the_workspace(tmp_path: Path) -> None:
    text = "workspace: {name: docs, origin: /srv/docs.git}\n"
    (tmp_path / "riverbeam.yaml").write_text(text)
    loaded = load_config(tmp_path / "riverbeam.yaml")
    assert loaded.config.workspace is not None
    assert (loaded.config.workspace.name, loaded.config.workspace.origin) == (
        "docs",
        "/srv/docs.git",
    )
