"""Tools, inputs and a memory writer shared by the agents tests."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from riverbeam.agents import (
    AgentContext,
    AgentInput,
    ResumedAction,
    ToolSpec,
    json_params,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import (
    ActionResponseEnvelope,
    ContentPart,
    MemoryEntry,
    Message,
    ModelConfig,
    StreamChunk,
)

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"
INTERACTION = "40744652-2720-4b10-86ee-7333c1be8165"


def make_input(
    text: str = "hello",
    *,
    agent: str = "agent",
    run_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    confirm_allowed: bool = False,
    actions: list[ResumedAction] | None = None,
    content: list[ContentPart] | None = None,
) -> AgentInput:
    return AgentInput(
        content=content if content is not None else ([ContentPart.of_text(text)] if text else []),
        session_id=SESSION,
        run_id=run_id or str(uuid.uuid4()),
        agent_name=agent,
        interaction_id=INTERACTION,
        request_id=str(uuid.uuid4()),
        metadata=metadata or {},
        actions=actions or [],
        confirm_allowed=confirm_allowed,
    )


def make_context(**fields: Any) -> AgentContext:
    return AgentContext(**fields)


def resolved(name: str = "router-model") -> ModelConfig:
    return ModelConfig(name=name, provider="custom")


async def run(
    agent: Any, input: AgentInput, context: AgentContext | None = None
) -> list[StreamChunk]:
    """Every frame of one run."""
    frames: AsyncIterator[StreamChunk] = agent.stream(input, context or make_context())
    return [frame async for frame in frames]


def tool_frames(frames: list[StreamChunk]) -> list[tuple[str, str | None, str | None]]:
    """(type of data, tool_name, tool_call_id) of each tool frame."""
    return [
        (f.data.type, f.data.tool_name, f.data.tool_call_id)
        for f in frames
        if f.type == "tool" and f.data
    ]


def envelope(
    action_id: str, status: str = "submitted", payload: dict[str, Any] | None = None
) -> ActionResponseEnvelope:
    return ActionResponseEnvelope.parse(
        {
            "action_id": action_id,
            "kind": "confirmation",
            "request_id": str(uuid.uuid4()),
            "status": status,
            "payload": payload,
        }
    )


def msg(
    role: str, text: str = "", *, type: str = "message", run_id: str | None = None, **fields: Any
) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        session_id=SESSION,
        seq=0,
        role=role,
        type=type,  # type: ignore[arg-type]
        content=[ContentPart.of_text(text)] if text else [],
        run_id=run_id,
        created_at=datetime.now(UTC),
        **fields,
    )


def history_from(
    frames: list[StreamChunk], *, human: str, run_id: str, start: int = 0
) -> list[Message]:
    """The Message records a pipeline would store for one run, from its frames.

    It keeps what the agent said: the human turn, each tool frame as a message, and the reply.
    """
    now = datetime.now(UTC)
    out = [
        Message(
            message_id=str(uuid.uuid4()),
            session_id=SESSION,
            run_id=run_id,
            seq=start,
            role="human",
            content=[ContentPart.of_text(human)],
            created_at=now,
        )
    ]
    for frame in frames:
        data = frame.data
        if frame.type == "tool" and data is not None:
            out.append(
                Message(
                    message_id=str(uuid.uuid4()),
                    session_id=SESSION,
                    run_id=run_id,
                    seq=start + len(out),
                    role="ai" if data.type == "action" else "tool",
                    type="message" if data.type == "action" else "tool_result",
                    content=list(data.content),
                    tool_call_id=data.tool_call_id,
                    tool_name=data.tool_name,
                    tool_args=data.tool_args,
                    tool_result=data.tool_result,
                    created_at=now,
                )
            )
        if frame.type == "done" and frame.result is not None and frame.result.content:
            held = [a.to_json_dict() for a in frame.result.action_required]
            out.append(
                Message(
                    message_id=str(uuid.uuid4()),
                    session_id=SESSION,
                    run_id=run_id,
                    seq=start + len(out),
                    role="ai",
                    content=list(frame.result.content),
                    created_at=now,
                    metadata={"action_required": held} if held else None,
                )
            )
    return out


# ---- tools ---------------------------------------------------------------------------------------
class Recorder:
    """A tool that records its calls and returns a fixed or computed value."""

    def __init__(
        self,
        name: str,
        *,
        confirm: bool = False,
        result: Any = None,
        params: dict[str, Any] | None = None,
        required: tuple[str, ...] = (),
        timeout_s: float | None = None,
    ) -> None:
        self.name = name
        self.calls: list[dict[str, Any]] = []
        self.inputs: list[AgentInput] = []
        self._confirm = confirm
        self._result = result
        self._params = params if params is not None else {}
        self._required = required
        self._timeout_s = timeout_s

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=f"The {self.name} tool.",
            parameters=json_params(self._params, self._required)
            if self._params
            else {"type": "object"},
            confirm_required=self._confirm,
            timeout_s=self._timeout_s,
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        self.calls.append(dict(args))
        self.inputs.append(input)
        return self._result if self._result is not None else {"tool": self.name, "args": args}


class Blocking:
    """A tool that waits until released (or is cancelled / timed out)."""

    def __init__(self, name: str = "slow", *, timeout_s: float | None = None) -> None:
        self.name = name
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False
        self._timeout_s = timeout_s

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, "Waits.", {"type": "object"}, timeout_s=self._timeout_s)

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return "released"


class Failing:
    """A tool that raises the given exception."""

    def __init__(self, name: str, error: BaseException) -> None:
        self.name = name
        self.error = error

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, "Fails.", {"type": "object"})

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        raise self.error


def push_tool() -> Recorder:
    return Recorder(
        "git_push",
        confirm=True,
        params={"ref": {"type": "string"}},
        required=("ref",),
        result={"pushed": True},
    )


# ---- memory --------------------------------------------------------------------------------------
class MemoryLog:
    """A MemoryWriter that keeps entries in a list."""

    def __init__(self) -> None:
        self.entries: list[MemoryEntry] = []

    async def remember(
        self,
        *,
        scope_name: str,
        scope_id: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        org_id: str | None = None,
    ) -> MemoryEntry:
        entry = MemoryEntry(
            org_id=org_id,
            scope_name=scope_name,
            scope_id=scope_id,
            entry_id=str(uuid.uuid4()),
            content=content,
            metadata=metadata,
            created_at=datetime.now(UTC),
        )
        self.entries.append(entry)
        return entry


def model_error(code: ErrorCode, **details: object) -> RiverbeamError:
    return RiverbeamError(code, f"scripted {code.code}", **details)
