"""A continued run's time limit goes on from the time it had used, not from zero
(docs/durability.md, "Recovery"): the checkpoint carries `elapsed_s`, the replica that takes
the run over honours it."""

from __future__ import annotations

import copy

import pytest

from riverbeam.agents import PendingToolCall, Text, ToolCalls
from riverbeam.agents._limits import Deadline
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import Run
from tests.support.recovery_kit import EffectTool, GatedClient, Replicas


def look(*ids: str) -> ToolCalls:
    return ToolCalls(calls=tuple(PendingToolCall(name="look", args={"v": i}, id=i) for i in ids))


async def test_a_deadline_counts_the_time_used_before() -> None:
    Deadline(30.0, elapsed_before_s=10.0).check()  # 20 s left
    with pytest.raises(RiverbeamError) as info:
        Deadline(30.0, elapsed_before_s=30.0).check()
    assert info.value.code is ErrorCode.RUN_TIME_LIMIT
    assert Deadline(None, elapsed_before_s=7.0).elapsed_s() >= 7.0
    Deadline(None, elapsed_before_s=1e9).check()  # no limit: never expires


async def _continued_after_using(
    elapsed_s: float, script: list[ToolCalls | Text], **request: object
) -> tuple[Replicas, Run]:
    """A's run, whose last checkpoint says it used `elapsed_s`; A dies in the model call after
    it; B continues it."""
    client = GatedClient(script)
    client.hold_at = 1
    replicas = Replicas(client, [EffectTool("look", read_only=True)])
    _, run_id = await replicas.start("look", **request)
    await client.waiting.wait()
    try:
        checkpoint = await replicas.store.get_run_checkpoint(run_id=run_id)
        assert checkpoint is not None
        used = checkpoint.state["agent"]["elapsed_s"]
        assert isinstance(used, float) and used >= 0.0
        # As if A's steps up to its last checkpoint had taken `elapsed_s`.
        state = copy.deepcopy(checkpoint.state)
        state["agent"]["elapsed_s"] = elapsed_s
        await replicas.store.save_run_checkpoint(
            run_id=run_id, lease_epoch=1, step=checkpoint.step + 1, state=state
        )
        await replicas.kill_a(recover=replicas.b.recover)
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    return replicas, run


async def test_a_continued_run_whose_time_is_used_up_fails_with_the_time_limit() -> None:
    _, run = await _continued_after_using(60.0, [look("c1"), Text("too late")], time_limit_s=60.0)
    assert run.holders == ["runner-a", "runner-b"]
    # Counted from zero at the takeover, the run would have had 60 s more and completed.
    assert (run.status, run.error_code) == ("failed", "BEM-215")


async def test_a_continued_run_carries_the_time_it_used_into_its_next_checkpoints() -> None:
    replicas, run = await _continued_after_using(1000.0, [look("c1"), look("c2"), Text("done")])
    assert run.status == "completed" and run.result is not None
    assert run.result.text == "done"
    checkpoint = await replicas.store.get_run_checkpoint(run_id=run.run_id)
    assert checkpoint is not None and checkpoint.lease_epoch == 2  # B's own, after c2
    assert checkpoint.state["agent"]["elapsed_s"] >= 1000.0
