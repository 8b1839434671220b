"""The runtime on both stores: U+0000 in a model reply, and resumes naming another agent."""

from __future__ import annotations

from riverbeam.agents import RigAgentRunner, ScriptedClient, Text
from riverbeam.runtime import RiverBeam
from riverbeam.store import BeamStore
from riverbeam.types import AgentResult, InvokeRequest
from tests.integration.runtime.rt_kit import text_request, uid


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
