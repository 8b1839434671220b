"""AgentRegistry: the agents a runner serves, by name."""

from __future__ import annotations

import builtins
from collections.abc import Iterator

from riverbeam.agents._agent import Agent
from riverbeam.agents._echo import EchoAgent
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import agent_id_for
from riverbeam.types import AgentMetadata

__all__ = ["AgentRegistry"]


class AgentRegistry:
    """Registered agents, keyed by the name in their metadata."""

    def __init__(self) -> None:
        self._agents: dict[str, Agent] = {}

    def register(self, agent: Agent, *, replace: bool = False) -> AgentMetadata:
        """Add an agent under its metadata name.

        Args:
            agent: The agent.
            replace: Replace an agent already registered under that name.

        Returns:
            The agent's metadata, with agent_id filled in.

        Raises:
            RiverbeamError: BEM-021 when the name is taken and replace is False.
        """
        metadata = agent.metadata()
        if metadata.name in self._agents and not replace:
            raise RiverbeamError(
                ErrorCode.AGENT_ALREADY_REGISTERED,
                f"agent {metadata.name!r} is already registered",
                agent=metadata.name,
            )
        self._agents[metadata.name] = agent
        return _with_id(metadata)

    def register_echo_agent(self, name: str) -> AgentMetadata:
        """Register an EchoAgent (it replies "Echo: <input>") under `name`."""
        return self.register(EchoAgent(name))

    def get(self, name: str) -> Agent:
        """The agent registered as `name`; BEM-020 when there is none."""
        try:
            return self._agents[name]
        except KeyError:
            raise RiverbeamError(
                ErrorCode.AGENT_NOT_REGISTERED, f"agent {name!r} is not registered", agent=name
            ) from None

    def get_metadata(self, name: str) -> AgentMetadata:
        """The metadata of the agent registered as `name`, with agent_id; BEM-020 when none."""
        return _with_id(self.get(name).metadata())

    def list(self) -> builtins.list[AgentMetadata]:
        """The metadata of every registered agent, sorted by name."""
        return [_with_id(self._agents[name].metadata()) for name in sorted(self._agents)]

    def names(self) -> builtins.list[str]:
        """Registered names, sorted."""
        return sorted(self._agents)

    def __contains__(self, name: object) -> bool:
        return name in self._agents

    def __len__(self) -> int:
        return len(self._agents)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def _with_id(metadata: AgentMetadata) -> AgentMetadata:
    if metadata.agent_id:
        return metadata
    return metadata.model_copy(update={"agent_id": agent_id_for(metadata.name)})
