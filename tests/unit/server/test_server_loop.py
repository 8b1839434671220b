"""RIVERBEAM_EVENT_LOOP: uvloop when installed and asked for, asyncio's loop otherwise."""

from __future__ import annotations

import asyncio
import sys

import pytest

from riverbeam.core.settings import StoreSettings
from riverbeam.server import loop_factory, run_on_loop


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_asyncio_never_uses_uvloop() -> None:
    assert loop_factory("asyncio") is None
    assert run_on_loop(_loop_module(), "asyncio").startswith("asyncio")


def test_auto_uses_uvloop_when_it_is_installed() -> None:
    uvloop = pytest.importorskip("uvloop")
    assert loop_factory("auto") is uvloop.new_event_loop
    assert run_on_loop(_loop_module(), "auto").startswith("uvloop")


def test_without_uvloop_auto_falls_back_and_uvloop_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop: ImportError
    assert loop_factory("auto") is None
    assert run_on_loop(_loop_module(), "auto").startswith("asyncio")
    with pytest.raises(ImportError):
        loop_factory("uvloop")


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert StoreSettings().event_loop == "auto"
    monkeypatch.setenv("RIVERBEAM_EVENT_LOOP", "asyncio")
    assert StoreSettings().event_loop == "asyncio"
