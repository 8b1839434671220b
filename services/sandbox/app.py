"""Wiring of the sandbox service: a WorkspaceManager under the configured base directory, and
its retention sweep (workspaces made on first use, idle past RIVERBEAM_WORKSPACE_MAX_IDLE_S)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from riverbeam.core.settings import SandboxSettings
from riverbeam.sandbox import FenceBook, WorkspaceConfig, WorkspaceManager
from riverbeam.server import ServiceApp, ServiceBinding
from riverbeam.v1 import sandbox_service_pb2_grpc as pb_grpc
from services.sandbox.servicer import SandboxServicer

__all__ = ["SERVICE_NAME", "binding", "build"]

log = logging.getLogger("riverbeam.sandbox")

SERVICE_NAME = "riverbeam.v1.SandboxService"
# Under the workspace base; not a workspace name (those start with [a-z0-9]).
FENCES_DIR = ".fences"


def binding(workspaces: WorkspaceManager, fences: FenceBook | None = None) -> ServiceBinding:
    """The SandboxService over `workspaces`, ready for GrpcServer.

    `fences` keeps the runs' fencing epochs; default: a book persisted under the workspace
    base directory (`.fences/`), so a restarted sandbox still refuses revoked runners.
    """
    if fences is None:
        fences = FenceBook(workspaces.base_dir / FENCES_DIR)
    servicer = SandboxServicer(workspaces, fences)
    return ServiceBinding(
        SERVICE_NAME,
        lambda server: pb_grpc.add_SandboxServiceServicer_to_server(servicer, server),  # type: ignore[no-untyped-call]
    )


async def sweep_forever(workspaces: WorkspaceManager, interval_s: float) -> None:
    """Run the retention sweep every `interval_s` seconds (a failed sweep is logged, retried)."""
    while True:
        try:
            deleted = await workspaces.sweep()
            if deleted:
                log.info("retention deleted %d idle workspaces", len(deleted))
        except Exception:
            log.exception("workspace retention sweep failed")
        await asyncio.sleep(interval_s)


@contextlib.asynccontextmanager
async def build(settings: SandboxSettings) -> AsyncIterator[ServiceApp]:
    """The service app for `settings`; closes every open workspace on the way out."""
    workspaces = WorkspaceManager(WorkspaceConfig.from_settings(settings))
    log.info("workspaces under %s", workspaces.base_dir)
    if settings.allow_request_workspace:
        log.warning("requests may choose their workspace (allow_request_workspace)")
    sweeper: asyncio.Task[None] | None = None
    if settings.workspace_max_idle_s > 0:
        sweeper = asyncio.create_task(
            sweep_forever(workspaces, settings.workspace_sweep_interval_s),
            name="workspace-retention",
        )
    try:
        yield ServiceApp([binding(workspaces)], close=workspaces.aclose)
    finally:
        if sweeper is not None:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
        await workspaces.aclose()
