"""RIVERBEAM_AGENTS hooks for the runtime integration tests (also loaded by runner processes).

register   "hold": one frame, then blocks forever; "worker": a RigAgentRunner whose model
           asks for a tool that blocks forever; "assistant": the echo agent.
only_one   "solo", the echo agent under another name (to see that a hook replaces the
           built-in wiring).
"""

from __future__ import annotations

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Text, ToolCalls
from riverbeam.runtime import RiverBeam
from riverbeam.types import TokenUsage
from tests.integration.runtime.rt_kit import BlockingTool, HoldAgent

WORKER_USAGE = TokenUsage(prompt_tokens=11, completion_tokens=7, total_tokens=18)


def worker_script() -> list[Text | ToolCalls]:
    return [
        ToolCalls(
            (PendingToolCall("block", {"v": "x"}, id="call-block"),),
            text="Let me look.",
            usage=WORKER_USAGE,
        ),
        Text("never reached"),
    ]


def register(beam: RiverBeam) -> None:
    beam.register_agent(HoldAgent("hold"))
    beam.register_agent(
        RigAgentRunner.new("worker", ScriptedClient(worker_script()), [BlockingTool()], None)
    )
    beam.register_echo_agent("assistant")


async def only_one(beam: RiverBeam) -> None:
    beam.register_echo_agent("solo")
