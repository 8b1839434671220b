"""The pipeline's hook for input guardrails before the begin-run step (agents/_input_guard.py).

An agent with a `guard_input(content, layer)` method (RigAgentRunner) guards the user's turn
before it is stored, so a redaction changes the stored human message too; other agents are
left as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from riverbeam.agents import Agent
from riverbeam.types import InvokeRequest

if TYPE_CHECKING:
    from riverbeam.agents._layer_config import AgentLayerConfig

__all__ = ["guard_before_storing"]


async def guard_before_storing(
    agent: Agent, request: InvokeRequest, layer: AgentLayerConfig | None
) -> tuple[InvokeRequest, Any]:
    """The request with its content as it is to be stored, and the stage's outcome (or None)."""
    guard = getattr(agent, "guard_input", None)
    if guard is None or not request.content:
        return request, None
    guarded = await guard(list(request.content), layer)
    if guarded is None:
        return request, None
    return request.model_copy(update={"content": list(guarded.content)}), guarded
