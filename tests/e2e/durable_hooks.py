"""The agent of the durable-run e2e test (RIVERBEAM_AGENTS=tests.e2e.durable_hooks:register).

`durable` is a RigAgentRunner on the deployment's model (the test's chat server) with two slow
tools that log each call's start to RIVERBEAM_TEST_EFFECTS (one line per call: tool and `v`),
so the test can kill its runner while a call is running and count how often each ran:
`slow_read` is read-only (recovery runs it again), `slow_effect` is not (recovery asks a
person).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from riverbeam.agents import AgentInput, RigAgentRunner, ToolSpec, json_params
from riverbeam.runtime import RiverBeam, default_client

SLOW_S = 2.5


class SlowTool:
    def __init__(self, name: str, log: Path, *, read_only: bool) -> None:
        self.name = name
        self.log = log
        self.read_only = read_only

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=f"{self.name}: takes a while",
            parameters=json_params({"v": {"type": "string"}}, ["v"]),
            read_only=self.read_only,
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        line = f"{self.name} {args['v']}\n"
        await asyncio.to_thread(self._append, line)
        await asyncio.sleep(SLOW_S)
        return {"did": args["v"]}

    def _append(self, line: str) -> None:
        with self.log.open("a", encoding="utf-8") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())


def register(beam: RiverBeam) -> None:
    log = Path(os.environ["RIVERBEAM_TEST_EFFECTS"])
    tools = [
        SlowTool("slow_read", log, read_only=True),
        SlowTool("slow_effect", log, read_only=False),
    ]
    beam.register_agent(RigAgentRunner("durable", default_client(), tools))
