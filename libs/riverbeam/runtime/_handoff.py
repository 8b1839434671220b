"""After a handoff, the rest of the interaction goes to the agent the conversation was given to.

A run that handed off records the target in its result (AgentResult.handoff_to). A later
request in the same interaction (a new turn with its interaction_id, or a resume) is run by
the agent its latest top-level run left the conversation with, whatever agent the caller
named: the target, or whoever the target handed it on to. The request then carries
metadata.handed_off_from (the agent the caller named).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from riverbeam.core.errors import ErrorCode, RiverbeamError

if TYPE_CHECKING:  # annotations only: the router's active_agent needs no agent layer
    from riverbeam.agents import AgentRegistry
    from riverbeam.store import BeamStore
    from riverbeam.types import InvokeRequest

__all__ = ["HANDED_OFF_FROM", "active_agent", "route_after_handoff"]

HANDED_OFF_FROM = "handed_off_from"


async def active_agent(store: BeamStore, interaction_id: str) -> str | None:
    """The agent an interaction's conversation is with after a handoff; None without one."""
    try:
        runs = await store.list_runs(interaction_id=interaction_id)
    except RiverbeamError as err:
        if err.code is ErrorCode.INTERACTION_NOT_FOUND:
            return None
        raise
    top = [r for r in runs if r.parent_run_id is None]
    if not any(r.result is not None and r.result.handoff_to for r in top):
        return None
    last = top[-1]
    if last.result is not None and last.result.handoff_to:
        return last.result.handoff_to
    return last.agent_name


async def route_after_handoff(
    store: BeamStore, registry: AgentRegistry, request: InvokeRequest
) -> InvokeRequest:
    """The request, addressed to the interaction's agent after a handoff.

    Raises:
        RiverbeamError: BEM-020 when that agent is no longer registered.
    """
    if not request.interaction_id:
        return request
    agent = await active_agent(store, request.interaction_id)
    if agent is None or agent == request.agent_name:
        return request
    registry.get(agent)
    metadata = {**(request.metadata or {}), HANDED_OFF_FROM: request.agent_name}
    return request.model_copy(update={"agent_name": agent, "metadata": metadata})
