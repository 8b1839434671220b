"""JSON Schema of every wire type, so consumers in other languages can validate what we send."""

from __future__ import annotations

from typing import Any

from riverbeam.types._base import WireModel
from riverbeam.types._content import ContentPart
from riverbeam.types._invoke import (
    ActionResponseEnvelope,
    InvokeAuthContext,
    InvokePayload,
    InvokeRequest,
    ResumePayload,
    RunOptions,
    TurnConfig,
)
from riverbeam.types._ledger import ToolExecution
from riverbeam.types._models import AgentMetadata, ModelConfig, StreamAck
from riverbeam.types._records import Action, Interaction, MemoryEntry, Message, Run, Session
from riverbeam.types._result import (
    ActionPreview,
    ActionRequired,
    AgentMessage,
    AgentResult,
    StreamChunk,
    TokenUsage,
    ToolCallRecord,
    ToolDecision,
)

__all__ = ["SCHEMA_BASE_URI", "SCHEMA_DIALECT", "WIRE_TYPES", "json_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE_URI = "https://riverbeam.dev/schemas/v1/"
"""Base of each schema's $id: an identifier (<base><Type>.json), not a hosted location."""

WIRE_TYPES: dict[str, type[WireModel]] = {
    model.__name__: model
    for model in (
        Action,
        ActionPreview,
        ActionRequired,
        ActionResponseEnvelope,
        AgentMessage,
        AgentMetadata,
        AgentResult,
        ContentPart,
        Interaction,
        InvokeAuthContext,
        InvokePayload,
        InvokeRequest,
        MemoryEntry,
        Message,
        ModelConfig,
        ResumePayload,
        Run,
        RunOptions,
        Session,
        StreamAck,
        StreamChunk,
        TokenUsage,
        ToolCallRecord,
        ToolDecision,
        ToolExecution,
        TurnConfig,
    )
}
"""Every exported wire type by name."""


def json_schema(type_name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a wire type: what its parser accepts.

    Args:
        type_name: A key of WIRE_TYPES, such as "StreamChunk".

    Returns:
        The schema, with $schema, $id and title first; nested types are under $defs.

    Raises:
        KeyError: type_name is not a wire type.
    """
    try:
        model = WIRE_TYPES[type_name]
    except KeyError:
        raise KeyError(
            f"{type_name!r} is not a wire type; known: {', '.join(sorted(WIRE_TYPES))}"
        ) from None
    body = model.model_json_schema(mode="validation")
    body.pop("title", None)
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": f"{SCHEMA_BASE_URI}{type_name}.json",
        "title": type_name,
        **body,
    }
