"""An input guardrail's rewrite changes the stored human message too (issue 12)."""

from __future__ import annotations

import uuid

from riverbeam.agents import RigAgentRunner, RigOptions, ScriptedClient, Text
from riverbeam.agents._guardrails import DenyPatterns, PiiDetector
from riverbeam.agents._layer_config import AgentLayerConfig
from riverbeam.runtime import PipelineOptions, RiverBeam
from riverbeam.types import AgentResult, StreamAck
from tests.unit.runtime.runtime_kit import text_request


def _beam(
    client: ScriptedClient, layer: AgentLayerConfig | None = None, **options: object
) -> RiverBeam:
    beam = RiverBeam(options=PipelineOptions(agent_layer=layer))
    beam.register_agent(
        RigAgentRunner.new("a", client, [], None, options=RigOptions(**options))  # type: ignore[arg-type]
    )
    return beam


async def test_a_redacted_turn_is_stored_redacted_and_the_model_sees_the_same() -> None:
    client = ScriptedClient([Text("noted"), Text("again")])
    beam = _beam(client, guardrails=[PiiDetector(stages=["input"])])
    sid = str(uuid.uuid4())
    result = await beam.invoke(
        text_request("a", "mail ada@example.com or call +44 20 7946 0958", sid)
    )
    assert isinstance(result, AgentResult) and result.text == "noted"
    (human,) = [m for m in await beam.list_messages(sid) if m.role == "human"]
    assert human.text == "mail [email] or call [phone]"
    assert client.calls[0].messages[-1]["content"] == human.text
    assert "ada@example.com" not in str(await beam.list_messages(sid))
    layer = (result.metadata or {})["agent_layer"]
    assert [(e["name"], e["action"]) for e in layer["guardrails"]] == [("pii", "rewrite")]
    # The next turn's history is the stored, redacted text.
    await beam.invoke(text_request("a", "and now?", sid))
    assert "ada@example.com" not in str(client.calls[1].messages)
    assert "mail [email]" in str(client.calls[1].messages)


async def test_a_deployment_redaction_is_stored_too() -> None:
    client = ScriptedClient([Text("ok")])
    layer = AgentLayerConfig.parse({"guardrails": [{"kind": "pii", "stages": ["input"]}]})
    beam = _beam(client, layer)
    sid = str(uuid.uuid4())
    await beam.invoke(text_request("a", "card 4111 1111 1111 1111", sid))
    (human,) = [m for m in await beam.list_messages(sid) if m.role == "human"]
    assert human.text == "card [card]"


async def test_a_tripwire_after_a_redaction_stores_the_redacted_turn_and_fails_the_run() -> None:
    client = ScriptedClient([Text("never")])
    guards = [
        PiiDetector(stages=["input"]),
        DenyPatterns(name="no-drop", keywords=["drop table"], stages=["input"]),
    ]
    beam = _beam(client, guardrails=guards)
    sid = str(uuid.uuid4())
    ack = await beam.invoke(
        text_request("a", "ada@example.com says DROP TABLE users", sid, stream=True)
    )
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-205"
    assert client.calls == []  # the model never saw it
    run = await beam.get_run(ack.run_id or "")
    assert run.status == "failed" and run.error_code == "BEM-205"
    assert run.result is not None
    events = (run.result.metadata or {})["agent_layer"]["guardrails"]
    assert [(e["name"], e["action"]) for e in events] == [("pii", "rewrite"), ("no-drop", "block")]
    (human,) = [m for m in await beam.list_messages(sid) if m.role == "human"]
    assert human.text == "[email] says DROP TABLE users"


async def test_without_input_guardrails_the_turn_is_stored_as_sent() -> None:
    client = ScriptedClient([Text("ok")])
    beam = _beam(client, guardrails=[PiiDetector(stages=["output"])])
    sid = str(uuid.uuid4())
    await beam.invoke(text_request("a", "mail ada@example.com", sid))
    (human,) = [m for m in await beam.list_messages(sid) if m.role == "human"]
    assert human.text == "mail ada@example.com"
