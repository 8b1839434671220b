"""Wiring of the router: authenticator, runner and store clients, model list, stream access."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from riverbeam.auth import (
    AuthMode,
    DevAuthenticator,
    RequestLimits,
    authenticator_for,
    dev_mode_warning,
)
from riverbeam.core.settings import RouterSettings
from riverbeam.gateway import Gateway
from riverbeam.routing import ModelList
from riverbeam.runtime import JetStreamFrames, RunnerClient
from riverbeam.server import GrpcServer, ServiceApp, ServiceBinding, health_follows
from riverbeam.store import StoreClient
from riverbeam.stream import NatsConnection, StreamConfig, StreamGuard, ensure_stream
from riverbeam.v1 import riverbeam_service_pb2_grpc as pb_grpc
from services.router.servicer import RiverbeamServicer

log = logging.getLogger("riverbeam.router")


@contextlib.asynccontextmanager
async def build(settings: RouterSettings) -> AsyncIterator[ServiceApp]:
    if settings.dev_mode:
        authenticator = authenticator_for(AuthMode.DEV)
        assert isinstance(authenticator, DevAuthenticator)
        for line in dev_mode_warning(authenticator.principal).splitlines():
            log.warning(line)
    else:
        authenticator = authenticator_for(AuthMode.TOKENS, tokens_file=settings.tokens_file)
    models = ModelList.from_file(settings.models_file)
    runner = RunnerClient(
        settings.runner_url,
        round_robin=settings.runner_balancing == "round_robin",
        invoke_lanes=settings.runner_invoke_lanes,
    )
    store = StoreClient(settings.store_url)
    config = StreamConfig(
        name=settings.stream_name,
        max_age_s=settings.stream_max_age_s,
        max_bytes=settings.stream_max_bytes,
    )
    async with NatsConnection(settings.nats_url, name="riverbeam-router") as nats:
        await ensure_stream(nats.js, config)
        gateway = Gateway(
            authenticator=authenticator,
            runner=runner,
            store=store,
            models=models,
            frames=JetStreamFrames(nats.js, config),
            limits=RequestLimits(
                max_content_bytes=settings.max_content_bytes,
                max_metadata_bytes=settings.max_metadata_bytes,
            ),
            recovery_wait_s=settings.router_recovery_wait_s,
        )
        servicer = RiverbeamServicer(gateway)
        guard = StreamGuard(nats, config)
        watching: list[asyncio.Task[None]] = []

        async def on_started(server: GrpcServer) -> None:
            health = health_follows(server, "riverbeam.v1.RiverbeamService")
            watching.append(asyncio.create_task(guard.run(health)))

        async def close() -> None:
            for task in watching:
                task.cancel()
            await asyncio.gather(*watching, return_exceptions=True)
            await gateway.close()
            await runner.aclose()
            await store.aclose()

        yield ServiceApp(
            [
                ServiceBinding(
                    "riverbeam.v1.RiverbeamService",
                    lambda server: pb_grpc.add_RiverbeamServiceServicer_to_server(servicer, server),  # type: ignore[no-untyped-call]
                )
            ],
            on_started=on_started,
            close=close,
        )
