"""Guardrails: the built-ins, block and rewrite, per stage, in the loop, on the record."""

from __future__ import annotations

from typing import Any

import pytest
from agents_kit import Recorder, make_context, make_input, run

from riverbeam.agents import (
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.agents._guardrails import (
    DenyPatterns,
    JsonSchemaCheck,
    MaxLength,
    ModelJudge,
    PiiDetector,
    find_pii,
    iban_valid,
    luhn_valid,
    parse_guardrails,
    run_guardrails,
)
from riverbeam.agents._layer_config import AgentLayerConfig
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.telemetry._metrics import GUARDRAIL_EVENTS


def test_luhn_and_iban_checks() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert iban_valid("GB82 WEST 1234 5698 7654 32")
    assert iban_valid("DE89370400440532013000")
    assert not iban_valid("DE89370400440532013001")


def test_find_pii_kinds() -> None:
    text = (
        "mail ada@example.com, card 4111 1111 1111 1111, not a card 4111 1111 1111 1112, "
        "iban DE89370400440532013000, call +44 20 7946 0958"
    )
    kinds = [k for k, _, _ in find_pii(text, ["email", "phone", "card", "iban"])]
    assert kinds.count("email") == 1 and kinds.count("card") == 1 and kinds.count("iban") == 1
    assert "phone" in kinds
    assert [k for k, _, _ in find_pii("order 12345", ["phone", "card"])] == []


async def test_builtins_block_or_rewrite() -> None:
    assert (await MaxLength(max_chars=3).check("abcd", stage="input")).action == "block"
    cut = await MaxLength(max_chars=3, on_match="rewrite").check("abcd", stage="input")
    assert cut.text == "abc"
    deny = DenyPatterns(patterns=[r"(?i)drop\s+table"], keywords=["Secret"])
    assert (await deny.check("please DROP  table x", stage="input")).action == "block"
    assert (await deny.check("the secret", stage="input")).action == "block"
    assert (await deny.check("fine", stage="input")).action == "pass"
    pii = await PiiDetector().check("write to ada@example.com", stage="output")
    assert pii.action == "rewrite" and pii.text == "write to [email]"
    schema = JsonSchemaCheck.model_validate({"kind": "json_schema", "schema": {"type": "array"}})
    assert (await schema.check("{}", stage="output")).action == "block"
    assert (await schema.check("[1]", stage="output")).action == "pass"
    assert (await schema.check("nope", stage="output")).action == "block"


def test_configs_parse_from_plain_data() -> None:
    parsed = parse_guardrails(
        [{"kind": "pii", "detect": ["email"]}, {"kind": "max_length", "max_chars": 10}]
    )
    assert [type(g).__name__ for g in parsed] == ["PiiDetector", "MaxLength"]
    for bad in ([{"kind": "nope"}], [{"kind": "deny_patterns", "patterns": ["("]}]):
        with pytest.raises(RiverbeamError) as info:
            parse_guardrails(bad)
        assert info.value.code is ErrorCode.GUARDRAIL_CONFIG_INVALID


async def test_input_guardrail_blocks_before_the_model() -> None:
    client = ScriptedClient([Text("never")])
    deny = DenyPatterns(name="no-drop", keywords=["drop table"])
    runner = RigAgentRunner("g", client, [], options=RigOptions(guardrails=[deny]))
    before = GUARDRAIL_EVENTS.labels("no-drop", "input", "block")._value.get()
    frames = await run(runner, make_input("please drop table users"))
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-205"
    assert "no-drop" in (frames[-1].error or "")
    assert client.calls == []
    assert frames[-1].result is not None
    (event,) = frames[-1].result.metadata["agent_layer"]["guardrails"]
    assert event["name"] == "no-drop" and event["stage"] == "input"
    assert GUARDRAIL_EVENTS.labels("no-drop", "input", "block")._value.get() == before + 1


async def test_input_rewrite_is_what_the_model_sees() -> None:
    client = ScriptedClient([Text("ok")])
    runner = RigAgentRunner("g", client, [], options=RigOptions(guardrails=[PiiDetector()]))
    frames = await run(runner, make_input("I am ada@example.com"))
    assert frames[-1].type == "done"
    assert client.calls[0].messages[-1] == {"role": "user", "content": "I am [email]"}
    events = frames[-1].result.metadata["agent_layer"]["guardrails"]  # type: ignore[union-attr]
    assert events == [
        {"name": "pii", "stage": "input", "action": "rewrite", "reason": "found email"}
    ]


async def test_output_block_streams_nothing_of_the_answer() -> None:
    client = ScriptedClient([Text("the password is hunter2")])
    guard = DenyPatterns(keywords=["password"], stages=["output"])
    runner = RigAgentRunner("g", client, [], options=RigOptions(guardrails=[guard]))
    frames = await run(runner, make_input("tell me"))
    assert frames[-1].error_code == "BEM-206"
    assert not [f for f in frames if f.type == "chunk"]
    assert frames[-1].result is not None and frames[-1].result.content == []


async def test_output_rewrite_redacts_the_streamed_and_recorded_answer() -> None:
    client = ScriptedClient([Text("card 4111 1111 1111 1111 ok")])
    runner = RigAgentRunner(
        "g", client, [], options=RigOptions(guardrails=[PiiDetector(stages=["output"])])
    )
    frames = await run(runner, make_input("x"))
    chunks = "".join(f.data.text for f in frames if f.type == "chunk" and f.data)
    assert chunks == "card [card] ok"
    assert frames[-1].result is not None and frames[-1].result.text == "card [card] ok"


async def test_tool_result_guardrail_rewrites_and_blocks() -> None:
    tool = Recorder("lookup", result={"owner": "ada@example.com", "n": 1})
    steps = [ToolCalls([PendingToolCall("lookup", {}, id="c1")]), Text("done")]
    client = ScriptedClient(steps)
    guard = PiiDetector(stages=["tool_result"])
    runner = RigAgentRunner("g", client, [tool], options=RigOptions(guardrails=[guard]))
    frames = await run(runner, make_input("x"))
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.tool_calls[0].result == {"owner": "[email]", "n": 1}
    assert "[email]" in client.calls[1].messages[-1]["content"]

    blocking = PiiDetector(stages=["tool_result"], on_match="block")
    client = ScriptedClient(list(steps))
    runner = RigAgentRunner("g", client, [tool], options=RigOptions(guardrails=[blocking]))
    frames = await run(runner, make_input("x"))
    assert frames[-1].error_code == "BEM-207"
    results = [
        f.data.tool_result
        for f in frames
        if f.type == "tool" and f.data and f.data.type == "tool_result"
    ]
    assert results[0]["error"]["code"] == "BEM-207"  # the call is answered, then the run ends


async def test_model_judge_blocks_passes_and_fails_closed() -> None:
    judge = ScriptedClient([Text("yes: it asks for malware")])
    q = ModelJudge(question="Does the text ask for malware?")
    runner = RigAgentRunner(
        "g", ScriptedClient([]), [], options=RigOptions(guardrails=[q], judge=judge)
    )
    frames = await run(runner, make_input("write ransomware"))
    assert frames[-1].error_code == "BEM-205"
    assert "it asks for malware" in (frames[-1].error or "")
    assert "write ransomware" in judge.calls[0].messages[-1]["content"]

    # One client, in order: the input judge, the model, the output judge.
    agent_client = ScriptedClient([Text("no: harmless"), Text("hi"), Text("no: fine")])
    runner = RigAgentRunner("g", agent_client, [], options=RigOptions(guardrails=[q]))
    frames = await run(runner, make_input("hello"))
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "hi"

    vague = ScriptedClient([Text("maybe")])
    runner = RigAgentRunner(
        "g", ScriptedClient([]), [], options=RigOptions(guardrails=[q], judge=vague)
    )
    assert (await run(runner, make_input("x")))[-1].error_code == "BEM-208"


async def test_deployment_guardrails_apply_too() -> None:
    layer = AgentLayerConfig.parse({"guardrails": [{"kind": "max_length", "max_chars": 5}]})
    runner = RigAgentRunner("g", ScriptedClient([Text("x")]), [])
    frames = await run(runner, make_input("far too long"), make_context(agent_layer=layer))
    assert frames[-1].error_code == "BEM-205"


async def test_run_guardrails_chains_rewrites() -> None:
    events: list[Any] = []
    guards: list[Any] = [
        _named(PiiDetector(detect=["email"])),
        _named(MaxLength(max_chars=8, on_match="rewrite")),
    ]
    out = await run_guardrails(guards, "input", "a@b.co is me", events)
    assert out == "[email] "
    assert [e.name for e in events] == ["pii", "max_length"]


def _named(config: Any) -> Any:
    from riverbeam.agents._guardrails import build_guardrails

    (guard,) = build_guardrails([config], judge=None)
    return guard
