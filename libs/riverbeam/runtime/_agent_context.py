"""The AgentContext a prepared run executes with: its history, its organisation's memory
(trimmed to the model's budget) and the pipeline's collaborators."""

from __future__ import annotations

from riverbeam.agents._io import AgentContext, UsageMeter
from riverbeam.runtime._context import memory_scopes, trim_memory
from riverbeam.runtime._deferred_history import DeferredHistoryContext, history_copier
from riverbeam.runtime._pipeline_types import DEFAULT_MODEL, PipelineOptions, PreparedRun
from riverbeam.store import BeamStore
from riverbeam.types import InvokeRequest, MemoryEntry, ModelConfig

__all__ = ["agent_context", "org_of"]


def org_of(request: InvokeRequest) -> str | None:
    """The organisation a request acts in (the router set it from authentication)."""
    return request.auth_context.org_id if request.auth_context else None


def _is_placeholder(model: ModelConfig) -> bool:
    return model.name == DEFAULT_MODEL.name and model.provider == DEFAULT_MODEL.provider


async def agent_context(
    prepared: PreparedRun, store: BeamStore, options: PipelineOptions, usage: UsageMeter
) -> AgentContext:
    """The context of `prepared`'s agent run."""
    # Memory is keyed by organisation: only the request's organisation's entries are read.
    org_id = org_of(prepared.request)
    scopes = memory_scopes(prepared.request.metadata, org_id=org_id)
    memory: list[MemoryEntry] = []
    if scopes:
        memory = await store.recall(scopes=scopes, limit=options.max_memory_entries, org_id=org_id)
    memory, budget = trim_memory(memory, max_tokens=prepared.model.max_tokens)
    writable = scopes or [("session", prepared.request.session_id)]
    # The session's newest max_history_messages before this run, read by the begin-run step:
    # copied and trimmed to what memory left of the budget when the agent first reads them.
    return DeferredHistoryContext(
        history_copier(prepared.begun),
        budget,
        memory=memory,
        # The built-in placeholder names no real model: the agent's client uses its own
        # (BEAM_MODEL), instead of asking the endpoint for "riverbeam-default".
        model_config_resolved=None if _is_placeholder(prepared.model) else prepared.model,
        metadata=dict(prepared.request.metadata or {}),
        memory_writer=store,
        memory_scopes=writable,
        usage=usage,
        agent_layer=options.agent_layer,
        tool_ledger=prepared.ledger,
    )
