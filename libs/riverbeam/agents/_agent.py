"""The Agent protocol, and the check of a request's modalities against an agent."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from riverbeam.agents._io import AgentContext, AgentInput
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentMetadata, ContentPart, StreamChunk, modalities_of

__all__ = ["Agent", "check_modalities"]


@runtime_checkable
class Agent(Protocol):
    """Anything the runner can run for a request.

    `stream` yields the agent's frames as it produces them. The last frame is `done`, carrying
    the AgentResult, or `error` (type "error", error = message, error_code = the BEM code). An
    agent reports its own failures as an error frame rather than raising; cancelling the
    consumer cancels the agent (CancelledError propagates).
    """

    def metadata(self) -> AgentMetadata:
        """Name, description, supported and output modalities, tags and version."""
        ...

    def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        """The frames of one run."""
        ...

    async def health_check(self) -> bool:
        """Whether the agent can serve requests now."""
        ...


def check_modalities(metadata: AgentMetadata, content: Sequence[ContentPart]) -> None:
    """Raise BEM-040 when the content uses a modality the agent does not list.

    Args:
        metadata: The agent's metadata.
        content: The request's content parts.

    Raises:
        RiverbeamError: BEM-040, with the agent, the unsupported and the supported modalities.
    """
    unsupported = sorted(modalities_of(list(content)) - set(metadata.supported_modalities))
    if unsupported:
        raise RiverbeamError(
            ErrorCode.MODALITY_NOT_SUPPORTED,
            f"agent {metadata.name!r} does not accept {', '.join(unsupported)} content",
            agent=metadata.name,
            modalities=",".join(unsupported),
            supported=",".join(metadata.supported_modalities),
        )
