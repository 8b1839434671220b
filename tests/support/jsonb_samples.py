"""Models and content lists the Postgres store writes as jsonb, chosen to reach every corner of
the JSON text: unicode, escapes, floats in every notation, big integers, -0.0, empty and nested
containers, free-form values holding tuples, sets and datetimes, omitted defaults."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from riverbeam.types import (
    ActionPreview,
    ActionResponseEnvelope,
    AgentResult,
    ContentPart,
    RunOptions,
    TokenUsage,
    TurnConfig,
)

__all__ = ["CONTENT_SAMPLES", "MODEL_SAMPLES"]

_FLOATS = [0.1, 1.5, 1e-05, 1e-07, 1.5e-07, 1e15, 1e16, 1e22, 1e300, 5e-324, 123456789.125, -0.0]
_ODD: dict[str, Any] = {
    "floats": _FLOATS,
    "ints": [0, -1, 2**31, 2**63, 10**30],
    "text": 'hé ☃ 𝄞 "quoted" \\ back\tslash\n\u001f\u007f\u2028',
    "empty": {"list": [], "dict": {}, "none": None, "str": ""},
    "nested": {"a": [{"b": [[], {}]}], "z": True, "y": False},
    "tuple": (1, "two", 3.0),
    "when": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
    "é": "unicode key",
}

_RESULT = AgentResult(
    content=[ContentPart.of_text("Echo: hello"), ContentPart(type="text", text="ü", metadata={})],
    agent_name="assistant",
    model_used="riverbeam-default",
    session_id="s-1",
    interaction_id="i-1",
    run_id="r-1",
    token_usage=TokenUsage(prompt_tokens=14, completion_tokens=15, total_tokens=29),
    tool_calls=[
        {"tool_name": "search", "args": _ODD, "result": _FLOATS, "latency_ms": 0.30000000000000004}
    ],
    metadata=_ODD,
    latency_ms=1e-05,
    action_required=[
        {
            "action_id": "8d4d2c59-6a53-4c4e-8f5e-3b7c2a1d0e9f",
            "tool": "deploy",
            "args": {"x": 1e16},
            "preview": {"tool": "deploy", "summary": "ship it", "diff": "+a\n-b"},
        }
    ],
    output=[_ODD, None, 2.5, "x"],
)

MODEL_SAMPLES: list[BaseModel] = [
    TokenUsage(prompt_tokens=14, completion_tokens=15, total_tokens=29),
    TokenUsage(),
    AgentResult(agent_name="assistant"),
    _RESULT,
    TurnConfig(include_tools=["a"], exclude_tools=[], prepend_instructions="ü"),
    TurnConfig(),
    RunOptions(response_schema={"type": "object", "properties": {}}, time_limit_s=1e-05),
    ActionResponseEnvelope(
        action_id="8d4d2c59-6a53-4c4e-8f5e-3b7c2a1d0e9f",
        kind="confirmation",
        request_id="0b7e5c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b",
        payload=_ODD,
        errors=["é"],
    ),
    ActionPreview(tool="deploy", commits=[{"id": "abc", "summary": "é"}], diff_bytes=3),
]

CONTENT_SAMPLES: list[list[ContentPart]] = [
    [],
    [ContentPart.of_text("Summarise the release notes, please.")],
    [
        ContentPart.of_text('a ☃ "b" \\ \u2028'),
        ContentPart(type="text", text="", metadata={"k": _FLOATS, "e": {}}),
        ContentPart(type="file", url="https://example.com/x.png", mime_type="image/png"),
    ],
]
