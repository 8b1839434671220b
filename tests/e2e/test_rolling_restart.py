"""A runner replica stopped gracefully (SIGTERM) while invokes flow: none is lost or failed,
on the invoke lanes and with unary RunInvoke calls (RIVERBEAM_RUNNER_INVOKE_LANES=0).

Two replicas behind the router's invoke lanes (RunInvokes streams, `riverbeam up` gives four
lanes over two replicas). Callers invoke without pause; one replica is sent SIGTERM midway.
Its streams say at once which invokes they had read and answer those; the rest go again to
the other replica. Every caller gets its own echo back, and the stopped replica exits 0.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from e2e_kit import GUARD_S, running_stack

from riverbeam.client import RiverbeamClient
from riverbeam.types import AgentResult

pytestmark = [pytest.mark.e2e, pytest.mark.nats]

AGENT = "assistant"
CALLERS = 8


@pytest.mark.parametrize("lanes", ["default", "0"], ids=["lanes", "unary"])
async def test_a_runner_replica_stopped_under_load_fails_no_invoke(
    tmp_path: Path, nats_binary: str, lanes: str
) -> None:
    """On the invoke lanes (the default), and with one unary RunInvoke per invoke."""
    router = {} if lanes == "default" else {"RIVERBEAM_RUNNER_INVOKE_LANES": lanes}
    async with running_stack(
        data_dir=tmp_path / "data", runners=2, env_overrides={"router": router}
    ) as stack:
        stopping = stack.pids["runner-1"]
        stopped = asyncio.Event()
        answered: list[str] = []
        failed: list[BaseException] = []

        async def caller(client: RiverbeamClient, index: int) -> None:
            n = 0
            # Until the replica is gone and a little after: invokes on both sides of the stop.
            until: float | None = None
            while until is None or time.monotonic() < until:
                text = f"c{index}-{n}"
                n += 1
                try:
                    result = await client.invoke(AGENT, text, session_id=str(uuid.uuid4()))
                except Exception as exc:  # every failure is reported below, with its code
                    failed.append(exc)
                else:
                    assert isinstance(result, AgentResult)
                    assert result.content[0].text == f"Echo: {text}", result
                    answered.append(text)
                if until is None and stopped.is_set():
                    until = time.monotonic() + 0.5

        async with RiverbeamClient(stack.router, timeout_s=30) as client:
            callers = [asyncio.create_task(caller(client, i)) for i in range(CALLERS)]
            await asyncio.sleep(1.0)
            before = len(answered)
            os.kill(stopping, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while _alive(stopping):
                assert time.monotonic() < deadline, "the replica did not stop"
                await asyncio.sleep(0.05)
            stopped.set()
            await asyncio.wait_for(asyncio.gather(*callers), GUARD_S)
        assert not failed, [repr(exc) for exc in failed[:5]]
        assert before > 0 and len(answered) > before
        assert len(set(answered)) == len(answered)  # each answered once
        assert "stopping: draining" in stack.log_path("runner-1").read_text()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie until LocalStack reaps it: gone as far as serving goes.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"
