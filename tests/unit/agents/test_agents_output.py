"""Structured output: schema per agent and per request, native format or prompt, repair."""

from __future__ import annotations

from typing import Any

import pytest
from agents_kit import make_context, make_input, run

from riverbeam.agents import RigAgentRunner, RigOptions, ScriptedClient, Text
from riverbeam.agents._output import OutputSpec, ResponseSchema, parse_json_answer
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ModelConfig, StreamChunk

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}


def agent(steps: list[Any], **options: Any) -> tuple[RigAgentRunner, ScriptedClient]:
    client = ScriptedClient(steps)
    output = OutputSpec.model_validate({"schema": PERSON, **options.pop("spec", {})})
    return RigAgentRunner("p", client, [], options=RigOptions(output=output, **options)), client


def done(frames: list[StreamChunk]) -> Any:
    assert frames[-1].type == "done", frames[-1]
    assert frames[-1].result is not None
    return frames[-1].result


async def test_valid_answer_is_parsed_into_output() -> None:
    runner, client = agent([Text('{"name": "Ada", "age": 36}')])
    frames = await run(runner, make_input("who?"))
    result = done(frames)
    assert result.output == {"name": "Ada", "age": 36}
    assert result.metadata["agent_layer"]["output"] == {"mode": "prompt", "repairs": 0}
    # Prompt mode: the schema is in the system prompt, no native format is sent.
    (call,) = client.calls
    assert call.response_format is None
    assert '"required": ["name"]' in call.messages[0]["content"]
    # The final text streams once, after validation.
    assert [f.data.text for f in frames if f.type == "chunk" and f.data] == [
        '{"name": "Ada", "age": 36}'
    ]


async def test_native_format_for_a_model_with_the_capability() -> None:
    runner, client = agent([Text('{"name": "Ada"}')])
    model = ModelConfig(name="m", provider="openai", capabilities=["structured_output"])
    frames = await run(runner, make_input("who?"), make_context(model_config_resolved=model))
    assert done(frames).output == {"name": "Ada"}
    (call,) = client.calls
    assert call.response_format is not None
    assert call.response_format["type"] == "json_schema"
    assert call.response_format["json_schema"]["schema"] == PERSON
    assert all("JSON Schema" not in str(m.get("content")) for m in call.messages)


async def test_invalid_answer_is_repaired_with_the_errors_fed_back() -> None:
    runner, client = agent([Text("not json"), Text('{"age": 3}'), Text('{"name": "Bo"}')])
    result = done(await run(runner, make_input("who?")))
    assert result.output == {"name": "Bo"}
    assert result.metadata["agent_layer"]["output"]["repairs"] == 2
    second, third = client.calls[1], client.calls[2]
    assert "not JSON" in second.messages[-1]["content"]
    assert "'name' is a required property" in third.messages[-1]["content"]
    assert third.messages[-2] == {"role": "assistant", "content": '{"age": 3}'}


async def test_repairs_exhausted_fail_with_200_and_the_last_errors() -> None:
    runner, _ = agent([Text("[]"), Text('{"name": 1}')], spec={"repair_attempts": 1})
    frames = await run(runner, make_input("who?"))
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-200"
    assert "name: 1 is not of type 'string'" in (frames[-1].error or "")
    assert frames[-1].result is not None and frames[-1].result.content == []
    # Nothing of the invalid answers was streamed.
    assert not [f for f in frames if f.type == "chunk"]


async def test_request_schema_narrows_both_must_validate() -> None:
    narrower = {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}
    runner, client = agent([Text('{"name": "Ada"}'), Text('{"name": "Ada", "age": 1}')])
    input = make_input("who?")
    input.response_schema = narrower
    result = done(await run(runner, input))
    assert result.output == {"name": "Ada", "age": 1}
    assert "'age' is a required property" in client.calls[1].messages[-1]["content"]


def test_a_request_cannot_loosen_the_agent_schema() -> None:
    loose = {"type": "object"}
    schema = ResponseSchema.combine(OutputSpec.model_validate({"schema": PERSON}), loose)
    assert schema is not None
    assert not schema.check('{"age": 2}').ok  # the agent's required name still applies
    assert schema.schema == {"allOf": [PERSON, loose]}


def test_request_schema_alone_and_invalid_schemas() -> None:
    only = ResponseSchema.combine(None, {"type": "array"})
    assert only is not None and only.check("[1]").ok and only.repair_attempts == 2
    assert ResponseSchema.combine(None, None) is None
    with pytest.raises(RiverbeamError) as info:
        ResponseSchema.combine(None, {"type": 12})
    assert info.value.code is ErrorCode.RESPONSE_SCHEMA_INVALID


async def test_an_invalid_request_schema_ends_the_run_with_201() -> None:
    runner, client = agent([Text("{}")])
    input = make_input("x")
    input.response_schema = {"type": "nope"}
    frames = await run(runner, input)
    assert frames[-1].error_code == "BEM-201"
    assert client.calls == []


def test_json_fence_is_tolerated() -> None:
    assert parse_json_answer('```json\n{"a": 1}\n```') == {"a": 1}
    with pytest.raises(ValueError):
        parse_json_answer("```python\nx\n```")


async def test_a_fallback_chain_passes_the_native_format_to_clients_that_take_it() -> None:
    from riverbeam.agents import EchoClient, FallbackClient
    from riverbeam.core.errors import ErrorCode as Code

    first = ScriptedClient([RiverbeamError(Code.MODEL_UNAVAILABLE, "down")])
    second = ScriptedClient([Text('{"name": "Ada"}')])
    chain = FallbackClient([first, second, EchoClient()])
    output = OutputSpec.model_validate({"schema": PERSON})
    runner = RigAgentRunner("p", chain, [], options=RigOptions(output=output))
    model = ModelConfig(name="m", provider="openai", capabilities=["structured_output"])
    frames = await run(runner, make_input("who?"), make_context(model_config_resolved=model))
    assert done(frames).output == {"name": "Ada"}
    assert first.calls[0].response_format is not None
    assert second.calls[0].response_format is not None
