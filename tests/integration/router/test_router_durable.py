"""Through the router (issue 13): a resume by another agent version is refused (BEM-260) and
changes nothing; an approval expires (BEM-261) and leaves the inbox, which shows its expiry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest

from riverbeam.agents import (
    AgentContext,
    AgentInput,
    PendingToolCall,
    RigAgentRunner,
    Text,
    ToolCalls,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentMetadata, AgentResult
from tests.integration.router.router_kit import Stack, collect

pytestmark = pytest.mark.nats


class Versioned:
    """An author agent whose version, version policy and approval TTL a test can change."""

    def __init__(self, inner: RigAgentRunner) -> None:
        self.inner = inner
        self.version = "1.0.0"
        self.policy: Literal["refuse", "major", "any"] | None = None
        self.ttl_s: float | None = None

    def metadata(self) -> AgentMetadata:
        return self.inner.metadata().model_copy(
            update={
                "name": "pinned",
                "version": self.version,
                "version_policy": self.policy,
                "approval_ttl_s": self.ttl_s,
            }
        )

    def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[Any]:
        return self.inner.stream(input, context)

    async def health_check(self) -> bool:
        return True


@pytest.fixture
def pinned(stack: Stack) -> Versioned:
    agent = Versioned(RigAgentRunner.new("pinned", stack.script, list(stack.tools.values()), None))
    stack.beam.register_agent(agent)  # type: ignore[arg-type]
    return agent


async def _pause(stack: Stack) -> AgentResult:
    stack.script.push(ToolCalls((PendingToolCall("push", {"v": "main"}),)))
    result: AgentResult = await stack.client("alice").invoke("pinned", "push it")
    assert result.interrupted, result
    return result


async def test_a_resume_by_another_agent_version_is_refused(
    stack: Stack, pinned: Versioned
) -> None:
    alice = stack.client("alice")
    paused = await _pause(stack)
    assert paused.session_id and paused.interaction_id and paused.run_id
    assert (await alice.get_interaction(paused.interaction_id)).agent_version == "1.0.0"
    assert (await alice.get_run(paused.run_id)).agent_version == "1.0.0"
    (required,) = paused.action_required

    pinned.version = "2.0.0"  # the runner now has another version of the agent
    with pytest.raises(RiverbeamError) as info:
        await alice.approve(paused.session_id, paused.interaction_id)
    assert info.value.code is ErrorCode.AGENT_VERSION_MISMATCH
    assert "1.0.0" in info.value.message and "2.0.0" in info.value.message
    # Nothing changed: still pending, no run added, the tool did not run.
    assert (await alice.get_action(required.action_id)).status == "pending"
    assert len(await stack.store.list_runs(interaction_id=paused.interaction_id)) == 1
    assert stack.tools["push"].calls == []

    # `major`: 1.4.2 may resume what 1.0.0 started.
    pinned.version, pinned.policy = "1.4.2", "major"
    stack.script.push(Text("pushed"))
    ack = await alice.approve(paused.session_id, paused.interaction_id)
    frames = await collect(alice.follow(ack.request_id))
    assert frames[-1].type == "done" and stack.tools["push"].calls == [{"v": "main"}]
    runs = await stack.store.list_runs(interaction_id=paused.interaction_id)
    assert [r.agent_version for r in runs] == ["1.0.0", "1.4.2"]


async def test_an_approval_expires_and_leaves_the_inbox(stack: Stack, pinned: Versioned) -> None:
    alice = stack.client("alice")
    pinned.ttl_s = 0.5
    before = datetime.now(UTC)
    paused = await _pause(stack)
    assert paused.session_id and paused.interaction_id
    (required,) = paused.action_required
    (pending,) = await alice.list_pending_actions()
    assert pending.action_id == required.action_id and pending.expires_at is not None
    assert before < pending.expires_at < before + timedelta(seconds=30)

    await asyncio.sleep(1.0)
    assert await alice.list_pending_actions() == []
    with pytest.raises(RiverbeamError) as info:
        await alice.approve(paused.session_id, paused.interaction_id, action_id=required.action_id)
    assert info.value.code is ErrorCode.ACTION_EXPIRED
    assert (await alice.get_action(required.action_id)).status == "pending"
    assert stack.tools["push"].calls == []
