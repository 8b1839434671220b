"""riverbeam.yaml's guardrails, tool policies, structured output and limits take effect."""

from __future__ import annotations

from pathlib import Path

import pytest

from riverbeam.agents import PendingToolCall, Text, ToolCalls
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentResult, TokenUsage
from tests.unit.runtime.runtime_kit import text_request
from tests.unit.runtime.test_runtime_config_agents import wired

BIG = TokenUsage(prompt_tokens=900, completion_tokens=200, total_tokens=1100)


async def _failure(beam: object, agent: str, text: str) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request(agent, text))  # type: ignore[attr-defined]
    return info.value


async def test_guardrails_from_the_file_block_and_rewrite(tmp_path: Path) -> None:
    beam, client = await wired(
        tmp_path,
        """
        builtin_agents: false
        agents:
          - name: guarded
            instructions: Answer.
            guardrails:
              - {kind: max_input_chars, limit: 20}
              - {kind: regex, pattern: "(?i)drop table", stages: [input, output], message: no SQL please}
              - {kind: pii, detect: [email], stages: [output]}
              - {kind: python, entry: "tests.unit.runtime.config_tools:NoSecrets", stages: [input]}
        """,
        [Text("write to ann@example.com")],
    )
    long = await _failure(beam, "guarded", "x" * 21)
    assert long.details["agent_error_code"] == ErrorCode.INPUT_GUARDRAIL_TRIPPED.code
    sql = await _failure(beam, "guarded", "DROP TABLE users")
    assert sql.details["agent_error_code"] == ErrorCode.INPUT_GUARDRAIL_TRIPPED.code
    assert "no SQL please" in sql.message
    secret = await _failure(beam, "guarded", "my secret")
    assert "mentions a secret" in secret.message
    assert client.calls == []  # nothing reached the model
    result = await beam.invoke(text_request("guarded", "contact?"))
    assert isinstance(result, AgentResult)
    assert "ann@example.com" not in result.text and result.text.startswith("write to ")


async def test_a_structured_output_from_the_file_is_validated_and_repaired(
    tmp_path: Path,
) -> None:
    beam, client = await wired(
        tmp_path,
        """
        builtin_agents: false
        agents:
          - name: typed
            instructions: Answer in JSON.
            output:
              kind: json_schema
              schema: {type: object, required: [n], properties: {n: {type: integer}}}
              repair_attempts: 1
        """,
        [Text('{"n": "two"}'), Text('{"n": 2}')],
    )
    result = await beam.invoke(text_request("typed", "how many?"))
    assert isinstance(result, AgentResult)
    assert result.output == {"n": 2}
    assert len(client.calls) == 2  # the first answer was sent back for repair


async def test_limits_from_the_file_end_the_run_with_their_codes(tmp_path: Path) -> None:
    beam, _ = await wired(
        tmp_path,
        """
        builtin_agents: false
        agents:
          - name: thrifty
            instructions: x
            tools: [{kind: python, entry: "tests.unit.runtime.config_tools:Shout"}]
            limits: {max_tokens: 1000}
        """,
        [ToolCalls([PendingToolCall("shout", {"text": "a"})], usage=BIG), Text("never")],
    )
    err = await _failure(beam, "thrifty", "go")
    assert err.details["agent_error_code"] == ErrorCode.TOKEN_BUDGET_EXCEEDED.code


async def test_tool_policies_from_the_file_join_the_call_chain(tmp_path: Path) -> None:
    beam, _ = await wired(
        tmp_path,
        """
        builtin_agents: false
        agents:
          - name: careful
            instructions: x
            tools: [{kind: python, entry: "tests.unit.runtime.config_tools:Shout"}]
            policies:
              - {kind: python, entry: "tests.unit.runtime.config_tools:LoudOnly"}
              - {kind: max_tool_calls, limit: 2}  # a denied call counts too
            tool_errors: model
        """,
        [
            ToolCalls([PendingToolCall("shout", {"text": "quiet"})]),
            ToolCalls([PendingToolCall("shout", {"text": "LOUD"})]),
            ToolCalls([PendingToolCall("shout", {"text": "LOUDER"})]),
            Text("done"),
        ],
    )
    result = await beam.invoke(text_request("careful", "go"))
    assert isinstance(result, AgentResult) and result.text == "done"
    first, second, third = result.tool_calls
    assert first.result["denied"] is True and first.decisions[0].policy == "loud_only"
    assert second.result == "LOUD"
    assert third.result["denied"] is True and third.decisions[0].policy == "max_tool_calls"


async def test_approve_tools_from_the_file_holds_the_call(tmp_path: Path) -> None:
    beam, _ = await wired(
        tmp_path,
        """
        builtin_agents: false
        agents:
          - name: gated
            instructions: x
            tools: [{kind: python, entry: "tests.unit.runtime.config_tools:Shout"}]
            policies: [{kind: approve_tools, tools: [shout]}]
        """,
        [ToolCalls([PendingToolCall("shout", {"text": "a"})])],
    )
    result = await beam.invoke(text_request("gated", "go"))
    assert isinstance(result, AgentResult) and result.interrupted
    assert [a.tool for a in result.action_required] == ["shout"]
