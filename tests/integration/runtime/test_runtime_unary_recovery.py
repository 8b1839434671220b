"""A unary (non-streaming) invoke outlives its runner (docs/durability.md).

Two runner services and a router (the Gateway, in this process) on one store and NATS. The
router's runner target is runner A, a process of its own, whose model call never returns; A
is killed with SIGKILL in the middle of it. Runner B (lease reaper every 0.2 s) takes the run
over once A's 1 s lease expires. With RIVERBEAM_RECOVERY_POLICY=recover B continues the run
from its checkpoint and the caller, whose call was to the dead runner, still gets the
completed result; with `fail` B fails the run and the caller gets BEM-034.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from riverbeam.auth import DevAuthenticator
from riverbeam.core.errors import RiverbeamError
from riverbeam.gateway import Gateway
from riverbeam.routing import ModelList
from riverbeam.runtime import RunnerClient
from riverbeam.store import BeamStore, StoreClient
from riverbeam.stream import NatsConnection
from riverbeam.types import AgentResult, InvokeRequest
from tests.integration.runtime.rt_hooks import STEADY_ANSWER
from tests.integration.runtime.rt_kit import (
    SLOW_GUARD_S,
    ServiceProcess,
    runner_service,
    runner_settings,
    service_env,
    store_service,
    text_request,
    uid,
)

pytestmark = [pytest.mark.nats, pytest.mark.e2e]

HOOKS = "tests.integration.runtime.rt_hooks"


async def _in_model_call(store: BeamStore, request_id: str) -> str:
    """The run's id once it is checkpointed (its first checkpoint precedes the model call)."""
    async with asyncio.timeout(SLOW_GUARD_S):  # a hang guard, not a speed threshold
        while True:
            run = await store.get_run_by_request(request_id=request_id)
            if run is not None and await store.get_run_checkpoint(run_id=run.run_id):
                return run.run_id
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("policy", ["recover", "fail"])
async def test_a_unary_caller_gets_the_result_of_a_run_whose_runner_died(
    store: BeamStore, nats: NatsConnection, nats_url: str, tmp_path: Path, policy: str
) -> None:
    async with store_service(store) as store_url:
        doomed_env = service_env(
            RIVERBEAM_STORE_URL=store_url,
            RIVERBEAM_NATS_URL=nats_url,
            RIVERBEAM_SANDBOX_URL="",
            RIVERBEAM_LEASE_TTL_S="1",
            RIVERBEAM_REAP_INTERVAL_S="3600",
            RIVERBEAM_AGENTS=f"{HOOKS}:register_stalling",
            RIVERBEAM_RUNNER_ID="doomed-runner",
        )
        survivor = runner_settings(
            nats_url,
            store_url,
            agents=f"{HOOKS}:register_steady",
            runner_id="surviving-runner",
            reap_interval_s=0.2,
            recovery_policy=policy,
        )
        async with (
            runner_service(survivor),
            ServiceProcess("runner", doomed_env, tmp_path) as doomed,
        ):
            auth = DevAuthenticator()
            runner = RunnerClient(doomed.address)
            router_store = StoreClient(store_url, timeout_s=SLOW_GUARD_S)
            gateway = Gateway(
                authenticator=auth,
                runner=runner,
                store=router_store,
                models=ModelList.default(),
                recovery_wait_s=SLOW_GUARD_S,
            )
            try:
                session_id, request_id = uid(), uid()
                request = InvokeRequest.parse(
                    text_request("steady", "hello", session_id, request_id=request_id)
                )
                call = asyncio.create_task(
                    gateway.invoke(auth.principal, request, timeout_s=2 * SLOW_GUARD_S)
                )
                run_id = await _in_model_call(store, request_id)
                assert not call.done()
                os.kill(doomed.pid, signal.SIGKILL)
                assert await doomed.proc.wait() == -signal.SIGKILL  # type: ignore[union-attr]

                async with asyncio.timeout(2 * SLOW_GUARD_S):
                    if policy == "recover":
                        result = await call
                    else:
                        with pytest.raises(RiverbeamError) as info:
                            await call
            finally:
                await runner.aclose()
                await router_store.aclose()

    run = await store.get_run(run_id=run_id)
    assert run.holders == ["doomed-runner", "surviving-runner"]
    if policy == "recover":
        # Exactly what a normal unary invoke answers: the recorded result.
        assert isinstance(result, AgentResult)
        assert result.text == STEADY_ANSWER
        assert (result.run_id, result.request_id) == (run_id, request_id)
        assert run.status == "completed" and run.result == result
        messages, _ = await store.list_messages(session_id=session_id)
        assert [(m.role, m.text) for m in messages] == [("human", "hello"), ("ai", STEADY_ANSWER)]
    else:
        assert info.value.bem == "BEM-034"
        assert info.value.details["run_id"] == run_id
        assert (run.status, run.error_code) == ("failed", "BEM-034")
