"""The runtime on both stores: U+0000 in a model reply, and resumes naming another agent."""

from __future__ import annotations

import pytest

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Text, ToolCalls
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import RiverBeam
from riverbeam.store import BeamStore
from riverbeam.types import AgentResult, InvokeRequest
from tests.integration.runtime.rt_kit import approval, text_request, uid
from tests.unit.runtime.runtime_kit import CountingTool


async def test_a_model_reply_with_nul_completes_and_is_recorded(store: BeamStore) -> None:
    beam = RiverBeam(store=store)
    beam.register_agent(
        RigAgentRunner.new("nul", ScriptedClient([Text("pay\x00load ok")]), [], None)
    )
    session_id = uid()
    result = await beam.invoke(InvokeRequest.parse(text_request("nul", "hi\x00", session_id)))
    assert isinstance(result, AgentResult)
    run = await store.get_run(run_id=result.run_id or "")
    assert run.status == "completed", run
    messages, _ = await store.list_messages(session_id=session_id)
    assert [m.text for m in messages] == ["hi\ufffd", "pay\ufffdload ok"]
    await beam.aclose(grace_s=1.0)


async def test_a_resume_naming_another_agent_changes_nothing(store: BeamStore) -> None:
    push = CountingTool("push", confirm=True)
    script = ScriptedClient([ToolCalls((PendingToolCall("push", {"v": "main"}),))])
    beam = RiverBeam(store=store)
    beam.register_agent(RigAgentRunner.new("author", script, [push], None))
    beam.register_echo_agent("assistant")
    session_id = uid()
    paused = await beam.invoke(InvokeRequest.parse(text_request("author", "push", session_id)))
    assert isinstance(paused, AgentResult) and paused.interrupted and paused.interaction_id
    (pending,) = paused.action_required
    resume = {
        "session_id": session_id,
        "interaction_id": paused.interaction_id,
        "actions": [approval(pending.action_id)],
    }

    with pytest.raises(RiverbeamError) as info:
        await beam.resume({**resume, "agent_name": "assistant"})
    assert info.value.code is ErrorCode.RESUME_AGENT_MISMATCH
    assert (await store.get_action(action_id=pending.action_id)).status == "pending"
    assert len(await store.list_runs(interaction_id=paused.interaction_id)) == 1
    assert push.calls == []

    # Left out, the interaction's own agent runs; the approval was not used up.
    script.push(Text("pushed"))
    await beam.resume(resume)
    await beam.wait_idle()
    action = await store.get_action(action_id=pending.action_id)
    assert (action.status, action.outcome) == ("resolved", "approved_ran")
    assert push.calls == [{"v": "main"}]
    await beam.aclose(grace_s=1.0)
