"""The model that actually served a run is what every report names (issue 17).

With the built-in model list the router resolves the `riverbeam-default` placeholder, and the
agent's client picks its own model (BEAM_MODEL; `demo-model` here). The first model call's span
and metric, the done result, and a cancelled run's record all name that model.
"""

from __future__ import annotations

import asyncio

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import REGISTRY

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Text, ToolCalls
from riverbeam.runtime import RiverBeam
from riverbeam.telemetry import configure_tracing, shutdown_tracing
from riverbeam.types import AgentResult, StreamAck
from tests.unit.runtime.runtime_kit import CountingTool, text_request


def _latency_count(model: str) -> float:
    value = REGISTRY.get_sample_value("riverbeam_model_latency_seconds_count", {"model": model})
    return value or 0.0


async def test_first_model_call_is_labelled_with_the_clients_model() -> None:
    exporter = InMemorySpanExporter()
    configure_tracing("riverbeam-test", enabled=True, exporter=exporter, set_global=False)
    try:
        before = _latency_count("demo-model")
        unknown_before = _latency_count("unknown")
        beam = RiverBeam()
        client = ScriptedClient([Text("hi")], model="demo-model")
        beam.register_agent(RigAgentRunner.new("worker", client, [], None))
        result = await beam.invoke(text_request("worker", "hello"))
    finally:
        shutdown_tracing()
    assert isinstance(result, AgentResult) and result.model_used == "demo-model"
    assert _latency_count("demo-model") == before + 1
    assert _latency_count("unknown") == unknown_before
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert [s.name for s in chats] == ["chat demo-model"]
    attrs = chats[0].attributes or {}
    assert attrs["gen_ai.request.model"] == "demo-model"
    assert attrs["gen_ai.response.model"] == "demo-model"
    assert attrs["gen_ai.provider.name"] == "riverbeam.scripted"
    assert attrs["gen_ai.operation.name"] == "chat"


async def test_a_cancelled_run_reports_the_model_that_answered() -> None:
    slow = CountingTool("slow", delay_s=30)
    client = ScriptedClient(
        [ToolCalls([PendingToolCall("slow", {"v": "x"})]), Text("never")], model="demo-model"
    )
    beam = RiverBeam()
    beam.register_agent(RigAgentRunner.new("worker", client, [slow], None))
    ack = await beam.invoke(text_request("worker", "work", stream=True))
    assert isinstance(ack, StreamAck)
    await asyncio.wait_for(slow.started.wait(), 5)
    assert await beam.cancel(ack.request_id, "stop")
    await asyncio.wait_for(beam.wait_idle(), 5)
    run = await beam.get_run(ack.run_id or "")
    assert run.status == "cancelled"
    assert run.model_used == "demo-model"


def test_the_placeholder_is_not_a_model() -> None:
    from riverbeam.routing import default_model, is_placeholder
    from riverbeam.types import ModelConfig

    assert is_placeholder(default_model())
    assert not is_placeholder(ModelConfig(name="demo-model", provider="openai"))
