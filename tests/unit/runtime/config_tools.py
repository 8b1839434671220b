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


class NoSecrets:
    """A Python guardrail: blocks text containing 'secret'."""

    name = "no_secrets"

    def applies_to(self, stage: str) -> bool:
        return True

    async def check(self, text: str, *, stage: str) -> Any:
        from riverbeam.agents._guardrails import GuardrailResult

        if "secret" in text:
            return GuardrailResult("block", "mentions a secret")
        return GuardrailResult.passed()


class LoudOnly:
    """A Python tool policy: denies shout calls whose text is not upper-case."""

    name = "loud_only"

    async def before(self, call: Any) -> Any:
        from riverbeam.agents._policies import Deny

        text = str(call.args.get("text", ""))
        return None if text.isupper() else Deny("only loud texts")

    async def after(self, call: Any, result: Any) -> Any:
        return None
