"""A resume whose runner dies in an approved call (tests/unit/runtime/
test_runtime_resume_checkpoint.py, tests/integration/runtime/test_runtime_resume_recovery.py):
runner A holds confirm_required calls, a person approves them all, A dies in the middle of one,
runner B's reaper takes the resuming run over."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace

from riverbeam.agents import PendingToolCall, ToolCalls, ToolSpec
from riverbeam.types import ActionResponseEnvelope, InvokeRequest, Run
from tests.support.recovery_kit import GUARD_S, EffectTool, Replicas


class ApprovedTool(EffectTool):
    """An EffectTool a person must approve."""

    def spec(self) -> ToolSpec:
        return replace(super().spec(), confirm_required=True)


def calls(*specs: tuple[str, str]) -> ToolCalls:
    return ToolCalls(
        calls=tuple(PendingToolCall(name="commit", args={"v": v}, id=i) for v, i in specs)
    )


async def held_then_resumed(replicas: Replicas, tool: EffectTool, text: str) -> tuple[Run, Run]:
    """A holds the calls for approval; a person approves them all; A dies in the first one.

    Returns the held run and the resuming run once B has ended it."""
    _, held_id = await replicas.start(text)
    assert replicas.task is not None
    async with asyncio.timeout(GUARD_S):
        await replicas.task
    held = await replicas.store.get_run(run_id=held_id)
    assert held.status == "interrupted" and held.result is not None
    assert tool.calls == []
    tool.hold_first = True
    resume = InvokeRequest(
        agent_name="worker",
        session_id=held.session_id,
        interaction_id=held.interaction_id,
        content=[],
        stream=True,
        actions=[
            ActionResponseEnvelope(
                action_id=a.action_id,
                kind="confirmation",
                request_id=str(uuid.uuid4()),
                status="submitted",
            )
            for a in held.result.action_required
        ],
    )
    prepared = await replicas.a.prepare(resume)
    replicas.task = asyncio.create_task(replicas.a.execute(prepared))
    try:
        async with asyncio.timeout(GUARD_S):
            await tool.started.wait()
        checkpoint = await replicas.store.get_run_checkpoint(run_id=prepared.run_id)
        assert checkpoint is not None and checkpoint.state["agent"]["round"]["resume"] is True
        await replicas.kill_a(recover=replicas.b.recover)
        run = await replicas.settled(prepared.run_id)
    finally:
        tool.release.set()
        await replicas.bury_a()
    return held, run
