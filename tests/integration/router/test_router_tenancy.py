"""Tenancy through the router: two organisations' backends acting for users with equal ids."""

from __future__ import annotations

import json
from typing import Any

import pytest

from riverbeam.agents import PendingToolCall, Text, ToolCalls
from riverbeam.types import AgentResult, InvokeAuthContext
from tests.integration.router.router_kit import Stack

pytestmark = pytest.mark.nats

ALICE_SCOPE = {"memory_scopes": [{"name": "user", "id": "alice"}]}


def seen_by(result: AgentResult) -> dict[str, Any]:
    seen: dict[str, Any] = json.loads(result.text)
    return seen


async def remember_for_alice(stack: Stack, backend: str, content: str) -> None:
    """`backend` acts for its org's alice, whose run calls the remember tool in her user scope."""
    stack.script.push(
        ToolCalls(
            (
                PendingToolCall(
                    "remember", {"content": content, "scope_name": "user", "scope_id": "alice"}
                ),
            )
        ),
        Text("noted"),
    )
    result = await stack.client(backend).invoke(
        "memo",
        "remember this",
        auth_context=InvokeAuthContext(user_id="alice"),
        metadata=ALICE_SCOPE,
    )
    assert result.text == "noted"
    (call,) = result.tool_calls
    assert call.result["remembered"] is True, call.result


async def alices_memory(stack: Stack, backend: str) -> list[str]:
    result = await stack.client(backend).invoke(
        "inspect",
        "what do you know?",
        auth_context=InvokeAuthContext(user_id="alice"),
        metadata=ALICE_SCOPE,
    )
    seen = seen_by(result)
    assert seen["auth"]["user_id"] == "alice"
    memory: list[str] = seen["memory"]
    return memory


async def test_equal_user_ids_of_two_orgs_share_no_memory(stack: Stack) -> None:
    await remember_for_alice(stack, "backend", "alice-o1's card PIN is 4321")
    assert [(e.org_id, e.scope_id) for e in stack.store._t.memory] == [("o1", "alice")]

    # o2's backend, acting for its own alice with the same scope, reads nothing of o1's.
    assert await alices_memory(stack, "backend2") == []
    assert await alices_memory(stack, "backend") == ["alice-o1's card PIN is 4321"]

    await remember_for_alice(stack, "backend2", "alice-o2 likes tea")
    assert await alices_memory(stack, "backend2") == ["alice-o2 likes tea"]
    assert await alices_memory(stack, "backend") == ["alice-o1's card PIN is 4321"]


async def test_a_scope_naming_another_org_is_dropped_for_a_backend(stack: Stack) -> None:
    await remember_for_alice(stack, "backend", "o1 only")
    result = await stack.client("backend2").invoke(
        "inspect",
        "hi",
        auth_context=InvokeAuthContext(user_id="alice"),
        metadata={"memory_scopes": [{"name": "user", "id": "alice", "org_id": "o1"}]},
    )
    seen = seen_by(result)
    assert "memory_scopes" not in (seen["metadata"] or {})
    assert seen["memory"] == []
