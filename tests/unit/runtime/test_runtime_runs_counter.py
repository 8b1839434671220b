"""Finished runs are counted by agent and status (riverbeam_runs_total), through a child
looked up once per (agent, status)."""

from __future__ import annotations

import uuid

from prometheus_client import REGISTRY

from riverbeam.runtime import RiverBeam
from riverbeam.telemetry._metrics import RUNS_TOTAL, child_of
from riverbeam.types import AgentResult


def _count(agent: str, status: str) -> float:
    value = REGISTRY.get_sample_value("riverbeam_runs_total", {"agent": agent, "status": status})
    return value or 0.0


async def test_each_finished_run_is_counted_under_its_agent_and_status() -> None:
    beam = RiverBeam()
    beam.register_echo_agent("counted-echo")
    beam.register_echo_agent("other-echo")
    before = _count("counted-echo", "completed"), _count("other-echo", "completed")
    for agent in ("counted-echo", "counted-echo", "other-echo"):
        result = await beam.invoke(
            {
                "agent_name": agent,
                "session_id": str(uuid.uuid4()),
                "content": [{"type": "text", "text": "hi"}],
            }
        )
        assert isinstance(result, AgentResult)
    assert _count("counted-echo", "completed") == before[0] + 2
    assert _count("other-echo", "completed") == before[1] + 1
    counted = child_of(RUNS_TOTAL, "counted-echo", "completed")
    assert counted is child_of(RUNS_TOTAL, "counted-echo", "completed")
    assert counted is not child_of(RUNS_TOTAL, "other-echo", "completed")
