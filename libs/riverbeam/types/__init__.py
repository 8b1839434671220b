"""Pydantic wire models of Riverbeam, named as in the seeds, with protobuf conversion."""

from riverbeam.types._base import JsonObject, UUIDStr, WireModel, validation_error
from riverbeam.types._content import ContentPart, ContentType, Modality, modalities_of
from riverbeam.types._copying import deep_copy
from riverbeam.types._invoke import (
    ActionResponseEnvelope,
    ActionResponseStatus,
    InvokeAuthContext,
    InvokePayload,
    InvokeRequest,
    ResumePayload,
)
from riverbeam.types._models import AgentMetadata, ModelConfig, Provider, StreamAck
from riverbeam.types._records import (
    Action,
    ActionOutcome,
    ActionStatus,
    Interaction,
    InteractionStatus,
    MemoryEntry,
    Message,
    Run,
    RunStatus,
    Session,
)
from riverbeam.types._result import (
    ActionRequired,
    AgentMessage,
    AgentResult,
    FrameType,
    MessageRole,
    MessageType,
    StreamChunk,
    TokenUsage,
    ToolCallRecord,
)
from riverbeam.types._schema import WIRE_TYPES, json_schema

__all__ = [
    "WIRE_TYPES",
    "Action",
    "ActionOutcome",
    "ActionRequired",
    "ActionResponseEnvelope",
    "ActionResponseStatus",
    "ActionStatus",
    "AgentMessage",
    "AgentMetadata",
    "AgentResult",
    "ContentPart",
    "ContentType",
    "FrameType",
    "Interaction",
    "InteractionStatus",
    "InvokeAuthContext",
    "InvokePayload",
    "InvokeRequest",
    "JsonObject",
    "MemoryEntry",
    "Message",
    "MessageRole",
    "MessageType",
    "Modality",
    "ModelConfig",
    "Provider",
    "ResumePayload",
    "Run",
    "RunStatus",
    "Session",
    "StreamAck",
    "StreamChunk",
    "TokenUsage",
    "ToolCallRecord",
    "UUIDStr",
    "WireModel",
    "deep_copy",
    "json_schema",
    "modalities_of",
    "validation_error",
]
