"""Dumps are the seed's JSON: None and empty optional fields are left out, empty metadata too."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from riverbeam.types import (
    ActionResponseEnvelope,
    AgentMessage,
    AgentResult,
    ContentPart,
    InvokeAuthContext,
    InvokeRequest,
    ModelConfig,
    StreamChunk,
    TokenUsage,
    ToolCallRecord,
)

SESSION = "5f8915eb-31eb-4f8a-9517-e2c15ce7bc41"


def test_none_fields_are_omitted() -> None:
    assert ContentPart(type="text", text="hello").to_json_dict() == {
        "type": "text",
        "text": "hello",
    }
    assert InvokeAuthContext(user_id="u1").to_json_dict() == {"user_id": "u1"}


def test_empty_lists_are_omitted_unless_always_shown() -> None:
    result = AgentResult(agent_name="a")
    # content, agent_name and interrupted are always shown, as in the seed's done frame.
    assert result.to_json_dict() == {"content": [], "agent_name": "a", "interrupted": False}
    req = InvokeRequest(agent_name="a", content=[], session_id=SESSION)
    assert req.to_json_dict() == {
        "agent_name": "a",
        "content": [],
        "session_id": SESSION,
        "stream": False,
    }


def test_empty_metadata_is_omitted_and_held_as_none() -> None:
    part = ContentPart.parse({"type": "text", "text": "x", "metadata": {}})
    assert part.metadata is None
    assert part.to_json_dict() == {"type": "text", "text": "x"}
    req = InvokeRequest.parse(
        {"agent_name": "a", "content": [], "session_id": SESSION, "metadata": {}}
    )
    assert "metadata" not in req.to_json_dict()
    msg = AgentMessage(role="tool", tool_args={})
    assert msg.tool_args is None and "tool_args" not in msg.to_json_dict()


def test_non_empty_metadata_is_kept_whole() -> None:
    meta: dict[str, object] = {"source": "web", "nested": {}, "list": [], "none": None}
    part = ContentPart(type="text", metadata=meta)
    assert part.to_json_dict()["metadata"] == meta


def test_always_shown_defaults() -> None:
    assert TokenUsage().to_json_dict() == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
    }
    model = ModelConfig(name="m", provider="openai")
    assert model.to_json_dict() == {
        "name": "m",
        "provider": "openai",
        "modalities": ["text"],
        "capabilities": [],
        "cost_per_1k_tokens": 0.0,
        "max_tokens": 4096,
    }
    env = ActionResponseEnvelope(
        action_id="9c1b2d3e-4f50-4a61-8273-849506172839",
        kind="confirmation",
        request_id="2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9",
        responded_at=datetime(2026, 6, 9, 9, 46, 1, 566411, tzinfo=UTC),
    )
    assert env.to_json_dict() == {
        "action_id": "9c1b2d3e-4f50-4a61-8273-849506172839",
        "kind": "confirmation",
        "request_id": "2b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9",
        "status": "submitted",
        "responded_at": "2026-06-09T09:46:01.566411Z",
    }


def test_a_present_empty_nested_object_is_kept() -> None:
    req = InvokeRequest(
        agent_name="a", content=[], session_id=SESSION, auth_context=InvokeAuthContext()
    )
    assert req.to_json_dict()["auth_context"] == {}


def test_free_form_values_keep_their_empty_containers() -> None:
    # A tool that returned [] returned something; only None is "no result".
    assert ToolCallRecord(tool_name="ls", result=[]).to_json_dict() == {
        "tool_name": "ls",
        "result": [],
    }
    assert ToolCallRecord(tool_name="ls", result={}).to_json_dict()["result"] == {}
    assert "result" not in ToolCallRecord(tool_name="ls").to_json_dict()
    assert ModelConfig(name="m", provider="custom", extra={}).to_json_dict()["extra"] == {}


def test_done_frame_is_the_seed_frame() -> None:
    frame = StreamChunk(
        type="done",
        result=AgentResult(
            content=[ContentPart.of_text("Echo: what is riverbeam?")], agent_name="kb-assistant"
        ),
        agent_name="kb-assistant",
        session_id=SESSION,
        run_id="c36c753f-b90d-4834-9112-e12a343f6a0d",
    )
    assert frame.to_json_dict() == {
        "type": "done",
        "result": {
            "content": [{"type": "text", "text": "Echo: what is riverbeam?"}],
            "agent_name": "kb-assistant",
            "interrupted": False,
        },
        "agent_name": "kb-assistant",
        "session_id": SESSION,
        "run_id": "c36c753f-b90d-4834-9112-e12a343f6a0d",
    }


def test_to_json_is_compact_utf8() -> None:
    text = ContentPart(type="text", text="héllo …").to_json()
    assert text == '{"type":"text","text":"héllo …"}'
    assert json.loads(text) == {"type": "text", "text": "héllo …"}
