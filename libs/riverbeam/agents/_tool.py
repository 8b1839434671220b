"""Tools: the Tool protocol, ToolSpec and json_params, and the context a tool call runs in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from riverbeam.agents._io import AgentContext, AgentInput
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = [
    "TOOL_NAME_PATTERN",
    "ApprovalTool",
    "ContextualTool",
    "PreviewTool",
    "Tool",
    "ToolCallContext",
    "ToolSpec",
    "json_params",
]

TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def json_params(
    properties: dict[str, Any], required: list[str] | tuple[str, ...] = ()
) -> dict[str, Any]:
    """A JSON Schema object for a tool's parameters."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(required),
        "additionalProperties": False,
    }


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the model sees of a tool."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: json_params({}))
    confirm_required: bool = False
    # Seconds before a call is abandoned with BEM-091; None uses the runner's default.
    timeout_s: float | None = None
    # What a call does to the world, for recovery after a crash (issue 13). A read-only tool
    # changes nothing; an idempotent one may change things, but a second call with the same
    # arguments leaves them as the first did. Either may be re-run when its runner died in the
    # middle of a call; any other tool's outcome is unknown and a person decides.
    read_only: bool = False
    idempotent: bool = False

    def __post_init__(self) -> None:
        if not TOOL_NAME_PATTERN.fullmatch(self.name):
            raise RiverbeamError(
                ErrorCode.INVALID_TOOL_NAME, f"invalid tool name {self.name!r}", tool=self.name
            )

    @property
    def rerun_safe(self) -> bool:
        """True when a call whose outcome is unknown may simply be made again."""
        return self.read_only or self.idempotent

    def openai(self) -> dict[str, Any]:
        """The OpenAI chat-completions `tools` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@runtime_checkable
class Tool(Protocol):
    """A callable the model can use."""

    def spec(self) -> ToolSpec: ...

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any: ...


@dataclass(frozen=True, slots=True)
class ToolCallContext:
    """Everything about one tool call, for tools that need more than the request.

    Attributes:
        input: The request the agent runs for.
        context: The agent's context: history, memory writer and scopes, usage meter.
        agent_name: The agent running the tool.
        tool_call_id: The model's id for this call, when it has one.
    """

    input: AgentInput
    context: AgentContext
    agent_name: str
    tool_call_id: str | None = None


@runtime_checkable
class ContextualTool(Tool, Protocol):
    """A tool that needs the run's context, not just the request (the remember tool does).

    An agent that runs tools calls invoke_in_context instead of invoke when the tool has it.
    invoke stays for callers that have no context; such a tool should then do what it can with
    the request alone, or fail with a clear error.
    """

    async def invoke_in_context(self, args: dict[str, Any], call: ToolCallContext) -> Any: ...


@runtime_checkable
class ApprovalTool(Tool, Protocol):
    """A confirm_required tool that says exactly what an approval of a call will cover.

    When a call is held for a person, the agent stores (and shows the approver) the arguments
    approval_args returns instead of the model's: git_push names the branch and the workspace
    it will push. The approved call runs with exactly those arguments, so the tool must accept
    them and refuse them if they no longer describe the run (git_push: BEM-315).
    """

    async def approval_args(self, args: dict[str, Any], input: AgentInput) -> dict[str, Any]: ...


@runtime_checkable
class PreviewTool(ApprovalTool, Protocol):
    """An approval tool that can show what a held call would do, and bind approval to it.

    approval_preview gets the arguments approval_args returned and gives back the arguments
    to store, now carrying the state the preview was computed from (git_push and write_file:
    `expect`), and the preview (ActionPreview's wire form), or None when it has none. The
    approved call must refuse with BEM-275 when that state no longer holds; the agent then
    holds the call again with a fresh preview.
    """

    async def approval_preview(
        self, args: dict[str, Any], input: AgentInput
    ) -> tuple[dict[str, Any], dict[str, Any] | None]: ...
