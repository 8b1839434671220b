"""Agents from riverbeam.yaml: each AgentConfig becomes a ConfiguredAgent over RigAgentRunner.

Everything the file declares is wired: name, description, version, modalities, tags, skill
and instructions, model (AgentMetadata.model, which the router prefers), tools (sandbox,
remember, MCP, Python entry points, other agents, handoffs), `tool_errors`, and the agent
layer: guardrails, tool policies, structured output and limits (_config_layer.py).
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from riverbeam.agents import (
    AgentContext,
    AgentInput,
    AgentRegistry,
    CompletionClient,
    ContextualTool,
    RememberTool,
    RigAgentRunner,
    RigOptions,
    Skill,
    Tool,
    ToolCallContext,
    ToolSpec,
    skill_by_name,
)
from riverbeam.agents._composition import AgentTool, Crew
from riverbeam.agents._config import (
    AgentConfig,
    AgentToolRef,
    ConfirmPolicy,
    DenyPolicy,
    McpToolRef,
    PythonToolRef,
    RememberToolRef,
    SandboxToolRef,
)
from riverbeam.agents._config_file import LoadedConfig
from riverbeam.agents._handoff import HandoffTool
from riverbeam.agents._mcp import McpHub
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._config_layer import layer_options
from riverbeam.types import AgentMetadata, StreamChunk

__all__ = [
    "ConfiguredAgent",
    "build_configured_agents",
    "check_agent_tools",
    "import_entry_point",
    "importable",
    "register_crews",
]

log = logging.getLogger("riverbeam.config")


def importable(*dirs: Path) -> None:
    """Put these directories first on sys.path (once), so `module:object` finds local code."""
    for directory in reversed(dirs):
        text = str(directory.resolve())
        if text not in sys.path:
            sys.path.insert(0, text)


def import_entry_point(spec: str) -> Any:
    """Import `module:object` (the object may be dotted: `module:Class.attr`).

    Raises:
        RiverbeamError: BEM-232 when it is not module:object or cannot be imported.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise RiverbeamError(
            ErrorCode.CONFIG_ENTRY_POINT, f"{spec!r} is not module:object", entry=spec
        )
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise RiverbeamError(
            ErrorCode.CONFIG_ENTRY_POINT,
            f"cannot load {spec!r}: {type(exc).__name__}: {exc}",
            entry=spec,
        ) from None
    return target


class ConfiguredAgent:
    """An agent declared in riverbeam.yaml.

    It rebuilds its RigAgentRunner whenever the MCP servers' tool lists change (the hub's
    version), so a run always sees the tools the servers offer now.
    """

    def __init__(
        self,
        config: AgentConfig,
        build: Callable[[], RigAgentRunner],
        *,
        hub: McpHub | None = None,
    ) -> None:
        self.config = config
        self._build = build
        self._hub = hub
        self._version = hub.version if hub is not None else 0
        self._runner = build()

    @property
    def runner(self) -> RigAgentRunner:
        """The tool loop for the current tool lists."""
        if self._hub is not None and self._hub.version != self._version:
            version = self._hub.version
            self._runner = self._build()
            self._version = version
            log.info(
                "agent %s: tools now %s",
                self.config.name,
                [s.name for s in self._runner.tool_specs],
            )
        return self._runner

    def metadata(self) -> AgentMetadata:
        inner = self.runner.metadata()
        cfg = self.config
        own = [t for t in inner.tags if cfg.skill is not None or not t.startswith("skill:")]
        tags = list(dict.fromkeys([*own, "config", *cfg.tags]))
        return inner.model_copy(
            update={
                "description": cfg.description or inner.description,
                "version": cfg.version or inner.version,
                "supported_modalities": list(cfg.modalities),
                "tags": tags,
                "model": cfg.model,
            }
        )

    def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        return self.runner.stream(input, context)

    async def health_check(self) -> bool:
        return await self.runner.health_check()


def build_configured_agents(
    loaded: LoadedConfig,
    *,
    client: CompletionClient,
    sandbox_tools: Sequence[Tool] | None,
    hub: McpHub | None,
    model_names: Iterable[str] | None = None,
    registry: AgentRegistry | None = None,
) -> list[ConfiguredAgent]:
    """One ConfiguredAgent per `agents` entry; every reference is checked first.

    Args:
        loaded: The validated file.
        client: The model client every agent calls.
        sandbox_tools: The nine sandbox tools bound to the workspace; None when the runner
            has no sandbox.
        hub: The MCP servers (started); None when the file declares none.
        model_names: The model list's names, to check `model`; None skips the check.
        registry: Where `kind: agent` tools find their agent (at each call); check the
            names with check_agent_tools once everything is registered.

    Raises:
        RiverbeamError: BEM-231 for a name that does not exist (skill, model, MCP server,
            sandbox tool without a sandbox), BEM-232 for an entry point that cannot be
            loaded or is no Tool, BEM-021
            for two agents with one name; each names file, line and field.
    """
    models = set(model_names) if model_names is not None else None
    seen: set[str] = set()
    agents: list[ConfiguredAgent] = []
    importable(loaded.base_dir)
    for index, cfg in enumerate(loaded.config.agents):
        at: tuple[str | int, ...] = ("agents", index)
        if cfg.name in seen:
            raise loaded.error(
                ErrorCode.AGENT_ALREADY_REGISTERED, (*at, "name"), f"a second agent {cfg.name!r}"
            )
        seen.add(cfg.name)
        skill = _skill(loaded, at, cfg)
        if models is not None and cfg.model is not None and cfg.model not in models:
            raise loaded.error(
                ErrorCode.CONFIG_UNKNOWN_NAME,
                (*at, "model"),
                f"model {cfg.model!r} is not in the model list {sorted(models)}",
            )
        static = _static_tools(loaded, at, cfg, skill, sandbox_tools, hub, registry)
        options = RigOptions(
            max_rounds=cfg.limits.max_rounds if cfg.limits.max_rounds is not None else 8,
            tool_errors=cfg.tool_errors,
            tool_timeout_s=cfg.limits.tool_timeout_s or RigOptions().tool_timeout_s,
            **layer_options(loaded, at, cfg),
        )

        def build(
            cfg: AgentConfig = cfg,
            skill: Skill | None = skill,
            static: list[Tool | McpToolRef] = static,
            options: RigOptions = options,
        ) -> RigAgentRunner:
            tools: list[Tool] = []
            for item in static:
                if isinstance(item, McpToolRef):
                    assert hub is not None
                    tools.extend(hub.tools(item.server, item.tools))
                else:
                    tools.append(item)
            return RigAgentRunner(
                cfg.name,
                client,
                _apply_policies(cfg, tools),
                skill=skill,
                options=options,
                description=cfg.description,
                supported_modalities=cfg.modalities,
            )

        try:
            agents.append(ConfiguredAgent(cfg, build, hub=hub))
        except RiverbeamError as err:
            raise loaded.error(err.code, (*at, "tools"), err.message) from None
    return agents


# ---- pieces ---------------------------------------------------------------------------------------
def _skill(loaded: LoadedConfig, at: tuple[str | int, ...], cfg: AgentConfig) -> Skill | None:
    base: Skill | None = None
    if cfg.skill is not None:
        base = skill_by_name(cfg.skill)
        if base is None:
            raise loaded.error(
                ErrorCode.CONFIG_UNKNOWN_NAME,
                (*at, "skill"),
                f"no built-in skill {cfg.skill!r}",
            )
    if cfg.instructions is None:
        return base
    prompt = cfg.instructions if base is None else f"{base.system_prompt}\n\n{cfg.instructions}"
    return Skill(
        name=base.name if base is not None else cfg.name,
        description=cfg.description or (base.description if base else "Configured agent"),
        system_prompt=prompt,
        allowed_tools=base.allowed_tools if base is not None else (),
    )


def _static_tools(
    loaded: LoadedConfig,
    at: tuple[str | int, ...],
    cfg: AgentConfig,
    skill: Skill | None,
    sandbox: Sequence[Tool] | None,
    hub: McpHub | None,
    registry: AgentRegistry | None,
) -> list[Tool | McpToolRef]:
    """The agent's tools, MCP references left to be resolved at each build."""
    handoffs: list[Tool | McpToolRef] = []
    for target in cfg.handoffs:
        if registry is None:
            raise loaded.error(
                ErrorCode.CONFIG_NOT_SUPPORTED, (*at, "handoffs"), "handoffs need an agent registry"
            )
        handoffs.append(HandoffTool(registry, target))
    by_name = {tool.spec().name: tool for tool in sandbox or ()}
    if cfg.tools is None:
        allowed = skill.allowed_tools if skill is not None else ()
        return [*(by_name[n] for n in allowed if n in by_name), *handoffs]
    out: list[Tool | McpToolRef] = []
    for index, ref in enumerate(cfg.tools):
        where = (*at, "tools", index)
        if ref == "remember" or isinstance(ref, RememberToolRef):
            out.append(RememberTool())
        elif isinstance(ref, str) or isinstance(ref, SandboxToolRef):
            names = [ref] if isinstance(ref, str) else list(ref.names or by_name)
            if sandbox is None:
                raise loaded.error(
                    ErrorCode.CONFIG_UNKNOWN_NAME,
                    where,
                    "sandbox tools need a sandbox (RIVERBEAM_SANDBOX_URL), and this runner has none",
                )
            out.extend(by_name[name] for name in names if name in by_name)
        elif isinstance(ref, AgentToolRef):
            if registry is None:
                raise loaded.error(
                    ErrorCode.CONFIG_NOT_SUPPORTED, where, "agent tools need an agent registry"
                )
            out.append(AgentTool(registry, ref.agent, name=ref.name, description=ref.description))
        elif isinstance(ref, McpToolRef):
            if hub is None or ref.server not in hub:
                raise loaded.error(
                    ErrorCode.CONFIG_UNKNOWN_NAME,
                    (*where, "server"),
                    f"no MCP server {ref.server!r} in mcp_servers",
                )
            out.append(ref)
        else:
            assert isinstance(ref, PythonToolRef)
            try:
                out.extend(_python_tools(ref.entry))
            except RiverbeamError as err:
                raise loaded.error(err.code, (*where, "entry"), err.message) from None
    return [*out, *handoffs]


def register_crews(loaded: LoadedConfig, registry: AgentRegistry) -> list[Crew]:
    """Register the file's crews (after every agent, since they name agents).

    Raises:
        RiverbeamError: BEM-021 for a name taken, BEM-231 for a member that is not
            registered; each naming the line.
    """
    crews: list[Crew] = []
    for index, cfg in enumerate(loaded.config.crews):
        at: tuple[str | int, ...] = ("crews", index)
        if cfg.name in registry:
            raise loaded.error(
                ErrorCode.AGENT_ALREADY_REGISTERED,
                (*at, "name"),
                f"an agent {cfg.name!r} is already registered",
            )
        crew = Crew(
            cfg.name,
            cfg.kind,
            registry,
            agents=cfg.agents,
            join=cfg.join,
            router=cfg.router,
            routes=cfg.routes,
            fallback=cfg.fallback,
            description=cfg.description,
            tags=cfg.tags,
            version=cfg.version,
        )
        for member in crew.members():
            if member not in registry:
                raise loaded.error(
                    ErrorCode.CONFIG_UNKNOWN_NAME,
                    at,
                    f"crew {cfg.name!r} names {member!r}, which is not registered",
                )
        registry.register(crew)
        crews.append(crew)
    return crews


def check_agent_tools(loaded: LoadedConfig, registry: AgentRegistry) -> None:
    """Every `kind: agent` tool and every handoff names a registered agent, other than its own.

    Raises:
        RiverbeamError: BEM-231 naming the line.
    """
    for index, cfg in enumerate(loaded.config.agents):
        for position, target in enumerate(cfg.handoffs):
            where: tuple[str | int, ...] = ("agents", index, "handoffs", position)
            if target == cfg.name:
                raise loaded.error(
                    ErrorCode.CONFIG_UNKNOWN_NAME, where, "an agent cannot hand off to itself"
                )
            if target not in registry:
                raise loaded.error(
                    ErrorCode.CONFIG_UNKNOWN_NAME,
                    where,
                    f"no agent {target!r} is registered ({', '.join(registry.names())})",
                )
        for position, ref in enumerate(cfg.tools or ()):
            if not isinstance(ref, AgentToolRef):
                continue
            where = ("agents", index, "tools", position, "agent")
            if ref.agent == cfg.name:
                raise loaded.error(
                    ErrorCode.CONFIG_UNKNOWN_NAME, where, "an agent cannot call itself"
                )
            if ref.agent not in registry:
                raise loaded.error(
                    ErrorCode.CONFIG_UNKNOWN_NAME,
                    where,
                    f"no agent {ref.agent!r} is registered ({', '.join(registry.names())})",
                )


def _python_tools(entry: str) -> list[Tool]:
    target = import_entry_point(entry)
    if isinstance(target, type):
        target = target()
    elif callable(target) and not isinstance(target, Tool):
        target = target()
    items = list(target) if isinstance(target, list | tuple) else [target]
    for item in items:
        if not isinstance(item, Tool):
            raise RiverbeamError(
                ErrorCode.CONFIG_ENTRY_POINT,
                f"{entry!r} gave {type(item).__name__}, not a Tool (spec() and invoke())",
                entry=entry,
            )
    return items


def _apply_policies(cfg: AgentConfig, tools: list[Tool]) -> list[Tool]:
    denied: set[str] = set()
    confirmed: set[str] = set()
    for policy in cfg.policies:
        if isinstance(policy, DenyPolicy):
            denied.update(policy.tools)
        elif isinstance(policy, ConfirmPolicy):
            confirmed.update(policy.tools)
    out: list[Tool] = []
    for tool in tools:
        name = tool.spec().name
        if name in denied or "*" in denied:
            continue
        if name in confirmed or "*" in confirmed:
            tool = confirmed_tool(tool)
        out.append(tool)
    return out


def confirmed_tool(tool: Tool) -> Tool:
    """The same tool, needing a person's approval before each call."""
    if isinstance(tool, ContextualTool):
        return _ConfirmedContextual(tool)
    return _Confirmed(tool)


class _Confirmed:
    def __init__(self, tool: Tool) -> None:
        self._tool = tool

    def spec(self) -> ToolSpec:
        return dataclasses.replace(self._tool.spec(), confirm_required=True)

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        return await self._tool.invoke(args, input)


class _ConfirmedContextual(_Confirmed):
    def __init__(self, tool: ContextualTool) -> None:
        super().__init__(tool)
        self._contextual = tool

    async def invoke_in_context(self, args: dict[str, Any], call: ToolCallContext) -> Any:
        return await self._contextual.invoke_in_context(args, call)
