"""The tool loop records Prometheus metrics for model calls and tool calls."""

from __future__ import annotations

from prometheus_client import REGISTRY

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Text, ToolCalls
from riverbeam.types import TokenUsage
from tests.unit.agents.agents_kit import Recorder, make_context, make_input, resolved, run


def _sample(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_model_and_tool_metrics_are_recorded() -> None:
    model = "metrics-model"
    tool = Recorder("metered", result={"ok": True})
    usage = TokenUsage(prompt_tokens=7, completion_tokens=3, total_tokens=10)
    client = ScriptedClient(
        [ToolCalls([PendingToolCall("metered", {})], usage=usage), Text("done", usage=usage)]
    )
    agent = RigAgentRunner.new("metrics", client, [tool], None)
    before_calls = _sample("riverbeam_tool_calls_total", {"tool": "metered", "outcome": "ok"})
    before_prompt = _sample("riverbeam_model_tokens_total", {"model": model, "kind": "input"})
    before_latency = _sample("riverbeam_model_latency_seconds_count", {"model": model})

    frames = await run(agent, make_input(), make_context(model_config_resolved=resolved(model)))

    assert frames[-1].type == "done"
    assert (
        _sample("riverbeam_tool_calls_total", {"tool": "metered", "outcome": "ok"})
        == before_calls + 1
    )
    assert (
        _sample("riverbeam_model_tokens_total", {"model": model, "kind": "input"})
        == before_prompt + 14
    )
    assert _sample("riverbeam_model_latency_seconds_count", {"model": model}) == before_latency + 2
    assert _sample("riverbeam_model_tokens_total", {"model": model, "kind": "prompt"}) == 0


async def test_model_cost_is_counted_by_model_from_the_list_price() -> None:
    from riverbeam.types import ModelConfig

    model = "priced-model"
    usage = TokenUsage(prompt_tokens=1500, completion_tokens=500, total_tokens=2000)
    client = ScriptedClient([Text("done", usage=usage)])
    agent = RigAgentRunner.new("costly", client, [], None)
    before = _sample("riverbeam_model_cost_total", {"model": model})
    priced = ModelConfig(name=model, provider="openai", cost_per_1k_tokens=0.25)
    await run(agent, make_input(), make_context(model_config_resolved=priced))
    assert _sample("riverbeam_model_cost_total", {"model": model}) == before + 0.5
