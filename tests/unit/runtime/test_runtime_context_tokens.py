"""The token estimate history trimming uses: ~4 characters a token plus 4 per message."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from riverbeam.runtime._context import estimate_tokens, trim_to_budget
from riverbeam.types import Message


def _message(role: str = "human", **fields: Any) -> Message:
    return Message.model_validate(
        {
            "message_id": str(uuid.uuid4()),
            "session_id": str(uuid.uuid4()),
            "seq": 1,
            "role": role,
            "type": "message",
            "created_at": datetime.now(UTC),
            **fields,
        }
    )


@pytest.mark.parametrize(
    ("fields", "size"),
    [
        ({}, 0),
        ({"content": [{"type": "text", "text": "x" * 41}]}, 41),
        ({"content": [{"type": "text", "text": ""}, {"type": "text", "text": "abc"}]}, 3),
        (
            {
                "content": [
                    {"type": "image_url", "url": "https://example.com/a.png"},
                    {"type": "text", "text": "see"},
                ]
            },
            len("https://example.com/a.png") + 3,
        ),
        ({"tool_args": {"q": "w"}}, len(json.dumps({"q": "w"}))),
        ({"tool_result": {"n": 1}}, len(json.dumps({"n": 1}))),
    ],
)
def test_the_estimate_counts_text_urls_and_tool_json(fields: dict[str, Any], size: int) -> None:
    assert estimate_tokens(_message(**fields)) == size // 4 + 4


def test_trimming_keeps_the_newest_messages_that_fit_from_a_human_one() -> None:
    history = [
        _message("human" if i % 2 == 0 else "ai", content=[{"type": "text", "text": "y" * 36}])
        for i in range(10)
    ]
    # Each message is 36 // 4 + 4 = 13 tokens; 75% of 70 leaves 52: four fit, from a human one.
    kept, memory = trim_to_budget(history, [], max_tokens=70)
    assert kept == history[-4:] and memory == []
    kept, _ = trim_to_budget(history, [], max_tokens=60)  # 45: three fit, the first is an ai one
    assert kept == history[-2:]
