"""Wiring of the store service: the store (Postgres, or memory for development) and its servicer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import TYPE_CHECKING

from riverbeam.core.settings import StoreSettings
from riverbeam.server import ServiceApp, ServiceBinding
from riverbeam.v1 import store_service_pb2_grpc as pb_grpc
from services.store.servicer import StoreServicer

if TYPE_CHECKING:
    from riverbeam.store import BeamStore

__all__ = ["SERVICE_NAME", "binding", "build"]

log = logging.getLogger("riverbeam.store")

SERVICE_NAME = "riverbeam.v1.StoreService"


def binding(store: BeamStore) -> ServiceBinding:
    """The StoreService over `store`, ready for GrpcServer."""
    servicer = StoreServicer(store)
    return ServiceBinding(
        SERVICE_NAME,
        lambda server: pb_grpc.add_StoreServiceServicer_to_server(servicer, server),  # type: ignore[no-untyped-call]
        stopping=servicer.stopping,
    )


@contextlib.asynccontextmanager
async def build(settings: StoreSettings) -> AsyncIterator[ServiceApp]:
    store: BeamStore
    if settings.database_url:
        from riverbeam.store import PgBeamStore  # asyncpg only for a store on PostgreSQL

        store = await PgBeamStore.connect(
            settings.database_url,
            schema=settings.db_schema,
            min_size=settings.db_pool_min,
            max_size=settings.db_pool_max,
        )
        log.info("store on PostgreSQL, schema %s", settings.db_schema)
    else:  # the in-memory store's modules only for it, not beside PostgreSQL's
        from riverbeam.store import InMemoryStore

        store = InMemoryStore()
        log.warning("store in memory: records are lost when this process stops")
    retention: asyncio.Task[None] | None = None
    if settings.retention_idle_days is not None:
        from riverbeam.store import run_retention

        idle = timedelta(days=settings.retention_idle_days)
        retention = asyncio.create_task(
            run_retention(store, idle=idle, interval_s=settings.retention_interval_s)
        )
        log.info("retention: sessions idle longer than %s are deleted", idle)
    try:
        yield ServiceApp([binding(store)], close=store.aclose)
    finally:
        if retention is not None:
            retention.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await retention
        await store.aclose()
