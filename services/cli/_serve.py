"""`riverbeam serve <service>`: run one service until SIGTERM."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from enum import StrEnum

from riverbeam.core.errors import RiverbeamError
from riverbeam.core.settings import (
    CommonSettings,
    ConsoleSettings,
    RouterSettings,
    RunnerSettings,
    SandboxSettings,
    StoreSettings,
)
from riverbeam.server import ServiceApp, run_on_loop, run_service

log = logging.getLogger("riverbeam.service")


class ServiceName(StrEnum):
    console = "console"
    router = "router"
    runner = "runner"
    sandbox = "sandbox"
    store = "store"


def settings_for(
    name: ServiceName, listen: str | None, overrides: dict[str, object] | None = None
) -> CommonSettings:
    classes: dict[ServiceName, type[CommonSettings]] = {
        ServiceName.console: ConsoleSettings,
        ServiceName.router: RouterSettings,
        ServiceName.runner: RunnerSettings,
        ServiceName.sandbox: SandboxSettings,
        ServiceName.store: StoreSettings,
    }
    cls = classes[name]
    settings = cls()
    update: dict[str, object] = {**(overrides or {})}
    if listen:
        update["listen"] = listen
    if update:
        # Validated like the environment: a flag is just a setting given another way.
        settings = cls.model_validate({**settings.model_dump(), **update})
    return settings


def builder_for(
    name: ServiceName, settings: CommonSettings
) -> Callable[[], contextlib.AbstractAsyncContextManager[ServiceApp]]:
    if name is ServiceName.store:
        from services.store.app import build as build_store

        assert isinstance(settings, StoreSettings)
        return lambda: build_store(settings)
    if name is ServiceName.sandbox:
        from services.sandbox.app import build as build_sandbox

        assert isinstance(settings, SandboxSettings)
        return lambda: build_sandbox(settings)
    if name is ServiceName.runner:
        from services.runner.app import build as build_runner

        assert isinstance(settings, RunnerSettings)
        return lambda: build_runner(settings)
    from services.router.app import build as build_router

    assert isinstance(settings, RouterSettings)
    return lambda: build_router(settings)


def serve(
    name: ServiceName,
    listen: str | None,
    ready_file: str | None = None,
    overrides: dict[str, object] | None = None,
) -> None:
    """Run one service until SIGTERM; a start-up failure is one log line and exit status 1."""
    settings = settings_for(name, listen, overrides)

    def ready(address: str) -> None:
        log.info("riverbeam %s listening on %s", name.value, address)
        if ready_file:
            with open(ready_file, "w") as fh:
                fh.write(address)

    if name is ServiceName.console:  # HTTP, not gRPC: uvicorn serves it
        from services.console.app import run_console

        assert isinstance(settings, ConsoleSettings)
        run_on_loop(run_console(settings, ready=ready), settings.event_loop)
        return

    try:
        run_on_loop(
            run_service(
                settings,
                builder_for(name, settings),
                ready=ready,
                service_name=f"riverbeam-{name.value}",
            ),
            settings.event_loop,
        )
    except RiverbeamError as err:
        hint = f" (hint: {err.hint})" if err.hint else ""
        log.error("riverbeam %s: error %s: %s%s", name.value, err.bem, err.message, hint)
        raise SystemExit(1) from None
