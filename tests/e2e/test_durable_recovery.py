"""Durable runs across processes: kill -9 the runner holding a run, again and again.

Two runner replicas (short leases: 1 s, a reaper pass every 0.5 s, the default recovery
policy `recover`), one router (pick_first, so one replica holds each run), the store on
Postgres, real NATS. The agent (tests/e2e/durable_hooks.py) runs on the scripted chat server
and has a slow read-only tool and a slow side-effecting one that log each call's start.

In a loop, the replica holding a run is SIGKILLed in the middle of a model call, of the
read-only tool and of the side-effecting tool; the other replica takes the run over. Each run
then either completes from its checkpoint or stops at an `outcome_unknown` action (answered
skip, done or retry through the router); every stream is gapless and ends once; no
side-effecting call runs twice unless a person said retry; what was acknowledged (the
request's message, the frames already published) is kept. The killed replica is started
again before the next round.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from e2e_kit import GUARD_S, REPO_ROOT, ChatProcess, assert_sequenced, pg_schema, running_stack

from riverbeam.client import RiverbeamClient
from riverbeam.types import ActionResponseEnvelope, AgentResult, Run, StreamAck, StreamChunk
from services.cli._up import LocalStack
from tests.support.chat_server import call, delayed, text, tool_calls

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]
module_loop = pytest.mark.asyncio(loop_scope="module")

RUNNER_IDS = {"runner-1": "e2e-durable-one", "runner-2": "e2e-durable-two"}
ROUNDS = 3
HOOK = "tests.e2e.durable_hooks:register"
# Longest wait for a recovered run to end (lease, reaper pass, the rest of the run).
SETTLE_S = 30.0


@dataclass(frozen=True, slots=True)
class Durable:
    stack: LocalStack
    chat: ChatProcess
    effects: Path

    def client(self) -> RiverbeamClient:
        return RiverbeamClient(self.stack.router, timeout_s=GUARD_S)

    def started(self, tool: str, tag: str) -> int:
        """How many calls of `tool` with v=tag have started (on any replica)."""
        if not self.effects.exists():
            return 0
        lines = self.effects.read_text(encoding="utf-8").splitlines()
        return lines.count(f"{tool} {tag}")

    async def wait_started(self, tool: str, tag: str) -> None:
        async with asyncio.timeout(GUARD_S):
            # Another process writes the file: polled, there is nothing to wait on.
            while self.started(tool, tag) == 0:  # noqa: ASYNC110
                await asyncio.sleep(0.02)

    @staticmethod
    def name_of(runner_id: str | None) -> str:
        [name] = [n for n, rid in RUNNER_IDS.items() if rid == runner_id]
        return name

    async def kill_holder(self, client: RiverbeamClient, run_id: str) -> str:
        """SIGKILL the replica holding the run; its name."""
        holder = self.name_of((await client.get_run(run_id)).lease_owner)
        os.kill(self.stack.pids[holder], signal.SIGKILL)
        return holder


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def durable(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, nats_url: str
) -> AsyncIterator[Durable]:
    root = tmp_path_factory.mktemp("durable")
    effects = root / "effects.log"
    async with pg_schema(pg_url, "e2e_durable") as schema, ChatProcess(root / "chat") as chat:
        overrides: dict[str, dict[str, str]] = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "runner": {
                **chat.model_env(),
                "RIVERBEAM_AGENTS": HOOK,
                # The hook is a module of this repository's tests: importable from its root,
                # whatever the runner's working directory and however the package is installed.
                "PYTHONPATH": os.pathsep.join(
                    filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])
                ),
                "RIVERBEAM_TEST_EFFECTS": str(effects),
                "RIVERBEAM_LEASE_TTL_S": "1",
                "RIVERBEAM_REAP_INTERVAL_S": "0.5",
            },
            "router": {"RIVERBEAM_RUNNER_BALANCING": "pick_first"},
        }
        for name, runner_id in RUNNER_IDS.items():
            overrides[name] = {"RIVERBEAM_RUNNER_ID": runner_id}
        async with running_stack(
            database_url=pg_url,
            nats_url=nats_url,
            data_dir=root / "data",
            env_overrides=overrides,
            runners=2,
        ) as stack:
            yield Durable(stack, chat, effects)


async def _frames(client: RiverbeamClient, request_id: str) -> list[StreamChunk]:
    async with asyncio.timeout(SETTLE_S):
        frames = [f async for f in client.follow(request_id, timeout_s=SETTLE_S)]
    assert_sequenced(frames)  # gapless from seq 1, one terminal frame, last
    return frames


def _recovered(frames: list[StreamChunk]) -> list[StreamChunk]:
    return [f for f in frames if f.data is not None and f.data.phase == "recovered"]


async def _taken_over(
    durable: Durable, client: RiverbeamClient, ack: StreamAck, killed: str
) -> tuple[list[StreamChunk], Run]:
    """The killed replica's run as the other one ended it; the killed one is started again."""
    frames = await _frames(client, ack.request_id)
    run = await client.get_run(ack.run_id or "")
    assert run.holders[0] == RUNNER_IDS[killed] and len(run.holders) == 2, run.holders
    assert run.request_id == ack.request_id
    [recovered] = _recovered(frames)
    assert frames.index(recovered) > 0  # after what the killed runner had published
    # Acknowledged, then kept: the request's own message.
    messages = await client.list_messages(run.session_id)
    assert messages[0].role == "human" and messages[0].run_id == run.run_id
    await durable.stack.restart(killed)
    return frames, run


@module_loop
async def test_a_model_call_in_flight_is_made_again(durable: Durable) -> None:
    async with durable.client() as client:
        for round in range(ROUNDS):
            answer = f"answer {round}"
            before = len(await durable.chat.completions())
            # The first call is held back until its runner is dead; the recovering replica
            # makes the call again and gets the second reply.
            await durable.chat.push(delayed(text(answer), 60), text(answer))
            ack = await client.invoke("durable", f"think {round}", stream=True)
            assert isinstance(ack, StreamAck) and ack.run_id
            await durable.chat.wait_for_completions(before + 1)
            killed = await durable.kill_holder(client, ack.run_id)

            frames, run = await _taken_over(durable, client, ack, killed)
            assert frames[-1].type == "done" and frames[-1].result is not None
            assert frames[-1].result.text == answer
            assert (run.status, run.lease_epoch) == ("completed", 2)
            assert len(await durable.chat.completions()) == before + 2


@module_loop
async def test_a_read_only_tool_in_flight_is_run_again(durable: Durable) -> None:
    async with durable.client() as client:
        for _ in range(ROUNDS):
            tag = f"r{uuid.uuid4().hex[:8]}"
            await durable.chat.push(
                tool_calls([call("slow_read", {"v": tag})]), text(f"read {tag}")
            )
            ack = await client.invoke("durable", f"read {tag}", stream=True)
            assert isinstance(ack, StreamAck) and ack.run_id
            await durable.wait_started("slow_read", tag)
            killed = await durable.kill_holder(client, ack.run_id)

            frames, run = await _taken_over(durable, client, ack, killed)
            assert frames[-1].type == "done" and frames[-1].result is not None
            assert frames[-1].result.text == f"read {tag}"
            assert run.status == "completed"
            assert durable.started("slow_read", tag) == 2  # read-only: simply run again


@module_loop
async def test_a_side_effecting_tool_in_flight_waits_for_a_person(durable: Durable) -> None:
    decisions = ["skip", "done", "retry"]
    async with durable.client() as client:
        for round in range(ROUNDS):
            decision = decisions[round % len(decisions)]
            tag = f"e{uuid.uuid4().hex[:8]}"
            await durable.chat.push(tool_calls([call("slow_effect", {"v": tag})]))
            ack = await client.invoke("durable", f"change {tag}", stream=True)
            assert isinstance(ack, StreamAck) and ack.run_id
            await durable.wait_started("slow_effect", tag)
            killed = await durable.kill_holder(client, ack.run_id)

            frames, run = await _taken_over(durable, client, ack, killed)
            done = frames[-1]
            assert done.type == "done" and done.result is not None and done.result.interrupted
            assert run.status == "interrupted" and run.result is not None
            [action] = run.result.action_required
            assert (action.kind, action.tool, action.args) == (
                "outcome_unknown",
                "slow_effect",
                {"v": tag},
            )
            assert durable.started("slow_effect", tag) == 1  # not run again by recovery

            await durable.chat.push(text(f"after {tag}"))
            payload: dict[str, str] = {"decision": decision}
            if decision == "done":
                payload["result"] = "it did"
            resumed = await client.resume(
                None,
                run.session_id,
                run.interaction_id,
                [
                    ActionResponseEnvelope(
                        action_id=action.action_id,
                        kind="outcome_unknown",
                        request_id=str(uuid.uuid4()),
                        payload=payload,
                    )
                ],
            )
            after = await _frames(client, resumed.request_id)
            assert after[-1].type == "done" and after[-1].result is not None
            assert after[-1].result.text == f"after {tag}"
            # A second run of the call only because a person said retry.
            assert durable.started("slow_effect", tag) == (2 if decision == "retry" else 1)


@module_loop
async def test_a_unary_caller_gets_the_result_of_its_continued_run(durable: Durable) -> None:
    """stream=false: the caller's call was to the killed replica; the router answers it with
    the result the other replica recorded (docs/durability.md, "A unary caller outlives its
    runner")."""
    async with durable.client() as client:
        answer = "answered after all"
        before = len(await durable.chat.completions())
        await durable.chat.push(delayed(text(answer), 60), text(answer))
        session_id = str(uuid.uuid4())
        waiting = asyncio.ensure_future(
            client.invoke("durable", "think unary", session_id=session_id, timeout_s=SETTLE_S)
        )
        try:
            await durable.chat.wait_for_completions(before + 1)
            [human] = await client.list_messages(session_id)  # begin-run precedes the model call
            assert human.run_id is not None
            killed = await durable.kill_holder(client, human.run_id)
            async with asyncio.timeout(SETTLE_S):
                result = await waiting
        finally:
            if not waiting.done():
                waiting.cancel()
        assert isinstance(result, AgentResult)
        assert (result.text, result.run_id) == (answer, human.run_id)
        run = await client.get_run(human.run_id)
        assert run.status == "completed" and run.holders[0] == RUNNER_IDS[killed]
        assert len(run.holders) == 2
        await durable.stack.restart(killed)
