"""Shared pieces for the pipeline tests: tools, agents and request builders."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

from riverbeam.agents import AgentContext, AgentInput, ToolSpec, json_params
from riverbeam.types import AgentMetadata, StreamChunk


class CountingTool:
    """Returns its argument; counts calls (the approval tests assert it ran exactly once)."""

    def __init__(self, name: str, *, confirm: bool = False, delay_s: float = 0.0) -> None:
        self.name = name
        self.confirm = confirm
        self.delay_s = delay_s
        self.calls: list[dict[str, Any]] = []
        self.started = asyncio.Event()

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=f"test tool {self.name}",
            parameters=json_params({"v": {"type": "string"}}, ["v"]),
            confirm_required=self.confirm,
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        self.started.set()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        self.calls.append(dict(args))
        return {"tool": self.name, "got": args["v"]}


class FramesAgent:
    """Yields a fixed list of frames (to test the pipeline's frame checks)."""

    def __init__(self, name: str, frames: list[StreamChunk], *, hang: bool = False) -> None:
        self.name = name
        self.frames = frames
        self.hang = hang

    def metadata(self) -> AgentMetadata:
        return AgentMetadata(name=self.name)

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        for frame in self.frames:
            yield frame
        if self.hang:
            await asyncio.Event().wait()

    async def health_check(self) -> bool:
        return True


def text_request(
    agent: str, text: str, session_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "agent_name": agent,
        "content": [{"type": "text", "text": text}],
        "session_id": session_id or str(uuid.uuid4()),
        **extra,
    }


def approval(
    action_id: str, *, status: str = "submitted", payload: dict[str, Any] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "action_id": action_id,
        "kind": "confirmation",
        "request_id": str(uuid.uuid4()),
        "status": status,
    }
    if payload is not None:
        out["payload"] = payload
    return out
