"""The request messages the client sends: validated as the router will validate them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from riverbeam.types import (
    ActionResponseEnvelope,
    ContentPart,
    InvokeAuthContext,
    InvokePayload,
    JsonObject,
    ResumePayload,
    TurnConfig,
)

__all__ = ["invoke_message", "resume_message"]


def _config_json(config: TurnConfig | JsonObject | None) -> JsonObject | None:
    if isinstance(config, TurnConfig):
        return config.to_json_dict()
    return config


def _parts(content: str | Sequence[ContentPart]) -> list[ContentPart]:
    """A turn's content parts: a string is one text part."""
    return [ContentPart.of_text(content)] if isinstance(content, str) else list(content)


def resume_message(
    agent_name: str | None,
    session_id: str,
    interaction_id: str,
    actions: Sequence[ActionResponseEnvelope],
    *,
    content: str | Sequence[ContentPart] | None = None,
    metadata: JsonObject | None = None,
    model_override: str | None = None,
    auth_context: InvokeAuthContext | None = None,
    request_id: str | None = None,
) -> Any:
    """The ResumeRequest message of a resume (validated as the router will)."""
    parts = _parts(content) if content is not None else []
    payload = ResumePayload.parse(
        {
            "agent_name": agent_name,
            "session_id": session_id,
            "interaction_id": interaction_id,
            "content": [p.to_json_dict() for p in parts],
            "actions": [a.to_json_dict() for a in actions],
            "metadata": metadata,
            "model_override": model_override,
            "auth_context": auth_context.to_json_dict() if auth_context else None,
            "request_id": request_id,
        }
    )
    return payload.to_proto()


def invoke_message(
    agent_name: str,
    content: str | Sequence[ContentPart],
    *,
    session_id: str | None = None,
    stream: bool = False,
    metadata: JsonObject | None = None,
    model_override: str | None = None,
    auth_context: InvokeAuthContext | None = None,
    request_id: str | None = None,
    response_schema: JsonObject | None = None,
    time_limit_s: float | None = None,
    token_budget: int | None = None,
    turn_config: TurnConfig | JsonObject | None = None,
    session_config: TurnConfig | JsonObject | None = None,
    interaction_id: str | None = None,
) -> Any:
    """The InvokeRequest message of an invoke (validated as the router will)."""
    parts = _parts(content)
    payload = InvokePayload.parse(
        {
            "agent_name": agent_name,
            "content": [p.to_json_dict() for p in parts],
            "session_id": session_id or str(uuid.uuid4()),
            "stream": stream,
            "metadata": metadata,
            "model_override": model_override,
            "auth_context": auth_context.to_json_dict() if auth_context else None,
            "request_id": request_id,
            "response_schema": response_schema,
            "time_limit_s": time_limit_s,
            "token_budget": token_budget,
            "turn_config": _config_json(turn_config),
            "session_config": _config_json(session_config),
        }
    )
    message = payload.to_proto()
    if interaction_id is not None:
        message.interaction_id = interaction_id
    return message
