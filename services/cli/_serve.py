"""`riverbeam serve <service>`: run one service until SIGTERM."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from enum import StrEnum

from riverbeam.core.settings import (
    CommonSettings,
    RouterSettings,
    RunnerSettings,
    SandboxSettings,
    StoreSettings,
)
from riverbeam.server import ServiceApp, run_on_loop, run_service


class ServiceName(StrEnum):
    router = "router"
    runner = "runner"
    sandbox = "sandbox"
    store = "store"


def settings_for(name: ServiceName, listen: str | None) -> CommonSettings:
    classes: dict[ServiceName, type[CommonSettings]] = {
        ServiceName.router: RouterSettings,
        ServiceName.runner: RunnerSettings,
        ServiceName.sandbox: SandboxSettings,
        ServiceName.store: StoreSettings,
    }
    cls = classes[name]
    settings = cls()
    if listen:
        settings = settings.model_copy(update={"listen": listen})
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


def serve(name: ServiceName, listen: str | None, ready_file: str | None = None) -> None:
    settings = settings_for(name, listen)

    def ready(address: str) -> None:
        print(f"riverbeam {name.value} listening on {address}", flush=True)
        if ready_file:
            with open(ready_file, "w") as fh:
                fh.write(address)

    run_on_loop(
        run_service(
            settings,
            builder_for(name, settings),
            ready=ready,
            service_name=f"riverbeam-{name.value}",
        ),
        settings.event_loop,
    )
