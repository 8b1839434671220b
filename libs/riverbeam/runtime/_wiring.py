"""Which agents a runner serves: the deployment's hook, or the built-in set."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from riverbeam.agents import (
    CompletionClient,
    EchoClient,
    OpenAiCompatible,
    RigAgentRunner,
    Tool,
    builtin_skills,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import RunnerSettings
from riverbeam.runtime._facade import RiverBeam
from riverbeam.sandbox import (
    DEFAULT_PROTECTED_REFS,
    Placement,
    ProtectedRefs,
    RunWorkspaces,
    WorkspacesClient,
    sandbox_tools,
    shared_placement,
)
from riverbeam.server import open_channel

__all__ = ["AgentsHook", "default_client", "load_hook", "wire_agents"]

log = logging.getLogger("riverbeam.wiring")

Closer = Callable[[], Awaitable[None]]
AgentsHook = Callable[[RiverBeam], Any]


def load_hook(spec: str) -> AgentsHook:
    """Import `module:function`; the function registers agents on the RiverBeam it is given."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, f"agents hook {spec!r} is not module:function"
        )
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, f"cannot load agents hook {spec!r}: {exc}"
        ) from None
    if not callable(target):
        raise RiverbeamError(ErrorCode.INVALID_ARGUMENT, f"agents hook {spec!r} is not callable")
    hook: AgentsHook = target
    return hook


def default_client(env: Mapping[str, str] | None = None) -> CompletionClient:
    """OpenAiCompatible when BEAM_API_KEY (or its fallbacks) is set; EchoClient otherwise."""
    client = OpenAiCompatible.from_env(os.environ if env is None else env)
    if client is None:
        log.info("no BEAM_API_KEY: built-in agents answer with EchoClient")
        return EchoClient()
    log.info("built-in agents call %s", client.endpoint)
    return client


async def _workspace_tools(settings: RunnerSettings) -> tuple[list[Tool], list[Closer]]:
    """The nine sandbox tools over gRPC, each call in its run's workspace (workspace_policy).

    "session" (the default) and "user" workspaces are created by the sandbox on first use;
    "shared" is the deployment's explicit opt-in to one workspace (`workspace`) for every run.
    """
    if not settings.sandbox_url:
        return [], []
    shared = None
    if settings.workspace_policy == "shared":
        shared = shared_placement(
            settings.workspace, "riverbeam/work", ProtectedRefs(DEFAULT_PROTECTED_REFS)
        )
        log.warning("every run shares workspace %r (workspace_policy=shared)", settings.workspace)
    channel = open_channel(settings.sandbox_url)
    workspaces = WorkspacesClient(channel)
    if shared is not None:
        await _ensure_shared(workspaces, settings, shared)
    runs = RunWorkspaces(
        workspaces,
        policy=settings.workspace_policy,
        origin=settings.workspace_origin,
        shared=shared,
    )
    tools = sandbox_tools(None, runs=runs)

    async def close() -> None:
        await channel.close(None)

    return tools, [close]


async def _ensure_shared(
    workspaces: WorkspacesClient, settings: RunnerSettings, shared: Placement
) -> None:
    """Create the shared workspace at start-up, waiting up to 30 s for the sandbox."""
    for attempt in range(30):
        try:
            await workspaces.ensure(
                shared.workspace, branch=shared.branch, origin=settings.workspace_origin
            )
            return
        except RiverbeamError as err:
            if err.code is not ErrorCode.SERVICE_UNAVAILABLE or attempt == 29:
                log.warning("shared workspace %r not checked: %s", shared.workspace, err)
                return
            await asyncio.sleep(1.0)


async def wire_agents(
    beam: RiverBeam, settings: RunnerSettings, *, env: Mapping[str, str] | None = None
) -> list[Closer]:
    """Register the deployment's agents, or `assistant` plus one agent per built-in skill.

    Returns the functions to call on shutdown.
    """
    if settings.agents:
        result = load_hook(settings.agents)(beam)
        if inspect.isawaitable(result):
            await result
        log.info("agents from %s: %s", settings.agents, [a.name for a in beam.list_agents()])
        return []
    beam.register_echo_agent("assistant")
    client = default_client(env)
    tools, closers = await _workspace_tools(settings)
    for skill in builtin_skills():
        beam.register_agent(RigAgentRunner.for_skill(skill.name, client, tools))
    aclose = getattr(client, "aclose", None)
    if aclose is not None:
        closers.append(aclose)
    log.info("agents: %s", [a.name for a in beam.list_agents()])
    return closers
