"""Wiring of the runner service: store client, NATS, agents, reaper, cancel subscription."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from riverbeam.agents import load_agent_layer
from riverbeam.core.settings import RunnerSettings
from riverbeam.runtime import (
    JetStreamSinks,
    PipelineOptions,
    RiverBeam,
    run_reaper,
    wire_agents,
)
from riverbeam.runtime._reaper import FenceRevoker
from riverbeam.sandbox import FenceClient
from riverbeam.server import GrpcServer, ServiceApp, ServiceBinding, health_follows, open_channel
from riverbeam.store import BeamStore, StoreClient
from riverbeam.stream import (
    NatsConnection,
    StreamConfig,
    StreamGuard,
    ensure_stream,
    publish_cancel,
    subscribe_cancel,
)
from riverbeam.v1 import runner_service_pb2_grpc as pb_grpc
from services.runner.servicer import RunnerServicer

log = logging.getLogger("riverbeam.runner")

SERVICE_NAME = "riverbeam.v1.RunnerService"


@contextlib.asynccontextmanager
async def build(settings: RunnerSettings) -> AsyncIterator[ServiceApp]:
    store: BeamStore
    if settings.store_url:
        store = StoreClient(settings.store_url, step_lanes=settings.store_step_lanes)
    else:  # a runner without a store service: the in-memory store, loaded only then
        from riverbeam.store._memory import InMemoryStore

        store = InMemoryStore()
    config = StreamConfig(
        name=settings.stream_name,
        max_age_s=settings.stream_max_age_s,
        max_bytes=settings.stream_max_bytes,
    )
    async with NatsConnection(
        settings.nats_url, name=f"riverbeam-runner-{settings.runner_id}"
    ) as nats:
        await ensure_stream(nats.js, config)
        sinks = JetStreamSinks(nats.js, config)

        async def cancel_elsewhere(request_id: str, reason: str | None) -> None:
            await publish_cancel(nats.nc, request_id, reason or "")

        beam = RiverBeam(
            cancel_elsewhere=cancel_elsewhere,
            store=store,
            sinks=sinks,
            options=PipelineOptions(
                runner_id=settings.runner_id,
                lease_ttl_s=settings.lease_ttl_s,
                busy_session_policy=settings.busy_session_policy,
                queue_timeout_s=settings.queue_timeout_s,
                max_history_messages=settings.max_history_messages,
                finish_retry_s=settings.finish_retry_s,
                agent_layer=load_agent_layer(settings.agent_layer),
                approval_ttl_s=settings.approval_ttl_s,
                # Checkpoints are only worth their writes when a replica continues from them.
                checkpoints=settings.recovery_policy == "recover",
            ),
        )
        closers = await wire_agents(beam, settings)

        async def on_cancel(request_id: str, reason: str) -> None:
            if beam.pipeline.cancel(request_id, reason or None):
                log.info("cancelled %s on request of another replica", request_id)

        subscription = await subscribe_cancel(nats.nc, on_cancel)

        servicer = RunnerServicer(beam, cancel_elsewhere=cancel_elsewhere)
        fences: FenceRevoker | None = None
        sandbox_channel = open_channel(settings.sandbox_url) if settings.sandbox_url else None
        if sandbox_channel is not None:
            fences = FenceClient(sandbox_channel, timeout_s=30.0)
        reaper = asyncio.create_task(
            run_reaper(
                store,
                sinks,
                interval_s=settings.reap_interval_s,
                owner=settings.runner_id,
                # A run taken over but not yet fenced in the sandbox is retried after this.
                lease_ttl_s=settings.lease_ttl_s,
                fences=fences,
                # Runs this process still holds are its own business (a finish being
                # retried through a store outage is not a lost run).
                exclude=lambda: beam.pipeline.held_run_ids,
                # Durable runs: continue a lost run here from its checkpoint, or fail it.
                recover=beam.pipeline.recover if settings.recovery_policy == "recover" else None,
                max_takeovers=settings.max_takeovers,
            )
        )
        guard = StreamGuard(nats, config)
        watching: list[asyncio.Task[None]] = []

        async def on_started(server: GrpcServer) -> None:
            watching.append(asyncio.create_task(guard.run(health_follows(server, SERVICE_NAME))))

        async def drain(grace_s: float) -> None:
            # First: new invokes go to another replica while the runs begun here end.
            servicer.stopping()
            reaper.cancel()
            for task in watching:
                task.cancel()
            await beam.aclose(grace_s=grace_s)

        async def close() -> None:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
            for closer in closers:
                await closer()
            if sandbox_channel is not None:
                await sandbox_channel.close(None)
            await store.aclose()

        try:
            yield ServiceApp(
                [
                    ServiceBinding(
                        SERVICE_NAME,
                        lambda server: pb_grpc.add_RunnerServiceServicer_to_server(  # type: ignore[no-untyped-call]
                            servicer, server
                        ),
                        stopping=servicer.stopping,
                    )
                ],
                on_started=on_started,
                drain=drain,
                close=close,
            )
        finally:
            reaper.cancel()
            for task in watching:
                task.cancel()
            for task in (reaper, *watching):
                with contextlib.suppress(asyncio.CancelledError):
                    await task
