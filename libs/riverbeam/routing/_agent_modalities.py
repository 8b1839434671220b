"""Whether an agent accepts the modalities of a request's content."""

from __future__ import annotations

from collections.abc import Sequence

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentMetadata, ContentPart, modalities_of

__all__ = ["check_agent_accepts"]


def check_agent_accepts(agent: AgentMetadata, content: Sequence[ContentPart]) -> None:
    """Refuse content with a modality the agent does not list in ``supported_modalities``.

    A part's modality is `ContentPart.modality`: text and reasoning are text; file and
    media_ref follow their mime_type prefix (image/, audio/, video/), defaulting to text.

    Args:
        agent: The agent the request is for.
        content: The request's content parts.

    Raises:
        RiverbeamError: BEM-040 (MODALITY_NOT_SUPPORTED), naming the modalities refused.
    """
    unsupported = modalities_of(list(content)) - set(agent.supported_modalities)
    if unsupported:
        raise RiverbeamError(
            ErrorCode.MODALITY_NOT_SUPPORTED,
            f"agent {agent.name!r} does not accept {', '.join(sorted(unsupported))} content; "
            f"it accepts {', '.join(sorted(set(agent.supported_modalities))) or 'nothing'}",
            field="content",
            agent_name=agent.name,
        )
