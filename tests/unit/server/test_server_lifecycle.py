"""run_service: what start-up built is frozen out of the cyclic collector before it is ready, the
young generation is collected less often while it serves, and the C heap's free pages go back."""

from __future__ import annotations

import contextlib
import gc
import signal
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from riverbeam.core.settings import StoreSettings
from riverbeam.server import ServiceApp, run_service
from riverbeam.store._session_history import SessionHistory
from riverbeam.types import ContentPart, Message


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


async def test_a_turns_history_copies_run_no_young_collection_while_serving() -> None:
    held = SessionHistory()
    window = [
        Message(
            message_id=f"m{i}",
            session_id="s",
            seq=i,
            role="human",
            content=[ContentPart.of_text("hello")],
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        for i in range(1, 201)
    ]
    kept = held.keep("s", None, 200, window)
    assert kept is not None
    young: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 0:
            young.append(1)

    @contextlib.asynccontextmanager
    async def build() -> AsyncIterator[ServiceApp]:
        yield ServiceApp([])

    def ready(address: str) -> None:
        gc.collect(0)  # the young generation empty: what follows alone decides
        gc.callbacks.append(count)
        try:
            copies = kept.copies()  # a turn's copies, alive together
        finally:
            gc.callbacks.remove(count)
        assert copies == window
        signal.raise_signal(signal.SIGTERM)

    before = gc.get_threshold()
    try:
        await run_service(StoreSettings(listen="127.0.0.1:0"), build, ready=ready)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    # At the default threshold (700) the copies of 200 messages ran a young collection.
    assert young == []


async def test_the_c_heap_is_trimmed_once_before_the_service_is_ready(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import riverbeam.server._lifecycle as lifecycle

    order: list[str] = []
    monkeypatch.setattr(lifecycle, "return_free_heap", lambda: order.append("trim") or True)

    @contextlib.asynccontextmanager
    async def build() -> AsyncIterator[ServiceApp]:
        yield ServiceApp([])

    def ready(address: str) -> None:
        order.append("ready")
        signal.raise_signal(signal.SIGTERM)

    try:
        await run_service(StoreSettings(listen="127.0.0.1:0"), build, ready=ready)
    finally:
        gc.unfreeze()
    assert order == ["trim", "ready"]


def test_trimming_the_heap_calls_glibc_and_is_skipped_where_there_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ctypes

    from riverbeam.server._heap import return_free_heap

    assert return_free_heap() is True  # glibc, as on every Linux image we ship

    class NoTrim:
        def __init__(self, name: object) -> None:
            pass

    monkeypatch.setattr(ctypes, "CDLL", NoTrim)  # a libc without malloc_trim (musl, macOS)
    assert return_free_heap() is False
