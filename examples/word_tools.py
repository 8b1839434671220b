"""Python tools for examples/riverbeam.yaml (`kind: python, entry: "word_tools:WordCount"`)."""

from __future__ import annotations

from typing import Any

from riverbeam.agents import AgentInput, ToolSpec, json_params


class WordCount:
    """Counts the words in a text."""

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="word_count",
            description="Count the words in a text.",
            parameters=json_params({"text": {"type": "string"}}, ["text"]),
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        return {"words": len(args["text"].split())}
