"""run_service: what start-up built is frozen out of the cyclic collector before it is ready."""

from __future__ import annotations

import contextlib
import gc
import signal
from collections.abc import AsyncIterator

from riverbeam.core.settings import StoreSettings
from riverbeam.server import ServiceApp, run_service


async def test_start_up_objects_are_frozen_before_the_service_is_ready() -> None:
    marker = [object()]  # a container built before serving: tracked by the collector
    seen: dict[str, int | bool] = {}

    @contextlib.asynccontextmanager
    async def build() -> AsyncIterator[ServiceApp]:
        yield ServiceApp([])

    def ready(address: str) -> None:
        seen["frozen"] = gc.get_freeze_count()
        # Frozen objects are no longer in any generation the collector walks.
        seen["marker_walked"] = any(o is marker for o in gc.get_objects())
        signal.raise_signal(signal.SIGTERM)  # run_service's own handler: stop serving

    try:
        await run_service(StoreSettings(listen="127.0.0.1:0"), build, ready=ready)
    finally:
        gc.unfreeze()
    assert seen["frozen"] > 0
    assert seen["marker_walked"] is False
