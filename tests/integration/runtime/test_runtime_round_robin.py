"""The router's RunnerClient spreads invokes over every runner replica of its target.

`riverbeam up` with several runners gives the router an `ipv4:a,b` target; the channel is
balanced round-robin, so each replica runs its share (each run records the replica that held
it as its lease owner), instead of the first address taking every call.
"""

from __future__ import annotations

from collections import Counter

from riverbeam.runtime import DEFAULT_MODEL, Grant, RunnerClient
from riverbeam.store import BeamStore
from riverbeam.types import AgentResult, InvokeRequest
from tests.integration.runtime.rt_kit import (
    GUARD_S,
    runner_service,
    runner_settings,
    store_service,
    text_request,
)


async def test_invokes_go_round_robin_over_the_replicas(store: BeamStore, nats_url: str) -> None:
    settings = [runner_settings(nats_url, "", runner_id=f"replica-{i}") for i in (1, 2)]
    async with store_service(store) as store_url:
        settings = [s.model_copy(update={"store_url": store_url}) for s in settings]
        async with runner_service(settings[0]) as first, runner_service(settings[1]) as second:
            client = RunnerClient(f"ipv4:{first},{second}")
            owners: Counter[str | None] = Counter()
            try:
                for _ in range(8):
                    result = await client.run_invoke(
                        InvokeRequest.parse(text_request("assistant", "hello")),
                        model=DEFAULT_MODEL,
                        grant=Grant(),
                        timeout_s=GUARD_S * 6,
                    )
                    assert isinstance(result, AgentResult)
                    run = await store.get_run(run_id=result.run_id or "")
                    owners[run.lease_owner] += 1
            finally:
                await client.aclose()
    assert set(owners) == {"replica-1", "replica-2"}
    assert owners["replica-1"] >= 2 and owners["replica-2"] >= 2
