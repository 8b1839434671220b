"""The demo model of `riverbeam up --demo`: the README tour's script, over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2

from riverbeam.agents import OpenAiCompatible, Text, ToolCalls
from services.cli._demo import DEMO_TURN, Demo, demo_reply

TOUR_TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {}}}
    for name in ("write_file", "git_add", "git_commit", "git_push")
]


def _after(name: str, result: object) -> dict[str, object]:
    return {
        "tools": TOUR_TOOLS,
        "messages": [
            {"role": "user", "content": DEMO_TURN},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result)},
        ],
    }


def test_the_script_walks_the_tour() -> None:
    text, calls = demo_reply(
        {"tools": TOUR_TOOLS, "messages": [{"role": "user", "content": DEMO_TURN}]}
    )
    assert text == "I'll add the file." and calls[0]["function"]["name"] == "write_file"
    assert json.loads(calls[0]["function"]["arguments"])["path"] == "CONTRIBUTING.md"
    assert demo_reply(_after("write_file", {"bytes": 58}))[1][0]["function"]["name"] == "git_add"
    assert demo_reply(_after("git_add", {}))[1][0]["function"]["name"] == "git_commit"
    # The replies name the branch the tools report: the session's own.
    text, calls = demo_reply(_after("git_commit", {"branch": "riverbeam/s-1"}))
    assert text == "Committed. May I push riverbeam/s-1?"
    assert calls[0]["function"]["name"] == "git_push"
    pushed = {"branch": "riverbeam/s-1", "remote_ref": "refs/heads/riverbeam/s-1"}
    assert demo_reply(_after("git_push", pushed))[0] == (
        "Pushed riverbeam/s-1 to origin: CONTRIBUTING.md is up for review."
    )
    assert (
        demo_reply(_after("git_push", {"declined": True}))[0] == "Understood: nothing was pushed."
    )


def test_an_agent_without_the_tour_tools_gets_a_pointer() -> None:
    text, calls = demo_reply({"messages": [{"role": "user", "content": "hi"}]})
    assert calls == [] and DEMO_TURN in text


async def test_the_demo_serves_the_openai_client_and_makes_a_bare_origin(tmp_path: Path) -> None:
    async with Demo(tmp_path) as demo:
        assert pygit2.Repository(str(demo.origin)).is_bare
        env = demo.env_overrides()
        client = OpenAiCompatible.from_env(env["runner"])
        assert client is not None and client.model == "demo-model"
        async with client:
            first = await client.complete([{"role": "user", "content": DEMO_TURN}], [])
            assert isinstance(first, Text) and "README tour" in first.text
            assert first.model == "demo-model" and first.usage is not None
            from riverbeam.agents import ToolSpec

            specs = [
                ToolSpec(name=n, description=n, parameters={"type": "object"})
                for n in ("write_file", "git_add", "git_commit", "git_push")
            ]
            second = await client.complete([{"role": "user", "content": DEMO_TURN}], specs)
            assert isinstance(second, ToolCalls) and second.calls[0].name == "write_file"
        assert json.loads(env["sandbox"]["RIVERBEAM_ALLOWED_ORIGIN_PREFIXES"]) == [str(demo.origin)]
    assert demo.origin.exists()  # a given folder is the caller's


async def test_a_temporary_demo_folder_is_removed() -> None:
    async with Demo() as demo:
        origin = demo.origin
        assert origin.exists()
    assert not origin.exists()
