"""Representative wire values: a streamed chunk frame (~500 bytes of JSON), an invoke request."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from riverbeam.types import (
    AgentMessage,
    AgentResult,
    ContentPart,
    InvokeAuthContext,
    InvokeRequest,
    StreamChunk,
    TokenUsage,
)

__all__ = ["CHUNK_TEXT", "chunk_frame", "done_frame", "invoke_request_model"]

CHUNK_TEXT = "The release adds streaming resume, a faster store path and clearer error codes."


def _id() -> str:
    return str(uuid.uuid4())


def chunk_frame() -> StreamChunk:
    """A text delta as the runner publishes it (before the sink sets seq and request_id)."""
    return StreamChunk(
        type="chunk",
        data=AgentMessage(
            role="ai",
            content=[ContentPart.of_text(CHUNK_TEXT)],
            is_delta=True,
            agent_name="assistant",
            id=_id(),
        ),
        agent_name="assistant",
        session_id=_id(),
        interaction_id=_id(),
        run_id=_id(),
        message_id=_id(),
        timestamp=datetime.now(UTC),
    )


def done_frame() -> StreamChunk:
    """The terminal frame with its AgentResult."""
    return StreamChunk(
        type="done",
        result=AgentResult(
            content=[ContentPart.of_text(CHUNK_TEXT)],
            agent_name="assistant",
            model_used="riverbeam-default",
            session_id=_id(),
            interaction_id=_id(),
            run_id=_id(),
            token_usage=TokenUsage(prompt_tokens=42, completion_tokens=17, total_tokens=59),
            latency_ms=12.5,
        ),
        agent_name="assistant",
        timestamp=datetime.now(UTC),
    )


def invoke_request_model() -> InvokeRequest:
    """An invoke as the router hands it to the runner."""
    return InvokeRequest(
        agent_name="assistant",
        content=[ContentPart.of_text(CHUNK_TEXT)],
        session_id=_id(),
        interaction_id=_id(),
        request_id=_id(),
        stream=True,
        metadata={"client": "bench", "locale": "en-GB", "trace": {"sampled": True, "depth": 2}},
        auth_context=InvokeAuthContext(user_id="user-1", org_id="org-1"),
    )
