"""Which agents a runner serves: riverbeam.yaml, the deployment's hook, and the built-in set.

Order: the agents of the config file (RIVERBEAM_CONFIG), then the hook (RIVERBEAM_AGENTS), then
the built-in agents whose names are still free (all of them unless the file's
`builtin_agents` says otherwise). The current directory and the config file's directory are
importable, so `module:function` and `module:object` find local code.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from riverbeam.agents import CompletionClient, EchoClient, RigAgentRunner, Tool, builtin_skills
from riverbeam.agents._model_env import API_KEY_VARS, first_set
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

if TYPE_CHECKING:  # riverbeam.yaml's machinery is imported when a runner has one
    from riverbeam.agents._config_file import LoadedConfig
    from riverbeam.agents._mcp import McpHub

__all__ = [
    "AgentsHook",
    "builtin_names",
    "default_client",
    "load_hook",
    "register_builtins",
    "wire_agents",
]

log = logging.getLogger("riverbeam.wiring")

Closer = Callable[[], Awaitable[None]]
AgentsHook = Callable[[RiverBeam], Any]


def load_hook(spec: str) -> AgentsHook:
    """Import `module:function`; the function registers agents on the RiverBeam it is given.

    The current directory is importable (a runner started from a project directory finds its
    modules without PYTHONPATH).
    """
    from riverbeam.runtime._config_agents import importable

    importable(Path.cwd())
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
    source = os.environ if env is None else env
    if first_set(source, API_KEY_VARS) is None:  # the client is not even imported then
        log.info("no BEAM_API_KEY: built-in agents answer with EchoClient")
        return EchoClient()
    from riverbeam.agents._openai import OpenAiCompatible

    client = OpenAiCompatible.from_env(source)
    assert client is not None  # it has the key just read
    log.info("built-in agents call %s", client.endpoint)
    return client


WorkspacePolicy = Literal["session", "user", "shared"]


async def _workspace_tools(
    settings: RunnerSettings, workspace: str, origin: str | None, policy: WorkspacePolicy
) -> tuple[list[Tool] | None, list[Closer]]:
    """The nine sandbox tools over gRPC, each call in its run's workspace (workspace_policy).

    "session" (the default) and "user" workspaces are created by the sandbox on first use,
    cloned from `origin`; "shared" is the deployment's explicit opt-in to one workspace
    (`workspace`) for every run. None when the runner has no sandbox (RIVERBEAM_SANDBOX_URL).
    """
    if not settings.sandbox_url:
        return None, []
    shared = None
    if policy == "shared":
        shared = shared_placement(
            workspace, "riverbeam/work", ProtectedRefs(DEFAULT_PROTECTED_REFS)
        )
        log.warning("every run shares workspace %r (workspace_policy=shared)", workspace)
    channel = open_channel(settings.sandbox_url)
    workspaces = WorkspacesClient(channel)
    if shared is not None:
        await _ensure_shared(workspaces, origin, shared)
    runs = RunWorkspaces(workspaces, policy=policy, origin=origin, shared=shared)
    tools = sandbox_tools(None, runs=runs)

    async def close() -> None:
        await channel.close(None)

    return tools, [close]


async def _ensure_shared(
    workspaces: WorkspacesClient, origin: str | None, shared: Placement
) -> None:
    """Create the shared workspace at start-up, waiting up to 30 s for the sandbox."""
    for attempt in range(30):
        try:
            await workspaces.ensure(shared.workspace, branch=shared.branch, origin=origin)
            return
        except RiverbeamError as err:
            if err.code is not ErrorCode.SERVICE_UNAVAILABLE or attempt == 29:
                log.warning("shared workspace %r not checked: %s", shared.workspace, err)
                return
            await asyncio.sleep(1.0)


def builtin_names(loaded: LoadedConfig | None) -> list[str]:
    """The built-in agents to register: `assistant` and one per skill, as the file allows.

    Raises:
        RiverbeamError: BEM-231 when `builtin_agents` names an agent that is not built in.
    """
    every = ["assistant", *(skill.name for skill in builtin_skills())]
    keep = loaded.config.builtin_agents if loaded is not None else True
    if keep is True:
        return every
    if keep is False:
        return []
    assert loaded is not None
    for index, name in enumerate(keep):
        if name not in every:
            raise loaded.error(
                ErrorCode.CONFIG_UNKNOWN_NAME,
                ("builtin_agents", index),
                f"{name!r} is not a built-in agent ({', '.join(every)})",
            )
    return [name for name in every if name in keep]


def register_builtins(
    beam: RiverBeam,
    names: Sequence[str],
    client: CompletionClient,
    tools: Sequence[Tool],
) -> None:
    """Register the named built-in agents whose names are still free."""
    for name in names:
        if name in beam.registry():
            log.info("built-in agent %s left out: the configuration defines its own", name)
        elif name == "assistant":
            beam.register_echo_agent("assistant")
        else:
            beam.register_agent(RigAgentRunner.for_skill(name, client, tools))


async def wire_agents(
    beam: RiverBeam,
    settings: RunnerSettings,
    *,
    env: Mapping[str, str] | None = None,
    config: LoadedConfig | None = None,
    client: CompletionClient | None = None,
    sandbox: Sequence[Tool] | None = None,
) -> list[Closer]:
    """Register the agents of riverbeam.yaml, the hook's, and the built-in ones.

    Args:
        beam: Where to register.
        settings: RIVERBEAM_CONFIG, RIVERBEAM_AGENTS, the sandbox, the workspace, the model list.
        env: The environment for the model client and `${VAR}`s (default os.environ).
        config: An already loaded config file (instead of settings.config).
        client: The model client (default: from the environment, see default_client).
        sandbox: Sandbox tools to use instead of the sandbox service's (an in-process
            runtime binds them to a local working tree).

    Returns:
        The functions to call on shutdown (MCP servers, the sandbox channel, the client).

    Raises:
        RiverbeamError: BEM-230…233 for a bad config file; BEM-002 for a bad hook.
    """
    loaded = config
    if loaded is None and settings.config is not None:
        from riverbeam.agents._config_file import load_config

        loaded = load_config(settings.config)
    workspace = loaded.config.workspace if loaded is not None else None
    client = client or default_client(env)
    tools: list[Tool] | None
    closers: list[Closer]
    if sandbox is not None:
        tools, closers = list(sandbox), []
    else:
        tools, closers = await _workspace_tools(
            settings,
            workspace.name if workspace is not None else settings.workspace,
            workspace.origin if workspace is not None else settings.workspace_origin,
            (workspace.policy if workspace is not None else None) or settings.workspace_policy,
        )
    aclose = getattr(client, "aclose", None)
    if aclose is not None:
        closers.append(aclose)
    try:
        if loaded is not None:
            await _register_config(beam, settings, loaded, client, tools, closers, env)
        if settings.agents:
            result = load_hook(settings.agents)(beam)
            if inspect.isawaitable(result):
                await result
            log.info("agents hook %s ran", settings.agents)
        register_builtins(beam, builtin_names(loaded), client, tools or [])
        if loaded is not None:
            from riverbeam.runtime._config_agents import check_agent_tools, register_crews

            register_crews(loaded, beam.registry())
            check_agent_tools(loaded, beam.registry())
    except BaseException:
        for closer in reversed(closers):
            await closer()
        raise
    log.info("agents: %s", [a.name for a in beam.list_agents()])
    return closers


async def _register_config(
    beam: RiverBeam,
    settings: RunnerSettings,
    loaded: LoadedConfig,
    client: CompletionClient,
    tools: list[Tool] | None,
    closers: list[Closer],
    env: Mapping[str, str] | None,
) -> None:
    from riverbeam.agents._mcp import McpHub
    from riverbeam.routing import ModelList
    from riverbeam.runtime._config_agents import build_configured_agents

    hub: McpHub | None = None
    if loaded.config.mcp_servers:
        hub = McpHub(loaded.config.mcp_servers, base_dir=loaded.base_dir, env=env)
        closers.insert(0, hub.aclose)
        ready = await hub.start()
        log.info("MCP servers: %s", ready)
    models = ModelList.from_file(settings.models_file) if settings.models_file else None
    agents = build_configured_agents(
        loaded,
        client=client,
        sandbox_tools=tools,
        hub=hub,
        model_names=models.names() if models is not None else None,
        registry=beam.registry(),
    )
    for agent in agents:
        beam.register_agent(agent)
    log.info("agents from %s: %s", loaded.source, [a.config.name for a in agents])
