"""RIVERBEAM_AGENTS hooks for the runtime integration tests (also loaded by runner processes).

register   "hold": one frame, then blocks forever; "worker": a RigAgentRunner whose model
           asks for a tool that blocks forever; "assistant": the echo agent.
only_one   "solo", the echo agent under another name (to see that a hook replaces the
           built-in wiring).
register_stalling / register_steady
           "steady" (no tools): its model call never returns / answers STEADY_ANSWER.
"""

from __future__ import annotations

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Text, ToolCalls
from riverbeam.runtime import RiverBeam
from riverbeam.types import TokenUsage
from tests.integration.runtime.rt_kit import BlockingTool, HoldAgent
from tests.support.recovery_kit import GatedClient

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


# ---- a unary invoke whose runner dies in a model call (test_runtime_unary_recovery) -------------
STEADY_ANSWER = "answered by the replica that took over"


def register_stalling(beam: RiverBeam) -> None:
    """ "steady" on the runner that will die: its first model call never returns."""
    client = GatedClient([Text("never reached")])
    client.hold_at = 0
    beam.register_agent(RigAgentRunner.new("steady", client, [], None))


def register_steady(beam: RiverBeam) -> None:
    """ "steady" on the replica that takes over: the model call made again answers."""
    beam.register_agent(
        RigAgentRunner.new("steady", ScriptedClient([Text(STEADY_ANSWER)]), [], None)
    )
