"""Multi-agent composition. Today: an agent as a tool of another agent (AgentTool).

    helper = AgentTool(registry, "summarize")          # offered to the model as ask_summarize
    RigAgentRunner.new("lead", client, [helper], "author")

The called agent runs inside the caller's tool call: it gets the task as its user turn, the
caller's session, model, memory and auth context, and the caller's usage meter (so its tokens
count in the caller's run). Its answer is the tool's result. Not done yet (see docs/agents.md):
a run record of its own linked to the parent, its frames on the parent's stream, approval
inside the child, handoff, and crews.
"""

from __future__ import annotations

import contextlib
from typing import Any

from riverbeam.agents._completion import closing_events
from riverbeam.agents._io import AgentContext, AgentInput
from riverbeam.agents._registry import AgentRegistry
from riverbeam.agents._tool import TOOL_NAME_PATTERN, ToolCallContext, ToolSpec, json_params
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ContentPart

__all__ = ["MAX_AGENT_DEPTH", "AgentTool"]

MAX_AGENT_DEPTH = 3
"""How deep agents may call agents (a guard against an agent calling itself forever)."""

_DEPTH_KEY = "riverbeam_agent_depth"


class AgentTool:
    """Another registered agent, offered to a model as a tool taking a `task`.

    Args:
        registry: Where the agent is looked up, at each call (BEM-020 when it is gone).
        agent: The agent's name.
        name: The tool's name (default `ask_<agent>`, made a valid tool name).
        description: What the model is told (default: the agent's description).
    """

    def __init__(
        self,
        registry: AgentRegistry,
        agent: str,
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        self._registry = registry
        self.agent = agent
        default = "ask_" + "".join(c if TOOL_NAME_PATTERN.fullmatch(c) else "_" for c in agent)
        self._name = name or default[:64]
        self._description = description

    def spec(self) -> ToolSpec:
        description = self._description
        if description is None:
            with contextlib.suppress(RiverbeamError):
                description = self._registry.get_metadata(self.agent).description
        return ToolSpec(
            name=self._name,
            description=f"Ask the {self.agent} agent: {description or 'another agent'}. "
            "Give it the whole task; it answers with text.",
            parameters=json_params({"task": {"type": "string"}}, ["task"]),
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        return await self.invoke_in_context(
            args, ToolCallContext(input, AgentContext(), input.agent_name)
        )

    async def invoke_in_context(self, args: dict[str, Any], call: ToolCallContext) -> Any:
        """Run the agent on the task; its answer, tool calls and usage.

        Raises:
            RiverbeamError: BEM-020 when the agent is not registered, BEM-087 when it failed
                (its code in the details), BEM-234 when it stopped for an approval or the
                calls nest deeper than MAX_AGENT_DEPTH.
        """
        agent = self._registry.get(self.agent)
        parent = call.input
        depth = int(parent.metadata.get(_DEPTH_KEY, 0)) + 1
        if depth > MAX_AGENT_DEPTH:
            raise RiverbeamError(
                ErrorCode.AGENT_TOOL_UNSUPPORTED,
                f"agents call agents {depth} deep (at most {MAX_AGENT_DEPTH})",
                agent=self.agent,
            )
        child_input = AgentInput(
            content=[ContentPart.of_text(str(args.get("task", "")))],
            session_id=parent.session_id,
            run_id=parent.run_id,
            agent_name=self.agent,
            interaction_id=parent.interaction_id,
            request_id=parent.request_id,
            metadata={**parent.metadata, _DEPTH_KEY: depth},
            auth_context=parent.auth_context,
        )
        context = call.context
        child_context = AgentContext(
            model_config_resolved=context.model_config_resolved,
            metadata=dict(context.metadata),
            memory_writer=context.memory_writer,
            memory_scopes=list(context.memory_scopes),
            usage=context.usage,  # the child's tokens are the parent run's
        )
        result = None
        async with closing_events(agent.stream(child_input, child_context)) as frames:
            async for frame in frames:
                if frame.type == "error":
                    raise RiverbeamError(
                        ErrorCode.AGENT_ERROR_FRAME,
                        f"agent {self.agent} failed: {frame.error or 'error'}",
                        agent=self.agent,
                        agent_error_code=frame.error_code,
                    )
                if frame.type == "done":
                    result = frame.result
        if result is None:
            raise RiverbeamError(
                ErrorCode.STREAM_WITHOUT_DONE,
                f"agent {self.agent} ended without an answer",
                agent=self.agent,
            )
        if result.interrupted:
            raise RiverbeamError(
                ErrorCode.AGENT_TOOL_UNSUPPORTED,
                f"agent {self.agent} stopped to ask for approval of "
                f"{', '.join(a.tool for a in result.action_required)}; approvals inside an agent "
                "called as a tool are not supported yet",
                agent=self.agent,
            )
        return {
            "agent": self.agent,
            "answer": result.text,
            "tool_calls": [c.tool_name for c in result.tool_calls],
        }
