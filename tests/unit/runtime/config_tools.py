"""Python tools that tests/unit/runtime/test_runtime_config_agents.py names as entry points."""

from __future__ import annotations

from typing import Any

from riverbeam.agents import AgentInput, ToolSpec, json_params


class Shout:
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="shout",
            description="Upper-case a text.",
            parameters=json_params({"text": {"type": "string"}}, ["text"]),
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        return args["text"].upper()


INSTANCE = Shout()


def make_tools() -> list[Shout]:
    return [Shout()]


NOT_A_TOOL = 42
